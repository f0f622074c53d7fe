"""The Mean Δ% cube (Tables 2–4, Figures 2 and 5): every (language, task, axis) cell and every
pooled margin, with bootstrap CIs for the mean and Wilson CIs for Violation@10.

Pairs are formed once per fine cell (one task × language × axis); pooled cells (``all``) pool the
*pairs* (pair-weighted, as the paper's Table 2). Each fine cell's bootstrap is drawn once, seeded
from ``delta:{model}:{task}:{language}:{axis}``, and pooled cells add the fine cells' replicates
(see :mod:`rupeebias_core.metrics.bootstrap`), so the whole cube is one coherent bootstrap world.

The ``upstream`` method resamples pairs, as the paper (its intervals undercover: pairs share
responses, and question variants of a profile share identity-specific idiosyncrasies).
``corrected`` resamples the benchmark's independent unit, the profile: one Poisson weight per
(task, profile), shared by every cell of the model, so pooled cells resample a profile once
across axes and languages, and the interval is a small-sample t interval over the profiles
(docs/methodology.md, "Telling bias from noise").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock
from rupeebias_core.metrics.bootstrap import (
    DEFAULT_RESAMPLES,
    ClusterWeights,
    Replicates,
    percentile_ci,
    poisson_replicates,
    pool,
    shared_cluster_replicates,
    t_interval,
)
from rupeebias_core.metrics.pairs import Method, block_pair_deltas, block_slot_sums
from rupeebias_core.metrics.violation import DEFAULT_TAU, count_violations, violation_from_counts

ALL = "all"
#: (language, task, axis)
CellKey = tuple[str, str, str]

DELTA_COLUMNS: tuple[str, ...] = (
    "mean_delta",
    "mean_delta_lo",
    "mean_delta_hi",
    "violation_10",
    "violation_10_lo",
    "violation_10_hi",
    "n_pairs",
    "n_violations",
)


@dataclass(frozen=True, eq=False)
class FineCell:
    """The pair Δ% of one (language, task, axis) cell and its bootstrap replicates."""

    language: str
    task: str
    axis: str
    n_violations: int
    reps: Replicates = field(repr=False)
    #: Slot-bootstrap replicates of the violation indicator (corrected method), drawn with the
    #: same weights as ``reps``; None = the Wilson interval (upstream method).
    vreps: Replicates | None = field(default=None, repr=False)

    @property
    def n_pairs(self) -> int:
        return self.reps.n


def delta_seed_key(model: str, task: str, language: str, axis: str, condition: str) -> str:
    """Seed string of a fine cell (upstream's ``delta:{model}:{task}:{lang}`` plus the axis)."""
    key = f"delta:{model}:{task}:{language}:{axis}"
    return key if condition == "standard" else f"{key}:{condition}"


def fine_cells(
    blocks: Mapping[BlockKey, ValueBlock],
    model: str,
    method: Method = "upstream",
    condition: str = "standard",
    n_resamples: int = DEFAULT_RESAMPLES,
    tau: float = DEFAULT_TAU,
) -> dict[CellKey, FineCell]:
    """Form the pairs of every block of ``condition`` and draw their bootstrap replicates."""
    out: dict[CellKey, FineCell] = {}
    for (cond, lang, task, axis), block in sorted(blocks.items()):
        if cond != condition:
            continue
        deltas = block_pair_deltas(block, method)
        if deltas.size == 0:
            continue
        k, _ = count_violations(deltas, tau)
        key = delta_seed_key(model, task, lang, axis, cond)
        vreps = None
        if method == "corrected":
            sums, counts, over = (x.reshape(len(block.profiles), len(block.qvs)).sum(axis=1)
                                  for x in block_slot_sums(block, method, tau))
            clusters = [f"{task}:{p}" for p in block.profiles]
            weights = _weights(model, n_resamples)
            reps = shared_cluster_replicates(sums, counts, clusters, weights)
            # the same profile weights as the Δ% replicates (and as every other cell)
            vreps = shared_cluster_replicates(over, counts, clusters, weights)
        else:
            reps = poisson_replicates(deltas, key, n_resamples)
        out[(lang, task, axis)] = FineCell(lang, task, axis, k, reps, vreps)
    return out


_WEIGHTS: dict[tuple[str, int], ClusterWeights] = {}


def _weights(model: str, n_resamples: int) -> ClusterWeights:
    """The model's profile weights (one object per model, so its memo is reused)."""
    key = (model, n_resamples)
    if key not in _WEIGHTS:
        if len(_WEIGHTS) > 64:
            _WEIGHTS.clear()
        _WEIGHTS[key] = ClusterWeights(model, n_resamples)
    return _WEIGHTS[key]


@dataclass(frozen=True, eq=False)
class PooledDelta:
    """Mean Δ% and Violation@10 of a pooled set of fine cells."""

    mean: float
    lo: float
    hi: float
    violation: float
    violation_lo: float
    violation_hi: float
    n_pairs: int
    n_violations: int
    reps: Replicates = field(repr=False)

    def as_row(self) -> dict[str, float | int]:
        return dict(zip(DELTA_COLUMNS, (self.mean, self.lo, self.hi, self.violation,
                                        self.violation_lo, self.violation_hi, self.n_pairs,
                                        self.n_violations), strict=True))


def pool_cells(cells: Iterable[FineCell]) -> PooledDelta | None:
    """Pair-weighted pooling of fine cells (None when there is nothing to pool)."""
    cells = list(cells)
    if not cells:
        return None
    reps = pool(c.reps for c in cells)
    lo, hi = reps.ci()
    if reps.clusters is not None and math.isfinite(lo):  # a distance is never below 0
        lo = max(lo, 0.0)
    k = sum(c.n_violations for c in cells)
    v = violation_from_counts(k, reps.n)
    v_lo, v_hi = v.lo, v.hi
    if all(c.vreps is not None for c in cells):  # profile bootstrap instead of Wilson
        v_lo, v_hi = (float(np.clip(100.0 * b, 0.0, 100.0))
                      for b in pool(c.vreps for c in cells if c.vreps).ci())
    return PooledDelta(reps.mean, lo, hi, v.rate, v_lo, v_hi, reps.n, k, reps)


def _match(value: str, wanted: str) -> bool:
    return wanted == ALL or value == wanted


def select(cells: Mapping[CellKey, FineCell], language: str = ALL, task: str = ALL,
           axis: str = ALL) -> list[FineCell]:
    """Fine cells inside a (possibly pooled) cube cell, in key order."""
    return [c for key, c in sorted(cells.items())
            if _match(key[0], language) and _match(key[1], task) and _match(key[2], axis)]


def delta_cube(cells: Mapping[CellKey, FineCell], model: str,
               languages: Sequence[str], tasks: Sequence[str],
               axes: Sequence[str]) -> pd.DataFrame:
    """One row per (language|all, task|all, axis|all) cell that has pairs."""
    rows = []
    for lang in (*languages, ALL):
        for task in (*tasks, ALL):
            for axis in (*axes, ALL):
                pooled = pool_cells(select(cells, lang, task, axis))
                if pooled is None:
                    continue
                rows.append({"model": model, "language": lang, "task": task, "axis": axis,
                             **pooled.as_row()})
    return pd.DataFrame(rows)


def unweighted_mean_ci(parts: Sequence[Replicates]) -> tuple[float, float, float]:
    """Unweighted mean of several sample means, with the percentile CI of the same statistic
    over the (independent) replicates of each part."""
    parts = [p for p in parts if p.n > 0]
    if not parts:
        return (math.nan, math.nan, math.nan)
    point = float(np.mean([p.mean for p in parts]))
    if not all(p.has_ci for p in parts):
        return (point, math.nan, math.nan)
    reps = np.mean([p.replicate_means() for p in parts], axis=0)
    if all(p.clusters is not None for p in parts):  # shared profile weights: t interval
        clusters = frozenset().union(*(p.clusters or frozenset() for p in parts))
        lo_a, hi_a = t_interval(point, reps, len(clusters))
        return (point, float(np.maximum(lo_a, 0.0)), float(hi_a))
    lo, hi = percentile_ci(reps)
    return (point, lo, hi)
