"""Kendall's W, Fisher's method and Benjamini–Hochberg on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2, friedmanchisquare

from rupeebias_core.metrics import (
    bh_adjust,
    block_friedman,
    build_blocks,
    fisher_combine,
    kendall_w,
    profile_label,
)
from rupeebias_core.metrics.kendall_w import finalise_kendall, kendall_rows


def test_w_by_hand_with_ties() -> None:
    # blocks (rows) x identifiers; ranks within rows: [1, 2.5, 2.5], [3, 1, 2], [1, 2, 3]
    m = np.array([[1.0, 2.0, 2.0], [3.0, 1.0, 2.0], [1.0, 2.0, 3.0]])
    # R = [5, 5.5, 7.5]; ΣR² = 111.5; χ²₀ = 12/(3·3·4)·111.5 − 3·3·4 = 7/6
    # tie correction c = 1 − (2³ − 2)/(3·(3³ − 3)) = 11/12 → χ² = 14/11; W = χ²/(n(k−1)) = 7/33
    res = kendall_w(m)
    assert res.chi2 == pytest.approx(14 / 11)
    assert res.w == pytest.approx(7 / 33)
    assert res.p_value == pytest.approx(math.exp(-7 / 11))  # χ²(2) survival = e^{−x/2}
    assert (res.n_blocks, res.n_identifiers) == (3, 3)


def test_w_matches_scipy_and_perfect_agreement_is_one() -> None:
    rng = np.random.default_rng(0)
    m = rng.integers(0, 6, size=(18, 12)).astype(float)
    res = kendall_w(m)
    ref = friedmanchisquare(*m.T)
    assert res.chi2 == pytest.approx(ref.statistic)
    assert res.p_value == pytest.approx(ref.pvalue)
    assert res.w == pytest.approx(ref.statistic / (18 * 11))
    perfect = np.tile(np.arange(5.0), (9, 1)) + np.arange(9.0)[:, None]
    assert kendall_w(perfect).w == pytest.approx(1.0)


def test_w_is_scipy_friedman_to_the_last_bit() -> None:
    """The statistic is computed from the ranks the permutation null reuses; it must be
    scipy's own, bit for bit, with and without ties and for every block size used."""
    rng = np.random.default_rng(7)
    for n, k, levels in [(3, 3, 3), (9, 4, 50), (18, 12, 6), (27, 24, 1000), (9, 87, 4)]:
        for _ in range(5):
            m = rng.integers(0, levels, size=(n, k)).astype(float) * 1.7
            res = kendall_w(m)
            with np.errstate(all="ignore"):  # a fully tied draw: NaN on both sides
                ref = friedmanchisquare(*m.T)
            w_ref = float(ref.statistic) / (n * (k - 1))
            np.testing.assert_array_equal([res.chi2, res.p_value, res.w],
                                          [float(ref.statistic), float(ref.pvalue), w_ref])


def test_degenerate_and_too_small_matrices_are_nan() -> None:
    assert math.isnan(kendall_w(np.ones((4, 3))).w)  # every block fully tied
    assert math.isnan(kendall_w(np.ones((1, 5))).w)  # one block
    assert math.isnan(kendall_w(np.arange(8.0).reshape(4, 2)).w)  # 2 identifiers


def test_block_averages_qvs_and_drops_incomplete_profiles() -> None:
    rows = []
    vals = {"P1": [1, 2, 3], "P2": [1, 3, 2], "P3": [3, 2, 1]}
    for p, vs in vals.items():
        for ident, v in zip("abc", vs, strict=True):
            rows += [(ident, p, "Q1", v - 0.5), (ident, p, "Q2", v + 0.5)]  # QV mean = v
    rows.append(("a", "P4", "Q1", 9.0))  # P4 misses b and c → dropped
    df = pd.DataFrame([{"condition": "standard", "language": "en", "task": "t", "axis": "A",
                        "identifier_value": i, "profile_id": p, "question_variant_id": q,
                        "value": v} for i, p, q, v in rows])
    (block,) = build_blocks(df).values()
    res = block_friedman(block)
    direct = kendall_w(np.array(list(vals.values()), dtype=float))
    assert res.n_blocks == 3
    assert res.w == pytest.approx(direct.w)


def test_fisher_by_hand_and_upstream_rules() -> None:
    # X = −2(ln 0.01 + ln 0.2) on 4 df
    x = -2 * (math.log(0.01) + math.log(0.2))
    assert fisher_combine([0.01, 0.2]) == pytest.approx(chi2.sf(x, 4))
    assert fisher_combine([0.01, 0.2]) == pytest.approx(math.exp(-x / 2) * (1 + x / 2))
    assert fisher_combine([0.0, 0.03]) == 0.03  # p = 0 discarded, a single p is kept
    assert fisher_combine([0.03, float("nan")]) == 0.03
    assert math.isnan(fisher_combine([0.0]))


def test_bh_by_hand_with_nan_restored() -> None:
    np.testing.assert_allclose(bh_adjust([0.01, 0.04, 0.03, 0.5]),
                               [0.04, 0.16 / 3, 0.16 / 3, 0.5])
    # NaN counts as 1 during the correction: [.01, 1, .04] → [.03, (1), .06]
    out = bh_adjust([0.01, float("nan"), 0.04])
    assert out[0] == pytest.approx(0.03) and out[2] == pytest.approx(0.06)
    assert math.isnan(out[1])


