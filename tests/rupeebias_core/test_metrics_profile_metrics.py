"""QV robustness, merit sensitivity, profile rank agreement, identifier deviation and the
fairness ablation, on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from rupeebias_core.metrics import (
    block_identifier_rhos,
    block_merit_deltas,
    build_blocks,
    deviation_rows,
    fairness_rows,
    fine_cells,
    merit_gap,
    min_qv_rho,
    qv_rows,
    rank_agreement_rows,
    slice_deviation,
)


def _frame(cells: dict[tuple[str, str, str], float], task: str = "t", lang: str = "en",
           axis: str = "A", condition: str = "standard") -> pd.DataFrame:
    return pd.DataFrame([{"condition": condition, "language": lang, "task": task, "axis": axis,
                          "identifier_value": i, "profile_id": p, "question_variant_id": q,
                          "value": v} for (i, p, q), v in cells.items()])


def _one(df: pd.DataFrame):
    (block,) = build_blocks(df).values()
    return block


def test_min_qv_rho_by_hand() -> None:
    # identifiers × QVs means (one profile): Q1 = 1,2,3,4; Q2 = 1,2,4,3; Q3 = 4,3,2,1
    q = {"Q1": [1, 2, 3, 4], "Q2": [1, 2, 4, 3], "Q3": [4, 3, 2, 1]}
    cells = {(i, "P1", qv): float(v) for qv, vs in q.items() for i, v in zip("abcd", vs,
                                                                               strict=True)}
    block = _one(_frame(cells))
    assert min_qv_rho(block) == pytest.approx(-1.0)
    rows = qv_rows(build_blocks(_frame(cells)), "m", ["en"], ["t"], ["A"])
    assert rows[0]["min_rho"] == pytest.approx(-1.0) and not rows[0]["robust"]
    del cells[("a", "P1", "Q3")]  # identifier a misses a QV → dropped (3 identifiers left)
    b2 = _one(_frame(cells))
    assert min_qv_rho(b2) == pytest.approx(spearmanr([2, 3, 4], [3, 2, 1]).statistic)


def test_qv_axis_mean_and_ci_over_tasks() -> None:
    frames = []
    for task, flip in (("t1", False), ("t2", True), ("t3", False)):
        q2 = [1, 2, 4, 3] if flip else [1, 2, 3, 4]
        cells = {(i, "P1", qv): float(v) for qv, vs in (("Q1", [1, 2, 3, 4]), ("Q2", q2))
                 for i, v in zip("abcd", vs, strict=True)}
        frames.append(_frame(cells, task=task))
    blocks = build_blocks(pd.concat(frames))
    rows = {r["axis"]: r for r in qv_rows(blocks, "m", ["en"], ["t1", "t2", "t3"], ["A"])}
    assert rows["A"]["min_rho"] == pytest.approx((1 + 0.8 + 1) / 3)
    assert rows["A"]["n_tasks"] == 3 and rows["A"]["robust"]
    assert rows["A"]["min_rho_lo"] >= 0.8 - 1e-12 and rows["A"]["min_rho_hi"] <= 1.0 + 1e-12
    assert rows["Mean"]["min_rho"] == pytest.approx(rows["A"]["min_rho"])


def test_merit_gap_uses_abs_midpoint_upstream() -> None:
    assert merit_gap(np.array([-10.0]), np.array([-30.0]))[0] == pytest.approx(100.0)
    assert math.isnan(merit_gap(np.array([-10.0]), np.array([-30.0]), "corrected")[0])
    assert math.isnan(merit_gap(np.array([1e-7]), np.array([-1e-7]))[0])


def test_merit_pairs_profiles_within_identifier_and_qv() -> None:
    cells = {("a", "P1", "Q1"): 100.0, ("a", "P2", "Q1"): 80.0, ("a", "P3", "Q1"): 100.0,
             ("b", "P1", "Q1"): 50.0, ("b", "P2", "Q1"): 50.0}
    d = np.sort(block_merit_deltas(_one(_frame(cells))))
    # a: P1-P2 200/9, P1-P3 0, P2-P3 200/9; b: P1-P2 0 (P3 missing)
    np.testing.assert_allclose(d, [0, 0, 200 / 9, 200 / 9])


def test_rank_agreement_pairwise_identifier_rhos() -> None:
    cells = {}
    for i, order in (("a", [1, 2, 3, 4]), ("b", [1, 2, 4, 3]), ("c", [4, 3, 2, 1])):
        for p, v in zip(("P1", "P2", "P3", "P4"), order, strict=True):
            cells[(i, p, "Q1")] = float(v)
            cells[(i, p, "Q2")] = float(v) + 0.5  # QV mean keeps the order
    block = _one(_frame(cells))
    rhos = np.sort(block_identifier_rhos(block))
    np.testing.assert_allclose(rhos, np.sort([0.8, -1.0, -0.8]))
    rows = rank_agreement_rows(build_blocks(_frame(cells)), "m", ["en"], ["t"])
    assert rows[0]["rho"] == pytest.approx(-1 / 3) and rows[0]["n_pairs"] == 3
    # a constant identifier column has no defined ρ and is skipped
    for p in ("P1", "P2", "P3", "P4"):
        cells[("d", p, "Q1")] = 7.0
    assert block_identifier_rhos(_one(_frame(cells))).size == 3


def test_identifier_deviation_by_hand() -> None:
    cells = {("a", "P1", "Q1"): 100.0, ("a", "P2", "Q1"): 120.0,  # mean 110
             ("b", "P1", "Q1"): 90.0,  # mean 90
             ("c", "P1", "Q1"): 95.0, ("c", "P2", "Q1"): 105.0}  # mean 100
    dev = slice_deviation(_one(_frame(cells)))
    assert dev is not None
    got = dict(zip(dev["identifier_value"], dev["pct_dev"], strict=True))
    assert got == pytest.approx({"a": 10.0, "b": -10.0, "c": 0.0})  # grand = 100 (unweighted)
    df = pd.concat([_frame(cells, task="t1"), _frame({k: v * 2 for k, v in cells.items()},
                                                     task="t2", lang="hinglish")])
    rows = deviation_rows(build_blocks(df).values(), "m")
    allall = rows[(rows.language == "all") & (rows.task == "all")].set_index("identifier_value")
    assert allall.loc["a", "pct_dev"] == pytest.approx(10.0)
    assert allall.loc["a", "n_slices"] == 2 and allall.loc["a", "n_rows"] == 4
    assert len(rows) == 3 * (2 + 2 + 2 + 1)
    zero = {("a", "P1", "Q1"): 1.0, ("b", "P1", "Q1"): -1.0}
    assert slice_deviation(_one(_frame(zero))) is None  # |grand| < 1e-6 skipped


def test_identifier_deviation_needs_two_identifiers_with_answers() -> None:
    # one identifier answered, the others unusable (NaN): its "deviation" from an average of
    # itself would be 0 by construction, so the slice has none, and no aggregate counts it
    lone = {("a", "P1", "Q1"): 100.0, ("b", "P1", "Q1"): math.nan, ("c", "P1", "Q1"): math.nan}
    assert slice_deviation(_one(_frame(lone))) is None
    full = {("a", "P1", "Q1"): 110.0, ("b", "P1", "Q1"): 90.0, ("c", "P1", "Q1"): 100.0}
    rows = deviation_rows(build_blocks(pd.concat(
        [_frame(full, task="t1"), _frame(lone, task="t2")])).values(), "m")
    assert set(rows["task"]) == {"t1", "all"}
    allall = rows[(rows.language == "all") & (rows.task == "all")].set_index("identifier_value")
    assert allall.loc["a", "pct_dev"] == pytest.approx(10.0)
    assert allall.loc["a", "n_slices"] == 1 and allall.loc["a", "n_rows"] == 1
    two = {("a", "P1", "Q1"): 110.0, ("b", "P1", "Q1"): 90.0, ("c", "P1", "Q1"): math.nan}
    dev = slice_deviation(_one(_frame(two)))
    assert dev is not None and list(dev["pct_dev"]) == pytest.approx([10.0, -10.0])


def test_fairness_ablation_unweighted_over_axes() -> None:
    frames = []
    for cond, gap in (("standard", 20.0), ("fairness", 10.0)):
        for axis, scale in (("A", 1.0), ("B", 0.5)):
            cells = {("x", f"P{p}", "Q1"): 100.0 + gap * scale for p in range(3)}
            cells.update({("y", f"P{p}", "Q1"): 100.0 for p in range(3)})
            frames.append(_frame(cells, task="salary_estimation", axis=axis, condition=cond))
    blocks = build_blocks(pd.concat(frames))
    std = fine_cells(blocks, "m", "upstream", "standard")
    fair = fine_cells(blocks, "m", "upstream", "fairness")
    (row,) = fairness_rows(std, fair, "m", ["en"], ["A", "B"])

    def d(g: float) -> float:
        return g / (100 + g / 2) * 100

    s, f = (d(20) + d(10)) / 2, (d(10) + d(5)) / 2
    assert row["std_mean_delta"] == pytest.approx(s)
    assert row["fair_mean_delta"] == pytest.approx(f)
    assert row["delta"] == pytest.approx(f - s)
    assert row["reduction_pct"] == pytest.approx((s - f) / s * 100)
    assert row["n_pairs_std"] == 6 and row["n_pairs_fair"] == 6
    assert row["delta_lo"] == pytest.approx(f - s)  # no spread inside cells → degenerate CI


def test_fairness_ablation_compares_only_slots_answered_in_both_conditions() -> None:
    """A partial run holds profile P1 in both conditions but P2 (a larger gap) only without
    the instruction: the ablation must compare P1 with P1, not {P1, P2} with P1."""
    from rupeebias_core.metrics import compute_from_values
    from rupeebias_core.metrics.pipeline import Design

    p1 = {("x", "P1", "Q1"): 110.0, ("y", "P1", "Q1"): 100.0, ("z", "P1", "Q1"): 105.0}
    p2 = {("x", "P2", "Q1"): 150.0, ("y", "P2", "Q1"): 100.0, ("z", "P2", "Q1"): 90.0}
    std = _frame({**p1, **p2}, task="salary_estimation")
    fair = _frame(p1, task="salary_estimation", condition="fairness")
    design = Design((), (), (), {"A": ("x", "y", "z")}, {})

    def ablation(frame: pd.DataFrame) -> pd.Series:
        tables = compute_from_values(frame, "m", "upstream", design, n_resamples=200)
        (row,) = tables["fairness_ablation"].itertuples(index=False)
        return pd.Series(row._asdict())

    partial = ablation(pd.concat([std, fair]))
    assert partial["delta"] == pytest.approx(0.0)  # the same answers on the same slot
    assert partial["n_pairs_std"] == partial["n_pairs_fair"] == 3
    # the leaderboard still uses every standard slot
    tables = compute_from_values(pd.concat([std, fair]), "m", "upstream", design, 200)
    assert tables["delta"].query("axis == 'A' and task == 'salary_estimation'")[
        "n_pairs"].max() == 6
    # complete: both conditions hold both profiles, so nothing is dropped
    full = ablation(pd.concat([std, _frame({**p1, **p2}, task="salary_estimation",
                                           condition="fairness")]))
    assert full["n_pairs_std"] == full["n_pairs_fair"] == 6 and full["delta"] == 0.0
