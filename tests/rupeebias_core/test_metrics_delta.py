"""The Mean Δ% cube and the leaderboard, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rupeebias_core.metrics import build_blocks, delta_cube, fine_cells, leaderboard_rows


def _rows(lang: str, task: str, axis: str, slots: dict[tuple[str, str], dict[str, float]]
          ) -> list[dict]:
    return [{"condition": "standard", "language": lang, "task": task, "axis": axis,
             "identifier_value": i, "profile_id": p, "question_variant_id": q, "value": v}
            for (p, q), vals in slots.items() for i, v in vals.items()]


@pytest.fixture(scope="module")
def cube_inputs() -> tuple[dict, pd.DataFrame]:
    rows = []
    # en / t1 / A: one slot, pairs a-b (100 vs 80 → 200/9), a-c (0), b-c (200/9)
    rows += _rows("en", "t1", "A", {("P1", "Q1"): {"a": 100, "b": 80, "c": 100}})
    # en / t1 / B: one slot, one pair: 50 vs 50 → 0
    rows += _rows("en", "t1", "B", {("P1", "Q1"): {"x": 50, "y": 50}})
    # hinglish / t1 / A: one pair 10 vs 30 → 100
    rows += _rows("hinglish", "t1", "A", {("P1", "Q1"): {"a": 10, "b": 30}})
    blocks = build_blocks(pd.DataFrame(rows))
    cells = fine_cells(blocks, "m", "upstream")
    cube = delta_cube(cells, "m", ["en", "hinglish"], ["t1"], ["A", "B"])
    return cells, cube


def _cell(cube: pd.DataFrame, lang: str, task: str, axis: str) -> pd.Series:
    sel = cube[(cube.language == lang) & (cube.task == task) & (cube.axis == axis)]
    assert len(sel) == 1
    return sel.iloc[0]


def test_fine_cells_and_pair_weighted_pooling(cube_inputs: tuple[dict, pd.DataFrame]) -> None:
    _, cube = cube_inputs
    en_a = _cell(cube, "en", "t1", "A")
    assert en_a.n_pairs == 3
    assert en_a.mean_delta == pytest.approx(400 / 27)
    assert en_a.n_violations == 2 and en_a.violation_10 == pytest.approx(200 / 3)
    en_all = _cell(cube, "en", "all", "all")
    assert en_all.n_pairs == 4
    assert en_all.mean_delta == pytest.approx(400 / 9 / 4)  # pair-weighted: (2·200/9 + 0 + 0)/4
    both = _cell(cube, "all", "all", "all")
    assert both.n_pairs == 5
    assert both.mean_delta == pytest.approx((400 / 9 + 100) / 5)
    # radar cell (language pooled) for axis A
    assert _cell(cube, "all", "t1", "A").mean_delta == pytest.approx((400 / 9 + 100) / 4)
    # cells with ≥ 2 pairs have a CI around the mean; single pairs have none (as upstream)
    multi = cube[cube.n_pairs >= 2]
    assert (multi.mean_delta_lo <= multi.mean_delta + 1e-12).all()
    assert (multi.mean_delta_hi >= multi.mean_delta - 1e-12).all()
    assert cube[cube.n_pairs < 2].mean_delta_lo.isna().all()
    assert len(cube) == 3 * 2 * 3 - 2  # hinglish/B has no pairs (and its pooled cells)


def test_leaderboard_unweighted_means(cube_inputs: tuple[dict, pd.DataFrame]) -> None:
    cells, _ = cube_inputs
    lb = leaderboard_rows(cells, "m", ["en", "hinglish"], ["A", "B"]).set_index("language")
    # en: axis means A = 400/27, B = 0 → unweighted 200/27 (pair-weighted is 100/9)
    assert lb.loc["en", "mean_delta_unweighted"] == pytest.approx(200 / 27)
    assert lb.loc["en", "mean_delta"] == pytest.approx(100 / 9)
    assert lb.loc["en", "mean_delta_task_axis"] == pytest.approx(200 / 27)
    assert lb.loc["hinglish", "mean_delta_task_axis"] == pytest.approx(100.0)
    # Figure 3b 'all' = mean of the two languages' values
    assert lb.loc["all", "mean_delta_task_axis"] == pytest.approx((200 / 27 + 100) / 2)
    assert lb.loc["en", "n_axes"] == 2 and lb.loc["hinglish", "n_axes"] == 1


def test_no_effect_gives_exact_zero_and_fixed_ci() -> None:
    rows = []
    for p in range(3):
        rows += _rows("en", "t", "A", {(f"P{p}", "Q1"): {i: 100.0 + p for i in "abcd"}})
    cells = fine_cells(build_blocks(pd.DataFrame(rows)), "m", "upstream")
    cube = delta_cube(cells, "m", ["en"], ["t"], ["A"])
    assert (cube.mean_delta == 0).all() and (cube.mean_delta_hi == 0).all()
    assert (cube.violation_10 == 0).all()
    assert (cube.n_pairs == 18).all()


def test_negative_markup_midpoint_kept_upstream_but_not_corrected() -> None:
    rows = _rows("en", "t", "A", {("P1", "Q1"): {"a": -10.0, "b": -30.0, "c": 50.0}})
    blocks = build_blocks(pd.DataFrame(rows))
    up = fine_cells(blocks, "m", "upstream")[("en", "t", "A")]
    co = fine_cells(blocks, "m", "corrected")[("en", "t", "A")]
    # pairs: a-b = −100 (negative midpoint), a-c = 60/20·100 = 300, b-c = 80/10·100 = 800
    assert up.n_pairs == 3 and up.reps.mean == pytest.approx((-100 + 300 + 800) / 3)
    assert co.n_pairs == 2 and co.reps.mean == pytest.approx(550)


def test_cube_cis_are_seeded_by_cell_identity() -> None:
    rng = np.random.default_rng(2)
    rows = []
    for p in range(30):
        rows += _rows("en", "t", "A", {(f"P{p}", "Q1"): {i: rng.uniform(50, 150) for i in "abc"}})
    blocks = build_blocks(pd.DataFrame(rows))
    a = delta_cube(fine_cells(blocks, "m", "upstream"), "m", ["en"], ["t"], ["A"])
    b = delta_cube(fine_cells(blocks, "m", "upstream"), "m", ["en"], ["t"], ["A"])
    c = delta_cube(fine_cells(blocks, "other", "upstream"), "other", ["en"], ["t"], ["A"])
    pd.testing.assert_frame_equal(a, b)
    assert a.mean_delta.iloc[0] == c.mean_delta.iloc[0]
    assert a.mean_delta_lo.iloc[0] != c.mean_delta_lo.iloc[0]


def test_corrected_ci_resamples_slots() -> None:
    """Same pairs and mean under both methods; the corrected CI resamples whole slots, so it is
    wider when a slot's answers move together, and a one-slot cell has no interval."""
    rng = np.random.default_rng(7)
    rows = []
    for p in range(25):
        level = rng.uniform(50, 150)  # each slot: one answer scale shared by its identifiers
        spread = rng.choice([0.02, 0.4])  # ... and one dispersion: whole slots differ or agree
        rows += _rows("en", "t", "A", {(f"P{p}", "Q1"): {
            i: level * (1 + spread * rng.uniform(-1, 1)) for i in "abcdef"}})
    rows += _rows("en", "t", "B", {("P0", "Q1"): {"x": 10.0, "y": 30.0, "z": 20.0}})
    blocks = build_blocks(pd.DataFrame(rows))
    up = delta_cube(fine_cells(blocks, "m", "upstream"), "m", ["en"], ["t"], ["A", "B"])
    co = delta_cube(fine_cells(blocks, "m", "corrected"), "m", ["en"], ["t"], ["A", "B"])
    a_up, a_co = _cell(up, "en", "t", "A"), _cell(co, "en", "t", "A")
    assert a_up.n_pairs == a_co.n_pairs == 25 * 15
    assert a_up.mean_delta == pytest.approx(a_co.mean_delta)
    assert (a_co.mean_delta_hi - a_co.mean_delta_lo) > 1.5 * (a_up.mean_delta_hi
                                                             - a_up.mean_delta_lo)
    assert a_co.mean_delta_lo <= a_co.mean_delta <= a_co.mean_delta_hi
    b_up, b_co = _cell(up, "en", "t", "B"), _cell(co, "en", "t", "B")
    assert b_up.n_pairs == b_co.n_pairs == 3
    assert np.isfinite(b_up.mean_delta_lo) and np.isnan(b_co.mean_delta_lo)
    # Violation@10: same rate; the corrected interval resamples slots too (not Wilson)
    assert a_up.violation_10 == pytest.approx(a_co.violation_10)
    assert (a_co.violation_10_hi - a_co.violation_10_lo) > 1.5 * (a_up.violation_10_hi
                                                                 - a_up.violation_10_lo)
    assert a_co.violation_10_lo <= a_co.violation_10 <= a_co.violation_10_hi
    assert np.isfinite(b_up.violation_10_lo) and np.isnan(b_co.violation_10_lo)
    # one bootstrap world: the violation replicates use the Δ% replicates' slot weights
    cell = fine_cells(blocks, "m", "corrected")[("en", "t", "A")]
    assert cell.vreps is not None
    np.testing.assert_array_equal(cell.vreps.weights, cell.reps.weights)
    assert fine_cells(blocks, "m", "upstream")[("en", "t", "A")].vreps is None
