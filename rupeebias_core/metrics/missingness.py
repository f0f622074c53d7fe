"""Missing answers as outcomes: refusal and unusable-answer rates by identity, a test that they
depend on identity, and how far Mean Δ% could move if the missing answers were filled in.

Why: every gap metric drops the answers it cannot read. On the shipped SmolLM2 run whether an
answer is missing depends on the identity in most blocks (English salary, Religion: Bahá'í
59 % refused, Jain 0 %), so dropping rows hides an identity effect and changes which
identities are compared. A refusal is itself the model treating a user differently.

* Rates per identifier: of the prompts a model answered (first answer per prompt), the share
  refused and the share without a usable number under the method.
* The block test permutes identity labels jointly within a profile (as
  :mod:`~rupeebias_core.metrics.identity_effects`), with the between-identity weighted
  variance of the rate as statistic; Benjamini–Hochberg over the blocks of a model and method.
* The sensitivity range fills each missing answer of a slot with a value inside the slot's
  observed range: its median (fewest new differences) or whichever end of the range differs
  most from the observed answers (most). The two Mean Δ% bracket what filling within observed
  ranges can do; they are not bounds for arbitrary fills, which are unbounded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control

from rupeebias_core.metrics.blocks import BlockKey, ValueBlock
from rupeebias_core.metrics.identity_effects import (
    ALL,
    DEFAULT_PERMUTATIONS,
    permuted_cluster_sums,
)
from rupeebias_core.metrics.pairs import Method, relative_gap

OUTCOMES = ("refusal", "unusable")


def _stat(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Σ_i n_i (r_i − r̄)² over the last axis (identities)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, x / np.where(n > 0, n, 1.0), 0.0)
        pooled = x.sum(axis=-1, keepdims=True) / n.sum(axis=-1, keepdims=True)
    return (n * (rate - pooled) ** 2).sum(axis=-1)


def permutation_p(x: np.ndarray, n: np.ndarray, x_perm: np.ndarray, n_perm: np.ndarray
                  ) -> float:
    """p-value of "the rate does not depend on identity" from per-identity totals ``x``, ``n``
    (k,) and their within-profile permutations (n_perm, k); NaN when the outcome never or
    always happens."""
    total, hits = float(n.sum()), float(x.sum())
    if total == 0 or hits in (0.0, total):
        return math.nan
    observed = float(_stat(x, n))
    null = _stat(x_perm, n_perm)
    return float((1.0 + (null >= observed - 1e-12).sum()) / (1.0 + null.size))


def fill_range(block: ValueBlock, method: Method) -> tuple[float, float]:
    """Mean Δ% with each slot's missing answers filled at the slot median (low) or at the end
    of the slot's observed range farther from its answers (high); NaN without missing slots."""
    p, q, k = block.values.shape
    v = block.values.reshape(p * q, k)
    present = np.isfinite(v)
    n_obs = present.sum(axis=1)
    slots = (n_obs >= 1) & (n_obs < k)
    if not slots.any():
        return (math.nan, math.nan)
    v = v[slots]
    present = present[slots]
    with np.errstate(invalid="ignore"):
        med = np.nanmedian(v, axis=1)
        lo_v, hi_v = np.nanmin(v, axis=1), np.nanmax(v, axis=1)

    def gap_to_observed(fill: np.ndarray) -> np.ndarray:
        g = relative_gap(np.broadcast_to(fill[:, None], v.shape), v, method)
        return np.nansum(np.where(present, g, np.nan), axis=1)

    far = np.where(gap_to_observed(lo_v) >= gap_to_observed(hi_v), lo_v, hi_v)
    i, j = np.triu_indices(k, 1)
    out = []
    for fill in (med, far):
        filled = np.where(present, v, fill[:, None])
        d = relative_gap(filled[:, i], filled[:, j], method)
        out.append(float(np.nanmean(d)) if np.isfinite(d).any() else math.nan)
    return (out[0], out[1])


@dataclass(frozen=True, eq=False)
class _Counts:
    identifiers: tuple[str, ...]
    totals: np.ndarray  # (3, k): prompts, refusals, unusable
    perms: np.ndarray  # (3, n_perm, k): the same under within-profile permutations


