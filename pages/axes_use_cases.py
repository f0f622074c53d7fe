"""Axes & use cases: where each model's gaps come from (paper Figure 2, Tables 3/4)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import charts, data, filters, numbers, sentences, tables, ui, vocab
from explorer.state import PageState, Param

PAGE = "axes"
LANG_LABELS = {"all": "Both pooled (as Figure 2)", **vocab.LANGUAGE_LABELS}
VIEWS = {"radar": "Radar", "dots": "Dot plot with CIs", "heatmap": "Heatmap (models × axes)",
         "table": "Table"}

ui.page_header(
    "Axes & use cases",
    "Which identities and which kinds of advice drive each model's gaps? Each shape below is "
    "one model: the further a point sits from the centre, the larger the average gap (Mean Δ%) "
    "between identities on that axis, for that use case. The paper's nine models come first; "
    "models computed here follow in their own lane, on their own scale.",
)
ui.jargon("Mean Δ%", "CI")
models = filters.load_models()
if models is None:
    st.stop()

ps = PageState(PAGE, [
    *filters.common_params(models),
    # The paper publishes per-axis numbers per language only (Tables 3/4): open on English so
    # its nine models are on screen; the pooled view (Figure 2, computed models) is one click.
    Param("lang", filters.LANG_OPTIONS, "en"),
    Param("scale", ("shared", "own"), "shared"),
    Param("pooled", ("yes", "no"), "yes"),
    Param("hm_task", filters.TASK_OPTIONS, "all"),
    Param("view", tuple(VIEWS), "radar"),
])
ps.seed()
filters.draw_common(ps, models)


def _body() -> None:
    """The page's filters, views and charts (a fragment: see ui.page_body)."""
    c1, c2, c3 = st.columns([1.4, 1.2, 1.4])
    c1.selectbox("Language", filters.LANG_OPTIONS, key=ps.key("lang"),
                 format_func=LANG_LABELS.get)
    c2.radio("Radial scale", ("shared", "own"), key=ps.key("scale"), horizontal=True,
             format_func={"shared": "Same for all models", "own": "Per model"}.get,
             help="A shared scale makes models comparable; a per-model scale shows each model's "
                  "shape when one model's gaps are much larger (the paper gives DeepSeek V3.2 its "
                  "own scale).")
    c3.radio("Pooled 'All use cases' shape", ("yes", "no"), key=ps.key("pooled"), horizontal=True,
             format_func={"yes": "Show", "no": "Hide"}.get)
    sel_models, kinds, method, labels = filters.settle(ps, models)
    lang = str(ps.value("lang"))
    ui.source_legend([k for k in vocab.SOURCE_KINDS if k in kinds])

    with ui.guard("Axis × use-case gaps"):
        tasks = (*vocab.TASKS, vocab.ALL) if ps.value("pooled") == "yes" else vocab.TASKS
        cells = data.rows("delta", language=lang, task=tasks, axis=vocab.AXES, model=sel_models,
                          source_kind=kinds, method=method)
        cells, hidden = tables.prefer_published(cells, ["model", "language", "task", "axis"])
        cells = tables.mask_markup(cells, derive=not data.computed_file_has("delta", "flag"))
        ui.markup_note(cells, labels, "Counter-offer gaps and pooled all-use-case outlines")
        cells = cells[cells["mean_delta"].notna()] if len(cells) else cells
        cells = cells.assign(order=[data.model_order_key(m) for m in cells["model"]]).sort_values(
            ["order", "source_kind"]).drop(columns="order")
        universe = tables.model_frame(models, sel_models, kinds)
        have = set(zip(cells["model"], cells["source_kind"], strict=True))
        missing = [f"{r.label} ({r.source_kind})"
                   for r in universe.itertuples(index=False)
                   if (r.model, r.source_kind) not in have]
        if missing:
            why = ("The paper reports per-axis numbers only per language and pooled over use cases "
                   "(Tables 3/4) — choose English or Hinglish to see the published models. "
                   if lang == "all" and any("published" in m for m in missing) else "")
            st.info(f"No per-axis numbers for {len(missing)} of the selected model rows at this "
                    f"language: {', '.join(missing)}. {why}", icon=":material/info:")

        pub_cells = cells[(cells["source_kind"] == "published") & (cells["task"] == vocab.ALL)]
        if len(pub_cells):
            top = pub_cells.loc[pub_cells["mean_delta"].astype(float).idxmax()]
            ui.sentence(sentences.gap(labels.get(top["model"], top["model"]), top["mean_delta"],
                                      top.get("mean_delta_lo"), top.get("mean_delta_hi"),
                                      lang=lang, task=vocab.ALL, axis=str(top["axis"]),
                                      published=True)
                        + " That is the largest per-axis gap among the published models here.")
        series_labels = {k: vocab.TASK_LABELS[k] for k in (*vocab.TASKS, vocab.ALL)}
        series_labels[vocab.ALL] = "All use cases (pooled)"

        def radar_table(part: pd.DataFrame) -> pd.DataFrame:
            """The numbers behind one lane's radars, as the download offers them."""
            return part.assign(Model=[panel[k] for k in zip(part["model"], part["source_kind"],
                                                            strict=True)],
                               **{"Use case": part["task"].map(series_labels)})[
                ["Model", "source", "language", "Use case", "axis", "mean_delta", "mean_delta_lo",
                 "mean_delta_hi", "n_pairs"]]

        def thin(part: pd.DataFrame) -> None:
            """The thin-data warning for the computed models' use cases this view shows."""
            comp = part[part["source_kind"] == "computed"]
            shown = set(comp["task"])
            ui.thin_data(sorted(set(comp["model"])), method, lang,
                         [t for t in (*vocab.TASKS, vocab.ALL) if t in shown], labels,
                         "its gaps there rest",
                         shown_tasks=set(zip(comp["model"], comp["task"], strict=True)))

        box, view = ui.lazy_tabs(ps, "view", VIEWS)
        with box:
            panel = {(m, k): tables.model_row_label(m, k, labels)
                     for m, k in zip(cells["model"], cells["source_kind"], strict=True)}
            panel_order = list(dict.fromkeys(panel.values()))
            if view == "radar":
                ui.explain("Radar: one polygon per use case; the black outline pools all use "
                           "cases. Radar charts show a model's overall shape but are poor for "
                           "exact comparison — use the dot plot or heatmap tabs for that.")
                if panel_order:
                    # One lane per source: a computed model's scale never shrinks the paper's.
                    for kind in [k for k in vocab.SOURCE_KINDS if k in set(cells["source_kind"])]:
                        lane_cells = cells[cells["source_kind"] == kind]
                        ui.lane(kind)
                        thin(lane_cells)
                        panels = {panel[key]: sub for key, sub in
                                  lane_cells.groupby(["model", "source_kind"], sort=False)}
                        rdata = charts.radar_data(panels, shared=ps.value("scale") == "shared",
                                                  series_labels=series_labels)
                        ui.chart(charts.spec(
                            charts.radars, rdata,
                            panel_order=[p for p in panel_order if p in panels],
                            series_labels=series_labels),
                                 radar_table(lane_cells), f"radar {kind} {lang}",
                                 f"{PAGE}-radar-{kind}",
                                 alt_text="Radar charts of Mean Δ% by axis, one per model",
                                 stretch=False,
                                 title=f"Mean Δ% by axis — {vocab.SOURCE_LABELS[kind]}",
                                 subtitle=ui.scope(LANG_LABELS[lang], "each use case and pooled",
                                                   f"{ps.value('scale')} scale",
                                                   vocab.METHOD_LABELS[method]),
                                 source=ui.source_line(lane_cells, labels))
                        if kind == "published":
                            ui.paper_ci_caveat()
                else:
                    ui.no_rows("per-axis cells")

            if view == "dots":
                ui.explain("Each dot is a Mean Δ% with its 95% confidence interval (whiskers). "
                           "Colours are use cases; rows are the six axes; one panel per model.")
                if panel_order:
                    frame = pd.DataFrame({
                        "Model": [panel[k] for k in zip(cells["model"], cells["source_kind"],
                                                        strict=True)],
                        "Axis": cells["axis"], "Use case": cells["task"].map(series_labels),
                        "Mean Δ%": cells["mean_delta"], "CI low": cells["mean_delta_lo"],
                        "CI high": cells["mean_delta_hi"], "Source": cells["source"]})
                    frame["Kind"] = cells["source_kind"].to_numpy()
                    for kind in [k for k in vocab.SOURCE_KINDS if k in set(frame["Kind"])]:
                        part = frame[frame["Kind"] == kind].drop(columns="Kind")
                        ui.lane(kind)
                        thin(cells[cells["source_kind"] == kind])
                        ui.clip_caption(part, "Mean Δ%", "CI low", "CI high")
                        spec = charts.spec(
                            charts.ci_dots, part, x="Mean Δ%", lo="CI low", hi="CI high", y="Axis",
                            color="Use case", y_order=vocab.AXES, x_title="Mean Δ%",
                            color_scale=charts.task_scale(series_labels, part["Use case"]),
                            tooltip=("Source",), facet="Model",
                            facet_order=[p for p in panel_order if p in set(part["Model"])])
                        ui.chart(spec, part, f"axis use case dots {kind} {lang}",
                                 f"{PAGE}-dots-{kind}",
                                 alt_text="Dot plots of Mean Δ% by axis and use case, one per "
                                          "model",
                                 stretch=False,
                                 title=f"Mean Δ% by axis and use case, with 95 % CI — "
                                       f"{vocab.SOURCE_LABELS[kind]}",
                                 subtitle=ui.scope(LANG_LABELS[lang], vocab.METHOD_LABELS[method]),
                                 source=ui.source_line(cells[cells["source_kind"] == kind], labels))
                        if kind == "published":
                            ui.paper_ci_caveat()
                else:
                    ui.no_rows("per-axis cells")

            if view == "heatmap":
                st.selectbox("Use case", filters.TASK_OPTIONS, key=ps.key("hm_task"),
                             format_func=ui.label_func(vocab.TASK_LABELS))
                hm_task = str(ps.value("hm_task"))
                sub = cells[cells["task"] == hm_task] if len(cells) else cells
                if sub.empty:
                    ui.no_rows("cells for this use case (published tables pool all use cases)")
                else:
                    frame = pd.DataFrame({
                        "Model": [tables.model_row_label(m, k, labels)
                                  for m, k in zip(sub["model"], sub["source_kind"], strict=True)],
                        "Axis": sub["axis"], "Mean Δ%": sub["mean_delta"],
                        "CI low": sub["mean_delta_lo"], "CI high": sub["mean_delta_hi"],
                        "n pairs": sub["n_pairs"], "Source": sub["source"]})
                    frame["Label"] = [numbers.with_ci(v, lo, hi) for v, lo, hi in
                                      zip(frame["Mean Δ%"], frame["CI low"], frame["CI high"],
                                          strict=True)]
                    ui.explain("Darker = larger gap. Each cell reads Mean Δ% [95% CI].")
                    ui.thin_data(sorted(set(sub.loc[sub["source_kind"] == "computed", "model"])),
                                 method, lang, hm_task, labels, "its cells rest")
                    rows = list(dict.fromkeys(frame["Model"]))
                    spec = charts.spec(
                        charts.heatmap, frame, x="Axis", y="Model", value="Mean Δ%", text="Label",
                        x_order=vocab.AXES, y_order=rows, title="Mean Δ%",
                        tooltip=("CI low", "CI high", "Source"))
                    ui.chart(spec, frame, f"heatmap {hm_task} {lang}", f"{PAGE}-heat",
                             alt_text="Heatmap of Mean Δ% by model and axis",
                             title="Mean Δ% by model and axis [95 % CI]",
                             subtitle=ui.scope(vocab.TASK_LABELS[hm_task], LANG_LABELS[lang],
                                               vocab.METHOD_LABELS[method]),
                             source=ui.source_line(sub, labels))

            if view == "table":
                table = pd.DataFrame({
                    "Model": cells["model"].map(labels), "Source type":
                    cells["source_kind"].map(vocab.SOURCE_LABELS), "Source": cells["source"],
                    "Language": cells["language"].map(LANG_LABELS),
                    "Use case": cells["task"].map(series_labels), "Axis": cells["axis"],
                    "Mean Δ%": cells["mean_delta"], "CI low": cells["mean_delta_lo"],
                    "CI high": cells["mean_delta_hi"], "n pairs": cells["n_pairs"].astype("Int64"),
                    "Model ID": cells["model"]})
                if hidden:
                    ui.explain(f"{hidden} alternative published transcription row(s) set aside.")
                thin(cells)
                ui.table(table, f"axes use cases {lang}", f"{PAGE}-table")

    st.divider()
    ui.permalink(ps.link())


ui.page_body(_body)
