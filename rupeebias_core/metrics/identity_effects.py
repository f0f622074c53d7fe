"""Systematic identity effects: who gets more or less, by how much, and how much of a gap is
more than noise (docs/methodology.md, "Telling bias from noise").

Mean Δ% is a dispersion statistic: it does not change when identity labels are shuffled inside
a slot, so on its own it cannot tell "the model treats identity X differently" from "the
model's answers are jumpy". This module fits the two-way model of each block

    log answer[slot, identity] = slot level + identity effect + residual

and reports:

* the **identity effects** β_i (centred over the identities of the axis): exp(β_i) − 1 is the
  geometric-mean ratio of identity i's answers to the average identity's on matched slots;
* the **systematic Δ%**: the Mean Δ% the identity effects alone imply,
  200·|tanh((β_i − β_j)/2)| averaged over the cell's pairs, after empirical-Bayes shrinkage of
  the noisy β̂ (:func:`shrinkage`), against the observed Mean Δ%;
* the **placebo floor** (condition ``placebo``): Mean Δ% between identity-free statements
  in the same slots, and the excess of the observed gap over it.

Estimator: within each slot the log answers are centred on the slot mean of the identities
present; β_i is the mean of identity i's centred values over the slots that hold it and at
least one other identity, then centred over identities (exact least squares for complete
slots, a one-step approximation otherwise).

Inference respects the design's independent unit, the **profile**: question variants of a
profile share identity-specific idiosyncrasies (ICC 0.23–0.65 on the shipped run), and every
language and axis of a profile share the profile. So

* p-values come from permuting identity labels **jointly within a profile** (one permutation
  for all of its question variants and languages), valid even when profile × identity
  effects are shared across question variants; the statistic is **studentized** (the effect
  over its own profile-level standard error), so an identity whose answers are merely
  noisier than the others' is not flagged (unstudentized, 5× noise gave 50 % false flags);
* intervals come from a Poisson bootstrap over clusters = (task, profile), with one weight per
  cluster shared by every cell of the model, and a small-sample t interval: estimate ± t(G−1)
  × bootstrap SD × √(G/(G−1)), G clusters (percentile intervals over 9–27 clusters run narrow).

All of it reduces to per-cluster sums, so permutations and replicates are matrix products.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Final

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.stats import false_discovery_control

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock
from rupeebias_core.metrics.bootstrap import ClusterWeights, column_var, t_interval
from rupeebias_core.metrics.pairs import Method, relative_gap
from rupeebias_core.metrics.seeds import rng_for
from rupeebias_core.pair_semantics import (
    COUNTER_OFFER,
    MARKUP_RATIO_RANGE,
    METRIC_UNIT,
    plausible_range,
)

ALL = "all"
DEFAULT_PERMUTATIONS = 999
PLACEBO = "placebo"
#: An effect's unit from the metric's unit (pair_semantics.METRIC_UNIT, the one home of unit
#: labels): a difference of percentages is in percentage points.
_EFFECT_UNIT = {"%": "pp", "markup %": "pp of markup"}
NATURAL_UNIT: Mapping[str, Mapping[str, str]] = {
    method: {task: _EFFECT_UNIT.get(unit, unit) for task, unit in units.items()}
    for method, units in METRIC_UNIT.items()}


def log_values(block: ValueBlock, method: Method) -> np.ndarray:
    """The block's answers on the log scale (NaN where no log exists).

    Upstream counter-offer values are markups over the offer; log(1 + markup/100) is the log of
    counter-offer ÷ offer, and since the offer is fixed within a slot an identity effect on it
    is an effect on the counter-offer amount."""
    v = np.asarray(block.values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "upstream" and block.task == COUNTER_OFFER:
            out = np.log1p(v / 100.0)
        else:
            out = np.log(np.where(v > 0, v, np.nan))
    out[~np.isfinite(out)] = np.nan
    return out


def markup_gaps(method: Method, task: str) -> bool:
    """Upstream counter-offer gaps are relative gaps of markups, which can be negative: such a
    "gap" is not a distance between answers, so no page may show it as one."""
    return method == "upstream" and task == COUNTER_OFFER


@dataclass(frozen=True, eq=False)
class EffectCell:
    """Per-cluster sufficient statistics of one cell (a block, or a pool of blocks).

    ``c[g, i]``: sum over cluster g's slots of identity i's within-slot-centred log answer;
    ``m[g, i]``: how many such slots; ``pair_sum[g]``/``pair_n[g]``: the sum and number of
    the cluster's finite pair Δ%; ``pair_w[i, j]``: pairs per identity pair (for the implied
    systematic Δ%); ``sq[g, i]``: the second moments (c², c·m, m², 1[m > 0]) of the block-level
    clusters pooled into g, for the effects' standard errors (:func:`studentized`; sums of
    them stay sums when cells pool); ``log_sum``/``log_n``: the answers' log sum (typical
    answer level)."""

    identifiers: tuple[str, ...]
    clusters: tuple[str, ...]
    c: np.ndarray = field(repr=False)
    m: np.ndarray = field(repr=False)
    pair_sum: np.ndarray = field(repr=False)
    pair_n: np.ndarray = field(repr=False)
    pair_w: np.ndarray = field(repr=False)
    sq: np.ndarray = field(repr=False)  # (G, k, 4)
    log_sum: float = 0.0
    log_n: int = 0

    @property
    def n_pairs(self) -> int:
        return int(self.pair_n.sum())

    @property
    def n_slots(self) -> np.ndarray:
        return self.m.sum(axis=0)

    def beta(self) -> np.ndarray:
        return centred_effects(self.c.sum(axis=0), self.m.sum(axis=0))

    def t_stat(self) -> np.ndarray:
        sq = self.sq.sum(axis=0)
        return studentized(self.c.sum(axis=0), self.m.sum(axis=0),
                           [sq[..., n] for n in range(sq.shape[-1])])

    @property
    def typical_log(self) -> float:
        return self.log_sum / self.log_n if self.log_n else math.nan


def centred_effects(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """β from summed centred values and counts (last axis = identities), centred over the
    identities that have any slot; NaN for identities without one."""
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        have = np.isfinite(b)
        centre = np.where(have, b, 0.0).sum(axis=-1, keepdims=True) / have.sum(
            axis=-1, keepdims=True)
    return b - centre


def moments(c: np.ndarray, m: np.ndarray) -> np.ndarray:
    """(G, k, 4) second moments of one block's clusters: c², c·m, m², 1[m > 0]."""
    return np.stack([c * c, c * m, m * m, (m > 0).astype(float)], axis=-1)


