"""Kendall's W (Tables 5/6, Figure 7): do the same identifiers rank high across profiles?

Per (model, language, task, axis): average each (profile, identifier) over question variants,
drop profiles missing any identifier, and run scipy's Friedman test with profiles as blocks;
W = χ² / (n (k − 1)) (the tie-corrected W, since scipy tie-corrects χ²). Tasks are combined by
an unweighted mean of W and Fisher's method on p (p = 0 discarded, as upstream); axes likewise
into Mean W. Benjamini–Hochberg is applied across models (per axis) by :func:`bh_adjust`.

The Friedman statistic is computed here from one ranking of the block (scipy's ``rankdata``
and its χ² tail ``special.chdtrc``) with scipy's own formula, so that the same ranks also feed
the permutation null; it equals ``scipy.stats.friedmanchisquare`` to the last bit (tested), in
a fifth of its time (0.24 against 1.27 ms for 27 profiles × 24 identifiers).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import special
from scipy.stats import combine_pvalues, false_discovery_control, rankdata

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock
from rupeebias_core.metrics.seeds import rng_for

ALPHA: float = 0.05
#: Mean W thresholds of the paper's "Profile" column.
PROFILE_LABELS: tuple[tuple[float, str], ...] = ((0.05, "Noise"), (0.13, "Inconsistent"))
CONSISTENT_LABEL: str = "Mostly consistent"


@dataclass(frozen=True)
class FriedmanResult:
    w: float
    p_value: float
    chi2: float
    n_blocks: int
    n_identifiers: int


NAN_RESULT = FriedmanResult(math.nan, math.nan, math.nan, 0, 0)


def _defined(m: np.ndarray) -> bool:
    """≥ 2 blocks, ≥ 3 identifiers (the Friedman test needs 3 samples) and no missing cell."""
    return m.ndim == 2 and m.shape[0] >= 2 and m.shape[1] >= 3 and bool(np.isfinite(m).all())


def _undefined(m: np.ndarray) -> FriedmanResult:
    n, k = m.shape if m.ndim == 2 else (0, 0)
    return FriedmanResult(math.nan, math.nan, math.nan, n, k)


def _rank_rows(m: np.ndarray) -> tuple[np.ndarray, float]:
    """(within-row average ranks, Friedman's tie correction 1 − Σ(t³ − t) / (n (k³ − k)))."""
    n, k = m.shape
    s = np.sort(m, axis=1)
    starts = np.ones(s.shape, dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    runs = np.diff(np.append(np.flatnonzero(starts.ravel()), s.size))  # tie groups, row-wise
    ties = float((runs ** 3 - runs).sum())
    return rankdata(m, axis=1), 1.0 - ties / (n * (k ** 3 - k))


def _friedman(ranks: np.ndarray, tie_c: float) -> FriedmanResult:
    """scipy's ``friedmanchisquare`` statistic and p from ranks already taken: the same
    operations in the same order (rank sums of half-integers are exact in any order)."""
    n, k = ranks.shape
    ssbn = (ranks.sum(axis=0) ** 2).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = float((12.0 / (k * n * (k + 1)) * ssbn - 3 * n * (k + 1)) / np.float64(tie_c))
    w = chi2 / (n * (k - 1)) if math.isfinite(chi2) else math.nan
    return FriedmanResult(w, float(special.chdtrc(float(k - 1), chi2)), chi2, n, k)


def kendall_w(matrix: np.ndarray) -> FriedmanResult:
    """W and the Friedman p of a complete blocks × identifiers matrix.

    Needs ≥ 2 blocks and ≥ 3 identifiers (scipy's Friedman test needs 3 samples); degenerate
    matrices (every block fully tied) give NaN, which callers drop."""
    m = np.asarray(matrix, dtype=float)
    return _friedman(*_rank_rows(m)) if _defined(m) else _undefined(m)


def profile_identifier_matrix(block: ValueBlock) -> np.ndarray:
    """Profiles × identifiers means over QVs, keeping only complete profiles."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(block.values, axis=1)
    return means[np.isfinite(means).all(axis=1)]


def block_friedman(block: ValueBlock) -> FriedmanResult:
    return kendall_w(profile_identifier_matrix(block))


#: Permutations of the within-profile ranks for W's permutation p-value.
W_PERMUTATIONS = 999


def _w_from_ranks(ranks: np.ndarray, tie_c: float) -> np.ndarray:
    """Tie-corrected W from (..., m, k) within-row ranks (the same W as :func:`kendall_w`)."""
    m, k = ranks.shape[-2:]
    return _w_from_rank_sums(ranks.sum(axis=-2), m, tie_c)


def _w_from_rank_sums(r: np.ndarray, m: int, tie_c: float) -> np.ndarray:
    """Tie-corrected W from (..., k) column sums of m rows of ranks."""
    k = r.shape[-1]
    chi2 = 12.0 / (m * k * (k + 1)) * (r ** 2).sum(axis=-1) - 3.0 * m * (k + 1)
    return chi2 / tie_c / (m * (k - 1))


def _permuted_rank_sums(ranks: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Σ_row ranks[row, perm[b, row, i]]: (n_perm, k). Accumulated row by row, the order in
    which ``take_along_axis(...).sum(axis=-2)`` adds (identical floats), without building the
    (n_perm, m, k) array of permuted ranks (about twice as fast)."""
    m, k = ranks.shape
    flat = ranks.ravel()
    out = flat[perm[:, 0, :]]
    for row in range(1, m):
        out += flat[np.add(perm[:, row, :], row * k, dtype=np.intp)]
    return out


def w_null(matrix: np.ndarray, key: str, n_perm: int = W_PERMUTATIONS
           ) -> tuple[float, np.ndarray]:
    """W's chance level 1/m (m profiles: E[W] under independent rankings) and W under
    ``n_perm`` permutations of each profile's ranks (empty when W is undefined).

    Why: W of m random rankings is about 1/m, not 0, so the paper's fixed cut-offs (0.05
    "noise", 0.13) mean different things for blocks of 9 and of 27 profiles; and with 3
    blocks chance alone gives 0.33."""
    return block_w(matrix, key, n_perm)[1:]


def block_w(matrix: np.ndarray, key: str, n_perm: int = W_PERMUTATIONS
            ) -> tuple[FriedmanResult, float, np.ndarray]:
    """:func:`kendall_w` and :func:`w_null` of one block from a single ranking of it."""
    m_ = np.asarray(matrix, dtype=float)
    if not _defined(m_):
        return _undefined(m_), math.nan, np.zeros(0)
    m, k = m_.shape
    ranks, tie_c = _rank_rows(m_)
    res = _friedman(ranks, tie_c)
    if tie_c <= 0:
        return res, 1.0 / m, np.zeros(0)
    sums = _permuted_rank_sums(ranks, _rank_permutations(key, m, k, n_perm))
    return res, 1.0 / m, _w_from_rank_sums(sums, m, tie_c)


@lru_cache(maxsize=256)
def _rank_permutations(key: str, m: int, k: int, n_perm: int) -> np.ndarray:
    """(n_perm, m, k) within-row permutations, seeded from the block's name (shared by every
    model, so they are drawn once per worker)."""
    base = np.broadcast_to(np.arange(k, dtype=np.int16), (n_perm, m, k))
    out = rng_for(f"kendall-permutation:{key}").permuted(base, axis=2)
    out.setflags(write=False)
    return out


def fisher_combine(p_values: Sequence[float]) -> float:
    """Fisher's method over p in (0, 1]; a single valid p is returned as is; none → NaN."""
    ps = [float(p) for p in p_values if p is not None and 0.0 < float(p) <= 1.0]
    if not ps:
        return math.nan
    if len(ps) == 1:
        return ps[0]
    return float(combine_pvalues(ps, method="fisher").pvalue)


def bh_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p; NaN counts as 1 during the correction and stays NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    if p.size == 0:
        return out
    nan = ~np.isfinite(p)
    adj = false_discovery_control(np.where(nan, 1.0, p), method="bh")
    out[~nan] = adj[~nan]
    return out


def profile_label(mean_w: float) -> str | None:
    """The paper's label for a Mean W (None when W is NaN)."""
    if not math.isfinite(mean_w):
        return None
    for bound, label in PROFILE_LABELS:
        if mean_w < bound:
            return label
    return CONSISTENT_LABEL


NOT_ABOVE_CHANCE = "Not above chance"


def chance_corrected_w(w: float, chance: float) -> float:
    """(W − E[W]) / (1 − E[W]): 0 at chance, 1 for identical rankings."""
    if not (math.isfinite(w) and math.isfinite(chance)) or chance >= 1:
        return math.nan
    return (w - chance) / (1.0 - chance)


def relative_profile_label(w: float, chance: float, perm_p: float) -> str | None:
    """A computed model's label: "Not above chance" unless the permutation test rejects, else
    the paper's bands applied to the chance-corrected W."""
    if not math.isfinite(w):
        return None
    if not math.isfinite(perm_p) or perm_p >= ALPHA:
        return NOT_ABOVE_CHANCE
    return profile_label(chance_corrected_w(w, chance))


def _perm_p(observed: float, null: np.ndarray) -> float:
    if not math.isfinite(observed) or null.size == 0:
        return math.nan
    return float((1.0 + (null >= observed - 1e-12).sum()) / (1.0 + null.size))


def _combine_null(nulls: Sequence[np.ndarray]) -> np.ndarray:
    """The null of a mean of W's: the mean, replicate by replicate, of their nulls."""
    nulls = [n for n in nulls if n.size]
    return np.mean(nulls, axis=0) if nulls else np.zeros(0)


def mean_finite(values: Sequence[float]) -> float:
    vals = [v for v in values if math.isfinite(v)]
    return float(np.mean(vals)) if vals else math.nan


MEAN = "Mean"


def kendall_rows(
    blocks: Mapping[BlockKey, ValueBlock], model: str, languages: Sequence[str],
    tasks: Sequence[str], axes: Sequence[str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-model rows of ``kendall_w`` (model, language, axis) and ``kendall_w_usecase``
    (model, language, task, axis); ``p_bh``/``significant``/``rank`` are filled by
    :func:`finalise_kendall` once all models are known."""
    axis_rows: list[dict[str, Any]] = []
    use_rows: list[dict[str, Any]] = []
    for lang in languages:
        res: dict[tuple[str, str], FriedmanResult] = {}
        null: dict[tuple[str, str], tuple[float, np.ndarray]] = {}
        for t in tasks:
            for a in axes:
                block = blocks.get(("standard", lang, t, a))
                if block is None:
                    continue
                r, chance, perm_w = block_w(profile_identifier_matrix(block),
                                            f"{lang}:{t}:{a}")
                res[(t, a)], null[(t, a)] = r, (chance, perm_w)
        if not res:
            continue

        def chance_cols(keys: Sequence[tuple[str, str]], w: float,
                        res: Mapping[tuple[str, str], FriedmanResult] = res,
                        null: Mapping[tuple[str, str], tuple[float, np.ndarray]] = null
                        ) -> dict[str, float]:
            keys = [k for k in keys if math.isfinite(res[k].w)]
            chance = mean_finite([null[k][0] for k in keys])
            return {"w_chance": chance, "w_corrected": chance_corrected_w(w, chance),
                    "w_perm_p": _perm_p(w, _combine_null([null[k][1] for k in keys]))}

        axis_w, axis_p = {}, {}
        for a in axes:
            keys = [k for k in res if k[1] == a and math.isfinite(res[k].w)]
            if not keys:
                continue
            axis_w[a] = float(np.mean([res[k].w for k in keys]))
            axis_p[a] = fisher_combine([res[k].p_value for k in keys])
            axis_rows.append({"model": model, "language": lang, "axis": a, "w": axis_w[a],
                              "p_value": axis_p[a], "n_tasks": len(keys), "n_axes": 1,
                              **chance_cols(keys, axis_w[a])})
        if axis_w:
            # Mean W is the mean of the axes' means: its null, replicate by replicate, too
            nulls = [_combine_null([null[k][1] for k in res if k[1] == a
                                    and math.isfinite(res[k].w)]) for a in axis_w]
            mean_w = float(np.mean(list(axis_w.values())))
            chance = mean_finite([mean_finite([null[k][0] for k in res if k[1] == a
                                               and math.isfinite(res[k].w)]) for a in axis_w])
            axis_rows.append({"model": model, "language": lang, "axis": MEAN, "w": mean_w,
                              "p_value": fisher_combine(list(axis_p.values())),
                              "n_tasks": len({t for (t, a), r in res.items()
                                              if math.isfinite(r.w)}),
                              "n_axes": len(axis_w), "w_chance": chance,
                              "w_corrected": chance_corrected_w(mean_w, chance),
                              "w_perm_p": _perm_p(mean_w, _combine_null(nulls))})
        for t in tasks:
            per_axis = [(a, res[(t, a)]) for a in axes if (t, a) in res]
            if not per_axis:
                continue
            for a, r in per_axis:
                use_rows.append({"model": model, "language": lang, "task": t, "axis": a,
                                 "w": r.w, "p_value": r.p_value, "n_blocks": r.n_blocks,
                                 "n_identifiers": r.n_identifiers,
                                 "n_axes": int(math.isfinite(r.w)),
                                 **chance_cols([(t, a)], r.w)})
            finite = [r for _, r in per_axis if math.isfinite(r.w)]
            mean_w = mean_finite([r.w for r in finite])
            use_rows.append({"model": model, "language": lang, "task": t, "axis": MEAN,
                             "w": mean_w,
                             "p_value": fisher_combine([r.p_value for r in finite]),
                             "n_blocks": min((r.n_blocks for r in finite), default=0),
                             "n_identifiers": sum(r.n_identifiers for r in finite),
                             "n_axes": len(finite),
                             **chance_cols([(t, a) for a, _ in per_axis], mean_w)})
    return axis_rows, use_rows


def finalise_kendall(axis_df: pd.DataFrame, use_df: pd.DataFrame
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cross-model steps: BH per (method, language, axis) across models (Tables 5/6), BH over
    all (model × task × axis) p of a language (Figure 7, a use case's Mean row being significant
    when any of its axes is), ranks and profile labels by Mean W."""
    axis_df = axis_df.copy()
    axis_df["p_bh"] = np.nan
    for _, idx in axis_df.groupby(["method", "language", "axis"]).groups.items():
        axis_df.loc[idx, "p_bh"] = bh_adjust(axis_df.loc[idx, "p_value"].to_numpy(float))
    axis_df["significant"] = axis_df["p_bh"] < ALPHA
    axis_df["rank"] = np.nan
    axis_df["profile"] = None
    means = axis_df["axis"] == MEAN
    for _, idx in axis_df[means].groupby(["method", "language"]).groups.items():
        w = axis_df.loc[idx, "w"]
        axis_df.loc[idx, "rank"] = w.rank(ascending=False, method="min")
        axis_df.loc[idx, "profile"] = [
            relative_profile_label(v, c, p) for v, c, p in zip(
                w, axis_df.loc[idx, "w_chance"], axis_df.loc[idx, "w_perm_p"], strict=True)]
    axis_df["rank"] = axis_df["rank"].astype("Int64")

    use_df = use_df.copy()
    use_df["p_bh"] = np.nan
    per_axis = use_df["axis"] != MEAN
    for _, idx in use_df[per_axis].groupby(["method", "language"]).groups.items():
        use_df.loc[idx, "p_bh"] = bh_adjust(use_df.loc[idx, "p_value"].to_numpy(float))
    keys = ["method", "model", "language", "task"]
    best = use_df[per_axis].groupby(keys)["p_bh"].min()
    mean_idx = use_df.index[~per_axis]
    use_df.loc[mean_idx, "p_bh"] = best.reindex(
        pd.MultiIndex.from_frame(use_df.loc[mean_idx, keys])).to_numpy()
    use_df["significant"] = use_df["p_bh"] < ALPHA
    return axis_df, use_df
