"""The fast bootstrap: determinism, stable seeds, agreement with the plain i.i.d. bootstrap
within Monte-Carlo error, exact pooling, and coverage."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from rupeebias_core.metrics import (
    bootstrap_mean_ci,
    iid_bootstrap_means,
    percentile_ci,
    poisson_replicates,
    pool,
    rng_for,
    seed_from_key,
)
from rupeebias_core.metrics.bootstrap import EXACT_MAX_N
from rupeebias_core.metrics.max_gap import max_gap


def _heavy(n: int, seed: int) -> np.ndarray:
    """Δ-like sample: many exact zeros, a log-normal tail capped at 200."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.4, 0.0, rng.lognormal(1.5, 1.2, n))
    return np.round(np.minimum(x, 200.0), 2)


def test_seed_is_stable_across_processes_and_hash_seeds() -> None:
    import rupeebias_core.metrics.seeds as seeds_module

    # load the module file directly: the subprocess stays light (no pandas/scipy import)
    code = ("import importlib.util as u;"
            f"s=u.spec_from_file_location('s', {seeds_module.__file__!r});"
            "m=u.module_from_spec(s);s.loader.exec_module(m);"
            "print(m.seed_from_key('axis-md:gpt-5.4:Caste:en'))")
    outs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, check=True)
        outs.add(int(res.stdout))
    assert outs == {seed_from_key("axis-md:gpt-5.4:Caste:en")}
    assert seed_from_key("a") != seed_from_key("b")


def test_replicates_deterministic_per_key() -> None:
    x = _heavy(5000, 1)
    a, b = poisson_replicates(x, "k"), poisson_replicates(x, "k")
    np.testing.assert_array_equal(a.sums, b.sums)
    np.testing.assert_array_equal(a.weights, b.weights)
    c = poisson_replicates(x, "other")
    assert not np.array_equal(a.sums, c.sums)
    assert bootstrap_mean_ci(x, "k") == bootstrap_mean_ci(x, "k")


@pytest.mark.parametrize(("n", "b", "tol"), [(40, 20_000, 0.08), (EXACT_MAX_N, 20_000, 0.08),
                                             (900, 20_000, 0.08), (20_000, 4_000, 0.15)])
def test_fast_ci_matches_iid_bootstrap_within_monte_carlo_error(n: int, b: int, tol: float
                                                                 ) -> None:
    """Endpoints must agree to ~4 Monte-Carlo standard errors (the MC sd of a 2.5 %
    percentile endpoint is ~1.4 % of the half-width at 20k replicates, ~3 % at 4k)."""
    x = _heavy(n, n)
    fast = poisson_replicates(x, f"cmp:{n}", b)
    iid = iid_bootstrap_means(x, np.random.default_rng(n), b)
    flo, fhi = fast.ci()
    ilo, ihi = percentile_ci(iid)
    half = (ihi - ilo) / 2
    assert abs(flo - ilo) < tol * half
    assert abs(fhi - ihi) < tol * half
    assert np.nanstd(fast.replicate_means()) == pytest.approx(iid.std(), rel=tol / 2)
    assert fast.mean == pytest.approx(x.mean(), rel=1e-12)


def test_pooling_equals_resampling_the_union_in_distribution() -> None:
    parts = [_heavy(3000, 7), _heavy(800, 8) + 5, _heavy(150, 9) * 3]
    union = np.concatenate(parts)
    pooled = pool(poisson_replicates(p, f"part:{i}", 20_000) for i, p in enumerate(parts))
    assert pooled.n == union.size
    assert pooled.mean == pytest.approx(union.mean(), rel=1e-12)
    iid = iid_bootstrap_means(union, np.random.default_rng(3), 20_000)
    lo, hi = pooled.ci()
    ilo, ihi = percentile_ci(iid)
    half = (ihi - ilo) / 2
    assert abs(lo - ilo) < 0.08 * half and abs(hi - ihi) < 0.08 * half


def test_pool_adds_sums_and_weights_exactly() -> None:
    a = poisson_replicates(np.arange(10.0), "a", 50)
    b = poisson_replicates(np.arange(1000.0), "b", 50)
    p = pool([a, b])
    np.testing.assert_array_equal(p.sums, a.sums + b.sums)
    np.testing.assert_array_equal(p.weights, a.weights + b.weights)


def test_small_samples_use_the_plain_iid_bootstrap() -> None:
    x = np.array([0.1, 0.5, 0.2, 0.9, 0.4])
    ci = bootstrap_mean_ci(x, "qv:m:Caste:en")
    ref = percentile_ci(iid_bootstrap_means(x, rng_for("qv:m:Caste:en")))
    assert (ci.lo, ci.hi) == ref
    assert ci.mean == pytest.approx(0.42)