def studentized(num: np.ndarray, den: np.ndarray, sq: Sequence[np.ndarray],
                beta: np.ndarray | None = None) -> np.ndarray:
    """The effects over their profile-level standard errors, T_i = β_i / se_i (last axis of
    ``num``/``den`` = identities; ``sq`` the four summed :func:`moments`, each shaped like
    ``num``; ``beta`` the centred effects when already computed).

    se_i is the cluster-robust (sandwich) error of the ratio b_i = Σ_g c_gi / Σ_g m_gi:
    se² = G/(G−1) · Σ_g (c_gi − b_i m_gi)² / (Σ_g m_gi)², G = the clusters holding i; NaN
    below 2 clusters (one profile cannot tell an effect from that profile's jitter). Why
    studentize: within-profile permutation treats identities as exchangeable, so with the raw
    β an identity whose answers are only noisier than the rest (more refusal-like outliers,
    say) lands in the tails of its null and is flagged — 50 % of the time at 5× noise with no
    effect at all; T carries each identity's own noise, and permuting T is the usual remedy
    (a studentized permutation test: exact under exchangeability, asymptotically valid
    without it)."""
    beta = centred_effects(num, den) if beta is None else beta
    se = ratio_se(num, den, sq)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = beta / se
    # no spread at all (every answer of the identity the same): no effect is T = 0, an effect
    # is ±inf (nothing could be more consistent)
    return np.where((se == 0) & (np.abs(beta) <= 1e-12), 0.0, t)


#: |T| beyond which an identity adds no more to the systematic test's Σ T² (far past any
#: significance level). Why: an identity whose answers never vary has T = ±inf, and one
#: infinite term made Σ T² infinite in the observed data and in most permutations, so every
#: permutation tied and p was 1.0 even where other axes of the cell were clearly significant.
T_CAP: Final = 10.0


def capped_t2(t: np.ndarray) -> np.ndarray:
    """T², each term at most :data:`T_CAP` ² (NaN stays NaN: no test for that identity)."""
    return np.minimum(np.square(t), T_CAP * T_CAP)


def ratio_se(num: np.ndarray, den: np.ndarray, sq: Sequence[np.ndarray]) -> np.ndarray:
    """The cluster-robust standard error of b = num / den (see :func:`studentized`); NaN
    below 2 clusters."""
    s_cc, s_cm, s_mm, g = sq
    with np.errstate(invalid="ignore", divide="ignore"):
        b = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        rss = np.maximum(s_cc - 2.0 * b * s_cm + b * b * s_mm, 0.0)
        se = np.sqrt(g / np.maximum(g - 1.0, 1.0) * rss) / np.where(den > 0, den, np.nan)
    return np.where(g >= 2, se, np.nan)


@cache
def _pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k identities' pairs (i < j), made once per k: ``np.triu_indices`` took a quarter of
    :func:`implied_delta`."""
    i, j = np.triu_indices(k, 1)
    i.setflags(write=False)
    j.setflags(write=False)
    return i, j


def implied_delta(beta: np.ndarray, pair_w: np.ndarray) -> np.ndarray:
    """Mean Δ% implied by identity effects alone: Δ between exp(β_i) and exp(β_j) is
    200·|tanh((β_i − β_j)/2)|, weighted by the cell's pair counts. ``beta`` is (..., k)."""
    i, j = _pairs(beta.shape[-1])
    w = pair_w[i, j]
    keep = w > 0
    i, j, w = i[keep], j[keep], w[keep]
    d = 200.0 * np.abs(np.tanh((beta[..., i] - beta[..., j]) / 2.0))
    ok = np.isfinite(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(ok, d, 0.0) @ w) / (ok @ w.astype(float)) if w.size else \
            np.full(beta.shape[:-1], np.nan)


