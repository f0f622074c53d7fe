"""Identifier-level deviation from the axis mean (Figures 4, 9, 10), for all 87 identifiers.

Per (language, task, axis) slice: mean value per identifier; grand = the *unweighted* mean of
those identifier means; pct_dev = (mean_i − grand) / |grand| × 100 (slice skipped when
|grand| < 1e-6). Aggregates over languages and/or tasks are plain means over available slices.

A slice where fewer than :data:`MIN_IDENTIFIERS` identifiers have an answer is skipped too: the
deviation of a lone identifier from an average of itself is 0 by construction, and shown as
"0.00 %" it read as "answered exactly like the others" (the 1.5B model's salary estimates, where
most answers are unusable, had such rows). The paper's runs always hold every identifier, so this
never touches a slice the authors computed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from rupeebias_core.metrics.blocks import ValueBlock

ALL = "all"
GRAND_EPS: float = 1e-6
#: Identifiers a slice needs with at least one answer before a deviation from their average means
#: anything (with one, it is 0 by construction).
MIN_IDENTIFIERS = 2


def slice_deviation(block: ValueBlock) -> dict[str, np.ndarray | str] | None:
    """Per-identifier mean, % deviation and row count of one block (None if skipped)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(block.values, axis=(0, 1))
    counts = np.isfinite(block.values).sum(axis=(0, 1))
    present = counts > 0
    if present.sum() < MIN_IDENTIFIERS:
        return None
    grand = float(means[present].mean())
    if abs(grand) < GRAND_EPS:
        return None
    idents = np.array(block.identifiers, dtype=object)[present]
    return {
        "language": block.language, "task": block.task, "axis": block.axis,
        "identifier_value": idents,
        "pct_dev": (means[present] - grand) / abs(grand) * 100.0,
        "mean_value": means[present],
        "n_rows": counts[present].astype(np.int64),
    }


def deviation_rows(blocks: Iterable[ValueBlock], model: str) -> pd.DataFrame:
    """Per-slice rows plus the (language, all), (all, task) and (all, all) aggregates."""
    parts = [d for b in blocks if (d := slice_deviation(b)) is not None]
    if not parts:
        return pd.DataFrame()
    sizes = [len(p["identifier_value"]) for p in parts]
    per = pd.DataFrame({
        col: np.concatenate([np.repeat(np.array([p[col]], dtype=object), k)
                             if isinstance(p[col], str) else p[col]
                             for p, k in zip(parts, sizes, strict=True)])
        for col in ("language", "task", "axis", "identifier_value", "pct_dev", "mean_value",
                    "n_rows")})
    per["n_slices"] = 1
    out = [per]
    for by_lang, by_task in ((True, False), (False, True), (False, False)):
        keys = ["axis", "identifier_value"] + (["language"] if by_lang else []) + (
            ["task"] if by_task else [])
        agg = per.groupby(keys, sort=False).agg(
            pct_dev=("pct_dev", "mean"), n_rows=("n_rows", "sum"), n_slices=("pct_dev", "size"))
        agg = agg.reset_index()
        if not by_lang:
            agg["language"] = ALL
        if not by_task:
            agg["task"] = ALL
        agg["mean_value"] = np.nan
        out.append(agg)
    res = pd.concat(out, ignore_index=True)
    res.insert(0, "model", model)
    return res
