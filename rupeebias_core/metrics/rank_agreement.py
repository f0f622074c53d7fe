"""Profile rank agreement (Figure 13): do all identifiers agree on which profiles deserve more?

Per (language, task, axis): profiles × identifiers matrix of means over QVs (incomplete profiles
dropped; ≥ 3 profiles and ≥ 2 identifiers needed); Spearman ρ for every pair of identifier
columns (undefined ρ of constant columns skipped). All ρ of the six axes are pooled per
(language, task): mean with a bootstrap CI seeded from ``rank_agree:{model}:{task}:{language}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock
from rupeebias_core.metrics.bootstrap import bootstrap_mean_ci
from rupeebias_core.metrics.kendall_w import profile_identifier_matrix
from rupeebias_core.metrics.spearman import pairwise_spearman

MIN_PROFILES: int = 3


def block_identifier_rhos(block: ValueBlock) -> np.ndarray:
    """Pairwise Spearman ρ between identifier columns (over profiles) of one block."""
    m = profile_identifier_matrix(block)
    if m.shape[0] < MIN_PROFILES or m.shape[1] < 2:
        return np.empty(0)
    return pairwise_spearman(m)


def rank_agreement_rows(blocks: Mapping[BlockKey, ValueBlock], model: str,
                        languages: Sequence[str], tasks: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for lang in languages:
        for task in tasks:
            parts = [block_identifier_rhos(b) for (c, lg, t, _a), b in sorted(blocks.items())
                     if c == "standard" and lg == lang and t == task]
            if not parts:
                continue
            ci = bootstrap_mean_ci(np.concatenate(parts), f"rank_agree:{model}:{task}:{lang}")
            if ci.n == 0:
                continue
            rows.append({"model": model, "language": lang, "task": task, "rho": ci.mean,
                         "rho_lo": ci.lo, "rho_hi": ci.hi, "n_pairs": ci.n})
    return rows