def effect_cell(block: ValueBlock, method: Method) -> EffectCell:
    """The sufficient statistics of one block; clusters are ``task:profile``."""
    lv = log_values(block, method)
    present = np.isfinite(lv)
    p, q, k = lv.shape
    n_present = present.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.nansum(lv, axis=2, keepdims=True) / np.maximum(n_present, 1)
    usable = present & (n_present >= 2)
    cen = np.where(usable, lv - centre, 0.0)
    c = cen.sum(axis=1)
    m = usable.sum(axis=1).astype(float)
    raw = block.values.reshape(p * q, k)
    i, j = _pairs(k)
    gaps = relative_gap(raw[:, i], raw[:, j], method)
    finite = np.isfinite(gaps)
    gsum = np.where(finite, gaps, 0.0).sum(axis=1).reshape(p, q).sum(axis=1)
    gn = finite.sum(axis=1).reshape(p, q).sum(axis=1).astype(float)
    pair_w = np.zeros((k, k))
    pair_w[i, j] = finite.sum(axis=0)
    pair_w = pair_w + pair_w.T
    clusters = tuple(f"{block.task}:{prof}" for prof in block.profiles)
    return EffectCell(block.identifiers, clusters, c, m, gsum, gn, pair_w, moments(c, m),
                      float(np.nansum(lv)), int(present.sum()))


def _align(cell: EffectCell, identifiers: tuple[str, ...]) -> EffectCell:
    """``cell`` on ``identifiers`` (a superset, in order): absent identifiers get no slots."""
    if cell.identifiers == identifiers:
        return cell
    pos = np.array([identifiers.index(i) for i in cell.identifiers], dtype=np.int64)
    c = np.zeros((len(cell.clusters), len(identifiers)))
    m = np.zeros_like(c)
    c[:, pos], m[:, pos] = cell.c, cell.m
    sq = np.zeros((*c.shape, cell.sq.shape[-1]))
    sq[:, pos] = cell.sq
    pw = np.zeros((len(identifiers), len(identifiers)))
    pw[np.ix_(pos, pos)] = cell.pair_w
    return EffectCell(identifiers, cell.clusters, c, m, cell.pair_sum, cell.pair_n, pw, sq,
                      cell.log_sum, cell.log_n)


def pool_effect_cells(cells: Sequence[EffectCell]) -> EffectCell:
    """One cell from several of the same axis (languages and/or tasks): clusters of the same
    name merge (a profile's languages are one cluster), identifiers align by name."""
    idents = tuple(dict.fromkeys(i for cell in cells for i in cell.identifiers))
    clusters = tuple(sorted({g for cell in cells for g in cell.clusters}))
    ipos = {v: n for n, v in enumerate(idents)}
    gpos = {v: n for n, v in enumerate(clusters)}
    c = np.zeros((len(clusters), len(idents)))
    m = np.zeros_like(c)
    sq = np.zeros((*c.shape, 4))
    ps = np.zeros(len(clusters))
    pn = np.zeros(len(clusters))
    pw = np.zeros((len(idents), len(idents)))
    for cell in cells:
        ii = np.array([ipos[v] for v in cell.identifiers], dtype=np.int64)
        gg = np.array([gpos[v] for v in cell.clusters], dtype=np.int64)
        np.add.at(c, (gg[:, None], ii[None, :]), cell.c)
        np.add.at(m, (gg[:, None], ii[None, :]), cell.m)
        np.add.at(sq, (gg[:, None], ii[None, :]), cell.sq)
        np.add.at(ps, gg, cell.pair_sum)
        np.add.at(pn, gg, cell.pair_n)
        pw[np.ix_(ii, ii)] += cell.pair_w
    return EffectCell(idents, clusters, c, m, ps, pn, pw, sq,
                      sum(cell.log_sum for cell in cells), sum(cell.log_n for cell in cells))


# ---- resampling -----------------------------------------------------------------------------

@cache
def _cluster_permutations(key: str, k: int, n_perm: int) -> np.ndarray:
    """(n_perm, k) label permutations of one cluster, seeded from ``key`` = axis and cluster
    name: the same for every language of a profile (so they are permuted jointly) and for every
    model (each model's test is valid on its own)."""
    base = np.broadcast_to(np.arange(k, dtype=np.int16), (n_perm, k))
    out = rng_for(f"identity-permutation:{key}").permuted(base, axis=1)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=128)
def _permutation_operator(axis: str, clusters: tuple[str, ...], k: int, n_perm: int
                          ) -> sparse.csr_matrix:
    """The sparse (n_perm·k) × (G·k) 0/1 matrix with a 1 at (b·k + i, g·k + π_bg(i)): times a
    flattened (G, k) array it gives Σ_g a[g, π_bg(i)] for every permutation b at once (about
    five times faster than gathering, and shared by every model)."""
    g = len(clusters)
    # (n_perm, k, G): row b·k + i holds one entry per profile, in profile order, so the CSR
    # arrays are written directly (no COO sort: a third of a worker's first-call cost)
    perm = np.stack([_cluster_permutations(f"{axis}:{name}", k, n_perm) for name in clusters],
                    axis=2).astype(np.int32)
    cols = (perm + (np.arange(g, dtype=np.int32) * k)[None, None, :]).ravel()
    return sparse.csr_matrix((np.ones(cols.size, dtype=np.float32), cols,
                              np.arange(0, cols.size + 1, g, dtype=np.int32)),
                             shape=(n_perm * k, g * k))


