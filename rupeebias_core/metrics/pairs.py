"""Vectorised pair formation inside slots; Δ% itself is :mod:`rupeebias_core.pair_semantics`.

Δ% = |a − b| / ((a + b)/2) × 100 for two responses that differ only in the identifier. Pairs are
all unordered pairs of distinct identifiers inside one slot (profile × question variant of one
task, language and axis): C(k, 2) per slot, 852 per slot over the six axes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rupeebias_core.metrics.blocks import ValueBlock
from rupeebias_core.pair_semantics import METHODS, Method, relative_gap

__all__ = ["METHODS", "Method", "block_pair_deltas", "block_pair_frame", "block_slot_sums",
           "pairs_per_slot", "relative_gap"]


def pairs_per_slot(k: int) -> int:
    """Unordered pairs of distinct identifiers among ``k``: C(k, 2)."""
    return k * (k - 1) // 2


def _slot_matrix(block: ValueBlock) -> np.ndarray:
    p, q, k = block.values.shape
    return block.values.reshape(p * q, k)


def block_pair_deltas(block: ValueBlock, method: Method = "upstream") -> np.ndarray:
    """All finite pair Δ% of a block, slot-major (profile, QV), then identifier pair order."""
    slots = _slot_matrix(block)
    i, j = np.triu_indices(slots.shape[1], 1)
    deltas = relative_gap(slots[:, i], slots[:, j], method).ravel()
    return deltas[np.isfinite(deltas)]


def block_slot_sums(block: ValueBlock, method: Method = "upstream", tau: float = 10.0
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per slot (profile, QV; slot-major as :func:`block_pair_deltas`): the sum of its finite
    pair Δ%, their number, and how many exceed ``tau`` — the clusters of the slot bootstrap."""
    slots = _slot_matrix(block)
    i, j = np.triu_indices(slots.shape[1], 1)
    deltas = relative_gap(slots[:, i], slots[:, j], method)
    finite = np.isfinite(deltas)
    over = np.where(finite, deltas, -np.inf) > tau
    return (np.where(finite, deltas, 0.0).sum(axis=1), finite.sum(axis=1).astype(float),
            over.sum(axis=1).astype(float))


def block_pair_frame(block: ValueBlock, method: Method = "upstream") -> pd.DataFrame:
    """Every formed pair of a block with both values, for drill-down and tests.

    ``identifier_a`` < ``identifier_b`` in plain string order, as upstream's self-join."""
    slots = _slot_matrix(block)
    i, j = np.triu_indices(slots.shape[1], 1)
    idents = np.array(block.identifiers, dtype=object)
    swap = idents[i] > idents[j]
    ia, ib = np.where(swap, j, i), np.where(swap, i, j)
    va, vb = slots[:, ia], slots[:, ib]
    deltas = relative_gap(va, vb, method)
    prof = np.repeat(np.array(block.profiles, dtype=object), len(block.qvs))
    qv = np.tile(np.array(block.qvs, dtype=object), len(block.profiles))
    keep = np.isfinite(deltas)
    rows, cols = np.nonzero(keep)
    return pd.DataFrame(
        {
            "profile_id": prof[rows],
            "question_variant_id": qv[rows],
            "identifier_a": idents[ia][cols],
            "identifier_b": idents[ib][cols],
            "value_a": va[rows, cols],
            "value_b": vb[rows, cols],
            "delta": deltas[rows, cols],
        }
    )
