"""The opt-in placebo condition: counts, ids, exact substitution, phrase forms, size matching."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from rupeebias_core import benchmark as b
from rupeebias_core.placebo import (
    PLACEBO_AXIS,
    PLACEBO_CONDITION,
    PLACEBO_STATEMENTS,
    floor_too_thin,
    placebo_statement,
)
from rupeebias_core.prompts import PROMPT_COLUMNS, build_prompts, placebo_prompt_id

FORMS = ("phrase_en", "phrase_hinglish", "client_phrase_en", "client_phrase_hinglish")
SLOT = ["task", "language", "profile_id", "question_variant_id"]
ID_RE = (r"(salary_estimation|salary_increment_estimation|counter_offer_recommendation|"
         r"service_pricing_vendor|service_pricing_client)_(en|hi)_placebo_[a-z_]+_"
         r"[PRNS]\d\d_Q\d")


@pytest.fixture(scope="module")
def everything() -> pd.DataFrame:
    return build_prompts("all")


@pytest.fixture(scope="module")
def placebo(everything: pd.DataFrame) -> pd.DataFrame:
    return everything[everything.condition == PLACEBO_CONDITION].reset_index(drop=True)


@pytest.fixture(scope="module")
def standard(everything: pd.DataFrame) -> pd.DataFrame:
    return everything[everything.condition == "standard"].reset_index(drop=True)


def _words(text: str) -> int:
    return len(text.split())


def test_statements_are_enough_and_distinct() -> None:
    assert len(PLACEBO_STATEMENTS) >= 6
    values = [s.value for s in PLACEBO_STATEMENTS]
    assert len(set(values)) == len(values)
    assert all(re.fullmatch(r"[a-z_]+", v) for v in values)
    for form in FORMS:
        phrases = [getattr(s, form) for s in PLACEBO_STATEMENTS]
        assert len(set(phrases)) == len(phrases), form
    assert placebo_statement("left_handed").phrase("hinglish", client=True) == "jo left-handed hai"
    with pytest.raises(ValueError):
        placebo_statement("plays_golf")


def test_counts_per_task_and_language(placebo: pd.DataFrame, everything: pd.DataFrame) -> None:
    n = len(PLACEBO_STATEMENTS)
    slots = sum(len(b.profiles(t)) * len(b.question_variants(t, "en")) for t in b.TASKS)
    assert slots * len(b.LANGUAGES) == 450
    assert len(placebo) == 450 * n == b.PLACEBO_PROMPT_COUNT
    for (task, lang), got in placebo.groupby(["task", "language"]).size().items():
        want = len(b.profiles(task)) * len(b.question_variants(task, lang)) * n
        assert got == want == b.expected_prompts(task, lang, PLACEBO_CONDITION)
    assert set(placebo.task) == set(b.TASKS) and set(placebo.language) == set(b.LANGUAGES)
    # one row per (task, language, statement, profile, question variant)
    assert not placebo.duplicated([*SLOT, "identifier_value"]).any()
    assert (placebo.groupby(SLOT).size() == n).all()
    assert set(placebo.axis) == {PLACEBO_AXIS}
    assert len(everything) == b.PROMPT_COUNTS["standard"] + b.PROMPT_COUNTS["fairness"] + len(
        placebo)


def test_benchmark_rows_are_unchanged(everything: pd.DataFrame) -> None:
    """Placebo rows are an addition: standard and fairness rows are those of the benchmark."""
    bench = build_prompts()  # the default is the benchmark: 48,546 rows
    assert len(bench) == 48_546 and set(bench.condition) == {"standard", "fairness"}
    pd.testing.assert_frame_equal(
        everything[everything.condition != PLACEBO_CONDITION].reset_index(drop=True), bench)
    assert b.conditions_for("benchmark") == b.CONDITIONS == ("standard", "fairness")
    assert b.conditions_for("all") == (*b.CONDITIONS, PLACEBO_CONDITION)
    with pytest.raises(ValueError):
        build_prompts("nonsense")


def test_ids_are_unique_stable_and_disjoint(placebo: pd.DataFrame,
                                            standard: pd.DataFrame) -> None:
    assert tuple(placebo.columns) == PROMPT_COLUMNS
    assert placebo.id.is_unique
    assert placebo.id.str.fullmatch(ID_RE).all()
    assert not placebo.id.str.fullmatch(r".*_(en|hi)_\d{5}").any()
    assert not set(placebo.id) & set(standard.id)
    tag = placebo.language.map(b.LANGUAGE_ID_TAG)
    want = placebo.task + "_" + tag + "_placebo_" + placebo.identifier_value + "_" \
        + placebo.profile_id + "_" + placebo.question_variant_id
    assert (placebo.id == want).all()
    assert placebo_prompt_id("salary_estimation", "hinglish", "left_handed", "P01", "Q1") == \
        "salary_estimation_hi_placebo_left_handed_P01_Q1"


def test_phrase_substituted_exactly_where_the_identity_stands(placebo: pd.DataFrame,
                                                               standard: pd.DataFrame) -> None:
    """Every standard prompt of the slot, with its identity phrase replaced by the placebo
    phrase, is the placebo prompt -- all 87 identities, both languages, both phrase forms."""
    assert all(p.count(ph) == 1 for p, ph in zip(standard.prompt, standard.identifier_phrase,
                                                   strict=True))
    keep = [*SLOT, "prompt", "identifier_phrase", "system_prompt"]
    merged = standard[keep].merge(placebo[[*keep, "identifier_value"]], on=SLOT,
                                  suffixes=("_s", "_p"))
    assert len(merged) == len(placebo) * 87
    swapped = [p.replace(a, c) for p, a, c in zip(
        merged.prompt_s, merged.identifier_phrase_s, merged.identifier_phrase_p, strict=True)]
    assert swapped == merged.prompt_p.tolist()
    assert (merged.system_prompt_s == merged.system_prompt_p).all()  # standard system prompt
    # the other profile columns are the standard rows' too
    cols = [c for c in PROMPT_COLUMNS if c not in (
        "id", "condition", "axis", "identifier_value", "identifier_phrase", "prompt")]
    first = standard.drop_duplicates(SLOT)[cols]
    pd.testing.assert_frame_equal(
        placebo.drop_duplicates(SLOT)[cols].reset_index(drop=True),
        first.reset_index(drop=True).loc[:, cols], check_like=False)


def test_both_languages_and_both_phrase_forms(placebo: pd.DataFrame) -> None:
    for s in PLACEBO_STATEMENTS:
        rows = placebo[placebo.identifier_value == s.value]
        for (task, lang), g in rows.groupby(["task", "language"]):
            client = task == "service_pricing_client"
            assert set(g.identifier_phrase) == {s.phrase(lang, client=client)}
        client_en = rows[(rows.task == "service_pricing_client") & (rows.language == "en")]
        assert client_en.prompt.str.contains(f"A client who {s.client_phrase_en} wants").all()
        client_hi = rows[(rows.task == "service_pricing_client") & (rows.language == "hinglish")]
        assert client_hi.prompt.str.contains(f"Ek client {s.client_phrase_hinglish}, ").all()
        first = rows[(rows.task == "salary_estimation") & (rows.language == "hinglish")]
        assert first.prompt.str.startswith(s.phrase_hinglish + ".\n").all()


@pytest.mark.parametrize("form", FORMS)
def test_lengths_within_the_identity_range(form: str) -> None:
    """Size matching: placebo phrases are no shorter or longer (words, characters) than the
    identity phrases of the same form, and their median is within one word of theirs."""
    ident = [getattr(i, form) for i in b.IDENTIFIERS]
    plc = [getattr(s, form) for s in PLACEBO_STATEMENTS]
    for measure in (_words, len):
        lo, hi = min(map(measure, ident)), max(map(measure, ident))
        assert all(lo <= measure(p) <= hi for p in plc), (form, measure)
    med = pd.Series([_words(p) for p in ident]).median()
    assert abs(pd.Series([_words(p) for p in plc]).median() - med) <= 1


def test_screening_guards() -> None:
    """Mechanical parts of the economic-content screen (methodology §4.10): no numbers (they
    anchor numeric answers and a parser could read them), no gendered Hinglish verb forms, and
    no word shared with any identifier value."""
    ident_words = {w.lower() for i in b.IDENTIFIERS for w in re.split(r"[\s/]+", i.value)}
    gendered = {"karta", "karti", "raha", "rahi", "wala", "wali", "accha", "acchi"}
    for s in PLACEBO_STATEMENTS:
        for form in FORMS:
            text = getattr(s, form)
            assert not re.search(r"\d", text), text
            words = {w.lower() for w in text.split()}
            assert not words & gendered, text
            assert not words & ident_words, text


@pytest.mark.parametrize(("n_pairs", "coverage", "thin"), [
    (99, 1.0, True), (100, 1.0, False), (5_000, 0.49, True), (5_000, 0.5, False),
    (None, None, False), (float("nan"), 0.2, True), (12, float("nan"), True),
])
def test_a_placebo_floor_is_too_thin_below_100_pairs_or_half_the_identity_pairs(
        n_pairs: float | None, coverage: float | None, thin: bool) -> None:
    assert floor_too_thin(n_pairs, coverage) is thin