def permuted_cluster_sums(arrays: Sequence[np.ndarray], axis: str, clusters: Sequence[str],
                          n_perm: int) -> list[np.ndarray]:
    """Σ_g a[g, π_g(i)] for every permutation and every (G, k) array: (n_perm, k) each. The
    same permutations for every array, so counts and sums stay paired."""
    g, k = arrays[0].shape
    op = _permutation_operator(axis, tuple(clusters), k, n_perm)
    stacked = np.stack([np.asarray(a, dtype=float).ravel() for a in arrays], axis=1)
    out = np.asarray(op @ stacked).reshape(n_perm, k, len(arrays))
    return [out[:, :, n] for n in range(len(arrays))]


def permuted_sums(cell: EffectCell, axis: str, n_perm: int) -> np.ndarray:
    """(6, n_perm, k): Σ_g c[g, π_g(i)], Σ_g m[g, π_g(i)] and the same sums of the cell's
    four moments (``sq``) for every permutation — one array, so pooled cells add it at once
    (:func:`perm_parts` names the parts)."""
    g, k = cell.c.shape
    op = _permutation_operator(axis, tuple(cell.clusters), k, n_perm)
    out = np.asarray(op @ _stacked(cell)).reshape(n_perm, k, -1)
    return np.ascontiguousarray(out.transpose(2, 0, 1))


def _stacked(cell: EffectCell) -> np.ndarray:
    """(G·k, 6): c, m and the four moments of every (cluster, identity), one row each."""
    g, k = cell.c.shape
    return np.concatenate([cell.c[..., None], cell.m[..., None], cell.sq],
                          axis=-1).reshape(g * k, -1)