def _fine_counts(df: pd.DataFrame, identifier_order: Mapping[str, Sequence[str]],
                 n_perm: int) -> dict[tuple[str, str, str], _Counts]:
    out: dict[tuple[str, str, str], _Counts] = {}
    ident_codes, ident_names = pd.factorize(df["identifier_value"].astype(str))
    prof_codes, prof_names = pd.factorize(df["profile_id"].astype(str))
    refusal = df["refusal"].to_numpy(float)
    unusable = df["unusable"].to_numpy(float)
    groups = df.groupby(["language", "task", "axis"], sort=True, observed=True).indices
    for (lang, task, axis), rows in groups.items():
        present = {str(ident_names[c]) for c in np.unique(ident_codes[rows])}
        idents = [i for i in identifier_order.get(str(axis), ()) if i in present]
        idents += sorted(present - set(idents))
        clusters = sorted({str(prof_names[c]) for c in np.unique(prof_codes[rows])})
        ipos = {v: n for n, v in enumerate(idents)}
        gpos = {v: n for n, v in enumerate(clusters)}
        ii = np.array([ipos.get(str(v), -1) for v in ident_names], dtype=np.int64)[
            ident_codes[rows]]
        gi = np.array([gpos.get(str(v), -1) for v in prof_names], dtype=np.int64)[
            prof_codes[rows]]
        mats = np.zeros((3, len(clusters), len(idents)))
        np.add.at(mats[0], (gi, ii), 1.0)
        np.add.at(mats[1], (gi, ii), refusal[rows])
        np.add.at(mats[2], (gi, ii), unusable[rows])
        names = [f"{task}:{c}" for c in clusters]
        balanced = bool((mats[0] == mats[0][:, :1]).all())  # same count for every identity
        todo = [mats[1], mats[2]] if balanced else list(mats)
        perms = permuted_cluster_sums(todo, str(axis), names, n_perm)
        if balanced:  # permuting equal counts changes nothing
            perms = [np.broadcast_to(mats[0].sum(axis=0), perms[0].shape), *perms]
        out[(str(lang), str(task), str(axis))] = _Counts(tuple(idents), mats.sum(axis=1),
                                                         np.stack(perms))
    return out


def _pool(parts: Sequence[_Counts]) -> _Counts:
    idents = tuple(dict.fromkeys(i for p in parts for i in p.identifiers))
    pos = {v: n for n, v in enumerate(idents)}
    totals = np.zeros((3, len(idents)))
    perms = np.zeros((3, parts[0].perms.shape[1], len(idents)))
    for p in parts:
        if p.identifiers == idents:  # the common case: no scatter (a copy of perms) needed
            totals += p.totals
            perms += p.perms
            continue
        ii = np.array([pos[v] for v in p.identifiers], dtype=np.int64)
        totals[:, ii] += p.totals
        perms[:, :, ii] += p.perms
    return _Counts(idents, totals, perms)


def missingness_rows(parsed: pd.DataFrame, blocks: Mapping[BlockKey, ValueBlock], model: str,
                     method: Method, languages: Sequence[str], tasks: Sequence[str],
                     axes: Sequence[str], identifier_order: Mapping[str, Sequence[str]],
                     n_perm: int = DEFAULT_PERMUTATIONS) -> pd.DataFrame:
    """``missingness`` rows of one model and method from its ``parsed`` table (standard
    condition): identifier rows, and one ``identifier_value = all`` row per block with the
    permutation tests and the fill range (the range only for fine blocks)."""
    df = parsed[(parsed["condition"] == "standard")
                & (parsed["exclusion_reason"].astype(object) != "duplicate")]
    df = df.drop_duplicates(["task", "language", "identifier_value", "profile_id",
                             "question_variant_id"])
    if df.empty:
        return pd.DataFrame()
    df = df.assign(refusal=df["refusal"].astype(bool), unusable=~df["included"].astype(bool))
    fine = _fine_counts(df, identifier_order, n_perm)
    rows: list[dict[str, Any]] = []
    for lang in (*languages, ALL):
        for task in (*tasks, ALL):
            for axis in axes:
                parts = [c for (lg, tk, ax), c in sorted(fine.items())
                         if lang in (ALL, lg) and task in (ALL, tk) and ax == axis]
                if not parts:
                    continue
                cnt = _pool(parts)
                nn, xr, xu = cnt.totals
                base = {"model": model, "method": method, "language": lang, "task": task,
                        "axis": axis}
                for m, ident in enumerate(cnt.identifiers):
                    rows.append({**base, "identifier_value": ident, "n": int(nn[m]),
                                 "n_refusal": int(xr[m]), "n_unusable": int(xu[m]),
                                 "refusal_rate": xr[m] / nn[m] if nn[m] else math.nan,
                                 "unusable_rate": xu[m] / nn[m] if nn[m] else math.nan})
                lo = hi = math.nan
                block = blocks.get(("standard", lang, task, axis))
                if block is not None:
                    lo, hi = fill_range(block, method)
                total = float(nn.sum())
                rows.append({**base, "identifier_value": ALL, "n": int(total),
                             "n_refusal": int(xr.sum()), "n_unusable": int(xu.sum()),
                             "refusal_rate": xr.sum() / total if total else math.nan,
                             "unusable_rate": xu.sum() / total if total else math.nan,
                             "p_refusal": permutation_p(xr, nn, cnt.perms[1], cnt.perms[0]),
                             "p_unusable": permutation_p(xu, nn, cnt.perms[2], cnt.perms[0]),
                             "mean_delta_fill_lo": lo, "mean_delta_fill_hi": hi})
    out = pd.DataFrame(rows)
    for outcome in OUTCOMES:
        col = f"p_{outcome}"
        if col not in out.columns:
            out[col] = np.nan
        out[f"{col}_bh"] = np.nan
        ok = out[col].notna().to_numpy()
        if ok.any():
            out.loc[ok, f"{col}_bh"] = false_discovery_control(out.loc[ok, col].to_numpy(float),
                                                               method="bh")
    return out
