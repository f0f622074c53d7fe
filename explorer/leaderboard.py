"""The Overview's leaderboard lanes (published, then computed), built once per view.

Why a module: the lanes are pure given the data version and the filters, and building them
(queries, the published-transcription choice, the markup fallback, the board per lane) was
most of the Overview's script run (~0.2 of 0.37 s per load, py-spy). Cached here, a view seen
before costs no pandas work; the page only sorts and draws.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
import streamlit as st

from explorer import data, filters, tables, vocab


class Lane(NamedTuple):
    """One lane of the leaderboard, ready to draw (see :func:`lanes`)."""

    method: str  # the method its gaps are computed with (the computed lane may fall back)
    board: pd.DataFrame  # one row per model, unsorted, empty number columns dropped
    dropped: list[str]  # the number columns dropped as empty
    sub: pd.DataFrame  # the lane's cells (for sentences, source line, decomposition)
    chart: pd.DataFrame  # long frame for the CI dot chart


@st.cache_data(max_entries=256, show_spinner=False)
def lanes(data_key: tuple[str, str], method: str, task: str, axis: str, lang: str,
           sel_models: tuple[str, ...], kinds: tuple[str, ...]
           ) -> tuple[dict[str, Lane], int]:
    """Every lane's tables for one view, and the published rows set aside: pure given the
    data version (``data_key``) and the filters, so a view seen before costs no pandas work
    (it was most of the Overview's script run). Raises :class:`data.DataUnavailable`."""
    models = data.available_models()
    labels = dict(zip(models["model"], models["label"], strict=True))
    if task == "all" and axis == "all" and data.present("leaderboard"):
        source_table = "leaderboard"
        cells = data.rows("leaderboard", model=sel_models, source_kind=kinds, method=method)
        cells = cells[(cells.get("task", "all") == "all") & (cells.get("axis", "all") == "all")]
    else:
        source_table = "delta"
        cells = data.rows("delta", task=task, axis=axis, model=sel_models, source_kind=kinds,
                          method=method)
    cells, hidden = tables.prefer_published(cells, ["model", "language", "task", "axis"])
    derive = not data.computed_file_has(source_table, "flag")
    lane_method = dict.fromkeys(vocab.SOURCE_KINDS, method)
    computed = cells[cells["source_kind"] == "computed"] if len(cells) else cells
    if "computed" in kinds and filters.falls_back_to_corrected(computed, method, derive):
        # Under the authors' method this cell of the computed models pools counter-offer
        # markups (not distances): show their corrected gaps, and say so, rather than an
        # empty lane (as the Identifiers page does). The paper's lane keeps its method.
        lane_method["computed"] = "corrected"
        corrected = (data.rows("delta", task=task, axis=axis, model=sel_models,
                               source_kind="computed", method="corrected")
                     if source_table == "delta" else
                     data.rows("leaderboard", model=sel_models, source_kind="computed",
                               method="corrected"))
        corrected = corrected[(corrected.get("task", "all") == task)
                              & (corrected.get("axis", "all") == axis)]
        cells = pd.concat([cells[cells["source_kind"] != "computed"], corrected],
                          ignore_index=True)
    cells = tables.mask_markup(cells, derive=derive)
    out = {}
    for kind in [k for k in vocab.SOURCE_KINDS if k in kinds]:
        universe = tables.model_frame(models, sel_models, (kind,))
        sub = cells[cells["source_kind"] == kind] if len(cells) else cells
        board, dropped = tables.drop_empty(tables.leaderboard(sub, universe, task, axis, lang))
        out[kind] = Lane(lane_method[kind], board, dropped, sub,
                          _chart_frame(sub, lang, labels))
    return out, hidden


def _chart_frame(sub: pd.DataFrame, lang: str, labels: dict[str, str]) -> pd.DataFrame:
    """The lane's Mean Δ% with CIs, one row per (model, language) drawn."""
    long = []
    for rec in sub.itertuples(index=False):
        if lang != "all" and rec.language != lang:
            continue
        if pd.isna(rec.mean_delta):
            continue
        long.append({"Model": labels.get(rec.model, rec.model),
                     "Language": vocab.GROUP_LABELS.get(rec.language, rec.language),
                     "Mean Δ%": rec.mean_delta, "CI low": rec.mean_delta_lo,
                     "CI high": rec.mean_delta_hi, "Source": rec.source,
                     "Model ID": rec.model})
    return pd.DataFrame(long, columns=["Model", "Language", "Mean Δ%", "CI low", "CI high",
                                       "Source", "Model ID"])