def perm_parts(perm: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(num, den, the four moment sums) of a :func:`permuted_sums` array."""
    return perm[0], perm[1], list(perm[2:])


def _active_clusters(cell: EffectCell) -> int:
    return int(((cell.m.sum(axis=1) > 0) | (cell.pair_n > 0)).sum())



# ---- tables ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class CellScope:
    language: str
    task: str
    axis: str


#: Replicates used for the systematic share's interval and permutations for the systematic
#: Δ% expected by chance: each needs the implied Δ% of every replicate (k² work), and an SD or a
#: mean is estimated well from a few hundred.
SHARE_REPLICATES = 200
NULL_PERMUTATIONS = 100


@dataclass(frozen=True, eq=False)
class AxisFit:
    """The fitted effects of one axis in one (language, task) scope, with their resamples."""

    cell: EffectCell
    beta: np.ndarray
    beta_perm: np.ndarray  # (n_perm, k)
    t_stat: np.ndarray  # studentized effects, the permutation test's statistic
    t_perm: np.ndarray  # (n_perm, k)
    beta_boot: np.ndarray  # (n_boot, k)
    n_pairs_w: float  # identity pairs with data (weights of the implied Δ%)
    systematic: float
    systematic_boot: np.ndarray  # (SHARE_REPLICATES,)
    systematic_null: np.ndarray  # (NULL_PERMUTATIONS,) raw implied Δ% under permutation
    systematic_raw: float  # implied by the unshrunk effects


#: Profiles an identity needs before its permutation variance is corrected for the true
#: effects it holds (below, in sparse cells, the correction inflated shares of pure noise).
MIN_CORRECTION_PROFILES = 5


def shrinkage(beta: np.ndarray, beta_perm: np.ndarray, n_profiles: np.ndarray) -> np.ndarray:
    """Empirical-Bayes factors λ_i = τ² / (τ² + s_i²) that pull noisy effects toward 0.

    Why: β̂_i = β_i + noise, so the Δ% implied by the raw β̂ is inflated by noise even when
    no identity has any effect (on the shipped SmolLM2 run, chance alone gives about half of
    the raw figure). Noise is measured by the within-profile permutations: p_i² = identity i's
    variance under them. Shuffling labels also moves the true effects around, so p_i² ≈
    (var β + noise)/G_i (G_i = the profiles holding i), not the noise alone; the moment
    equations mean β̂² = τ² + mean s² and s_i² = p_i² − τ²/G_i give

        τ² = max(0, mean β̂² − mean p²) / (1 − mean 1/G_i),   s_i² = max(0, p_i² − τ²/G_i),

    with 1/G_i taken as 0 (no correction) below :data:`MIN_CORRECTION_PROFILES`. With no
    effects τ² ≈ 0 and s² = p²: the systematic Δ% goes to 0. Uncorrected, p² shrank real
    effects by about 1/G (a share of 0.83 where the truth was 0.92, with 9 profiles)."""
    ok = np.isfinite(beta)
    if ok.sum() < 2 or beta_perm.shape[0] < 2:
        return np.zeros_like(beta)
    p2 = column_var(beta_perm)
    g = np.asarray(n_profiles, dtype=float)
    inv_g = np.where(g >= MIN_CORRECTION_PROFILES, 1.0 / np.maximum(g, 1.0), 0.0)
    ok &= np.isfinite(p2)
    if ok.sum() < 2:
        return np.zeros_like(beta)
    excess = max(0.0, float(np.mean(beta[ok] ** 2) - np.mean(p2[ok])))
    tau2 = excess / (1.0 - float(np.mean(inv_g[ok])))  # G_i ≥ 5: the divisor is ≥ 0.8
    s2 = np.maximum(p2 - tau2 * inv_g, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(ok & (tau2 + s2 > 0), tau2 / (tau2 + s2), 0.0)
    return np.nan_to_num(lam)


def _fit(cell: EffectCell, perm_sums: np.ndarray, weights: ClusterWeights) -> AxisFit:
    num, den, sq = perm_parts(perm_sums)
    beta = cell.beta()
    beta_perm = centred_effects(num, den)
    t_perm = studentized(num, den, sq, beta_perm)
    w = weights.for_clusters(cell.clusters)
    beta_boot = centred_effects(w @ cell.c, w @ cell.m)
    ok = np.isfinite(beta)
    npw = float(np.triu(cell.pair_w * np.outer(ok, ok), 1).sum())
    lam = shrinkage(beta, beta_perm, (cell.m > 0).sum(axis=0))
    systematic = float(implied_delta(lam * beta, cell.pair_w))
    if not math.isfinite(systematic):
        npw = 0.0
    return AxisFit(cell, beta, beta_perm, cell.t_stat(), t_perm,
                   beta_boot, npw, systematic,
                   implied_delta(lam * beta_boot[:SHARE_REPLICATES], cell.pair_w),
                   implied_delta(beta_perm[:NULL_PERMUTATIONS], cell.pair_w),
                   float(implied_delta(beta, cell.pair_w)))


def identity_tables(blocks: Mapping[BlockKey, ValueBlock], model: str, method: Method,
                    languages: Sequence[str], tasks: Sequence[str], axes: Sequence[str],
                    n_boot: int = 2000, n_perm: int = DEFAULT_PERMUTATIONS,
                    placebo: Mapping[BlockKey, ValueBlock] | None = None
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``identity_effects`` and ``gap_decomposition`` rows of one model under ``method``.

    ``blocks``: the standard blocks; ``placebo``: blocks of the placebo condition (axis
    ``placebo``), or None when the model has no placebo answers. Scopes pool languages and
    tasks (``all``); upstream counter-offer never enters a task=all scope, because its markup
    "gaps" are not distances between answers."""
    fine: dict[tuple[str, str, str], EffectCell] = {}
    for (cond, lang, task, axis), block in sorted(blocks.items()):
        if cond == "standard" and axis != PLACEBO:
            fine[(lang, task, axis)] = effect_cell(block, method)
    # Every cell of an axis on the axis's full identifier list, in one order: the permutation
    # of a profile is then the same in both languages (jointly permuted), even where one
    # language lacks an identifier.
    union: dict[str, tuple[str, ...]] = {}
    for (_, _, axis), cell in fine.items():
        union[axis] = tuple(dict.fromkeys((*union.get(axis, ()), *cell.identifiers)))
    fine = {key: _align(cell, union[key[2]]) for key, cell in fine.items()}
    plac = {(lang, task): effect_cell(block, method)
            for (_, lang, task, _), block in sorted((placebo or {}).items())}
    weights = ClusterWeights(model, n_boot)
    perm = {key: permuted_sums(cell, key[2], n_perm) for key, cell in fine.items()}
    effect_rows: list[dict[str, Any]] = []
    decomp_rows: list[dict[str, Any]] = []
    for lang in (*languages, ALL):
        for task in (*tasks, ALL):
            keys = [k for k in sorted(fine) if lang in (ALL, k[0]) and task in (ALL, k[1])
                    and not (task == ALL and markup_gaps(method, k[1]))]
            if not keys:
                continue
            flag = "upstream_markup_gaps" if task != ALL and markup_gaps(method, task) else None
            fits: dict[str, AxisFit] = {}
            for axis in axes:
                members = [k for k in keys if k[2] == axis]
                if not members:
                    continue
                cell = pool_effect_cells([fine[k] for k in members])
                fits[axis] = _fit(cell, _pooled_perm(cell, members, fine, perm), weights)
            for axis, fit in fits.items():
                scope = CellScope(lang, task, axis)
                effect_rows += _effect_rows(fit, scope, model, method)
                decomp_rows.append(_decomposition_row(
                    {axis: fit}, scope, model, method, weights, plac, flag,
                    _by_language_task(fine, [k for k in keys if k[2] == axis])))
            if fits:
                decomp_rows.append(_decomposition_row(
                    fits, CellScope(lang, task, ALL), model, method, weights, plac, flag,
                    _by_language_task(fine, [k for k in keys if k[2] in fits])))
    return _bh_by_family(pd.DataFrame(effect_rows)), pd.DataFrame(decomp_rows)


def _by_language_task(fine: Mapping[tuple[str, str, str], EffectCell],
                      keys: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str], EffectCell]:
    """The scope's identity cells pooled per (language, task) over its axes (pair sums only
    are used, so cells of different axes may pool)."""
    groups: dict[tuple[str, str], list[EffectCell]] = {}
    for key in keys:
        groups.setdefault((key[0], key[1]), []).append(fine[key])
    out = {}
    for lt, cells in groups.items():
        clusters = tuple(sorted({g for c in cells for g in c.clusters}))
        pos = {g: n for n, g in enumerate(clusters)}
        ps, pn = np.zeros(len(clusters)), np.zeros(len(clusters))
        for c in cells:
            gg = np.array([pos[g] for g in c.clusters], dtype=np.int64)
            np.add.at(ps, gg, c.pair_sum)
            np.add.at(pn, gg, c.pair_n)
        out[lt] = EffectCell((), clusters, np.zeros((len(clusters), 0)),
                             np.zeros((len(clusters), 0)), ps, pn, np.zeros((0, 0)),
                             np.zeros((len(clusters), 0, 4)))
    return out