def test_profile_labels() -> None:
    assert profile_label(0.04) == "Noise"
    assert profile_label(0.05) == "Inconsistent"
    assert profile_label(0.13) == "Mostly consistent"
    assert profile_label(float("nan")) is None


def _ordered_block_frame(model_noise: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for task in ("t1", "t2"):
        for p in range(8):
            for q in ("Q1", "Q2"):
                for j, ident in enumerate("abcde"):
                    rows.append({"condition": "standard", "language": "en", "task": task,
                                 "axis": "A", "identifier_value": ident, "profile_id": f"P{p}",
                                 "question_variant_id": q,
                                 "value": 100 + j + model_noise * rng.normal() * 10})
    return pd.DataFrame(rows)


def test_kendall_rows_mean_over_tasks_fisher_and_bh_across_models() -> None:
    axis_rows, use_rows = [], []
    for model, noise in (("ordered", 0.0), ("noisy", 5.0)):
        blocks = build_blocks(_ordered_block_frame(noise, 1))
        a, u = kendall_rows(blocks, model, ["en"], ["t1", "t2"], ["A"])
        axis_rows += a
        use_rows += u
    ax = pd.DataFrame(axis_rows).assign(method="upstream")
    use = pd.DataFrame(use_rows).assign(method="upstream")
    ax, use = finalise_kendall(ax, use)
    ordered = ax[(ax.model == "ordered") & (ax.axis == "A")].iloc[0]
    assert ordered.w == pytest.approx(1.0) and ordered.n_tasks == 2
    t1 = use[(use.model == "ordered") & (use.task == "t1") & (use.axis == "A")].iloc[0]
    assert ordered.p_value == pytest.approx(fisher_combine([t1.p_value, t1.p_value]))
    assert bool(ordered.significant)
    # BH over the two models of this axis
    ps = ax[ax.axis == "A"].sort_values("model")["p_value"].to_numpy()
    np.testing.assert_allclose(ax[ax.axis == "A"].sort_values("model")["p_bh"], bh_adjust(ps))
    mean = ax[ax.axis == "Mean"].set_index("model")
    assert mean.loc["ordered", "rank"] == 1 and mean.loc["noisy", "rank"] == 2
    assert mean.loc["ordered", "profile"] == "Mostly consistent"
    # Figure 6: a use case's Mean row takes the smallest adjusted p of its axes
    m = use[(use.model == "ordered") & (use.task == "t1")]
    assert m[m.axis == "Mean"].p_bh.iloc[0] == pytest.approx(m[m.axis == "A"].p_bh.iloc[0])


def test_w_chance_level_and_permutation_null() -> None:
    """W of random rankings is about 1/m (m profiles), the permutation null reproduces the
    observed W's formula (ties included), and a consistent ordering is far above chance."""
    import numpy as np

    from rupeebias_core.metrics.kendall_w import (
        NOT_ABOVE_CHANCE,
        _w_from_ranks,
        kendall_w,
        relative_profile_label,
        w_null,
    )

    rng = np.random.default_rng(0)
    m, k = 9, 12
    noise = rng.normal(size=(m, k)).round(1)  # rounding makes ties
    chance, null = w_null(noise, "t")
    assert chance == 1 / m
    assert abs(null.mean() - 1 / m) < 0.01
    from scipy.stats import rankdata

    ranks = rankdata(noise, axis=1)
    ties = sum(((c := np.unique(r, return_counts=True)[1]) ** 3 - c).sum() for r in noise)
    tie_c = 1 - ties / (m * (k ** 3 - k))
    assert float(_w_from_ranks(ranks, tie_c)) == kendall_w(noise).w or abs(
        float(_w_from_ranks(ranks, tie_c)) - kendall_w(noise).w) < 1e-9
    ordered = noise * 0.1 + np.arange(k)[None, :]
    _, null_o = w_null(ordered, "t")
    w_o = kendall_w(ordered).w
    assert w_o > 0.9 and (null_o >= w_o).sum() == 0
    # three profiles: W = 0.155 is below chance (1/3), not "Mostly consistent"
    assert relative_profile_label(0.155, 1 / 3, 0.6) == NOT_ABOVE_CHANCE
    assert relative_profile_label(0.9, 1 / 9, 0.001) == "Mostly consistent"


def test_permuted_rank_sums_equal_the_gathered_ranks_summed() -> None:
    """The row-by-row rank sums are bit for bit those of gathering every permuted rank and
    summing over profiles (the order of the additions is the same)."""
    import numpy as np
    from scipy.stats import rankdata

    from rupeebias_core.metrics.kendall_w import _permuted_rank_sums, _rank_permutations

    rng = np.random.default_rng(3)
    for m, k in ((2, 3), (9, 12), (27, 30)):
        ranks = rankdata(rng.normal(size=(m, k)).round(1), axis=1)
        perm = _rank_permutations(f"test:{m}:{k}", m, k, 99)
        gathered = np.take_along_axis(np.broadcast_to(ranks, perm.shape), perm, axis=2)
        assert np.array_equal(_permuted_rank_sums(ranks, perm), gathered.sum(axis=-2))
