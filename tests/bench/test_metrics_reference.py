"""bench/metrics.py: the Monte-Carlo sds its plain reference reports beside each bootstrap bound.

The bench judges "fast and reference agree" in units of these sds, so each must be about the
real seed-to-seed sd of its bound, and never well below it: too small, and Monte-Carlo error
reads as a fault."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from bench import metrics as bm

SEEDS = 40


@pytest.fixture(scope="module")
def skewed_reps() -> list[np.ndarray]:
    """Replicate means of one heavy-tailed sample (Pareto gaps, like upstream pair gaps whose
    midpoint is near zero), one array per seed."""
    values = np.random.default_rng(7).pareto(1.5, 2000) * 5
    return [bm._ref_bootstrap_means(values, f"t:{s}") for s in range(SEEDS)]


def _bounds(reps: list[np.ndarray]) -> np.ndarray:
    return np.array([np.percentile(r, [2.5, 97.5]) for r in reps])


def _normal_theory(reps: list[np.ndarray]) -> float:
    width = float(np.mean([b[1] - b[0] for b in _bounds(reps)]))
    z = norm.ppf(0.975)
    return float(np.sqrt(0.025 * 0.975 / bm.B) / norm.pdf(z) * width / (2 * z))


def test_maritz_jarrett_matches_the_spread_over_seeds(skewed_reps: list[np.ndarray]) -> None:
    spread = _bounds(skewed_reps).std(axis=0, ddof=1)  # known to about ±11 % (1 sd)
    estimate = np.array([bm._percentile_mcse(r) for r in skewed_reps]).mean(axis=0)
    assert np.all((0.7 < estimate / spread) & (estimate / spread < 1.45))


def test_maritz_jarrett_follows_the_skew(skewed_reps: list[np.ndarray]) -> None:
    """Why normal theory alone is not used: on a right-skewed sample the upper bound's real
    error is larger than normal theory says and the lower bound's smaller, and the per-row
    estimate follows both."""
    spread = _bounds(skewed_reps).std(axis=0, ddof=1)
    assert spread[1] > spread[0]
    normal = _normal_theory(skewed_reps)
    se_lo, se_hi = np.array([bm._percentile_mcse(r) for r in skewed_reps]).mean(axis=0)
    assert se_hi > 1.05 * normal > 1.05**2 * se_lo


def test_the_compared_sd_is_never_below_either_estimate(skewed_reps: list[np.ndarray]) -> None:
    normal = _normal_theory(skewed_reps)
    for r in skewed_reps[:5]:
        used = np.array(bm._bound_mcse(r))
        assert np.all(used >= np.array(bm._percentile_mcse(r)))
        assert np.all(used >= 0.9 * normal)  # this seed's width, not the mean width


def test_bootstrap_ci_reports_its_bounds_and_their_sds() -> None:
    values = np.random.default_rng(4).normal(10.0, 2.0, 500)
    lo, hi, se_lo, se_hi = bm._ref_bootstrap_ci(values, "t:ci")
    reps = bm._ref_bootstrap_means(values, "t:ci")
    assert (lo, hi) == tuple(np.percentile(reps, [2.5, 97.5]))
    assert (se_lo, se_hi) == bm._bound_mcse(reps)
    assert lo < values.mean() < hi


def test_t_bound_sd_matches_the_spread_over_seeds() -> None:
    rng = np.random.default_rng(3)
    counts = rng.integers(5, 30, 60).astype(float)
    sums = counts * rng.lognormal(1.0, 1.0, 60)
    runs = np.array([bm._ref_cluster_t_ci(sums, counts, f"t:{s}") for s in range(SEEDS)])
    lo, hi, se = runs.T
    assert 0.7 < np.mean(se) / np.std(hi, ddof=1) < 1.45


@pytest.mark.parametrize("n", [0, 1])
def test_too_few_values_give_no_bound_and_no_sd(n: int) -> None:
    out = bm._ref_bootstrap_ci(np.ones(n), "t:few")
    assert np.isnan(out).all()
