"""Canonical pair gap (CPG, Figure 8): a signed gap between one privileged and one marginalised
identifier per axis, with languages pooled.

CPG% = (mean P − mean M) / ((mean P + mean M)/2) × 100 over *unmatched* rows (every P row vs
every M row), with an unmatched bootstrap CI (each group resampled on its own, 2,000 replicates,
seed ``cpg:{model}:{task}:{axis}``). Sign consistency is the share of *matched* slots
(language, profile, QV) where P > M strictly; rank-biserial r = (#P>M − #M>P) / #non-ties.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock, stack_languages
from rupeebias_core.metrics.bootstrap import DEFAULT_RESAMPLES, percentile_ci
from rupeebias_core.metrics.pairs import Method
from rupeebias_core.metrics.seeds import rng_for
from rupeebias_core.pair_semantics import signed_gap


@dataclass(frozen=True)
class CanonicalGap:
    cpg: float
    cpg_lo: float
    cpg_hi: float
    sign_consistency: float
    rank_biserial: float
    n_matched_slots: int
    n_privileged: int
    n_marginalised: int


def canonical_gap(p_values: np.ndarray, m_values: np.ndarray, p_matched: np.ndarray,
                  m_matched: np.ndarray, key: str, method: Method = "upstream",
                  n_resamples: int = DEFAULT_RESAMPLES) -> CanonicalGap:
    """CPG of unmatched samples ``p_values``/``m_values`` and sign statistics of the aligned
    matched arrays ``p_matched``/``m_matched`` (NaN = missing in that slot)."""
    p = np.asarray(p_values, float)
    p = p[np.isfinite(p)]
    m = np.asarray(m_values, float)
    m = m[np.isfinite(m)]
    cpg, lo, hi = math.nan, math.nan, math.nan
    if p.size and m.size:
        cpg = float(signed_gap(p.mean(), m.mean(), method))
        if p.size >= 2 and m.size >= 2:
            rng = rng_for(key)
            bp = p[rng.integers(0, p.size, (n_resamples, p.size))].mean(axis=1)
            bm = m[rng.integers(0, m.size, (n_resamples, m.size))].mean(axis=1)
            lo, hi = percentile_ci(signed_gap(bp, bm, method))
    pm, mm = np.asarray(p_matched, float).ravel(), np.asarray(m_matched, float).ravel()
    both = np.isfinite(pm) & np.isfinite(mm)
    n_matched = int(both.sum())
    greater = int((pm[both] > mm[both]).sum())
    less = int((pm[both] < mm[both]).sum())
    sign = 100.0 * greater / n_matched if n_matched else math.nan
    rbs = (greater - less) / (greater + less) if greater + less else math.nan
    return CanonicalGap(cpg, lo, hi, sign, rbs, n_matched, int(p.size), int(m.size))


def block_canonical_gap(block: ValueBlock, privileged: str, marginalised: str, key: str,
                        method: Method = "upstream",
                        n_resamples: int = DEFAULT_RESAMPLES) -> CanonicalGap:
    """CPG of a (language-pooled) block; slots are its (profile, QV) cells."""
    p = block.identifier_column(privileged)
    m = block.identifier_column(marginalised)
    return canonical_gap(p.ravel(), m.ravel(), p, m, key, method, n_resamples)


def canonical_gap_rows(blocks: Mapping[BlockKey, ValueBlock], model: str,
                       languages: Sequence[str], tasks: Sequence[str],
                       pairs: Mapping[str, tuple[str, str]], method: Method = "upstream",
                       n_resamples: int = DEFAULT_RESAMPLES) -> list[dict[str, Any]]:
    """One row per (task, axis with a canonical pair), languages pooled."""
    rows = []
    for task in tasks:
        for axis, (p, m) in pairs.items():
            parts = [blocks[k] for lang in languages if (k := ("standard", lang, task, axis))
                     in blocks]
            if not parts:
                continue
            g = block_canonical_gap(stack_languages(parts), p, m, f"cpg:{model}:{task}:{axis}",
                                    method, n_resamples)
            excl = bool(math.isfinite(g.cpg_lo) and (g.cpg_lo > 0 or g.cpg_hi < 0))
            rows.append({"model": model, "language": "all", "task": task, "axis": axis,
                         "privileged": p, "marginalised": m, "cpg": g.cpg, "cpg_lo": g.cpg_lo,
                         "cpg_hi": g.cpg_hi, "sign_consistency": g.sign_consistency,
                         "n_matched_slots": g.n_matched_slots, "n_privileged": g.n_privileged,
                         "n_marginalised": g.n_marginalised, "rank_biserial": g.rank_biserial,
                         "ci_excludes_zero": excl})
    return rows
