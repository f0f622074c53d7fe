"""Reshape query results into the tables pages show (pure pandas, no Streamlit, no DuckDB).

Kept apart from ``data`` so the shaping is unit-testable and the one DuckDB module stays small.
Rules every function follows: rows are never dropped silently (a model with no value for a cell
keeps its row, with a coverage note saying why), published and computed rows stay separate rows
with their ``source``, and every gap keeps its CI and n columns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from explorer import numbers, vocab
from rupeebias_core.pair_semantics import VIOLATION_TAU, Method, slot_pairs

GROUP_LABELS = vocab.GROUP_LABELS


def prefer_published(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[pd.DataFrame, int]:
    """Keep one published transcription per cell: the ``preferred`` one when a cell has several.

    The paper prints Table 2 at 1 dp and the authors' README at 2 dp; both are stored, one marked
    preferred. Returns the kept rows and how many alternative rows were set aside (pages say so).
    """
    if frame.empty or "preferred" not in frame.columns:
        return frame, 0
    pub = frame["source_kind"].eq("published")
    pref = frame["preferred"].fillna(False).astype(bool)
    key_cols = [k for k in keys if k in frame.columns]
    has_pref = (frame[pub & pref].groupby(key_cols, dropna=False).size().rename("_n")
                .reset_index()) if key_cols else None
    if has_pref is None or has_pref.empty:
        return frame, 0
    merged = frame.merge(has_pref, on=key_cols, how="left")
    drop = pub.to_numpy() & ~pref.to_numpy() & merged["_n"].notna().to_numpy()
    return frame[~drop].reset_index(drop=True), int(drop.sum())


def model_frame(models: pd.DataFrame, selected: Sequence[str], kinds: Sequence[str]
                ) -> pd.DataFrame:
    """(model, source_kind) rows the page must show: each selected model × each of its sources
    that the reader asked for. This is the row universe that guarantees no silent drops."""
    rows = []
    for rec in models.itertuples(index=False):
        if rec.model not in selected:
            continue
        for kind in vocab.SOURCE_KINDS:
            if kind in kinds and bool(getattr(rec, kind)):
                rows.append({"model": rec.model, "label": rec.label, "source_kind": kind,
                             "weights": rec.weights})
    return pd.DataFrame(rows, columns=["model", "label", "source_kind", "weights"])


def _join_sources(values: Iterable[object]) -> str:
    kept = sorted({str(v) for v in values if isinstance(v, str) and v})
    return "; ".join(kept)


def coverage_text(kind: str, n_pairs: float | None, expected: int, has_value: bool) -> str:
    """Say how much of the benchmark a number rests on, or why there is no number."""
    if not has_value:
        if kind == "published":
            return "not reported in the paper for this cell"
        return "no usable answer pairs in this cell"  # none parsed, or none collected
    if n_pairs is None or (isinstance(n_pairs, float) and math.isnan(n_pairs)):
        return "paper does not report n" if kind == "published" else "n not recorded"
    share = 100.0 * float(n_pairs) / expected if expected else float("nan")
    return f"{share:.1f}% of pairs ({numbers.count(n_pairs)} of {numbers.count(expected)})"


def leaderboard(cells: pd.DataFrame, universe: pd.DataFrame, task: str, axis: str,
                language: str) -> pd.DataFrame:
    """The leaderboard: one row per (model, source), Mean Δ% and V@10 per language with CIs.

    ``cells`` are delta/leaderboard rows for one (task, axis); ``language`` is ``all`` (Overall,
    English and Hinglish side by side) or one language (that language's columns only).
    """
    groups = ["all", "en", "hinglish"] if language == "all" else [language]
    out = universe.copy()
    notes: dict[tuple[str, str], str] = {}
    sources: dict[tuple[str, str], str] = {}
    for (model, kind), sub in cells.groupby(["model", "source_kind"]) if len(cells) else []:
        sources[(model, kind)] = _join_sources(sub["source"])
        if "note" in sub.columns:
            notes[(model, kind)] = _join_sources(sub["note"])
    key = list(zip(out["model"], out["source_kind"], strict=True))
    out["Source"] = [sources.get(k) or vocab.SOURCE_LABELS[k[1]] for k in key]
    for group in groups:
        name = GROUP_LABELS[group]
        sub = cells[cells["language"] == group] if len(cells) else cells
        index = {(r.model, r.source_kind): r for r in sub.itertuples(index=False)}
        got = [index.get(k) for k in key]
        out[f"{name} Mean Δ%"] = [_val(r, "mean_delta") for r in got]
        out[f"{name} CI low"] = [_val(r, "mean_delta_lo") for r in got]
        out[f"{name} CI high"] = [_val(r, "mean_delta_hi") for r in got]
        v10 = [_val(r, "violation_10") for r in got]
        if group != "all" or any(not math.isnan(v) for v in v10):
            out[f"{name} V@10 %"] = v10
            out[f"{name} V@10 low"] = [_val(r, "violation_10_lo") for r in got]
            out[f"{name} V@10 high"] = [_val(r, "violation_10_hi") for r in got]
        out[f"{name} n pairs"] = pd.array([_int(r, "n_pairs") for r in got], dtype="Int64")
    first = GROUP_LABELS[groups[0]]
    expected = vocab.expected_pairs(task, groups[0], axis)
    out["Coverage"] = [
        coverage_text(kind, _nan_to_none(n), expected, not math.isnan(v))
        for kind, n, v in zip(out["source_kind"], out[f"{first} n pairs"].astype("Float64")
                              .fillna(np.nan), out[f"{first} Mean Δ%"], strict=True)
    ]
    out["Notes"] = [notes.get(k, "") for k in key]
    out["Coverage"] = ["not a gap (counter-offer markups, authors' method)"
                       if MARKUP_NOTE in str(n) else c
                       for c, n in zip(out["Coverage"], out["Notes"], strict=True)]
    out = out.rename(columns={"label": "Model", "weights": "Weights", "model": "Model ID",
                              "source_kind": "Source type"})
    out["Source type"] = out["Source type"].map(vocab.SOURCE_LABELS)
    lead = ["Model"]  # the answers come straight after the model; provenance follows
    tail = ["Coverage", "Source type", "Source", "Notes", "Weights", "Model ID"]
    rest = [c for c in out.columns if c not in lead and c not in tail]
    return out[lead + rest + tail]


def _val(rec: object, column: str) -> float:
    value = getattr(rec, column, None) if rec is not None else None
    try:
        return float(value) if value is not None and not pd.isna(value) else math.nan
    except (TypeError, ValueError):
        return math.nan


def _int(rec: object, column: str) -> int | None:
    value = getattr(rec, column, None) if rec is not None else None
    return None if value is None or pd.isna(value) else int(value)


def _nan_to_none(value: float) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def sort_frame(frame: pd.DataFrame, column: str, descending: bool) -> pd.DataFrame:
    """Sort with missing values always last, ties broken by the app's model order."""
    if column not in frame.columns:
        return frame
    return frame.sort_values(column, ascending=not descending, na_position="last",
                             kind="stable").reset_index(drop=True)


def headline(cells: pd.DataFrame) -> tuple[float, int] | None:
    """Unweighted mean of the Overall Mean Δ% across models: the paper's "20.2% on average"."""
    if cells.empty:
        return None
    sub = cells[(cells["language"] == "all") & cells["mean_delta"].notna()]
    if sub.empty:
        return None
    per_model = sub.groupby("model")["mean_delta"].mean()
    return float(per_model.mean()), int(per_model.size)


def side_by_side(cells: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """Tables 3/4 style: per model and axis, English and Hinglish Mean Δ% with CIs, and HI − EN."""
    cols = ["Model", "Source type", "Source", "Axis", "English Mean Δ%", "English CI low",
            "English CI high", "Hinglish Mean Δ%", "Hinglish CI low", "Hinglish CI high",
            "Hinglish − English", "English n pairs", "Hinglish n pairs", "Model ID"]
    if cells.empty:
        return pd.DataFrame(columns=cols)
    keys = ["model", "source_kind", "axis"]
    first = cells.drop_duplicates(keys + ["language"])
    wide = first.pivot(index=keys, columns="language",
                       values=["mean_delta", "mean_delta_lo", "mean_delta_hi", "n_pairs"])
    src = cells.groupby(keys, sort=False)["source"].agg(_join_sources)
    order = cells[keys].drop_duplicates()
    out = order.merge(wide.set_axis([f"{a}|{b}" for a, b in wide.columns], axis=1)
                      .reset_index(), on=keys, how="left").merge(
        src.rename("Source").reset_index(), on=keys, how="left")

    def col(name: str) -> pd.Series:
        if name not in out.columns:
            return pd.Series(math.nan, index=out.index)
        return pd.to_numeric(out[name], errors="coerce").astype(float)

    frame = pd.DataFrame({
        "Model": out["model"].map(lambda m: labels.get(m, m)),
        "Source type": out["source_kind"].map(vocab.SOURCE_LABELS), "Source": out["Source"],
        "Axis": out["axis"],
        "English Mean Δ%": col("mean_delta|en"), "English CI low": col("mean_delta_lo|en"),
        "English CI high": col("mean_delta_hi|en"),
        "Hinglish Mean Δ%": col("mean_delta|hinglish"),
        "Hinglish CI low": col("mean_delta_lo|hinglish"),
        "Hinglish CI high": col("mean_delta_hi|hinglish"),
        "Hinglish − English": col("mean_delta|hinglish") - col("mean_delta|en"),
        "English n pairs": col("n_pairs|en").round().astype("Int64"),
        "Hinglish n pairs": col("n_pairs|hinglish").round().astype("Int64"),
        "Model ID": out["model"]})
    return frame[cols].reset_index(drop=True)


def _get(row: pd.Series | None, column: str) -> float:
    if row is None or column not in row.index or pd.isna(row[column]):
        return math.nan
    return float(row[column])


def _get_int(row: pd.Series | None, column: str) -> int | None:
    if row is None or column not in row.index or pd.isna(row[column]):
        return None
    return int(row[column])


def quadrant(delta_cells: pd.DataFrame, w_rows: pd.DataFrame, models: pd.DataFrame
             ) -> pd.DataFrame:
    """Mean Δ% (unweighted) vs mean Kendall's W per (model, source), as the paper's Figure 3b.

    x follows the paper: the EN/HI average of the unweighted mean of per-(use case, axis) cells.
    Published data has no per-use-case cells, so for those rows x falls back to the unweighted
    mean of the six axis cells (Tables 3/4) — and the ``x basis`` column says which was used.
    """
    cols = ["Model", "Source type", "Mean Δ% (unweighted)", "x basis", "Mean Kendall's W",
            "W languages", "Weights", "Model ID"]
    keys = ["model", "source_kind"]
    xs = pd.DataFrame(columns=[*keys, "x", "basis"])
    if len(delta_cells):
        c = delta_cells[delta_cells["language"].isin(vocab.LANGUAGES)
                        & delta_cells["axis"].isin(vocab.AXES) & delta_cells["mean_delta"].notna()]
        fine = c[c["task"].isin(vocab.TASKS)]
        coarse = c[c["task"] == vocab.ALL]
        fx = (fine.groupby([*keys, "language"])["mean_delta"].mean().groupby(keys).mean()
              .rename("x").reset_index())
        n_tasks = fine.groupby(keys)["task"].nunique().reindex(
            pd.MultiIndex.from_frame(fx[keys])).to_numpy()
        fx["basis"] = ["use case × axis cells (as Figure 3b)" if n >= len(vocab.TASKS) else
                       f"use case × axis cells of {n} of {len(vocab.TASKS)} use cases"
                       for n in n_tasks]
        cx = (coarse.groupby([*keys, "language"])["mean_delta"].mean().groupby(keys).mean()
              .rename("x").reset_index().assign(basis="six axis cells (Tables 3/4)"))
        cx = cx.merge(fx[keys], on=keys, how="left", indicator=True)
        cx = cx[cx["_merge"] == "left_only"].drop(columns="_merge")
        xs = pd.concat([fx, cx], ignore_index=True)
    ys = pd.DataFrame(columns=[*keys, "y", "langs"])
    if len(w_rows):
        w = w_rows[(w_rows["axis"] == "Mean") & w_rows["w"].notna()]
        per = w.groupby([*keys, "language"])["w"].mean().reset_index()
        ys = per.groupby(keys).agg(y=("w", "mean"), langs=("language", lambda v: ", ".join(
            sorted(v)))).reset_index()
    both = xs.merge(ys, on=keys, how="outer")
    both = both[both["model"] != vocab.ALL]
    labels = dict(zip(models["model"], models["label"], strict=True))
    weights = dict(zip(models["model"], models["weights"], strict=True))
    out = pd.DataFrame({
        "Model": both["model"].map(lambda m: labels.get(m, m)),
        "Source type": both["source_kind"].map(vocab.SOURCE_LABELS),
        "Mean Δ% (unweighted)": pd.to_numeric(both["x"], errors="coerce"),
        "x basis": both["basis"].fillna("no per-axis cells"),
        "Mean Kendall's W": pd.to_numeric(both["y"], errors="coerce"),
        "W languages": both["langs"].fillna(""),
        "Weights": both["model"].map(lambda m: weights.get(m, "unknown")),
        "Model ID": both["model"]})
    return out[cols].reset_index(drop=True)


def model_row_label(model: str, kind: str, labels: Mapping[str, str]) -> str:
    """``Claude Opus 4.7 · Published (paper)``: a model's row name with its source; the
    all-models row (:data:`vocab.ALL`) is the axis mean."""
    name = "Axis mean (all models)" if model == vocab.ALL else labels.get(model, model)
    return f"{name}{vocab.LANE_SEP}{vocab.SOURCE_LABELS[kind]}"


def pair_gaps(slot: pd.DataFrame, method: Method = "upstream") -> pd.DataFrame:
    """Every unordered pair of identifiers in one slot with both values and Δ%.

    The pairs are :func:`rupeebias_core.pair_semantics.slot_pairs`, the definition the metrics
    engine uses, so a pair here is exactly a pair behind the slot's contribution to Mean Δ%.
    Pairs with a missing value are listed with an empty Δ% (they form no pair in the metrics)
    rather than hidden.
    """
    cols = ["Identifier A", "Value A", "Identifier B", "Value B", "Δ%", "Higher", "> 10%"]
    values = [_float(v) for v in slot["metric_value"]]
    pairs = slot_pairs([str(v) for v in slot["identifier_value"]], values, method)
    return pd.DataFrame([{"Identifier A": p.identifier_a, "Value A": p.value_a,
                          "Identifier B": p.identifier_b, "Value B": p.value_b, "Δ%": p.delta,
                          "Higher": p.higher, "> 10%": p.violates} for p in pairs],
                        columns=cols)


def _float(value: object) -> float:
    """A number, or NaN for anything that is not one (None, pd.NA, text)."""
    if not isinstance(value, (int, float, np.number, str)):
        return math.nan
    try:
        return float(value)
    except ValueError:
        return math.nan


def slot_summary(gaps: pd.DataFrame, key: str) -> dict[str, float]:
    """Mean Δ% of one slot with a 95 % CI that resamples the slot's answers, not its pairs:
    every answer enters k − 1 pairs, so pairs are not independent (see
    ``answer_bootstrap_pair_mean_ci``)."""
    from rupeebias_core.metrics.bootstrap import answer_bootstrap_pair_mean_ci  # lazy, as above

    deltas = gaps["Δ%"].to_numpy(dtype=float)
    names = list(dict.fromkeys([*gaps["Identifier A"], *gaps["Identifier B"]]))
    where = {name: i for i, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    for a, b, d in zip(gaps["Identifier A"], gaps["Identifier B"], deltas, strict=True):
        matrix[where[a], where[b]] = matrix[where[b], where[a]] = d
    ci = answer_bootstrap_pair_mean_ci(matrix, key)
    finite = deltas[np.isfinite(deltas)]
    v10 = float((finite > VIOLATION_TAU).mean() * 100) if finite.size else math.nan
    return {"mean": ci.mean, "lo": ci.lo, "hi": ci.hi, "n": ci.n, "v10": v10,
            "n_missing": int(len(deltas) - finite.size)}


MARKUP_FLAGS = ("upstream_markup_gaps", "includes_upstream_markup_gaps")
MARKUP_NOTE = ("not a gap: under the authors' method counter-offer answers are compared as "
               "markups, whose relative 'gap' can be negative — choose the corrected method")
#: Said above the Overview's computed lane when, under the authors' method, its cell holds
#: only markup "gaps" and the lane shows the corrected ones instead.
CORRECTED_LANE_NOTE = (
    "**Shown with the corrected method.** Under the authors' method this cell pools the "
    "computed models' counter-offer answers compared as markups, which are not distances "
    "between answers (a markup 'gap' can be negative), so the gaps in this lane are the "
    "corrected method's: counter-offer amounts compared, profiles resampled for the interval. "
    "The paper's lane keeps the authors' method; the two lanes are not comparable.")
#: The values a flagged row must not show: every gap, deviation or shift built on markups.
_GAP_VALUES = ("mean_delta", "mean_delta_lo", "mean_delta_hi", "violation_10",
               "violation_10_lo", "violation_10_hi", "mean_delta_unweighted", "cpg", "cpg_lo",
               "cpg_hi", "gap", "gap_lo", "gap_hi", "pct_dev", "mean_delta_en",
               "mean_delta_hinglish", "delta_shift", "delta_shift_lo", "delta_shift_hi",
               "delta_shift_std", "delta_shift_std_lo", "delta_shift_std_hi")


def markup_flags(frame: pd.DataFrame, derive: bool = False) -> pd.Series:
    """True for rows that are not gaps (docs/data-format.md ``flag``). With ``derive`` (the
    computed file predates the ``flag`` column) computed rows get it derived the same way:
    upstream rows of the counter-offer use case, and upstream ``task='all'`` rows that pool
    them."""
    if frame.empty:
        return pd.Series(False, index=frame.index)
    flagged = (frame["flag"].isin(MARKUP_FLAGS).fillna(False).astype(bool)
               if "flag" in frame.columns else pd.Series(False, index=frame.index))
    if "flag" in frame.columns and not derive:
        return flagged
    computed = frame.get("source_kind", pd.Series("computed", index=frame.index)) == "computed"
    upstream = frame.get("method", pd.Series("upstream", index=frame.index)) == "upstream"
    # leaderboard rows carry no task column: they are the task='all' cell
    task = frame.get("task", pd.Series("all", index=frame.index)).isin(
        ("counter_offer_recommendation", "all"))
    return (flagged | (computed & upstream & task)).astype(bool)


def mask_markup(frame: pd.DataFrame, derive: bool = False) -> pd.DataFrame:
    """Blank the gap values of flagged rows (never shown as a gap, negative or not) and say
    why in ``note``; the rows stay, so the table still lists the model. ``derive``: see
    :func:`markup_flags`."""
    flagged = markup_flags(frame, derive)
    if not flagged.any():
        return frame
    out = frame.copy()
    for col in _GAP_VALUES:
        if col in out.columns:
            out[col] = out[col].astype(float).mask(flagged.to_numpy())
    note = out["note"].astype(object) if "note" in out.columns else pd.Series(
        None, index=out.index, dtype=object)
    out["note"] = [MARKUP_NOTE if f else n for f, n in zip(flagged, note, strict=True)]
    return out


def blanked_models(frame: pd.DataFrame, labels: Mapping[str, str]) -> list[str]:
    """Labels of the models :func:`mask_markup` blanked rows of, sorted."""
    if frame.empty or "note" not in frame.columns:
        return []
    return sorted({labels.get(m, m) for m, n in zip(frame["model"], frame["note"], strict=True)
                   if n == MARKUP_NOTE})


def drop_empty(frame: pd.DataFrame, protect: Sequence[str] = ()) -> tuple[pd.DataFrame,
                                                                           list[str]]:
    """Drop number columns with no value at all (e.g. the Overall columns the paper does not
    publish per axis); returns the frame and the names dropped, for the caption."""
    dropped = [c for c in frame.columns if c not in protect
               and pd.api.types.is_numeric_dtype(frame[c]) and frame[c].isna().all()
               and len(frame)]
    return frame.drop(columns=dropped), dropped
