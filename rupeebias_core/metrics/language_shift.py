"""Language moderation (the paper's Figure 5 / upstream Table 7): does Hinglish reorder the
identifiers (Spearman ρ of EN vs HI identifier means) and change gap size (Hinglish − English
Mean Δ%, with a bootstrap CI)?

Identifier means pool the five tasks. Upstream averages raw values, which mixes LPA, %, markup
% and INR so service prices dominate; the corrected method first expresses each value as a %
deviation from its slot mean (same task, language, axis, profile and QV), which is unit-free.
The Δ shift CI composes the two languages' independent Mean Δ% bootstrap replicates.

Both languages are measured on the same slots: :func:`matched_values` keeps the slots answered
in both (every slot, in a complete run).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock, paired_rows
from rupeebias_core.metrics.bootstrap import percentile_ci, pool, t_interval
from rupeebias_core.metrics.delta import ALL, CellKey, FineCell, select
from rupeebias_core.metrics.pairs import Method

MIN_IDENTIFIERS: int = 3
SLOT_COLUMNS = ("task", "axis", "profile_id", "question_variant_id")


def matched_values(values: pd.DataFrame, languages: Sequence[str] = ("en", "hinglish"),
                   answered: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """The standard-condition rows of the slots answered in both languages, or None when that
    is already every row (a complete run): the shift compares the same prompts in English and
    in Hinglish, not whatever each language has so far. ``answered``: see
    :func:`~rupeebias_core.metrics.blocks.paired_rows`."""
    def standard(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["condition"] == "standard"] if "condition" in frame.columns \
            else frame

    return paired_rows(standard(values), "language", languages[0], languages[1], SLOT_COLUMNS,
                       None if answered is None else standard(answered))


def value_matched_blocks(blocks: Mapping[BlockKey, ValueBlock],
                         languages: Sequence[str] = ("en", "hinglish")
                         ) -> dict[BlockKey, ValueBlock]:
    """Standard blocks of both languages restricted to the answers *usable in both*: the same
    (task, axis, profile, QV, identifier) cells on each side.

    Why: slots answered in both languages can still differ in which answers parse (on the
    shipped SmolLM2 run English and Hinglish parsed different task mixes), and pooling pairs
    over different mixes turns a composition difference into a "shift"."""
    en, hi = languages
    out: dict[BlockKey, ValueBlock] = {}
    for (cond, lang, task, axis), b_en in blocks.items():
        if cond != "standard" or lang != en:
            continue
        b_hi = blocks.get((cond, hi, task, axis))
        if b_hi is None:
            continue
        profs = tuple(p for p in b_en.profiles if p in set(b_hi.profiles))
        qvs = tuple(q for q in b_en.qvs if q in set(b_hi.qvs))
        ids = tuple(i for i in b_en.identifiers if i in set(b_hi.identifiers))
        if not (profs and qvs and len(ids) >= 2):
            continue

        def sub(b: ValueBlock, profs: tuple[str, ...] = profs, qvs: tuple[str, ...] = qvs,
                ids: tuple[str, ...] = ids) -> np.ndarray:
            return b.values[np.ix_([b.profiles.index(p) for p in profs],
                                   [b.qvs.index(q) for q in qvs],
                                   [b.identifiers.index(i) for i in ids])]

        v_en, v_hi = sub(b_en), sub(b_hi)
        both = np.isfinite(v_en) & np.isfinite(v_hi)
        for lang_, v in ((en, v_en), (hi, v_hi)):
            vals = np.where(both, v, np.nan)
            vals.setflags(write=False)
            out[(cond, lang_, task, axis)] = ValueBlock(cond, lang_, task, axis, profs, qvs,
                                                        ids, vals)
    return dict(sorted(out.items()))


def standardised_shift(cells: Mapping[CellKey, FineCell], axis: str,
                       languages: Sequence[str] = ("en", "hinglish")
                       ) -> tuple[float, float, float, int]:
    """Hinglish − English Mean Δ% per task on value-matched cells, averaged over tasks with
    equal weight (so the task mix cannot make a shift), with its bootstrap interval; and the
    number of tasks. Replicates are differenced replicate by replicate."""
    en, hi = languages
    tasks = sorted({t for (_, t, _) in cells})
    diffs, reps = [], []
    shared = True
    for t in tasks:
        a = select(cells, en, t, axis)
        b = select(cells, hi, t, axis)
        if not a or not b:
            continue
        ra, rb = pool(c.reps for c in a), pool(c.reps for c in b)
        if ra.n == 0 or rb.n == 0:
            continue
        diffs.append(rb.mean - ra.mean)
        reps.append(rb.replicate_means() - ra.replicate_means())
        shared = shared and ra.clusters is not None
    if not diffs:
        return (math.nan, math.nan, math.nan, 0)
    point = float(np.mean(diffs))
    r = np.mean(reps, axis=0)
    if shared:
        clusters = {c for cell in cells.values() if cell.reps.clusters
                    for c in cell.reps.clusters}
        lo, hi_ = (float(x) for x in t_interval(point, r, len(clusters)))
    else:
        lo, hi_ = percentile_ci(r)
    return (point, lo, hi_, len(diffs))


def slot_normalised(values: np.ndarray) -> np.ndarray:
    """% deviation of each value from its slot mean (last axis = identifiers); NaN for slots
    with < 2 values or a non-positive mean."""
    v = np.asarray(values, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(v, axis=-1, keepdims=True)
    n = np.isfinite(v).sum(axis=-1, keepdims=True)
    ok = (n >= 2) & (mean > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (v / mean - 1.0) * 100.0
    return np.where(ok, out, np.nan)


def identifier_means(blocks: Sequence[ValueBlock], method: Method) -> dict[str, float]:
    """Mean (raw or slot-normalised) value per identifier, pooling the given blocks' rows."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for b in blocks:
        vals = b.values if method == "upstream" else slot_normalised(b.values)
        ok = np.isfinite(vals)
        s = np.where(ok, vals, 0.0).sum(axis=(0, 1))
        c = ok.sum(axis=(0, 1))
        for ident, si, ci in zip(b.identifiers, s, c, strict=True):
            if ci:
                sums[ident] = sums.get(ident, 0.0) + float(si)
                counts[ident] = counts.get(ident, 0) + int(ci)
    return {k: sums[k] / counts[k] for k in sums}


