"""Every metric table for one model (``compute_model``) and the cross-model step
(``finalise``: Benjamini–Hochberg across models, ranks, ``source``/``method`` columns).

Kept separate from the CLI so tests and the benchmark can run the full computation in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rupeebias_core.metrics import fairness_ablation, language_shift
from rupeebias_core.metrics.blocks import build_blocks
from rupeebias_core.metrics.bootstrap import DEFAULT_RESAMPLES
from rupeebias_core.metrics.canonical_gap import canonical_gap_rows
from rupeebias_core.metrics.delta import delta_cube, fine_cells
from rupeebias_core.metrics.fairness_ablation import fairness_rows
from rupeebias_core.metrics.identifier_deviation import deviation_rows
from rupeebias_core.metrics.identity_effects import PLACEBO, identity_tables
from rupeebias_core.metrics.kendall_w import finalise_kendall, kendall_rows
from rupeebias_core.metrics.language_shift import language_shift_rows
from rupeebias_core.metrics.leaderboard import leaderboard_rows
from rupeebias_core.metrics.max_gap import max_gap_rows
from rupeebias_core.metrics.merit_sensitivity import merit_rows
from rupeebias_core.metrics.missingness import missingness_rows
from rupeebias_core.metrics.parse_health import parse_health_rows
from rupeebias_core.metrics.parsed import apply_method, health_frame
from rupeebias_core.metrics.qv_robustness import qv_rows
from rupeebias_core.metrics.rank_agreement import rank_agreement_rows
from rupeebias_core.metrics.tables import TABLE_NAMES
from rupeebias_core.pair_semantics import COUNTER_OFFER, Method

SOURCE = "computed"


@dataclass(frozen=True)
class Design:
    """Benchmark vocabulary the tables iterate over (benchmark order, extras appended)."""

    languages: tuple[str, ...]
    tasks: tuple[str, ...]
    axes: tuple[str, ...]
    identifier_order: Mapping[str, tuple[str, ...]]
    canonical_pairs: Mapping[str, tuple[str, str]]

    def sort_order(self) -> dict[str, Sequence[str]]:
        idents = [i for axis in self.axes for i in self.identifier_order.get(axis, ())]
        return {"method": ("upstream", "corrected"), "language": self.languages,
                "task": self.tasks, "axis": self.axes, "identifier_value": idents,
                "condition": ("standard", "fairness")}


def benchmark_design() -> Design:
    """The RupeeBias design from :mod:`rupeebias_core.benchmark`."""
    from rupeebias_core import benchmark as bm

    return Design(tuple(bm.LANGUAGES), tuple(bm.TASKS), tuple(bm.AXES),
                  {a: tuple(i.value for i in bm.identifiers_for_axis(a)) for a in bm.AXES},
                  dict(bm.CANONICAL_PAIRS))


def _extend(known: Sequence[str], present: Iterable[str]) -> tuple[str, ...]:
    present = set(present)
    return (*[k for k in known if k in present], *sorted(present - set(known)))


def design_for(frame: pd.DataFrame, base: Design) -> Design:
    """``base`` restricted to and extended by what ``frame`` holds (keeps tests small)."""
    return Design(_extend(base.languages, frame["language"].unique()),
                  _extend(base.tasks, frame["task"].unique()),
                  _extend(base.axes, frame["axis"].unique()),
                  base.identifier_order, base.canonical_pairs)


def _frame(rows: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    return rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)


def compute_from_values(values: pd.DataFrame, model: str, method: Method, design: Design,
                        n_resamples: int = DEFAULT_RESAMPLES,
                        answered: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """All aggregate tables of one model from a long frame of metric values (one row per
    response: condition, language, task, axis, identifier_value, profile_id,
    question_variant_id, value). ``answered`` (the slot columns of every collected response,
    readable or not; default: ``values``) decides which slots the paired comparisons share.
    Kendall p_bh/significant are filled by :func:`finalise`."""
    is_placebo = (values["condition"] == PLACEBO).to_numpy(bool) if "condition" in values \
        else np.zeros(len(values), dtype=bool)
    placebo = build_blocks(values[is_placebo]) if is_placebo.any() else {}
    values = values[~is_placebo]
    if answered is not None and "condition" in answered:
        answered = answered[answered["condition"] != PLACEBO]
    d = design_for(values, design)
    blocks = build_blocks(values, d.identifier_order)
    std = {k: b for k, b in blocks.items() if k[0] == "standard"}
    cells = fine_cells(std, model, method, "standard", n_resamples)
    fair = fine_cells(blocks, model, method, "fairness", n_resamples)
    langs = d.languages
    # Paired comparisons use the slots answered on both sides (a partial run may differ).
    ab_std, ab_fair = cells, fair
    matched = fairness_ablation.matched_values(values, answered)
    if matched is not None:
        ab_blocks = build_blocks(matched, d.identifier_order)
        ab_std = fine_cells(ab_blocks, model, method, "standard", n_resamples)
        ab_fair = fine_cells(ab_blocks, model, method, "fairness", n_resamples)
    ls_blocks, ls_cells = std, cells
    matched = (language_shift.matched_values(values, langs[:2], answered) if len(langs) >= 2
               else None)
    if matched is not None:
        ls_blocks = build_blocks(matched, d.identifier_order)
        ls_cells = fine_cells(ls_blocks, model, method, "standard", n_resamples)
    vm_cells = (fine_cells(language_shift.value_matched_blocks(std, langs[:2]), model,
                           method, "standard", n_resamples) if len(langs) >= 2 else {})
    kw_axis, kw_use = kendall_rows(std, model, d.languages, d.tasks, d.axes)
    effects, decomposition = identity_tables(std, model, method, langs, d.tasks, d.axes,
                                             n_boot=n_resamples, placebo=placebo)
    has_co = any(k[2] == COUNTER_OFFER for k in std)
    return {
        "identity_effects": effects,
        "gap_decomposition": decomposition,
        "delta": flag_markup_gaps(delta_cube(cells, model, langs, d.tasks, d.axes), method,
                                  has_co),
        "leaderboard": flag_markup_gaps(leaderboard_rows(cells, model, langs, d.axes),
                                        method, has_co),
        "kendall_w": _frame(kw_axis),
        "kendall_w_usecase": _frame(kw_use),
        "canonical_gaps": flag_markup_gaps(_frame(canonical_gap_rows(
            std, model, langs, d.tasks, d.canonical_pairs, method, n_resamples)), method, has_co),
        "max_gaps": flag_markup_gaps(_frame(max_gap_rows(std, model, langs, d.tasks, d.axes,
                                                         method)), method, has_co),
        "language_shift": flag_markup_gaps(_frame(language_shift_rows(
            ls_blocks, ls_cells, model, d.axes, method, langs[:2], vm_cells)
            if len(langs) >= 2 else []), method, has_co),
        "qv_robustness": _frame(qv_rows(std, model, langs, d.tasks, d.axes)),
        "merit_sensitivity": _frame(merit_rows(std, model, langs, d.tasks, method)),
        "profile_rank_agreement": _frame(rank_agreement_rows(std, model, langs, d.tasks)),
        "identifier_deviation": flag_markup_gaps(deviation_rows(
            [b for _, b in sorted(std.items())], model), method, has_co),
        "fairness_ablation": _frame(fairness_rows(ab_std, ab_fair, model, langs, d.axes)),
    }


MARKUP_FLAG = "upstream_markup_gaps"
#: A pooled upstream row whose pairs include counter-offer markup gaps (as the paper's).
POOLED_MARKUP_FLAG = "includes_upstream_markup_gaps"


def flag_markup_gaps(frame: pd.DataFrame, method: Method, has_counter_offer: bool
                     ) -> pd.DataFrame:
    """Mark upstream rows built on counter-offer markups (a relative "gap" between two markups
    is negative whenever both are, and explodes near a zero midpoint, so it is not a distance
    between answers): no page may show them as a gap. Tables without a ``task`` column pool
    every use case. The corrected method compares counter-offer amounts, never negative."""
    if frame.empty:
        return frame
    out = frame.copy()
    out["flag"] = None
    if method == "upstream" and has_counter_offer:
        if "task" not in out.columns:
            out["flag"] = POOLED_MARKUP_FLAG
            return out
        out.loc[(out["task"] == COUNTER_OFFER).to_numpy(bool), "flag"] = MARKUP_FLAG
        out.loc[(out["task"] == "all").to_numpy(bool), "flag"] = POOLED_MARKUP_FLAG
    return out


def compute_model(rows: pd.DataFrame, model: str, method: Method, design: Design | None = None,
                  n_resamples: int = DEFAULT_RESAMPLES) -> dict[str, pd.DataFrame]:
    """Every table for one model from :func:`~rupeebias_core.metrics.parsed.parse_rows`
    output (the ``parsed`` table included)."""
    design = design or benchmark_design()
    parsed = apply_method(rows, model, method)
    values = parsed.loc[parsed["included"],
                        ["condition", "language", "task", "axis", "identifier_value",
                         "profile_id", "question_variant_id", "metric_value"]]
    values = values.rename(columns={"metric_value": "value"})
    answered = parsed[["condition", "language", "task", "axis", "profile_id",
                       "question_variant_id"]]
    tables = compute_from_values(values, model, method, design, n_resamples, answered)
    tables["parse_health"] = parse_health_rows(health_frame(rows, method), model)
    std_values = values[values["condition"] == "standard"]
    design_m = design_for(std_values, design)
    tables["missingness"] = missingness_rows(
        parsed, build_blocks(std_values, design_m.identifier_order), model, method,
        design_m.languages, design_m.tasks, design_m.axes, design_m.identifier_order)
    tables["parsed"] = parsed
    return tables


def finalise(per_model: Iterable[Mapping[str, pd.DataFrame]], method: Method | None = None
             ) -> dict[str, pd.DataFrame]:
    """Concatenate per-model tables, stamp ``source``/``method`` and run the cross-model steps
    (BH and ranks in the Kendall tables). Frames that already carry ``method`` keep it."""
    out: dict[str, pd.DataFrame] = {}
    per_model = list(per_model)
    for name in TABLE_NAMES:
        frames = [t[name] for t in per_model if name in t and len(t[name])]
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        if len(df):
            df["source"] = SOURCE
            if "method" not in df.columns:
                df["method"] = method
            elif method is not None:
                df["method"] = df["method"].fillna(method)
        out[name] = df
    if len(out["kendall_w"]) and len(out["kendall_w_usecase"]):
        out["kendall_w"], out["kendall_w_usecase"] = finalise_kendall(
            out["kendall_w"], out["kendall_w_usecase"])
    return out
