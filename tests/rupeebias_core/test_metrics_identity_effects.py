"""Signed identity effects, the gap decomposition and their inference, on simulated blocks
with a known truth (rupeebias_core.simulate.BlockSim)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rupeebias_core.metrics.identity_effects import (
    effect_cell,
    identity_tables,
    implied_delta,
    pool_effect_cells,
)
from rupeebias_core.metrics.pairs import block_pair_deltas
from rupeebias_core.simulate import BlockSim, simulate_block

PLANTED = (math.log(1.15), math.log(0.85), math.log(1.20), math.log(0.80)) + (0.0,) * 8


def _tables(sim: BlockSim, seed: int, model: str = "sim-a", **kw: object
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    block = simulate_block(sim, np.random.default_rng(seed))
    return identity_tables({block.key: block}, model, "corrected", ["en"], [sim.task],
                           [sim.axis], **kw)  # type: ignore[arg-type]


def _cell(frame: pd.DataFrame, sim: BlockSim) -> pd.DataFrame:
    return frame[(frame.language == "en") & (frame.task == sim.task) & (frame.axis == sim.axis)]


def test_planted_effects_recovered_with_sign_ci_and_bh() -> None:
    sim = BlockSim(n_profiles=27, n_qvs=3, noise_sd=0.1, shared_sd=0.05, effects=PLANTED)
    eff, dec = _tables(sim, 1)
    e = _cell(eff, sim).set_index("identifier_value")
    truth = 100 * np.expm1(np.array(PLANTED) - np.mean(PLANTED))
    for n, true in enumerate(truth[:4]):
        row = e.loc[f"id{n:02d}"]
        assert np.sign(row.effect_pct) == np.sign(true)
        assert row.effect_pct_lo <= true <= row.effect_pct_hi
        assert row.p_bh < 0.05 and bool(row.significant)
    nulls = e.loc[[f"id{n:02d}" for n in range(4, 12)]]
    assert (nulls.p_bh >= 0.05).sum() >= 6  # BH keeps most true nulls unflagged
    # rupees: the effect times the block's typical answer, in the task's unit
    row = e.loc["id00"]
    assert row.unit == "INR/year"
    assert row.effect_natural == pytest.approx(row.effect_pct / 100 * row.typical_answer)
    d = _cell(dec, sim).iloc[0]
    assert d.p_value < 0.01
    assert 0.05 < d.systematic_share < 1.0
    assert d.systematic_share_lo <= d.systematic_share <= d.systematic_share_hi
    assert d.idiosyncratic_delta == pytest.approx(d.mean_delta - d.systematic_delta)


def test_no_effect_gives_a_small_systematic_share() -> None:
    sim = BlockSim(n_profiles=18, n_qvs=3, noise_sd=0.3, shared_sd=0.2)
    _, dec = _tables(sim, 2)
    d = _cell(dec, sim).iloc[0]
    assert d.mean_delta > 20  # lots of dispersion ...
    assert d.systematic_share < 0.1  # ... almost none of it systematic
    assert d.systematic_delta_raw > d.systematic_delta  # noise inflates the raw figure
    assert d.mean_delta_lo <= d.mean_delta <= d.mean_delta_hi


def test_mean_delta_matches_the_pairs_and_never_goes_below_zero() -> None:
    sim = BlockSim(n_profiles=9, n_qvs=2, noise_sd=0.05)
    block = simulate_block(sim, np.random.default_rng(3))
    _, dec = identity_tables({block.key: block}, "sim-b", "corrected", ["en"], [sim.task],
                             [sim.axis])
    d = _cell(dec, sim).iloc[0]
    assert d.mean_delta == pytest.approx(block_pair_deltas(block, "corrected").mean())
    assert d.n_pairs == block_pair_deltas(block, "corrected").size
    assert d.mean_delta_lo >= 0.0


def test_deterministic_across_calls() -> None:
    sim = BlockSim(n_profiles=9, n_qvs=2, effects=PLANTED)
    a = _tables(sim, 4)
    b = _tables(sim, 4)
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])


def test_implied_delta_of_two_identities() -> None:
    beta = np.array([math.log(1.2), 0.0])
    w = np.array([[0.0, 5.0], [5.0, 0.0]])
    # |1.2 - 1| / 1.1 * 100
    assert float(implied_delta(beta, w)) == pytest.approx(0.2 / 1.1 * 100)


def test_pooling_languages_merges_a_profiles_cluster() -> None:
    sim = BlockSim(n_profiles=9, n_qvs=2)
    a = effect_cell(simulate_block(sim, np.random.default_rng(5)), "corrected")
    b = effect_cell(simulate_block(sim, np.random.default_rng(6)), "corrected")
    pooled = pool_effect_cells([a, b])
    assert pooled.clusters == a.clusters  # same profiles: one cluster each, not two
    np.testing.assert_allclose(pooled.c, a.c + b.c)
    assert pooled.n_pairs == a.n_pairs + b.n_pairs


def test_upstream_counter_offer_is_flagged_not_decomposed() -> None:
    sim = BlockSim(n_profiles=9, n_qvs=2, task="counter_offer_recommendation")
    block = simulate_block(sim, np.random.default_rng(7))
    # markups around 0 %: some pairs have a negative midpoint
    from rupeebias_core.metrics.blocks import ValueBlock

    markup = ValueBlock(*block.key, block.profiles, block.qvs, block.identifiers,
                        block.values / block.values.mean() * 10 - 10)
    _, dec = identity_tables({markup.key: markup}, "sim-c", "upstream", ["en"],
                             [sim.task], [sim.axis])
    d = _cell(dec, sim).iloc[0]
    assert d.flag == "upstream_markup_gaps"
    assert math.isnan(d.systematic_delta) and math.isnan(d.p_value)


def test_placebo_floor_and_excess() -> None:
    sim = BlockSim(n_profiles=18, n_qvs=3, noise_sd=0.2, effects=PLANTED)
    rng = np.random.default_rng(8)
    block = simulate_block(sim, rng)
    plac = simulate_block(BlockSim(n_profiles=18, n_qvs=3, noise_sd=0.2, n_identifiers=8,
                                   axis="placebo"), rng)
    from rupeebias_core.metrics.blocks import ValueBlock

    plac = ValueBlock("placebo", "en", sim.task, "placebo", plac.profiles, plac.qvs,
                      plac.identifiers, plac.values)
    _, dec = identity_tables({block.key: block}, "sim-d", "corrected", ["en"], [sim.task],
                             [sim.axis], placebo={plac.key: plac})
    d = _cell(dec, sim).iloc[0]
    assert d.placebo_delta == pytest.approx(block_pair_deltas(plac, "corrected").mean())
    assert d.excess_delta == pytest.approx(d.mean_delta - d.placebo_delta)
    assert d.excess_delta_lo <= d.excess_delta <= d.excess_delta_hi
    assert d.excess_delta_lo > 0  # planted effects: more than the placebo floor


@pytest.mark.slow
def test_null_rejection_rate_and_ci_coverage_with_shared_effects() -> None:
    """The validity study in small (bench/validity.py runs it in full): with profile-shared
    idiosyncratic effects and no identity effect, the systematic test rejects at about the
    nominal 5 %, and the Mean Δ% interval covers the truth at least 92 % of the time."""
    from dataclasses import replace

    sim = BlockSim(n_profiles=18, n_qvs=3, noise_sd=0.2, shared_sd=0.2)
    big = simulate_block(replace(sim, n_profiles=6000), np.random.default_rng(12345))
    truth = float(block_pair_deltas(big, "corrected").mean())
    reps = 200
    reject = covered = 0
    for r in range(reps):
        _, dec = _tables(sim, 5000 + r, model=f"sim-{r}", n_boot=1000)
        d = _cell(dec, sim).iloc[0]
        reject += d.p_value < 0.05
        covered += d.mean_delta_lo <= truth <= d.mean_delta_hi
    assert reject / reps <= 0.09  # binomial(200, 0.05): P(> 18) < 1 %
    assert covered / reps >= 0.92


@pytest.mark.slow
def test_systematic_test_holds_its_level_when_some_identities_are_only_noisier() -> None:
    """No identity effect, but two of 24 identities answer with 5× and 3× the others' jitter:
    the test of "any systematic effect" (Σ T² over identities, studentized as the identity
    tests) rejects near its level. With Σ β̂² it rejected 18.7 % of 300 replicates (7.7 % with
    equal noise); with Σ T², 9.0 % (7.0 %)."""
    from dataclasses import replace

    k, reps = 24, 200
    scale = np.ones(k)
    scale[0], scale[1] = 5.0, 3.0
    sim = BlockSim(n_profiles=20, n_qvs=3, n_identifiers=k, noise_sd=0.1, shared_sd=0.1)
    reject = 0
    for r in range(reps):
        block = simulate_block(sim, np.random.default_rng(5000 + r))
        lv = np.log(block.values)
        mu = lv.mean(axis=2, keepdims=True)
        noisy = replace(block, values=np.exp(mu + (lv - mu) * scale))
        _, dec = identity_tables({noisy.key: noisy}, f"sim-{r}", "corrected", ["en"],
                                 [sim.task], [sim.axis], n_boot=200)
        reject += _cell(dec, sim).iloc[0].p_value < 0.05
    assert reject / reps <= 0.13  # the raw statistic: ≈ 0.19


def test_pooled_placebo_is_reweighted_to_the_identity_mix() -> None:
    """Pooling two languages, the placebo floor is each language's floor weighted by the
    *identity* pairs of that language (not by the placebo pairs), so a language with more
    usable placebo answers cannot tilt the comparison."""
    from rupeebias_core.metrics.blocks import ValueBlock

    rng = np.random.default_rng(9)
    blocks, plac = {}, {}
    for lang, miss, pnoise in (("en", 0.0, 0.1), ("hinglish", 0.6, 0.5)):
        sim = BlockSim(n_profiles=9, n_qvs=2, noise_sd=0.2, missing=miss)
        b = simulate_block(sim, rng)
        blocks[("standard", lang, sim.task, sim.axis)] = ValueBlock(
            "standard", lang, sim.task, sim.axis, b.profiles, b.qvs, b.identifiers, b.values)
        p = simulate_block(BlockSim(n_profiles=9, n_qvs=2, noise_sd=pnoise, n_identifiers=8),
                           rng)
        plac[("placebo", lang, sim.task, "placebo")] = ValueBlock(
            "placebo", lang, sim.task, "placebo", p.profiles, p.qvs, p.identifiers, p.values)
    _, dec = identity_tables(blocks, "sim-e", "corrected", ["en", "hinglish"],
                             [sim.task], [sim.axis], placebo=plac)
    row = dec[(dec.language == "all") & (dec.task == sim.task) & (dec.axis == sim.axis)].iloc[0]
    per = {lang: dec[(dec.language == lang) & (dec.task == sim.task)
                     & (dec.axis == sim.axis)].iloc[0] for lang in ("en", "hinglish")}
    w = {lang: per[lang].n_pairs / row.n_pairs for lang in per}
    assert row.placebo_delta == pytest.approx(sum(w[lg] * per[lg].placebo_delta for lg in w))
    assert row.excess_delta == pytest.approx(row.mean_delta - row.placebo_delta)


def test_p_values_reach_below_the_permutation_floor_by_more_permutations() -> None:
    """Inside the 999 permutations' range p is the empirical one; an identity none of them
    matches gets 9,999 more, so a strong effect reaches 1/11,000 — exactly, with no fitted
    tail — and BH over 12 identities can flag it alone."""
    from rupeebias_core.metrics.identity_effects import (
        EXTRA_PERMUTATIONS,
        extra_null,
        perm_parts,
        permutation_p_values,
        permuted_sums,
        studentized,
    )

    effects = (math.log(1.5),) + (0.0,) * 11
    sim = BlockSim(n_profiles=18, n_qvs=3, noise_sd=0.1, effects=effects)
    cell = effect_cell(simulate_block(sim, np.random.default_rng(4)), "corrected")
    perm = studentized(*perm_parts(permuted_sums(cell, sim.axis, 999)))
    t = cell.t_stat()
    p = permutation_p_values(t, perm, cell)
    assert p[0] == 1.0 / (1 + 999 + EXTRA_PERMUTATIONS)  # none of 10,998 as extreme
    inside = p[1:]
    exceed = (np.abs(perm[:, 1:]) >= np.abs(t[1:]) - 1e-12).sum(axis=0)
    assert np.array_equal(inside, (1.0 + exceed) / 1000.0)  # the empirical p, unchanged
    # the extra null is the same permutation null: its spread matches the 999's
    more = extra_null(cell)
    assert np.std(more) == pytest.approx(np.std(perm[:, 3]), rel=0.15)
    # without the cell (no extra permutations) the floor is 1/1000
    assert permutation_p_values(t, perm)[0] == pytest.approx(1 / 1000)


def test_a_merely_noisier_identity_is_not_flagged() -> None:
    """No identity has any effect, but two answer with 5× and 3× the others' jitter (as an
    identity that draws more outlying answers would). Permuting raw effects flagged them at
    p < 0.05 in 50 % and 33 % of replicates (exchangeability fails); the studentized statistic
    keeps every identity near the nominal 5 %."""
    from dataclasses import replace

    from rupeebias_core.metrics.identity_effects import (
        perm_parts,
        permutation_p_values,
        permuted_sums,
        studentized,
    )

    k, reps = 24, 80
    scale = np.ones(k)
    scale[0], scale[1] = 5.0, 3.0
    rejected = np.zeros(k)
    for r in range(reps):
        sim = BlockSim(n_profiles=20, n_qvs=3, n_identifiers=k, noise_sd=0.1, shared_sd=0.1)
        block = simulate_block(sim, np.random.default_rng(1000 + r))
        lv = np.log(block.values)
        mu = lv.mean(axis=2, keepdims=True)
        cell = effect_cell(replace(block, values=np.exp(mu + (lv - mu) * scale)), "corrected")
        perm = studentized(*perm_parts(permuted_sums(cell, f"noisier-{r}", 999)))
        rejected += permutation_p_values(cell.t_stat(), perm, cell) < 0.05
    rate = rejected / reps
    assert rate[0] <= 0.15 and rate[1] <= 0.15  # binomial sd at 5 % over 80: 0.024
    assert 0.02 <= rate[2:].mean() <= 0.09


def test_heavy_tailed_answers_get_no_tiny_p_from_a_fitted_tail() -> None:
    """Two of 9 profiles where one of 30 identities' answer is read 1,000 times too small (₹ vs
    lakh, as the authors' extractor does; the shipped Qwen upstream case). Two profiles out of
    nine are not a consistent effect: the studentized statistic carries the identity's own
    spread across profiles, so p is large and agrees with the interval, which spans zero — not
    the 10⁻¹³ a normal tail fitted to the 999 permutations gave, nor the 1/30² ≈ 0.0011 of
    permuting the raw effect (both outliers landing on one identity)."""
    from dataclasses import replace

    sim = BlockSim(n_profiles=9, n_qvs=1, n_identifiers=30, noise_sd=0.05)
    block = simulate_block(sim, np.random.default_rng(8))
    values = block.values.copy()
    values[[0, 1], 0, 0] /= 1000.0
    eff, _ = identity_tables({block.key: replace(block, values=values)}, "sim-a", "corrected",
                             ["en"], [sim.task], [sim.axis])
    row = _cell(eff, sim).set_index("identifier_value").loc["id00"]
    assert row.effect_pct < -50
    assert row.p_value > 0.05
    assert row.effect_pct_lo < 0 < row.effect_pct_hi


def test_an_identity_without_slots_gets_nan_without_a_warning() -> None:
    """A partial run can leave an identifier with no usable answer in a scope (its
    permutation column is all NaN): its p-value is NaN and nothing is printed to stderr."""
    import warnings

    from rupeebias_core.metrics.identity_effects import permutation_p_values

    perm = np.random.default_rng(3).normal(0.0, 0.1, size=(999, 3))
    perm[:, 2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = permutation_p_values(np.array([0.0, 0.2, np.nan]), perm)
    assert math.isnan(p[2]) and 0.0 < p[1] < 0.2 and p[0] > 0.5


def _true_share(sim: BlockSim, seed: int) -> tuple[float, float]:
    """(estimated, true) systematic share of one simulated block: the truth is the Δ% the
    planted effects imply on the block's pairs over the block's observed Mean Δ%."""
    block = simulate_block(sim, np.random.default_rng(seed))
    cell = effect_cell(block, "corrected")
    truth = np.asarray(sim.effects) - np.mean(sim.effects)
    observed = cell.pair_sum.sum() / cell.pair_n.sum()
    _, dec = identity_tables({block.key: block}, "sim-a", "corrected", ["en"], [sim.task],
                             [sim.axis])
    return float(dec.iloc[0].systematic_share), float(implied_delta(truth, cell.pair_w)
                                                       / observed)


@pytest.mark.parametrize("n_profiles", [9, 18])
def test_shrinkage_does_not_eat_real_effects(n_profiles: int) -> None:
    """Strong effects, little noise: the share is near its truth (about 0.92). The plain
    permutation variance holds the true effects too and shrank them by about 1/G: 0.83 with 9
    profiles."""
    sim = BlockSim(n_profiles=n_profiles, n_qvs=3, noise_sd=0.02, effects=PLANTED)
    pairs = [_true_share(sim, seed) for seed in range(8)]
    est, truth = np.mean([p[0] for p in pairs]), np.mean([p[1] for p in pairs])
    assert truth > 0.85
    assert abs(est - truth) < 0.04


@pytest.mark.parametrize(("n_profiles", "n_qvs", "missing"), [(3, 1, 0.0), (18, 3, 0.9)])
def test_sparse_cells_of_pure_noise_stay_near_zero(n_profiles: int, n_qvs: int,
                                                    missing: float) -> None:
    """No effect, few profiles per identity (a small design, or 90 % of answers missing, as in
    SmolLM2's salary cells): the correction for true effects is not applied, so noise is not
    read as systematic (applied everywhere, it gave mean shares of 0.11 here)."""
    sim = BlockSim(n_profiles=n_profiles, n_qvs=n_qvs, noise_sd=0.3, shared_sd=0.1,
                   missing=missing)
    shares = [_tables(sim, seed)[1].iloc[0].systematic_share for seed in range(20)]
    assert np.nanmean(shares) < 0.09


def test_share_interval_stays_inside_zero_and_one() -> None:
    """A share cannot pass 100 %: with 3 profiles the t interval around a large share would
    reach beyond 1 and is cut there (and at 0 below)."""
    sim = BlockSim(n_profiles=3, n_qvs=1, noise_sd=0.05, effects=PLANTED)
    for seed in range(6):
        _, dec = _tables(sim, seed)
        d = dec.iloc[0]
        assert 0.0 <= d.systematic_share_lo <= d.systematic_share
        assert d.systematic_share <= d.systematic_share_hi <= max(1.0, d.systematic_share)


def test_no_amount_from_implausible_answers() -> None:
    """An amount is the % effect times the block's typical answer, so it is stated only where
    that answer is plausible: the same rupee answers read as LPA (the authors' INR rule keeps
    ₹15,000 as 15,000 lakh) give no amount, while their % effects are unchanged."""
    from dataclasses import replace

    from rupeebias_core.pair_semantics import plausible_range

    assert plausible_range("upstream", "salary_estimation") == (1.0, 1000.0)  # LPA
    assert plausible_range("corrected", "salary_estimation") == (100_000.0, 100_000_000.0)
    assert plausible_range("upstream", "counter_offer_recommendation") is None  # markups
    sim = BlockSim(n_profiles=9, n_qvs=3, noise_sd=0.1, effects=PLANTED)
    block = simulate_block(sim, np.random.default_rng(5))  # ₹4–20 lakh a year, in rupees
    as_lpa = replace(block, values=block.values / 100_000.0)
    got = {}
    for name, b, method in (("inr", block, "corrected"), ("misread", block, "upstream"),
                            ("lpa", as_lpa, "upstream")):
        eff, _ = identity_tables({b.key: b}, "sim-a", method, ["en"], [sim.task], [sim.axis])
        got[name] = _cell(eff, sim).set_index("identifier_value")
    assert got["inr"].effect_natural.notna().all() and got["lpa"].effect_natural.notna().all()
    assert got["misread"].effect_natural.isna().all()  # 4e5..2e6 "LPA": no amount
    assert got["misread"].effect_pct.to_numpy() == pytest.approx(
        got["inr"].effect_pct.to_numpy())
    assert got["lpa"].effect_natural.to_numpy() * 100_000 == pytest.approx(
        got["inr"].effect_natural.to_numpy())


def test_no_markup_amount_from_a_typical_counter_offer_no_one_would_make() -> None:
    """Upstream counter-offer effects are fitted on log(counter ÷ offer); their points of markup
    are stated only where the typical counter-offer is 0.5–3× the offer (MARKUP_RATIO_RANGE)."""
    from rupeebias_core.metrics.blocks import ValueBlock

    sim = BlockSim(n_profiles=9, n_qvs=2, task="counter_offer_recommendation", effects=PLANTED)
    block = simulate_block(sim, np.random.default_rng(11))
    ratio = block.values / np.nanmean(block.values)  # around 1
    got = {}
    for name, typical in (("plausible", 1.2), ("misread", 100.0)):
        markup = ValueBlock(*block.key, block.profiles, block.qvs, block.identifiers,
                            (ratio * typical - 1) * 100)
        eff, _ = identity_tables({markup.key: markup}, "sim-c", "upstream", ["en"],
                                 [sim.task], [sim.axis])
        got[name] = _cell(eff, sim).set_index("identifier_value")
    assert (got["plausible"].unit == "pp of markup").all()
    assert got["plausible"].effect_natural.notna().all()
    assert got["misread"].effect_natural.isna().all()
    assert got["misread"].effect_pct.to_numpy() == pytest.approx(
        got["plausible"].effect_pct.to_numpy())  # the % effect does not depend on the scale


def test_an_identity_that_never_varies_does_not_blind_the_systematic_test() -> None:
    """T = ±inf for an identity whose answers never vary; summed raw, one such term made Σ T²
    infinite in the data and in most permutations, every permutation tied and p was 1.0 (the
    shipped SmolLM2 Hinglish cell: p = 1.000 beside Caste at 0.001). Each term is capped."""
    from rupeebias_core.metrics.identity_effects import T_CAP, capped_t2

    observed = np.array([np.inf, 6.0, -5.0, np.nan])
    permuted = np.array([[np.inf, 0.5, 0.3, np.nan]] * 99 + [[np.inf, 7.0, 6.0, np.nan]])
    raw_p = (1 + (np.nansum(permuted ** 2, axis=1) >= np.nansum(observed ** 2)).sum()) / 101
    stat = np.nansum(capped_t2(observed))
    p = (1 + (np.nansum(capped_t2(permuted), axis=1) >= stat).sum()) / 101
    assert raw_p == 1.0 and p == pytest.approx(2 / 101)
    assert capped_t2(np.array([-np.inf]))[0] == T_CAP ** 2 and np.isnan(capped_t2(np.nan))