def rank_agreement_en_hi(en: Mapping[str, float], hi: Mapping[str, float]
                         ) -> tuple[float, float, int]:
    """Spearman ρ, its p and n over identifiers present in both languages (≥ 3 needed)."""
    common = sorted(set(en) & set(hi))
    if len(common) < MIN_IDENTIFIERS:
        return (math.nan, math.nan, len(common))
    x = np.array([en[c] for c in common])
    y = np.array([hi[c] for c in common])
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return (math.nan, math.nan, len(common))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = spearmanr(x, y)
    return (float(res.statistic), float(res.pvalue), len(common))


def language_shift_rows(blocks: Mapping[BlockKey, ValueBlock], cells: Mapping[CellKey, FineCell],
                        model: str, axes: Sequence[str], method: Method,
                        languages: Sequence[str] = ("en", "hinglish"),
                        matched_cells: Mapping[CellKey, FineCell] | None = None
                        ) -> list[dict[str, Any]]:
    """One row per axis and ``all`` (ρ over all identifiers pooled, Δ over all pairs, and the
    task-standardised Δ on value-matched cells when ``matched_cells`` is given)."""
    en_lang, hi_lang = languages
    rows = []
    for axis in (*axes, ALL):
        def _blocks(lang: str, axis: str = axis) -> list[ValueBlock]:
            return [b for (c, lg, _t, a), b in sorted(blocks.items())
                    if c == "standard" and lg == lang and (axis == ALL or a == axis)]
        rho, rho_p, n_id = rank_agreement_en_hi(identifier_means(_blocks(en_lang), method),
                                                identifier_means(_blocks(hi_lang), method))
        en_cells = select(cells, en_lang, ALL, axis)
        hi_cells = select(cells, hi_lang, ALL, axis)
        row = {"model": model, "axis": axis, "language": ALL, "rho": rho, "rho_p": rho_p,
               "n_identifiers": n_id, "mean_delta_en": math.nan,
               "mean_delta_hinglish": math.nan, "delta_shift": math.nan,
               "delta_shift_lo": math.nan, "delta_shift_hi": math.nan,
               "n_pairs_en": 0, "n_pairs_hinglish": 0}
        if en_cells:
            en = pool(c.reps for c in en_cells)
            row.update(mean_delta_en=en.mean, n_pairs_en=en.n)
        if hi_cells:
            hi = pool(c.reps for c in hi_cells)
            row.update(mean_delta_hinglish=hi.mean, n_pairs_hinglish=hi.n)
        if en_cells and hi_cells:
            row["delta_shift"] = hi.mean - en.mean
            if en.has_ci and hi.has_ci:
                lo, hi_ = percentile_ci(hi.replicate_means() - en.replicate_means())
                row.update(delta_shift_lo=lo, delta_shift_hi=hi_)
        if matched_cells:
            std, lo, hi_, n_t = standardised_shift(matched_cells, axis, languages)
            row.update(delta_shift_std=std, delta_shift_std_lo=lo, delta_shift_std_hi=hi_,
                       n_tasks_std=n_t)
        if n_id or en_cells or hi_cells:
            rows.append(row)
    return rows
