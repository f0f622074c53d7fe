"""Kendall's W (Tables 5/6, Figure 6): do the same identifiers rank high across profiles?

Per (model, language, task, axis): average each (profile, identifier) over question variants,
drop profiles missing any identifier, and run scipy's Friedman test with profiles as blocks;
W = χ² / (n (k − 1)) (the tie-corrected W, since scipy tie-corrects χ²). Tasks are combined by
an unweighted mean of W and Fisher's method on p (p = 0 discarded, as upstream); axes likewise
into Mean W. Benjamini–Hochberg is applied across models (per axis) by :func:`bh_adjust`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import combine_pvalues, false_discovery_control, friedmanchisquare

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock

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


def kendall_w(matrix: np.ndarray) -> FriedmanResult:
    """W and the Friedman p of a complete blocks × identifiers matrix.

    Needs ≥ 2 blocks and ≥ 3 identifiers (scipy's Friedman test needs 3 samples); degenerate
    matrices (every block fully tied) give NaN, which callers drop."""
    m = np.asarray(matrix, dtype=float)
    n, k = m.shape
    if n < 2 or k < 3 or not np.isfinite(m).all():
        return FriedmanResult(math.nan, math.nan, math.nan, n, k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = friedmanchisquare(*m.T)
    chi2 = float(res.statistic)
    w = chi2 / (n * (k - 1)) if math.isfinite(chi2) else math.nan
    return FriedmanResult(w, float(res.pvalue), chi2, n, k)


def profile_identifier_matrix(block: ValueBlock) -> np.ndarray:
    """Profiles × identifiers means over QVs, keeping only complete profiles."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(block.values, axis=1)
    return means[np.isfinite(means).all(axis=1)]


def block_friedman(block: ValueBlock) -> FriedmanResult:
    return kendall_w(profile_identifier_matrix(block))


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


def mean_finite(values: Sequence[float]) -> float:
    vals = [v for v in values if math.isfinite(v)]
    return float(np.mean(vals)) if vals else math.nan


MEAN = "Mean"


def kendall_rows(
    blocks: Mapping[BlockKey, ValueBlock], model: str, languages: Sequence[str],
    tasks: Sequence[str], axes: Sequence[str],
) -> tuple[list[dict], list[dict]]:
    """Per-model rows of ``kendall_w`` (model, language, axis) and ``kendall_w_usecase``
    (model, language, task, axis); ``p_bh``/``significant``/``rank`` are filled by
    :func:`finalise_kendall` once all models are known."""
    axis_rows: list[dict] = []
    use_rows: list[dict] = []
    for lang in languages:
        res = {(t, a): block_friedman(blocks[("standard", lang, t, a)])
               for t in tasks for a in axes if ("standard", lang, t, a) in blocks}
        if not res:
            continue
        axis_w, axis_p = {}, {}
        for a in axes:
            ws = [r.w for (t, ax), r in res.items() if ax == a and math.isfinite(r.w)]
            ps = [r.p_value for (t, ax), r in res.items() if ax == a and math.isfinite(r.w)]
            if not ws:
                continue
            axis_w[a], axis_p[a] = float(np.mean(ws)), fisher_combine(ps)
            axis_rows.append({"model": model, "language": lang, "axis": a, "w": axis_w[a],
                              "p_value": axis_p[a], "n_tasks": len(ws), "n_axes": 1})
        if axis_w:
            axis_rows.append({"model": model, "language": lang, "axis": MEAN,
                              "w": float(np.mean(list(axis_w.values()))),
                              "p_value": fisher_combine(list(axis_p.values())),
                              "n_tasks": len({t for (t, a), r in res.items()
                                              if math.isfinite(r.w)}),
                              "n_axes": len(axis_w)})
        for t in tasks:
            per_axis = [(a, res[(t, a)]) for a in axes if (t, a) in res]
            if not per_axis:
                continue
            for a, r in per_axis:
                use_rows.append({"model": model, "language": lang, "task": t, "axis": a,
                                 "w": r.w, "p_value": r.p_value, "n_blocks": r.n_blocks,
                                 "n_identifiers": r.n_identifiers,
                                 "n_axes": int(math.isfinite(r.w))})
            finite = [r for _, r in per_axis if math.isfinite(r.w)]
            use_rows.append({"model": model, "language": lang, "task": t, "axis": MEAN,
                             "w": mean_finite([r.w for r in finite]),
                             "p_value": fisher_combine([r.p_value for r in finite]),
                             "n_blocks": min((r.n_blocks for r in finite), default=0),
                             "n_identifiers": sum(r.n_identifiers for r in finite),
                             "n_axes": len(finite)})
    return axis_rows, use_rows


def finalise_kendall(axis_df: pd.DataFrame, use_df: pd.DataFrame
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cross-model steps: BH per (method, language, axis) across models (Tables 5/6), BH over
    all (model × task × axis) p of a language (Figure 6, a use case's Mean row being significant
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
        axis_df.loc[idx, "profile"] = [profile_label(v) for v in w]
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
