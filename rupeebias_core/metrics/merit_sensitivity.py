"""Merit sensitivity (Figure 12): how much the answer moves when the *profile* changes and the
identifier and question variant stay fixed — a model that ignores merit scores low.

Per (language, task): all unordered profile pairs inside each (identifier, QV) group, Δ% =
|a − b| / |(a + b)/2| × 100 (pairs with |mid| < 1e-6 skipped; the corrected method drops pairs
with a non-positive midpoint instead), pooled over axes; mean with a bootstrap CI seeded from
``merit:{model}:{task}:{language}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock
from rupeebias_core.metrics.bootstrap import bootstrap_mean_ci
from rupeebias_core.metrics.pairs import Method, relative_gap

MID_EPS: float = 1e-6


def merit_gap(a: np.ndarray, b: np.ndarray, method: Method = "upstream") -> np.ndarray:
    """Profile-pair Δ%: |midpoint| denominator upstream, positive midpoint only if corrected."""
    if method == "corrected":
        return relative_gap(a, b, "corrected")
    mid = np.abs((a + b) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.abs(a - b) / mid * 100
    return np.where((mid < MID_EPS) | ~np.isfinite(out), np.nan, out)


def block_merit_deltas(block: ValueBlock, method: Method = "upstream") -> np.ndarray:
    """Finite profile-pair Δ% of a block (profiles in sorted order)."""
    p = block.values.shape[0]
    groups = block.values.reshape(p, -1).T  # (QV × identifier) groups × profiles
    i, j = np.triu_indices(p, 1)
    d = merit_gap(groups[:, i], groups[:, j], method).ravel()
    return d[np.isfinite(d)]


def merit_rows(blocks: Mapping[BlockKey, ValueBlock], model: str, languages: Sequence[str],
               tasks: Sequence[str], method: Method) -> list[dict[str, Any]]:
    rows = []
    for lang in languages:
        for task in tasks:
            parts = [block_merit_deltas(b, method) for (c, lg, t, _a), b in sorted(blocks.items())
                     if c == "standard" and lg == lang and t == task]
            if not parts:
                continue
            ci = bootstrap_mean_ci(np.concatenate(parts), f"merit:{model}:{task}:{lang}")
            if ci.n == 0:
                continue
            rows.append({"model": model, "language": lang, "task": task,
                         "mean_delta": ci.mean, "mean_delta_lo": ci.lo,
                         "mean_delta_hi": ci.hi, "n_pairs": ci.n})
    return rows
