"""Δ% formula and pair formation, on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rupeebias_core.benchmark import AXES, identifiers_for_axis
from rupeebias_core.metrics import (
    block_pair_deltas,
    block_pair_frame,
    build_blocks,
    pairs_per_slot,
    relative_gap,
)


def _frame(rows: list[tuple[str, str, str, float]], task: str = "t", lang: str = "en",
           axis: str = "A") -> pd.DataFrame:
    """rows: (identifier, profile, qv, value)."""
    return pd.DataFrame([{"condition": "standard", "language": lang, "task": task, "axis": axis,
                          "identifier_value": i, "profile_id": p, "question_variant_id": q,
                          "value": v} for i, p, q, v in rows])


def test_relative_gap_hand_values() -> None:
    # |100 - 80| / 90 * 100 = 22.2222...
    assert relative_gap(np.array([100.0]), np.array([80.0]))[0] == pytest.approx(200 / 9)
    # symmetric
    assert relative_gap(np.array([80.0]), np.array([100.0]))[0] == pytest.approx(200 / 9)
    assert relative_gap(np.array([5.0]), np.array([5.0]))[0] == 0.0
    # one zero answer: |0 - 10| / 5 = 200 %
    assert relative_gap(np.array([0.0]), np.array([10.0]))[0] == pytest.approx(200.0)


def test_negative_midpoint_kept_upstream_dropped_corrected() -> None:
    a, b = np.array([-10.0]), np.array([-30.0])
    # upstream: |20| / (-20) * 100 = -100 (kept, as the authors' code does)
    assert relative_gap(a, b, "upstream")[0] == pytest.approx(-100.0)
    assert math.isnan(relative_gap(a, b, "corrected")[0])
    # mixed signs with a positive midpoint: |-10 - 30| / 10 * 100 = 400 in both
    assert relative_gap(np.array([-10.0]), np.array([30.0]), "upstream")[0] == pytest.approx(400)
    assert relative_gap(np.array([-10.0]), np.array([30.0]), "corrected")[0] == pytest.approx(400)


def test_zero_midpoint_and_missing_are_nan() -> None:
    out = relative_gap(np.array([-5.0, 0.0, np.nan]), np.array([5.0, 0.0, 3.0]))
    assert np.isnan(out).all()
    with pytest.raises(ValueError):
        relative_gap(np.array([1.0]), np.array([2.0]), "bogus")  # type: ignore[arg-type]


def test_pairs_per_slot_is_852_for_the_six_axes() -> None:
    counts = {a: pairs_per_slot(len(identifiers_for_axis(a))) for a in AXES}
    assert counts == {"Religion": 66, "Caste": 276, "Region": 435, "Gender": 10,
                      "Disability": 55, "Urban/Rural": 10}
    assert sum(counts.values()) == 852


def test_full_slot_forms_all_unordered_pairs_within_axis() -> None:
    rows = []
    for axis in AXES:
        for j, ident in enumerate(identifiers_for_axis(axis)):
            rows.append({"condition": "standard", "language": "en", "task": "t", "axis": axis,
                         "identifier_value": ident.value, "profile_id": "P01",
                         "question_variant_id": "Q1", "value": 100.0 + j})
    blocks = build_blocks(pd.DataFrame(rows))
    total = sum(block_pair_deltas(b).size for b in blocks.values())
    assert total == 852
    # Region has 30 identifiers: C(30, 2)
    region = blocks[("standard", "en", "t", "Region")]
    assert block_pair_deltas(region).size == 435


def test_pairs_stay_inside_slots_and_missing_values_form_no_pairs() -> None:
    df = _frame([("a", "P1", "Q1", 100), ("b", "P1", "Q1", 80), ("c", "P1", "Q1", np.nan),
                 ("a", "P1", "Q2", 50), ("b", "P2", "Q2", 50), ("c", "P2", "Q2", 60)])
    (block,) = build_blocks(df).values()
    pf = block_pair_frame(block)
    # slot (P1,Q1): a-b only; slot (P1,Q2): only a; slot (P2,Q2): b-c
    assert len(pf) == 2
    got = {(r.profile_id, r.question_variant_id, r.identifier_a, r.identifier_b): r.delta
           for r in pf.itertuples()}
    assert got[("P1", "Q1", "a", "b")] == pytest.approx(200 / 9)
    assert got[("P2", "Q2", "b", "c")] == pytest.approx(10 / 55 * 100)
    np.testing.assert_allclose(np.sort(block_pair_deltas(block)), np.sort(pf["delta"]))


def test_pair_frame_orders_identifiers_by_string_like_upstream() -> None:
    df = _frame([("zeta", "P1", "Q1", 1.0), ("alpha", "P1", "Q1", 3.0)])
    (block,) = build_blocks(df, {"A": ("zeta", "alpha")}).values()
    assert block.identifiers == ("zeta", "alpha")  # benchmark order kept in the block
    row = block_pair_frame(block).iloc[0]
    assert (row.identifier_a, row.identifier_b, row.value_a, row.value_b) == (
        "alpha", "zeta", 3.0, 1.0)


def test_duplicate_cells_keep_the_first_row() -> None:
    df = _frame([("a", "P1", "Q1", 100), ("a", "P1", "Q1", 1), ("b", "P1", "Q1", 100)])
    (block,) = build_blocks(df).values()
    assert block_pair_deltas(block).tolist() == [0.0]
