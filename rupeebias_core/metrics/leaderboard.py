"""Table 2 (pair-pooled Mean Δ% and V@10 per language) plus the unweighted summaries the paper
uses elsewhere: the Tables 3/4 "Mean" column and the Figure 3b x-axis.

Pair-weighted pooling lets Region (51% of pairs) and Caste (32%) dominate; the unweighted means
give each axis (or task × axis) equal say, which is why the paper reports both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rupeebias_core.metrics.bootstrap import pool
from rupeebias_core.metrics.delta import (
    ALL,
    CellKey,
    FineCell,
    pool_cells,
    select,
    unweighted_mean_ci,
)


def leaderboard_rows(cells: Mapping[CellKey, FineCell], model: str,
                     languages: Sequence[str], axes: Sequence[str]) -> pd.DataFrame:
    """One row per language (and ``all``) with the Table 2 numbers and unweighted means."""
    rows = []
    per_lang_task_axis: dict[str, float] = {}
    for lang in (*languages, ALL):
        pooled = pool_cells(select(cells, lang))
        if pooled is None:
            continue
        axis_reps = [pool(c.reps for c in select(cells, lang, ALL, a)) for a in axes
                     if select(cells, lang, ALL, a)]
        unw, unw_lo, unw_hi = unweighted_mean_ci(axis_reps)
        if lang == ALL:
            vals = [per_lang_task_axis[lg] for lg in languages if lg in per_lang_task_axis]
            task_axis = float(np.mean(vals)) if vals else math.nan
        else:
            task_axis = float(np.mean([c.reps.mean for c in select(cells, lang)]))
            per_lang_task_axis[lang] = task_axis
        rows.append({
            "model": model, "language": lang, "task": ALL, "axis": ALL,
            **pooled.as_row(),
            "mean_delta_unweighted": unw,
            "mean_delta_unweighted_lo": unw_lo,
            "mean_delta_unweighted_hi": unw_hi,
            "mean_delta_task_axis": task_axis,
            "n_tasks": len({c.task for c in select(cells, lang)}),
            "n_axes": len(axis_reps),
        })
    return pd.DataFrame(rows)