def test_chunk_size_leaves_every_replicate_unchanged() -> None:
    """Row resampling is chunked for speed (bootstrap.CHUNK_DRAWS); the chunks come from one
    random stream, so the replicates, and MOG's interval, are the same for any chunk size."""
    x = _heavy(200, 3)
    one = iid_bootstrap_means(x, rng_for("chunk"), max_draws=10**9)
    assert np.array_equal(iid_bootstrap_means(x, rng_for("chunk")), one)
    assert np.array_equal(iid_bootstrap_means(x, rng_for("chunk"), max_draws=1000), one)
    ids = np.array([f"i{n % 7}" for n in range(x.size)], dtype=object)
    whole = max_gap(x + 1.0, ids, "mog:chunk", max_draws=10**9)
    assert max_gap(x + 1.0, ids, "mog:chunk") == whole
    assert max_gap(x + 1.0, ids, "mog:chunk", max_draws=999) == whole


def test_constant_sample_gives_degenerate_interval_and_tiny_samples_nan() -> None:
    ci = bootstrap_mean_ci(np.full(10_000, 7.0), "c")
    assert (ci.mean, ci.lo, ci.hi) == (7.0, 7.0, 7.0)
    one = bootstrap_mean_ci([3.0], "one")
    assert one.mean == 3.0 and math.isnan(one.lo)
    assert math.isnan(bootstrap_mean_ci([], "none").mean)


@pytest.mark.parametrize("n", [60, 3000])
def test_coverage_is_close_to_95_percent(n: int) -> None:
    """Percentile intervals from 300 normal samples cover the true mean ~95 % of the time."""
    rng = np.random.default_rng(n)
    covered = 0
    trials = 300
    for t in range(trials):
        x = rng.normal(10.0, 3.0, n)
        lo, hi = poisson_replicates(x, f"cov:{n}:{t}", 1000).ci()
        covered += lo <= 10.0 <= hi
    # binomial sd at 95 % over 300 trials is 1.3 points
    assert 0.90 <= covered / trials <= 0.985


# ---- cluster (slot) bootstrap, the corrected method's Mean Δ% CI ---------------------------

def _clustered(n_clusters: int, per: int, rng: np.random.Generator,
               effect_sd: float = 3.0, noise_sd: float = 1.0) -> list[np.ndarray]:
    """Clusters sharing a random effect: values in one cluster are correlated, like the pairs
    of one slot that reuse the same responses. The true mean is 10."""
    return [10.0 + rng.normal(0, effect_sd) + rng.normal(0, noise_sd, per)
            for _ in range(n_clusters)]


def _cluster_reps(clusters: list[np.ndarray], key: str, b: int = 1000):
    from rupeebias_core.metrics.bootstrap import cluster_poisson_replicates

    return cluster_poisson_replicates([c.sum() for c in clusters],
                                      [c.size for c in clusters], key, b)


def test_cluster_bootstrap_keeps_the_sample_and_is_seeded() -> None:
    clusters = _clustered(20, 6, np.random.default_rng(0))
    a, b = _cluster_reps(clusters, "k"), _cluster_reps(clusters, "k")
    assert a.n == 120 and a.units == 20
    assert a.mean == pytest.approx(np.concatenate(clusters).mean())
    np.testing.assert_array_equal(a.sums, b.sums)
    assert not np.array_equal(a.sums, _cluster_reps(clusters, "other").sums)


def test_cluster_bootstrap_of_singletons_matches_the_value_bootstrap() -> None:
    x = _heavy(400, 3)
    clusters = [np.array([v]) for v in x]
    lo_c, hi_c = _cluster_reps(clusters, "single", 4000).ci()
    ci_v = bootstrap_mean_ci(x, "single-v", 4000)
    lo_v, hi_v = ci_v.lo, ci_v.hi
    width = hi_v - lo_v
    assert abs(lo_c - lo_v) < 0.1 * width and abs(hi_c - hi_v) < 0.1 * width


def test_one_cluster_has_no_interval_and_pooling_counts_units() -> None:
    one = _cluster_reps([np.array([1.0, 5.0, 9.0])], "one")
    assert one.n == 3 and one.units == 1 and not one.has_ci
    assert all(math.isnan(v) for v in one.ci())
    two = pool([one, _cluster_reps([np.array([2.0, 4.0])], "two")])
    assert two.n == 5 and two.units == 2 and two.has_ci
    mixed = pool([one, poisson_replicates(np.arange(4.0), "v", 1000)])
    assert mixed.units == 5


def test_cluster_bootstrap_covers_when_the_pair_bootstrap_does_not() -> None:
    """With correlated values inside clusters, resampling values gives intervals that are far
    too narrow; resampling clusters restores ~95 % coverage of the true mean."""
    rng = np.random.default_rng(42)
    trials, cov_c, cov_v = 200, 0, 0
    for t in range(trials):
        clusters = _clustered(40, 8, rng)
        lo, hi = _cluster_reps(clusters, f"cc:{t}").ci()
        cov_c += lo <= 10.0 <= hi
        lo, hi = poisson_replicates(np.concatenate(clusters), f"cv:{t}", 1000).ci()
        cov_v += lo <= 10.0 <= hi
    assert 0.89 <= cov_c / trials <= 0.99  # binomial sd ~1.5 points; 40 clusters: slight under
    assert cov_v / trials < 0.6