#: Permutations added for an identity that none of the first 999 matched, so that its p can
#: reach 1/11,000: below the 0.05/87 ≈ 0.0006 that BH over a (language, task) needs for a
#: first rejection, and exact where a normal tail fitted to the 999 was not.
EXTRA_PERMUTATIONS = 9_999


@lru_cache(maxsize=32)
def _extra_selection(g: int, k: int, n: int) -> sparse.csr_matrix:
    """(n, G·k) 0/1 rows, each picking one uniformly random position in each of G profiles of
    k identities: times the (G·k, ·) sums of a cell, the sums at those positions. It depends on
    the shape alone, so it is drawn once and shared by every scope and model of that shape (as
    the 999 permutations are shared by every model)."""
    flat = (rng_for(f"identity-extra:{g}x{k}").integers(0, k, size=(n, g))
            + np.arange(g) * k).astype(np.int32)
    return sparse.csr_matrix((np.ones(n * g, dtype=np.float32), flat.ravel(),
                              np.arange(0, n * g + 1, g)), shape=(n, g * k))


def extra_null(cell: EffectCell, n: int = EXTRA_PERMUTATIONS) -> np.ndarray:
    """T* (:func:`studentized`) under ``n`` more within-profile permutations, for any one
    identity of ``cell``.

    Under an independent uniform permutation of each profile's labels, an identity's label lands
    on a uniformly random position of that profile, so only that position is drawn (n × G
    numbers instead of n × G × k). The draw does not depend on which identity it is, so one
    null serves every identity of the cell that needs it (as the first 999 permutations are
    shared too): one draw per shape, not one per identity. The centre over identities stays the
    observed one: exact for profiles holding every identity (the centre does not move), close
    otherwise."""
    g, k = cell.c.shape
    # one product gives all six sums at the drawn positions (:func:`_extra_selection`)
    sums = np.asarray(_extra_selection(g, k, n) @ _stacked(cell))
    tot_c, tot_m = cell.c.sum(axis=0), cell.m.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.where(tot_m > 0, tot_c / np.where(tot_m > 0, tot_m, 1.0), np.nan)
        centre = float(np.nanmean(raw)) if np.isfinite(raw).any() else math.nan
        num, den = sums[:, 0], sums[:, 1]
        b = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        return (b - centre) / ratio_se(num, den, [sums[:, j] for j in range(2, 6)])


def permutation_p_values(stat: np.ndarray, stat_perm: np.ndarray,
                         cell: EffectCell | None = None) -> np.ndarray:
    """Two-sided permutation p-values of each statistic, (1 + #|T*| ≥ |T|) / (1 + B), B the
    finite permuted values of that identity.

    ``stat`` is the studentized effect (:func:`studentized`). An identity that none of the
    B ≈ 999 permutations matches gets :data:`EXTRA_PERMUTATIONS` more (:func:`extra_null`,
    given its ``cell``), and its p counts all of them. Why: with 999 no p can be below
    0.001, yet BH over the 87 identifiers of a (language, task) needs about 0.0006 for its
    first rejection — a floor that would hide the strongest effects. Earlier versions
    extrapolated a normal tail fitted to the 999 instead; with heavy-tailed answers (the
    authors' extractor mixing ₹ and lakh) it gave p = 10⁻¹⁴ to effects whose 95 % interval
    spanned zero."""
    with np.errstate(invalid="ignore"):
        finite = ~np.isnan(stat_perm)
        exceed = (finite & (np.abs(stat_perm) >= np.abs(stat)[None, :] - 1e-12)).sum(axis=0)
    b = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1.0 + exceed) / (1.0 + b)
    beyond = np.flatnonzero((exceed == 0) & ~np.isnan(stat))  # ±inf: a spread-free effect
    if cell is not None and beyond.size:
        more = np.abs(extra_null(cell))
        more = more[~np.isnan(more)]
        for i in beyond:
            hits = int((more >= abs(float(stat[i])) - 1e-12).sum())
            p[i] = (1.0 + hits) / (1.0 + b[i] + more.size)
    return np.where(np.isnan(stat), np.nan, p)


def _bh_by_family(effects: pd.DataFrame) -> pd.DataFrame:
    """``p_bh``/``significant``: Benjamini–Hochberg over every identifier of every axis of one
    (language, task) scope — the family a reader scans when asking "who gets less here"."""
    if effects.empty:
        return effects
    out = effects.copy()
    out["p_bh"] = np.nan
    for _, idx in out.groupby(["language", "task"], sort=False).groups.items():
        p = out.loc[idx, "p_value"].to_numpy(float)
        ok = np.isfinite(p)
        if ok.any():
            adj = np.full(p.shape, np.nan)
            adj[ok] = false_discovery_control(p[ok], method="bh")
            out.loc[idx, "p_bh"] = adj
    out["significant"] = [bool(v < 0.05) if math.isfinite(v) else None for v in out["p_bh"]]
    return out


