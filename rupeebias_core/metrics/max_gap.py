"""Maximum observed gap (MOG, Figure 9): the largest relative gap between any two identifier
means of an axis (languages pooled), i.e. between the top and bottom identifier.

gap = (max − min) / ((max + min)/2) × 100. CI: resample *rows* with replacement (500 replicates,
as upstream), recomputing the identifier means and the max/min each time; a replicate is skipped
when an identifier disappears or the midpoint is 0, and ≥ 10 usable replicates are required.
Upstream reseeded every cell with 42; we seed from ``mog:{model}:{task}:{axis}`` (SHA-256).

With fewer than two identifiers answered there is no gap (NaN, no identifiers named): the gap
of a lone identifier with itself is 0 by construction, and "Sunni vs Sunni: 0 %" read as a
measured absence of bias. The paper's complete runs never have such a cell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock, stack_languages
from rupeebias_core.metrics.bootstrap import CHUNK_DRAWS, percentile_ci
from rupeebias_core.metrics.pairs import Method
from rupeebias_core.metrics.seeds import rng_for
from rupeebias_core.pair_semantics import signed_gap

MOG_RESAMPLES: int = 500
MIN_USABLE: int = 10


@dataclass(frozen=True)
class MaxGap:
    gap: float
    gap_lo: float
    gap_hi: float
    top_identifier: str | None
    bottom_identifier: str | None
    n_rows: int
    n_identifiers: int


def max_gap(values: np.ndarray, identifiers: np.ndarray, key: str, method: Method = "upstream",
            n_resamples: int = MOG_RESAMPLES, max_draws: int = CHUNK_DRAWS) -> MaxGap:
    """MOG of rows ``values`` labelled by ``identifiers`` (ties: first in string order)."""
    v = np.asarray(values, float)
    ids = np.asarray(identifiers, dtype=object)
    ok = np.isfinite(v)
    v, ids = v[ok], ids[ok]
    if v.size == 0:
        return MaxGap(math.nan, math.nan, math.nan, None, None, 0, 0)
    names, codes = np.unique(ids.astype(str), return_inverse=True)
    k = names.size
    if k < 2:
        return MaxGap(math.nan, math.nan, math.nan, None, None, int(v.size), int(k))
    means = np.bincount(codes, weights=v, minlength=k) / np.bincount(codes, minlength=k)
    top, bottom = int(np.argmax(means)), int(np.argmin(means))
    gap = float(signed_gap(means[top], means[bottom], method))
    lo = hi = math.nan
    rng = rng_for(key)
    n = v.size
    reps = []
    step = max(1, max_draws // n)
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        idx = rng.integers(0, n, (b, n))
        flat = codes.take(idx)  # (replicate, identifier) bin of every draw, in place
        flat += np.arange(0, b * k, k)[:, None]
        flat = flat.ravel()
        sums = np.bincount(flat, weights=v.take(idx).ravel(),
                           minlength=b * k).reshape(b, k)
        cnts = np.bincount(flat, minlength=b * k).reshape(b, k)
        full = (cnts > 0).all(axis=1)
        m = sums[full] / cnts[full]
        reps.append(signed_gap(m.max(axis=1), m.min(axis=1), method))
    r = np.concatenate(reps)
    r = r[np.isfinite(r)]
    if r.size >= MIN_USABLE:
        lo, hi = percentile_ci(r)
    return MaxGap(gap, lo, hi, str(names[top]), str(names[bottom]), int(v.size), int(k))


def block_max_gap(block: ValueBlock, key: str, method: Method = "upstream",
                  n_resamples: int = MOG_RESAMPLES) -> MaxGap:
    """MOG of a (language-pooled) block."""
    ids = np.broadcast_to(np.array(block.identifiers, dtype=object), block.values.shape)
    return max_gap(block.values.ravel(), ids.ravel(), key, method, n_resamples)


def max_gap_rows(blocks: Mapping[BlockKey, ValueBlock], model: str, languages: Sequence[str],
                 tasks: Sequence[str], axes: Sequence[str], method: Method = "upstream"
                 ) -> list[dict[str, Any]]:
    """One row per (task, axis), languages pooled."""
    rows = []
    for task in tasks:
        for axis in axes:
            parts = [blocks[k] for lang in languages if (k := ("standard", lang, task, axis))
                     in blocks]
            if not parts:
                continue
            mg = block_max_gap(stack_languages(parts), f"mog:{model}:{task}:{axis}", method)
            rows.append({"model": model, "language": "all", "task": task, "axis": axis,
                         "gap": mg.gap, "gap_lo": mg.gap_lo, "gap_hi": mg.gap_hi,
                         "top_identifier": mg.top_identifier,
                         "bottom_identifier": mg.bottom_identifier, "n_rows": mg.n_rows,
                         "n_identifiers": mg.n_identifiers})
    return rows