def test_cluster_bootstrap_rejects_mismatched_inputs() -> None:
    from rupeebias_core.metrics.bootstrap import cluster_poisson_replicates

    with pytest.raises(ValueError, match="differ in length"):
        cluster_poisson_replicates([1.0, 2.0], [1.0], "k")
    empty = cluster_poisson_replicates([], [], "k", 10)
    assert empty.n == 0 and not empty.has_ci


def _slot_gaps(values: np.ndarray) -> np.ndarray:
    from rupeebias_core.metrics.pairs import relative_gap

    k = values.size
    return relative_gap(np.repeat(values[:, None], k, axis=1), np.repeat(values[None, :], k,
                                                                          axis=0))


def test_answer_bootstrap_mean_is_the_pair_mean_and_missing_answers_drop_out() -> None:
    from rupeebias_core.metrics import answer_bootstrap_pair_mean_ci

    values = np.array([10.0, 12.0, 9.0, 15.0, np.nan])
    gaps = _slot_gaps(values)
    ci = answer_bootstrap_pair_mean_ci(gaps, "slot")
    iu = np.triu_indices(4, 1)
    assert ci.n == 6 and ci.mean == pytest.approx(float(gaps[:4, :4][iu].mean()))
    assert ci.lo < ci.mean < ci.hi
    assert answer_bootstrap_pair_mean_ci(gaps, "slot") == ci  # seeded by the key
    wide = _slot_gaps(np.linspace(5.0, 20.0, 9) ** 1.3)
    assert answer_bootstrap_pair_mean_ci(wide, "a") != answer_bootstrap_pair_mean_ci(wide, "b")
    two = answer_bootstrap_pair_mean_ci(_slot_gaps(np.array([10.0, 12.0, np.nan])), "s")
    assert two.n == 1 and math.isnan(two.lo) and math.isnan(two.hi)  # one pair: no interval
    with pytest.raises(ValueError, match="square"):
        answer_bootstrap_pair_mean_ci(np.zeros((2, 3)), "s")


def test_answer_bootstrap_covers_where_the_pair_bootstrap_does_not() -> None:
    """A slot's pairs share its k answers: resampling pairs gives intervals far too narrow for
    the expected gap between two answers; resampling answers comes close to 95 %."""
    from rupeebias_core.metrics import answer_bootstrap_pair_mean_ci

    rng = np.random.default_rng(1)
    big = rng.lognormal(0.0, 0.3, size=(2, 1_000_000))
    from rupeebias_core.metrics.pairs import relative_gap

    truth = float(relative_gap(big[0], big[1]).mean())
    trials, cov_a, cov_p = 200, 0, 0
    for t in range(trials):
        gaps = _slot_gaps(rng.lognormal(0.0, 0.3, size=12))
        a = answer_bootstrap_pair_mean_ci(gaps, f"a:{t}", 1000)
        p = bootstrap_mean_ci(gaps[np.triu_indices(12, 1)], f"p:{t}", 1000)
        cov_a += a.lo <= truth <= a.hi
        cov_p += p.lo <= truth <= p.hi
    # percentile intervals from 12 answers run a little short of 95 % (binomial sd ~2 points)
    assert cov_a / trials >= 0.82
    assert cov_p / trials <= 0.75
    assert cov_a - cov_p >= 0.15 * trials


@pytest.mark.parametrize("n_unique", [1, 5, 16, 17, 300])
def test_strata_of_a_sorted_sample_match_its_unique_values(n_unique: int) -> None:
    """Few distinct values: one exact stratum per value, as ``np.unique`` counts them (the
    strata read the runs of the sorted sample instead of sorting it again); more: strata that
    partition the sample and keep its total."""
    from rupeebias_core.metrics.bootstrap import MAX_STRATA, _strata

    rng = np.random.default_rng(7)
    xs = rng.choice(np.linspace(-3.0, 40.0, n_unique), size=EXACT_MAX_N + 100)
    xs[:4] = [-0.0, 0.0, -0.0, 0.0]  # signed zeros are one value, as for np.unique
    xs = np.sort(xs)
    sizes, mu, var = _strata(xs)
    assert sizes.sum() == xs.size
    assert math.isclose(float((sizes * mu).sum()), float(xs.sum()), rel_tol=1e-12)
    uniq, counts = np.unique(xs, return_counts=True)
    if uniq.size <= MAX_STRATA:
        np.testing.assert_array_equal(sizes, counts)
        np.testing.assert_array_equal(mu, uniq)
        assert not var.any()
    else:
        assert (var >= 0).all() and var.max() > 0 and xs[0] <= mu.min() <= mu.max() <= xs[-1]
