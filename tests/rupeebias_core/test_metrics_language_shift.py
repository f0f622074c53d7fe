"""Language moderation: ρ of identifier means, slot normalisation, Hinglish − English shift."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from rupeebias_core.metrics import (
    build_blocks,
    fine_cells,
    identifier_means,
    language_shift_rows,
    slot_normalised,
)


def test_slot_normalisation_is_unit_free() -> None:
    v = np.array([[[100.0, 80.0, 120.0]], [[1.0, 0.8, 1.2]]])  # same shape, different units
    out = slot_normalised(v)
    np.testing.assert_allclose(out[0], out[1])
    np.testing.assert_allclose(out[0, 0], [0.0, -20.0, 20.0])
    assert np.isnan(slot_normalised(np.array([[[5.0, np.nan]]]))).all()  # < 2 values


def _frame() -> pd.DataFrame:
    rows = []
    en = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    hi = {"a": 1.0, "b": 3.0, "c": 2.0, "d": 4.0}
    for lang, vals, scale in (("en", en, 1.0), ("hinglish", hi, 1.5)):
        for task, unit in (("t1", 1.0), ("t2", 1000.0)):
            for p in ("P1", "P2"):
                for i, v in vals.items():
                    # the Hinglish gap between identifiers is larger (scale)
                    val = unit * (10 + scale * v)
                    rows.append({"condition": "standard", "language": lang, "task": task,
                                 "axis": "A", "identifier_value": i, "profile_id": p,
                                 "question_variant_id": "Q1", "value": val})
    return pd.DataFrame(rows)


def test_identifier_means_raw_mix_units_but_normalised_do_not() -> None:
    blocks = build_blocks(_frame())
    en = [b for k, b in blocks.items() if k[1] == "en"]
    raw = identifier_means(en, "upstream")
    # raw means average t1 (≈ 10) and t2 (≈ 10,000): dominated by t2
    assert raw["a"] == pytest.approx((11 + 11_000) / 2)
    norm = identifier_means(en, "corrected")
    # slot mean of 11, 12, 13, 14 is 12.5 → a is (11/12.5 − 1)·100 = −12 in both tasks
    assert norm["a"] == pytest.approx(-12.0)


def test_language_shift_rows() -> None:
    blocks = build_blocks(_frame())
    cells = fine_cells(blocks, "m", "upstream")
    rows = {r["axis"]: r for r in language_shift_rows(blocks, cells, "m", ["A"], "upstream")}
    a = rows["A"]
    en_means = identifier_means([b for k, b in blocks.items() if k[1] == "en"], "upstream")
    hi_means = identifier_means([b for k, b in blocks.items() if k[1] == "hinglish"], "upstream")
    ref = spearmanr([en_means[k] for k in "abcd"], [hi_means[k] for k in "abcd"])
    assert a["rho"] == pytest.approx(ref.statistic) and a["rho"] == pytest.approx(0.8)
    assert a["rho_p"] == pytest.approx(ref.pvalue)
    assert a["n_identifiers"] == 4
    en_mean = cells[("en", "t1", "A")].reps.mean
    assert a["mean_delta_en"] == pytest.approx(en_mean)  # t1 and t2 have equal relative gaps
    assert a["delta_shift"] == pytest.approx(a["mean_delta_hinglish"] - a["mean_delta_en"])
    assert a["delta_shift"] > 0 and a["delta_shift_lo"] > 0  # Hinglish amplifies
    assert a["n_pairs_en"] == 2 * 2 * 6
    assert set(rows) == {"A", "all"}


def _slot(task: str, lang: str, vals: tuple[float, float, float]) -> list[dict]:
    """One slot (axis A, P1 · Q1) of three identities' values."""
    return [{"condition": "standard", "language": lang, "task": task, "axis": "A",
             "identifier_value": i, "profile_id": "P1", "question_variant_id": "Q1",
             "value": v} for i, v in zip(("x", "y", "z"), vals, strict=True)]


def test_language_shift_compares_only_slots_answered_in_both_languages() -> None:
    """A partial run: task `big` (large gaps) answered in English only, task `small` in both
    languages with the same answers. The shift must be 0 (same slots, same answers), not the
    difference between {big, small} in English and {small} in Hinglish."""
    from rupeebias_core.metrics import compute_from_values
    from rupeebias_core.metrics.pipeline import Design

    small = (100.0, 104.0, 98.0)
    frame = pd.DataFrame(_slot("big", "en", (100.0, 200.0, 50.0)) + _slot("small", "en", small)
                         + _slot("small", "hinglish", small))
    design = Design(("en", "hinglish"), (), (), {"A": ("x", "y", "z")}, {})
    tables = compute_from_values(frame, "m", "upstream", design, n_resamples=200)
    shift = tables["language_shift"].set_index("axis").loc["all"]
    assert shift["delta_shift"] == pytest.approx(0.0)
    assert shift["n_pairs_en"] == shift["n_pairs_hinglish"] == 3
    # the per-language tables still use every English slot
    lb = tables["leaderboard"]
    assert lb[(lb.language == "en") & (lb.axis == "all")]["n_pairs"].item() == 6


def test_unreadable_answers_do_not_unpair_a_complete_run() -> None:
    """Every slot answered in both languages, but task `big`'s Hinglish answers unreadable (no
    values): the run is complete, so the shift keeps every English slot, as the paper does."""
    from rupeebias_core.metrics import compute_from_values
    from rupeebias_core.metrics.blocks import paired_rows
    from rupeebias_core.metrics.pipeline import Design

    small = (100.0, 104.0, 98.0)
    values = pd.DataFrame(_slot("big", "en", (100.0, 200.0, 50.0)) + _slot("small", "en", small)
                          + _slot("small", "hinglish", small))
    answered = pd.concat([values, pd.DataFrame(_slot("big", "hinglish", (np.nan,) * 3))])
    slots = ["task", "axis", "profile_id", "question_variant_id"]
    assert paired_rows(values, "language", "en", "hinglish", slots, answered) is None
    assert len(paired_rows(values, "language", "en", "hinglish", slots)) == 6  # by values
    design = Design(("en", "hinglish"), (), (), {"A": ("x", "y", "z")}, {})
    tables = compute_from_values(values, "m", "upstream", design, 200, answered)
    shift = tables["language_shift"].set_index("axis").loc["all"]
    assert shift["n_pairs_en"] == 6 and shift["n_pairs_hinglish"] == 3


def test_slot_keys_name_equal_tuples_alike_across_frames_compared_as_text() -> None:
    """paired_rows matches slots by integer keys (blocks.slot_keys): equal column tuples get
    one key in every frame, 1 and "1" are the same slot (as text), anything else differs."""
    from rupeebias_core.metrics.blocks import slot_keys

    a = pd.DataFrame({"task": ["t", "t", "u", "t"],
                      "profile_id": pd.Series([1, 2, 1, None], dtype=object)})
    b = pd.DataFrame({"task": ["u", "t", "t"], "profile_id": ["1", "2", "3"]})
    ka, kb = slot_keys([a, b], ["task", "profile_id"])
    assert len(set(ka.tolist())) == 4
    assert kb[0] == ka[2] and kb[1] == ka[1]  # ("u", "1") ~ ("u", 1); ("t", "2") ~ ("t", 2)
    assert kb[2] not in set(ka.tolist())  # ("t", "3") is nowhere in a
    assert ka[0] != ka[1] and ka[3] not in (ka[0], ka[1], ka[2])  # None is its own value