def _pooled_perm(cell: EffectCell, keys: Sequence[tuple[str, str, str]],
                 fine: Mapping[tuple[str, str, str], EffectCell],
                 perm: Mapping[tuple[str, str, str], np.ndarray]) -> np.ndarray:
    """Permutation sums of a pooled cell: the members' sums aligned by identifier and added
    (a profile's languages got the same permutation, so they are permuted jointly)."""
    if len(keys) == 1:
        return perm[keys[0]]
    ipos = {v: n for n, v in enumerate(cell.identifiers)}
    first = perm[keys[0]]
    out = np.zeros((*first.shape[:2], len(cell.identifiers)))
    for key in keys:
        if fine[key].identifiers == cell.identifiers:  # the usual case: the axis's full list
            out += perm[key]
        else:
            out[:, :, [ipos[v] for v in fine[key].identifiers]] += perm[key]
    return out


def _effect_rows(fit: AxisFit, scope: CellScope, model: str, method: Method
                 ) -> list[dict[str, Any]]:
    cell, beta = fit.cell, fit.beta
    p_value = permutation_p_values(fit.t_stat, fit.t_perm, cell)
    g = _active_clusters(cell)
    lo, hi = t_interval(beta, fit.beta_boot, g)
    # an identity seen in one profile only: its effect cannot be told from that profile's
    # jitter (its bootstrap spread is only the centre's), so neither interval nor test
    lone = (cell.m > 0).sum(axis=0) < 2
    lo, hi = np.where(lone, np.nan, lo), np.where(lone, np.nan, hi)
    p_value = np.where(lone, np.nan, p_value)
    finite = np.isfinite(beta)
    typical = math.exp(cell.typical_log) if math.isfinite(cell.typical_log) else math.nan
    unit = None if scope.task == ALL else NATURAL_UNIT[method].get(scope.task)
    scale = typical * 100.0 if unit == "pp of markup" else typical  # markup pp from the ratio
    bounds = None if scope.task == ALL else plausible_range(method, scope.task)
    if bounds is not None and not (bounds[0] * (1 - 1e-9) <= typical <= bounds[1] * (1 + 1e-9)):
        scale = math.nan  # no amount from implausible answers (e.g. ₹15,000 read as 15,000 LPA)
    if unit == "pp of markup" and not (MARKUP_RATIO_RANGE[0] <= typical
                                       <= MARKUP_RATIO_RANGE[1]):
        scale = math.nan  # nor from a typical counter-offer no one would make
    n_slots = cell.n_slots
    rows = []
    for n, ident in enumerate(cell.identifiers):
        if n_slots[n] == 0:
            continue  # no answer of this identity in the scope (it has a row where it has)
        ok = bool(finite[n])
        rows.append({
            "model": model, "method": method, "language": scope.language, "task": scope.task,
            "axis": scope.axis, "identifier_value": ident,
            "effect_pct": 100.0 * math.expm1(beta[n]) if ok else math.nan,
            "effect_pct_lo": 100.0 * math.expm1(lo[n]) if ok else math.nan,
            "effect_pct_hi": 100.0 * math.expm1(hi[n]) if ok else math.nan,
            "effect_natural": math.expm1(beta[n]) * scale if ok and unit else math.nan,
            "effect_natural_lo": math.expm1(lo[n]) * scale if ok and unit else math.nan,
            "effect_natural_hi": math.expm1(hi[n]) * scale if ok and unit else math.nan,
            "unit": unit, "typical_answer": typical if unit else math.nan,
            "p_value": float(p_value[n]),  # p_bh, significant: _bh_by_family
            "n_slots": int(n_slots[n]), "n_clusters": g,
        })
    return rows


