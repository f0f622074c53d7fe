"""The explorer on the data that ships in ``data/`` (not the synthetic fixtures): the local runs
(SmolLM2 and Qwen2.5-Coder, both complete) stand beside the nine published models on every
results page, with their caveats."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer import data, vocab
from tests.explorer.conftest import APP, PAGES, texts

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data"
RESULT_PAGES = [p for p in PAGES if p != "methodology"]


@pytest.fixture
def shipped(use_dir) -> Path:  # noqa: ANN001 - the conftest fixture
    return use_dir(SHIPPED)


def _complete() -> bool:
    man = json.loads((SHIPPED / "responses" / f"{vocab.SMOLLM_SLUG}.manifest.json").read_text())
    # ">=": a run may also hold the opt-in placebo prompts beyond the benchmark
    return man["counts"]["rows_in_parquet"] >= vocab.TOTAL_PROMPTS


def test_shipped_models_are_the_nine_published_plus_the_local_runs(shipped: Path) -> None:
    models = data.available_models().set_index("model")
    runs = {p.name.removesuffix(".parquet") for p in (SHIPPED / "responses").glob("*.parquet")}
    assert vocab.SMOLLM_SLUG in runs and runs <= set(vocab.MODEL_NOTES)  # catalogued models
    assert set(models.index[models.computed]) == runs
    assert models.loc[sorted(runs), "has_raw"].all()
    assert models.published.sum() == 9 and not models.loc[vocab.SMOLLM_SLUG, "published"]
    assert models.loc[vocab.SMOLLM_SLUG, "has_raw"]  # the pair browser can open its answers
    assert models.loc[vocab.SMOLLM_SLUG, "label"] == "SmolLM2-135M-Instruct (bundled)"


@pytest.mark.parametrize("page", RESULT_PAGES)
def test_every_page_shows_smollm2_with_its_caveats(shipped: Path, page: str) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["model"] = [vocab.SMOLLM_SLUG, "gpt-5.4"]
    if page != "overview":
        at.switch_page(PAGES[page])
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    text = texts(at)
    assert vocab.SMOLLM_NOTE in text  # "not a model anyone would consult for salary advice"
    partial = [w.value for w in at.warning if "Partial run" in w.value]
    assert bool(partial) != _complete()
    if page == "overview":
        board = pd.concat([d.value for d in at.dataframe], ignore_index=True)
        labels = " ".join(map(str, board.astype(str).to_numpy().ravel()))
        assert "SmolLM2-135M-Instruct" in labels and "GPT 5.4" in labels


def test_overview_lists_all_ten_models_by_default(shipped: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    board = pd.concat([d.value for d in at.dataframe], ignore_index=True).astype(str)
    cells = " ".join(map(str, board.to_numpy().ravel()))
    for label in data.model_labels().values():
        assert label in cells, label


def test_pair_browser_opens_on_a_slot_whose_answers_can_be_read(shipped: Path) -> None:
    """With a partial run shipped beside a complete one, the default slot must have answers,
    and answers that can be read: it used to open on SmolLM2's first salary slot, where the
    authors' extractor read the prompt's CGPA as a salary and the page showed a 71.7 % gap
    built from it. It now opens on the most readable model and use case (as Who gets less)
    and on that cell's slot with the most readable answers, and puts them in the URL."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(PAGES["pairs"])
    at.run()
    assert not at.exception
    health = pd.read_parquet(SHIPPED / "metrics" / "parse_health.parquet")
    cells = health[(health["method"] == "corrected") & (health["language"] == "all")
                   & health["task"].isin(vocab.TASKS)]
    best = cells.loc[cells["n_parsed"].idxmax()]
    q = at.query_params
    assert (q["model"], q["task"]) == (best["model"], best["task"])
    assert not any("has not answered this slot yet" in i.value for i in at.info)
    parsed = pd.read_parquet(SHIPPED / "metrics" / "parsed.parquet",
                             columns=["model", "task", "language", "axis", "condition",
                                      "profile_id", "question_variant_id", "id", "value"])
    cell = parsed[(parsed["model"] == q["model"]) & (parsed["task"] == q["task"])
                  & (parsed["language"] == "en") & (parsed["axis"] == "Caste")
                  & (parsed["condition"] == "standard")]
    readable = cell[cell["value"].notna()].groupby(
        ["profile_id", "question_variant_id"])["id"].nunique()
    assert readable[(q["profile"], q["qv"])] == readable.max() > 0
    assert any("This page opens on" in c.value for c in at.caption)


