"""Question-variant robustness (paper Tables 7/8): do differently worded questions rank the
identifiers the same way?

Per (language, task, axis): identifiers × QVs matrix of means over profiles (identifiers missing
a QV dropped; ≥ 2 QVs and ≥ 3 identifiers needed); the **minimum** pairwise Spearman ρ over QV
pairs. Per axis: the mean over tasks with a bootstrap CI over those ≤ 5 values (seed
``qv:{model}:{axis}:{language}``); robust when the mean ≥ 0.85. ``Mean`` = mean of the axis means,
CI over them (seed ``qv:{model}:Mean:{language}``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock
from rupeebias_core.metrics.bootstrap import bootstrap_mean_ci
from rupeebias_core.metrics.spearman import pairwise_spearman

ROBUST_THRESHOLD: float = 0.85
MEAN = "Mean"


def min_qv_rho(block: ValueBlock) -> float:
    """Minimum pairwise Spearman ρ between QV columns of the identifiers × QVs mean matrix."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.nanmean(block.values, axis=0).T  # identifiers × QVs
    m = m[np.isfinite(m).all(axis=1)]
    if m.shape[1] < 2 or m.shape[0] < 3:
        return math.nan
    rho = pairwise_spearman(m)
    return float(rho.min()) if rho.size else math.nan


def qv_rows(blocks: Mapping[BlockKey, ValueBlock], model: str, languages: Sequence[str],
            tasks: Sequence[str], axes: Sequence[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for lang in languages:
        axis_means = []
        for axis in axes:
            vals = [min_qv_rho(blocks[k]) for t in tasks
                    if (k := ("standard", lang, t, axis)) in blocks]
            vals = [v for v in vals if math.isfinite(v)]
            if not vals:
                continue
            ci = bootstrap_mean_ci(vals, f"qv:{model}:{axis}:{lang}")
            axis_means.append(ci.mean)
            rows.append({"model": model, "language": lang, "axis": axis, "min_rho": ci.mean,
                         "min_rho_lo": ci.lo, "min_rho_hi": ci.hi,
                         "robust": ci.mean >= ROBUST_THRESHOLD, "n_tasks": len(vals),
                         "n_axes": 1})
        if axis_means:
            ci = bootstrap_mean_ci(axis_means, f"qv:{model}:{MEAN}:{lang}")
            rows.append({"model": model, "language": lang, "axis": MEAN, "min_rho": ci.mean,
                         "min_rho_lo": ci.lo, "min_rho_hi": ci.hi,
                         "robust": ci.mean >= ROBUST_THRESHOLD,
                         "n_tasks": max(r["n_tasks"] for r in rows
                                        if r["language"] == lang and r["axis"] != MEAN),
                         "n_axes": len(axis_means)})
    return rows