def _decomposition_row(fits: Mapping[str, AxisFit], scope: CellScope, model: str,
                       method: Method, weights: ClusterWeights,
                       plac: Mapping[tuple[str, str], EffectCell], flag: str | None,
                       parts: Mapping[tuple[str, str], EffectCell]) -> dict[str, Any]:
    """Observed, systematic and placebo Δ% of a scope pooling one or several axes; the
    systematic part of several axes is their pair-weighted mean, and the test statistic their
    sum of squared effects (axes permuted independently, each within profile)."""
    clusters = tuple(sorted({g for fit in fits.values() for g in fit.cell.clusters}))
    gpos = {g: n for n, g in enumerate(clusters)}
    ps = np.zeros(len(clusters))
    pn = np.zeros(len(clusters))
    for fit in fits.values():
        gg = np.array([gpos[g] for g in fit.cell.clusters], dtype=np.int64)
        np.add.at(ps, gg, fit.cell.pair_sum)
        np.add.at(pn, gg, fit.cell.pair_n)
    w = weights.for_clusters(clusters)
    n_pairs = int(pn.sum())
    g_active = int((pn > 0).sum())
    mean_delta = float(ps.sum() / pn.sum()) if n_pairs else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        md_b = (w @ ps) / (w @ pn)
    md_lo, md_hi = t_interval(mean_delta, md_b, g_active)
    if flag is None:  # a distance cannot be below zero
        md_lo = np.maximum(md_lo, 0.0)
    den = sum(f.n_pairs_w for f in fits.values())
    no_sys = flag is not None or den == 0
    systematic = share = p_value = null_sys = raw = math.nan
    sh_lo = sh_hi = math.nan
    if not no_sys:
        used = [f for f in fits.values() if f.n_pairs_w > 0]
        systematic = sum(f.systematic * f.n_pairs_w for f in used) / den
        raw = sum(f.systematic_raw * f.n_pairs_w for f in used) / den
        sys_b = sum(np.nan_to_num(f.systematic_boot) * f.n_pairs_w for f in used) / den
        null_sys = float(np.mean(sum(np.nan_to_num(f.systematic_null) * f.n_pairs_w
                                     for f in used) / den))
        # Σ T² over identities (studentized, as the identity tests): Σ β̂² rejected 20 % of
        # the time with no effect when two identities were only noisier (7 % with equal noise)
        stat = sum(float(np.nansum(capped_t2(f.t_stat))) for f in fits.values())
        stat_p = sum(np.nansum(capped_t2(f.t_perm), axis=1) for f in fits.values())
        p_value = float((1.0 + (stat_p >= stat - 1e-12).sum()) / (1.0 + stat_p.size))
        if mean_delta and math.isfinite(mean_delta):
            share = systematic / mean_delta
            with np.errstate(invalid="ignore", divide="ignore"):
                share_b = sys_b / md_b[:SHARE_REPLICATES]
            lo, hi = t_interval(share, share_b, g_active)
            # a share: the interval is cut to [0, 1] (a t interval around 0.93 can reach 1.28)
            sh_lo, sh_hi = max(float(lo), 0.0), min(float(hi), max(1.0, share))
    row = {
        "model": model, "method": method, "language": scope.language, "task": scope.task,
        "axis": scope.axis, "mean_delta": mean_delta, "mean_delta_lo": float(md_lo),
        "mean_delta_hi": float(md_hi), "systematic_delta": systematic,
        "systematic_delta_raw": raw, "systematic_delta_null": null_sys,
        "idiosyncratic_delta": mean_delta - systematic if math.isfinite(systematic) else math.nan,
        "systematic_share": share, "systematic_share_lo": sh_lo, "systematic_share_hi": sh_hi,
        "p_value": p_value, "n_pairs": n_pairs, "n_clusters": g_active, "flag": flag,
    }
    row.update(_placebo_columns(scope, plac, weights, parts, flag))
    return row


def _placebo_columns(scope: CellScope, plac: Mapping[tuple[str, str], EffectCell],
                     weights: ClusterWeights, parts: Mapping[tuple[str, str], EffectCell],
                     flag: str | None) -> dict[str, Any]:
    """The placebo floor and the excess over it, **per (language, task)**, combined with the
    identity pairs' weights: placebo_delta = Σ w_lt · placebo_lt, excess = Σ w_lt (Δ_lt −
    placebo_lt), w_lt = the scope's identity pairs in (l, t) ÷ those of every (l, t) with
    placebo answers. Why per (l, t): identity and placebo answers parse in different task mixes,
    and pooling each side's own pairs would compare different mixes (a composition effect).
    The interval is paired: the same profile weights on every term."""
    empty = {"placebo_delta": math.nan, "excess_delta": math.nan, "excess_delta_lo": math.nan,
             "excess_delta_hi": math.nan, "n_placebo_pairs": 0, "placebo_coverage": math.nan}
    if flag is not None:
        return empty
    # a (language, task) floor needs pairs in at least two profiles (else no interval)
    used = [(lt, cell) for lt, cell in sorted(parts.items())
            if lt in plac and int((plac[lt].pair_n > 0).sum()) >= 2 and cell.pair_n.sum() > 0]
    if not used:
        return empty
    total = sum(float(cell.pair_n.sum()) for _, cell in used)
    all_pairs = sum(float(cell.pair_n.sum()) for cell in parts.values())
    placebo = excess = 0.0
    excess_b = 0.0
    clusters: set[str] = set()
    n_placebo = 0
    for lt, cell in used:
        pl = plac[lt]
        w_lt = float(cell.pair_n.sum()) / total
        md = float(cell.pair_sum.sum() / cell.pair_n.sum())
        pm = float(pl.pair_sum.sum() / pl.pair_n.sum())
        wi, wp = weights.for_clusters(cell.clusters), weights.for_clusters(pl.clusters)
        with np.errstate(invalid="ignore", divide="ignore"):
            md_b = (wi @ cell.pair_sum) / (wi @ cell.pair_n)
            pl_b = (wp @ pl.pair_sum) / (wp @ pl.pair_n)
        placebo += w_lt * pm
        excess += w_lt * (md - pm)
        excess_b = excess_b + w_lt * (md_b - pl_b)
        clusters |= set(cell.clusters) | set(pl.clusters)
        n_placebo += int(pl.pair_n.sum())
    lo, hi = t_interval(excess, np.asarray(excess_b), len(clusters))
    return {"placebo_delta": placebo, "excess_delta": excess, "excess_delta_lo": float(lo),
            "excess_delta_hi": float(hi), "n_placebo_pairs": n_placebo,
            "placebo_coverage": total / all_pairs if all_pairs else math.nan}