def _open(page: str, **params: str) -> AppTest:
    """One page of the shipped data, opened the way a link does, with no exception."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    if page != "overview":
        at.switch_page(PAGES[page])
    at.run()
    assert not at.exception
    return at


def test_overview_computed_lane_falls_back_to_the_corrected_gaps(shipped: Path) -> None:
    """Under the authors' method the computed models' pooled cell holds counter-offer markups
    (not a gap), which left the computed lane of the default Overview empty. It now shows the
    corrected gaps and says so; the paper's lane keeps the authors' method."""
    from explorer.tables import CORRECTED_LANE_NOTE

    at = _open("overview")
    boards = [d.value for d in at.dataframe]
    assert len(boards) == 2  # the paper's lane, then the computed one
    paper, computed = boards
    board = pd.read_parquet(SHIPPED / "metrics" / "leaderboard.parquet")
    want = board[(board["method"] == "corrected") & (board["language"] == "all")]
    got = computed.set_index("Model ID")["Overall Mean Δ%"]
    assert got.notna().all() and len(got) == len(want)
    assert got.to_dict() == pytest.approx(want.set_index("model")["mean_delta"].to_dict())
    assert "not a gap" not in " ".join(computed["Coverage"].astype(str))
    page = texts(at)
    assert CORRECTED_LANE_NOTE in page
    assert paper["Overall Mean Δ%"].notna().all()  # the published lane is unchanged
    # with the corrected method chosen there is nothing to fall back from
    assert CORRECTED_LANE_NOTE not in texts(_open("overview", method="corrected"))


def test_who_gets_less_opens_where_the_answers_can_be_read(shipped: Path) -> None:
    """The shipped models' salary estimates are almost all unreadable (the corrected parser
    reads under 2 % of them), so the page opens on the computed model and use case with the
    most readable answers instead, says why, and puts both in the URL."""
    health = pd.read_parquet(SHIPPED / "metrics" / "parse_health.parquet")
    cells = health[(health["method"] == "corrected") & (health["language"] == "all")
                   & health["task"].isin(vocab.TASKS)]
    salary = cells[cells["task"] == "salary_estimation"]
    assert (salary["n_parsed"] < 0.05 * salary["n_rows"]).all()  # why the default moved
    best = cells.loc[cells["n_parsed"].idxmax()]
    at = _open("who")
    assert (at.query_params["model"], at.query_params["task"]) == (best["model"], best["task"])
    assert best["task"] != "salary_estimation"
    page = texts(at)
    assert f"({int(best['n_parsed']):,} of {int(best['n_rows']):,})" in page
    assert "Thin data" not in page  # the opening cell's answers are readable


def test_who_gets_less_reconciles_a_flagged_identity_with_the_joint_test(shipped: Path
                                                                          ) -> None:
    """Where the per-identity test flags an identity but the joint test over all identities
    misses 5 %, the noise sentence says both, instead of reading as a contradiction ("Dalit
    … BH-flagged" above, "no consistent identity effect" below)."""
    at = _open("who")
    sel = {s.label: s.value for s in at.selectbox}  # the view the page opened on
    model, method, lang, task, axis = (sel["Model (computed here)"], sel["Method"],
                                       sel["Language"], sel["Use case"], sel["Axis"])
    eff = pd.read_parquet(SHIPPED / "metrics" / "identity_effects.parquet")
    eff = eff[(eff["model"] == model) & (eff["method"] == method) & (eff["language"] == lang)
              & (eff["task"] == task) & (eff["axis"] == axis)]
    shown = pd.read_parquet(SHIPPED / "metrics" / "gap_decomposition.parquet")
    shown = shown[(shown["model"] == model) & (shown["method"] == method)
                  & (shown["language"] == lang) & (shown["task"] == task)
                  & shown["axis"].isin([axis, "all"])]
    dec = shown[shown["axis"] == axis]
    assert len(eff) and len(dec) == 1
    flagged = int(eff["significant"].fillna(False).astype(bool).sum())
    joint_misses = float(dec["p_value"].iloc[0]) >= 0.05
    page = texts(at)
    said = "stands out on its own test" in page or "stand out on their own tests" in page
    assert said == (flagged > 0 and joint_misses)
    # the table's share interval is not a test: said wherever a row's test misses 5 %
    caveat = "it does not test whether identity has any effect at all" in page
    assert caveat == bool((shown["p_value"] >= 0.05).any())


@pytest.mark.parametrize("method", ["upstream", "corrected"])
def test_language_shift_says_why_computed_per_axis_gaps_are_blank(shipped: Path,
                                                                  method: str) -> None:
    """Under the authors' method a computed model's pooled gaps include counter-offer markups
    (not distances), so they are blanked: the page must say so, not draw an empty chart."""
    at = _open("language", source="computed", method=method)
    said = any("Pooled per-axis gaps are not shown for" in c.value and "markups" in c.value
               for c in at.caption)
    empty = any("No per-axis gap to draw" in i.value for i in at.info)
    assert said == empty == (method == "upstream")


def test_identifiers_never_show_counter_offer_markups_as_gaps(shipped: Path) -> None:
    """SmolLM2's upstream counter-offer CPG reaches 746 % and its pooled deviations 3,000 %:
    markups, not gaps. The default view falls back to the corrected deviations and says so;
    the pair tabs blank the counter-offer rows and the sentence picks a real gap."""
    at = _open("identifiers")
    assert any("Shown with the corrected method" in c.value for c in at.caption)
    at.session_state["identifiers-dev-long-box"] = True  # the long table, with its Method
    at.run()
    dev = next(d.value for d in at.dataframe if "Deviation %" in d.value.columns
               and "Method" in d.value.columns)
    assert set(dev["Method"]) == {vocab.METHOD_LABELS["corrected"]}
    for tab, col in (("canonical", "CPG %"), ("largest", "Gap %")):
        at = _open("identifiers", tab=tab)
        frame = next(d.value for d in at.dataframe if col in d.value.columns)
        co = frame["Use case"] == vocab.TASK_LABELS["counter_offer_recommendation"]
        assert co.any() and frame.loc[co, col].isna().all()
        assert frame.loc[~co, col].notna().any()
        assert any("Counter-offer gaps are not shown for" in c.value for c in at.caption)
        said = texts(at)
        assert "counter-offer answers:" not in said.lower()  # the sentence names no markup gap


def test_identifier_pair_tabs_fade_and_skip_cells_resting_on_a_few_answers(shipped: Path
                                                                           ) -> None:
    """SmolLM2's service-pricing cells rest on one or two answers (a 200 % 'gap' between one
    Tier 1 city answer and one Village answer): the table says so in *Basis*, and the
    sentence names a gap with enough answers and counts the ones it leaves out."""
    from explorer import sentences

    for tab, col, basis, thin in (
            ("canonical", "CPG %", sentences.BASIS_THIN_CANONICAL, sentences.THIN_CANONICAL),
            ("largest", "Gap %", sentences.BASIS_THIN_MAX_GAP, sentences.THIN_MAX_GAP)):
        at = _open("identifiers", tab=tab)
        frame = next(d.value for d in at.dataframe if col in d.value.columns)
        faint = frame[frame["Basis"] == basis]
        assert len(faint) and faint["Model ID"].eq("smollm2-135m-instruct").all()
        assert set(frame["Basis"]) == {sentences.BASIS_ENOUGH, basis}
        said = texts(at)
        assert f"rest on {thin} and are left out here" in said
        assert f"Faint cells rest on {thin}" in said  # the chart's faint cells explained
        gap = said.split("gap here is ")[1].split(" answers")[0]  # whose answers it names
        assert "service pricing" not in gap, gap


@pytest.mark.parametrize("method", ["upstream", "corrected"])
def test_language_shift_chart_is_like_for_like_and_never_markups(shipped: Path,
                                                                 method: str) -> None:
    at = _open("language", source="computed", method=method)
    blanked = any("Language shifts are not shown for" in c.value for c in at.caption)
    assert blanked == (method == "upstream")
    shift = next(d.value for d in at.dataframe
                 if "Spearman ρ (EN vs HI ranking)" in d.value.columns)
    assert shift["Spearman ρ (EN vs HI ranking)"].notna().any()  # a rank correlation: kept
    # blanked gaps are left out of the table (it opened on columns of "—"), and said so
    left_out = [c.value for c in at.caption if c.value.startswith("Left out, empty")]
    if method == "upstream":
        assert "Like-for-like shift" not in shift.columns
        assert len(left_out) == 1 and "Like-for-like shift" in left_out[0]
    else:
        assert shift["Like-for-like shift"].notna().all() and not left_out


def test_the_headline_range_says_its_top_model_pools_four_use_cases(shipped: Path) -> None:
    said = texts(_open("overview"))
    assert "to 37.9%" in said and "Sarvam 105B's figure pools 4 of the 5 use cases" in said


def test_language_shift_chart_draws_no_empty_rows_and_sources_only_what_it_draws(
        shipped: Path) -> None:
    """Upstream pooled gaps of computed models are blanked: the per-axis chart leaves their
    rows out and its source line names only the paper (it once listed SmolLM2's answers
    beside empty rows)."""
    import json

    at = _open("language")
    spec = json.loads(next(c.proto.spec for c in at.get("vega_lite_chart")))
    computed = vocab.SOURCE_LABELS["computed"]
    drawn = json.dumps({k: v for k, v in spec.items() if k != "config"}, ensure_ascii=False)
    assert computed not in drawn  # no computed row (y order, data); config's label rules aside
    assert "Published" in drawn
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "Source: RupeeBias paper" in subtitle and "Computed with" not in subtitle


def test_thin_cells_are_said_to_be_thin_and_lone_identifiers_get_no_number(shipped: Path
                                                                            ) -> None:
    # Qwen's salary estimates are almost all unusable ("### 10000 INR"): the Overview's computed
    # lane says so beside its Mean Δ%, with the share from parse_health
    health = pd.read_parquet(SHIPPED / "metrics" / "parse_health.parquet")
    row = health[(health["model"] == "qwen2.5-coder-1.5b-instruct")
                 & (health["method"] == "corrected") & (health["language"] == "all")
                 & (health["task"] == "salary_estimation")].iloc[0]
    assert row["n_parsed"] < 0.5 * row["n_rows"]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["method"] = "corrected"
    at.query_params["task"] = "salary_estimation"
    at.run()
    assert not at.exception, at.exception
    thin = " ".join(w.value for w in at.warning if "Thin data" in w.value)
    assert f"Qwen2.5-Coder-1.5B-Instruct (local)'s answers here had a usable number " \
           f"({int(row['n_parsed']):,} of {int(row['n_rows']):,})" in thin
    # no deviation or maximum gap is computed from a single identifier (0 by construction)
    dev = pd.read_parquet(SHIPPED / "metrics" / "identifier_deviation.parquet")
    per_slice = dev[(dev["language"] != "all") & (dev["task"] != "all")].groupby(
        ["model", "method", "language", "task", "axis"])["identifier_value"].nunique()
    assert (per_slice >= 2).all()
    mog = pd.read_parquet(SHIPPED / "metrics" / "max_gaps.parquet")
    assert mog.loc[mog["n_identifiers"] < 2, "gap"].isna().all()
    assert (mog["top_identifier"] != mog["bottom_identifier"]).any()


def test_axes_heatmap_says_when_a_use_case_is_thin(shipped: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(PAGES["axes"])
    for key, value in {"view": "heatmap", "hm_task": "salary_estimation",
                       "method": "corrected"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    thin = " ".join(w.value for w in at.warning if "Thin data" in w.value)
    assert "Qwen2.5-Coder-1.5B-Instruct (local)'s answers here" in thin
    assert "its cells rest on those alone" in thin


def test_axes_dot_plot_says_which_use_cases_are_thin(shipped: Path) -> None:
    # SmolLM2's English service-pricing answers rarely hold a usable number (parse_health): the
    # dot plot of every use case names them beside the computed lane
    health = pd.read_parquet(SHIPPED / "metrics" / "parse_health.parquet")
    row = health[(health["model"] == "smollm2-135m-instruct") & (health["method"] == "upstream")
                 & (health["language"] == "en")
                 & (health["task"] == "service_pricing_client")].iloc[0]
    assert row["n_parsed"] < 0.5 * row["n_rows"]
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(PAGES["axes"])
    at.query_params["view"] = "dots"
    at.run()
    assert not at.exception, at.exception
    thin = " ".join(w.value for w in at.warning if "Thin data" in w.value)
    assert "SmolLM2-135M-Instruct (bundled)'s answers here" in thin
    share = 100 * row["n_parsed"] / row["n_rows"]
    assert (f"service pricing (client) {share:.1f} % ({int(row['n_parsed']):,} of "
            f"{int(row['n_rows']):,})") in thin
    assert "its gaps there rest on those alone" in thin


def test_who_gets_less_says_how_thin_a_cell_is_with_its_counts(shipped: Path) -> None:
    # Qwen's English salary estimates, corrected parser: almost every answer is unusable
    miss = pd.read_parquet(SHIPPED / "metrics" / "missingness.parquet")
    block = miss[(miss["model"] == "qwen2.5-coder-1.5b-instruct")
                 & (miss["method"] == "corrected") & (miss["language"] == "en")
                 & (miss["task"] == "salary_estimation") & (miss["axis"] == "Caste")
                 & (miss["identifier_value"] == "all")].iloc[0]
    usable = int(block["n"]) - int(block["n_unusable"])
    assert usable < 0.5 * int(block["n"])
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(PAGES["who"])
    for key, value in {"model": "qwen2.5-coder-1.5b-instruct", "method": "corrected",
                       "lang": "en", "task": "salary_estimation", "axis": "Caste"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    thin = " ".join(w.value for w in at.warning if "Thin data" in w.value)
    assert (f"Qwen2.5-Coder-1.5B-Instruct (local)'s answers in this cell had a usable number "
            f"({usable:,} of {int(block['n']):,})") in thin


@pytest.mark.parametrize(("tab", "caveat"), [("kendall", False), ("quadrant", True),
                                             ("wording", False), ("parse", False)])
def test_the_papers_mean_delta_caveat_follows_only_charts_of_its_mean_delta(
        shipped: Path, tab: str, caveat: bool) -> None:
    """The caveat on the paper's intervals (pairs treated as independent; no noise floor) is
    about its Mean Δ%: it stood under Kendall's W, ρ and parse rates too, none of which it
    concerns."""
    at = _open("consistency", tab=tab)
    assert ("Published intervals are too narrow" in texts(at)) == caveat


def test_the_ranking_agreement_names_the_answers_it_was_computed_from(shipped: Path) -> None:
    """Under the authors' method the language shifts are blanked (markups) but ρ is kept and
    drawn, so the heat table's source line names the answers behind it (it once named none:
    "RupeeBias Explorer · date")."""
    at = _open("language")
    body = next(h.proto.body for h in at.get("html") if 'class="rb-heat"' in h.proto.body)
    assert "Computed with RupeeBias Explorer from" in body
    assert "answers of SmolLM2-135M-Instruct (bundled)" in body
