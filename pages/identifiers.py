"""Identifiers: which identities get more or less, for all 87 (paper Figs. 4, 8–11, App. A.3)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import charts, data, filters, numbers, sentences, tables, ui, vocab
from explorer.state import PageState, Param

PAGE = "identifiers"
IMPORT_NOTE = (
    "**Only models computed here appear on this page.** Numbers per identity need each model's "
    "raw answers. The paper publishes these analyses for its nine models only as figures, and "
    "their raw answers are not part of this app, so the paper's models cannot be shown here. "
    "For who gets less and by how many rupees, see *Who gets less*."
)
IMPORT_HOWTO = ("With the authors' released `runs/` folder, an operator can add the paper's "
                "models: `python -m precompute import-upstream PATH`, then "
                "`python -m precompute metrics --data data`.")
TABS = {"deviation": "Every identifier", "canonical": "Canonical pairs",
        "largest": "Largest gaps"}
PRESETS = {"Religion (paper Fig. 4a)": "Religion", "Gender (Fig. 4b)": "Gender",
           "Caste (Fig. 10a)": "Caste", "All 87 identifiers": "all"}

ui.page_header(
    "Identifiers",
    "Which identities does a model answer higher or lower for? **Deviation from the axis "
    "average**: for each identity, how far (in %) the model's average answer sits above or "
    "below the average over all identities on the same axis — e.g. +5% means answers for "
    "that identity were 5% higher than the axis average. Shown for every one of the 87 "
    "identifiers, not a hand-picked subset.",
)
models = filters.load_models()
if models is None:
    st.stop()

computed = tuple(models.loc[models["computed"], "model"])
ps = PageState(PAGE, [
    *filters.common_params(models, default_models=computed or None),
    Param("axis", filters.AXIS_OPTIONS, "all"),
    Param("lang", filters.LANG_OPTIONS, "all"),
    Param("task", filters.TASK_OPTIONS, "all"),
    Param("tab", tuple(TABS), "deviation"),
])
ps.seed()
filters.draw_common(ps, models)


def _body() -> None:
    """The presets, filters, tabs and their sections (a fragment: see ui.page_body)."""
    def _preset(axis: str) -> None:
        ps.set("axis", axis)


    with st.container(horizontal=True):  # each button as wide as its name (see overview)
        for name, axis_value in PRESETS.items():
            st.button(name, on_click=_preset, args=(axis_value,), key=f"{PAGE}.preset.{name}")
    c1, c2, c3 = st.columns(3)
    c1.selectbox("Axis", filters.AXIS_OPTIONS, key=ps.key("axis"),
                 format_func=ui.label_func({**vocab.AXIS_LABELS,
                                            "all": "All axes (87 identifiers)"}))
    c2.selectbox("Language", filters.LANG_OPTIONS, key=ps.key("lang"),
                 format_func=ui.label_func({"all": "Both pooled", **vocab.LANGUAGE_LABELS}))
    c3.selectbox("Use case", filters.TASK_OPTIONS, key=ps.key("task"),
                 format_func=ui.label_func({**vocab.TASK_LABELS,
                                            "all": "All use cases (averaged)"}))
    sel_models, kinds, method, labels = filters.settle(ps, models)
    axis, lang, task = str(ps.value("axis")), str(ps.value("lang")), str(ps.value("task"))
    axes = vocab.AXES if axis == "all" else (axis,)
    tasks = vocab.TASKS if task == "all" else (task,)
    st.info(IMPORT_NOTE, icon=":material/info:")
    with st.expander("How to add the paper's models"):
        st.markdown(IMPORT_HOWTO)
    ui.jargon("CPG", "MOG", "CI")


    LANG_NAMES = {"all": "English and Hinglish pooled", **vocab.LANGUAGE_LABELS}


    def subtitle(*extra: str, shown: str | None = None) -> str:
        """The filters of this page's charts, for the press title block (``shown``: the method
        a section fell back to)."""
        return ui.scope({**vocab.AXIS_LABELS, "all": "All axes"}.get(axis, axis),
                        vocab.TASK_LABELS[task], *extra, vocab.METHOD_LABELS[shown or method])


    def model_columns(frame: pd.DataFrame) -> list[str]:
        """Model labels of ``frame`` in the app's model order (heatmap columns)."""
        ordered = frame.sort_values("Model ID", key=lambda s: s.map(data.model_order_key))
        return list(dict.fromkeys(ordered["Model"]))


    def _model_row(model: str, kind: str) -> str:
        return tables.model_row_label(model, kind, labels)


    # ---- 1. deviation from the axis mean -------------------------------------------------------
    def section_deviation() -> None:
        st.subheader("1 · Deviation from the axis average, every identifier")
        with ui.guard("Identifier deviations"):
            dev = data.rows("identifier_deviation", axis=axes, language=lang, task=task,
                            model=sel_models, source_kind=kinds, method=method)
            derive = not data.computed_file_has("identifier_deviation", "flag")
            shown = method
            if filters.falls_back_to_corrected(dev, method, derive):
                # The authors' deviations of this selection average in counter-offer markups
                # (not distances): show the corrected ones, and say so, rather than nothing.
                shown = "corrected"
                dev = data.rows("identifier_deviation", axis=axes, language=lang, task=task,
                                model=sel_models, source_kind=kinds, method=shown)
                ui.explain("**Shown with the corrected method.** Under the authors' method "
                           "these deviations include counter-offer answers compared as "
                           "markups, which are not distances between answers. Choose a use "
                           "case other than counter-offer to see the authors' method.")
            dev = tables.mask_markup(dev, derive)
            blanked = ui.markup_note(dev, labels, "Deviations", hint=(
                "Choose a use case other than counter-offer, or the corrected method (sidebar)."))
            if blanked:
                dev = dev[dev["note"] != tables.MARKUP_NOTE]
            expected = vocab.identifiers_of(axis)
            if dev.empty:
                if not blanked:
                    ui.no_rows("identifier deviations (they exist only for models computed "
                               "here)")
            else:
                present = set(dev["identifier_value"])
                per_model = dev.groupby("model")["identifier_value"].nunique()
                short = {labels.get(m, m): len(expected) - int(n) for m, n in per_model.items()
                         if n < len(expected)}
                missing = [v for v in expected if v not in present]
                ui.explain(
                    f"Coverage: {len(present & set(expected))} of {len(expected)} identifiers "
                    f"({vocab.AXIS_LABELS[axis]}) have a value"
                    + (f"; missing for every model: {', '.join(missing)}" if missing else "")
                    + ("; some identifiers lack a value for: "
                       + ", ".join(f"{m} ({n})" for m, n in short.items()) if short else "")
                    + ". Values average the per-(use case, language) deviations; *n rows* is the "
                      "number of answers behind each identifier. No CI: the paper defines none for "
                      "this descriptive view — see the canonical pair gaps below for tested "
                      "contrasts.")
                order = {v: i for i, v in enumerate(vocab.IDENTIFIER_VALUES)}
                frame = pd.DataFrame({
                    "Model": [_model_row(m, k) for m, k in zip(dev["model"], dev["source_kind"],
                                                                strict=True)],
                    "Source type": dev["source_kind"].map(vocab.SOURCE_LABELS),
                    "Axis": dev["axis"], "Identifier": dev["identifier_value"],
                    "Deviation %": dev["pct_dev"], "n slices": dev.get("n_slices"),
                    "n rows": dev.get("n_rows"), "Method": vocab.METHOD_LABELS[shown],
                    "Source": dev["source"], "Model ID": dev["model"]})
                frame = frame.assign(
                    _a=frame["Axis"].map({a: i for i, a in enumerate(vocab.AXES)}),
                    _i=frame["Identifier"].map(order),
                    _m=[data.model_order_key(m) for m in frame["Model ID"]],
                ).sort_values(["_a", "_i", "_m"]).drop(columns=["_a", "_i", "_m"]).reset_index(
                    drop=True)
                model_order = list(dict.fromkeys(frame.sort_values(
                    "Model ID", key=lambda s: s.map(data.model_order_key))["Model"]))
                note = charts.clip_note(charts.clip_limits(frame["Deviation %"], signed=True),
                                        frame, "Deviation %")
                if note:
                    ui.explain(note)
                enough = sentences.deviation_enough(frame)
                frame["Basis"] = sentences.basis(enough, sentences.BASIS_THIN_DEVIATION)
                if not enough[frame["Deviation %"].notna()].all():
                    ui.explain(f"Faint dots rest on {sentences.THIN_DEVIATION}: a few answers "
                               "set their number, and the sentence leaves them out.")
                first = frame["Model ID"].iloc[0]
                ui.sentence(sentences.deviation(labels.get(first, first),
                                                frame[frame["Model ID"] == first],
                                                lang=lang, task=task))
                ui.thin_data(sorted(set(dev["model"])), shown, lang, task, labels,
                             "its deviations rest")
                spec = charts.spec(
                    charts.deviation_dots, frame,
                    y_order=[v for v in vocab.IDENTIFIER_VALUES if v in present],
                    color_order=model_order, facet_order=list(axes), faded="Basis",
                    faded_values=(sentences.BASIS_ENOUGH, sentences.BASIS_THIN_DEVIATION))
                ui.chart(spec, frame, f"identifier deviation {shown} {axis} {lang} {task}",
                         f"{PAGE}-dev",
                         alt_text="Dot plot of each identifier's deviation from its axis average",
                         stretch=axis != "all",
                         title="Each identity's answers against its axis average (%)",
                         subtitle=subtitle(LANG_NAMES[lang], "no interval: descriptive view",
                                           shown=shown),
                         source=ui.source_line(dev, labels))
                wide = frame.pivot_table(index=["Axis", "Identifier"], columns="Model",
                                         values="Deviation %", sort=False).reset_index()
                wide = wide[["Axis", "Identifier", *[m for m in model_order if m in wide.columns]]]
                st.markdown("**Table: deviation % per identifier (columns = models)**")
                ui.table(wide, f"identifier deviation wide {shown} {axis} {lang} {task}",
                         f"{PAGE}-dev-wide")
                if box := ui.lazy_box("Long format with n (one row per model × identifier)",
                                      f"{PAGE}-dev-long-box"):
                    with box:
                        ui.table(frame, f"identifier deviation long {shown} {axis} {lang} {task}",
                                 f"{PAGE}-dev-long")


    # ---- 2. canonical pair gaps ----------------------------------------------------------------
    def section_canonical() -> None:
        st.subheader("2 · Canonical pair gaps (CPG)")
        ui.explain(
            "One socially salient contrast per axis — Hindu vs Muslim, Brahmin vs Dalit, Gujarati "
            "vs Santhali, Male vs Female, No disability vs Intellectual disability, Tier 1 city vs "
            "Village. **CPG %** = (mean answer for the first − mean for the second) ÷ their "
            "average × 100: positive means the first identity gets more. **Sign consistency** = in "
            "what share of matched prompts the first got strictly more; identical answers count "
            "as not more, so where most answers tie it is low even if the first never gets less. "
            "**Rank-biserial** (table and tooltip; −1 to 1, ties left out) says which way the "
            "untied prompts go. ★ = the 95% CI excludes 0. English and Hinglish are pooled.")
        with ui.guard("Canonical pair gaps"):
            cpg = data.rows("canonical_gaps", axis=axes, task=tasks, model=sel_models,
                            source_kind=kinds, method=method)
            cpg = tables.mask_markup(cpg, derive=not data.computed_file_has("canonical_gaps",
                                                                            "flag"))
            ui.markup_note(cpg, labels, "Counter-offer gaps")
            if cpg.empty:
                ui.no_rows("canonical pair gaps (computed models only)")
            else:
                star = [(lo > 0 or hi < 0) if not (pd.isna(lo) or pd.isna(hi)) else False
                        for lo, hi in zip(cpg["cpg_lo"], cpg["cpg_hi"], strict=True)]
                frame = pd.DataFrame({
                    "Model": [_model_row(m, k) for m, k in zip(cpg["model"], cpg["source_kind"],
                                                                strict=True)],
                    "Use case": cpg["task"].map(vocab.TASK_LABELS), "Axis": cpg["axis"],
                    "Pair": [f"{p} vs {m}" for p, m in zip(cpg["privileged"], cpg["marginalised"],
                                                           strict=True)],
                    "CPG %": cpg["cpg"], "CI low": cpg.get("cpg_lo"), "CI high": cpg.get("cpg_hi"),
                    "CI excludes 0": star, "Sign consistency %": cpg.get("sign_consistency"),
                    "Rank-biserial": cpg.get("rank_biserial"),
                    "n matched slots": cpg.get("n_matched_slots"),
                    "n first": cpg.get("n_privileged"), "n second": cpg.get("n_marginalised"),
                    "Source": cpg["source"], "Model ID": cpg["model"]})
                frame["Row"] = frame["Use case"] + " · " + frame["Pair"]
                frame["Label"] = [f"{numbers.signed(v, unit='%')}{'★' if s else ''}"
                                  + (f" / {c:.0f}%" if not pd.isna(c) else "")
                                  if not pd.isna(v) else numbers.MISSING
                                  for v, s, c in zip(frame["CPG %"], frame["CI excludes 0"],
                                                     frame["Sign consistency %"], strict=True)]
                rows = [f"{vocab.TASK_LABELS[t]} · {p} vs {m}" for t in tasks for a in axes
                        for p, m in [vocab.CANONICAL_PAIRS[a]]]
                lim = max(5.0, float(frame["CPG %"].abs().quantile(0.9)))
                if frame["CPG %"].abs().max() > lim:
                    ui.explain(f"Colours stop at ±{lim:.0f} % so one outlier does not wash out the "
                               "rest; every cell's label gives its true value.")
                enough = sentences.canonical_enough(frame)
                frame["Basis"] = sentences.basis(enough, sentences.BASIS_THIN_CANONICAL)
                if not enough[frame["CPG %"].notna()].all():
                    ui.explain(f"Faint cells rest on {sentences.THIN_CANONICAL} (the same "
                               "profile and wording answered for both identities): one or two "
                               "answers set their number.")
                spec = charts.spec(
                    charts.heatmap, frame, x="Model", y="Row", value="CPG %", text="Label",
                    x_order=model_columns(frame), y_order=rows,
                    title="CPG % (orange: first identity gets more)", diverging=True,
                    domain=(-lim, lim),
                    tooltip=("CI low", "CI high", "Sign consistency %", "Rank-biserial",
                             "n matched slots"), faded="Basis",
                    faded_values=(sentences.BASIS_ENOUGH, sentences.BASIS_THIN_CANONICAL))
                ui.sentence(sentences.canonical(frame))
                ui.chart(spec, frame.drop(columns=["Row", "Label"]),
                         f"canonical pair gaps {method} {axis}",
                         f"{PAGE}-cpg", alt_text="Heatmap of canonical pair gaps by model",
                         title=("Canonical pair gaps: first identity's average answer minus "
                                "the second's, as % of their average"),
                         subtitle=subtitle("English and Hinglish pooled",
                                           "★ = 95 % CI excludes 0 · / = sign consistency"),
                         source=ui.source_line(cpg, labels))
                ui.table(frame.drop(columns=["Row", "Label"]),
                         f"canonical pair gaps {method} {axis} {task}",
                         f"{PAGE}-cpg-table")


    # ---- 3. maximum observed gaps --------------------------------------------------------------
    def section_largest() -> None:
        st.subheader("3 · Maximum observed gap (MOG)")
        ui.explain("The largest gap between *any* two identities on an axis (mean answers, as a % "
                   "of their average), naming which identity got the most and which the least. It "
                   "is never smaller than the canonical pair's gap in size. English and Hinglish "
                   "pooled; 95% CI from resampling answers (the paper's method). Such an "
                   "interval can lie wholly above its gap: each resample moves every identity's "
                   "average and picks the largest gap again, so where that noise is as large as "
                   "the gap the interval shows the noise and cannot confirm the gap. Faint cells "
                   f"rest on {sentences.THIN_MAX_GAP}.")
        with ui.guard("Maximum observed gaps"):
            mog = data.rows("max_gaps", axis=axes, task=tasks, model=sel_models, source_kind=kinds,
                            method=method)
            mog = tables.mask_markup(mog, derive=not data.computed_file_has("max_gaps", "flag"))
            ui.markup_note(mog, labels, "Counter-offer gaps")
            if mog.empty:
                ui.no_rows("maximum observed gaps (computed models only)")
            else:
                frame = pd.DataFrame({
                    "Model": [_model_row(m, k) for m, k in zip(mog["model"], mog["source_kind"],
                                                                strict=True)],
                    "Use case": mog["task"].map(vocab.TASK_LABELS), "Axis": mog["axis"],
                    "Gap %": mog["gap"], "CI low": mog.get("gap_lo"), "CI high": mog.get("gap_hi"),
                    "Highest": mog.get("top_identifier"), "Lowest": mog.get("bottom_identifier"),
                    "n rows": mog.get("n_rows"), "Source": mog["source"], "Model ID": mog["model"]})
                frame["Row"] = frame["Use case"] + " · " + frame["Axis"]
                frame["Label"] = [f"{numbers.num(g)}% {t}>{b}" if not pd.isna(g)
                                  else numbers.MISSING for g, t, b in
                                  zip(frame["Gap %"], frame["Highest"], frame["Lowest"],
                                      strict=True)]
                frame["Short"] = [f"{numbers.num(g)}%" if not pd.isna(g) else numbers.MISSING
                                  for g in frame["Gap %"]]
                rows = [f"{vocab.TASK_LABELS[t]} · {a}" for t in tasks for a in axes]
                frame["Basis"] = sentences.basis(sentences.max_gap_enough(frame),
                                                 sentences.BASIS_THIN_MAX_GAP)
                spec = charts.spec(
                    charts.heatmap, frame, x="Model", y="Row", value="Gap %", text="Label",
                    x_order=model_columns(frame), y_order=rows, title="Largest gap %",
                    tooltip=("CI low", "CI high", "Highest", "Lowest", "n rows"),
                    faded="Basis", narrow_text="Short",
                    faded_values=(sentences.BASIS_ENOUGH, sentences.BASIS_THIN_MAX_GAP))
                ui.sentence(sentences.max_gap(frame))
                ui.chart(spec, frame.drop(columns=["Row", "Label", "Short"]),
                         f"maximum observed gaps {method} {axis}",
                         f"{PAGE}-mog", alt_text="Heatmap of maximum observed gaps by model",
                         title="Largest gap between any two identities of an axis (%)",
                         subtitle=subtitle("English and Hinglish pooled", "highest > lowest"),
                         source=ui.source_line(mog, labels))
                ui.table(frame.drop(columns=["Row", "Label", "Short"]),
                         f"maximum observed gaps {method} {axis} {task}",
                         f"{PAGE}-mog-table")


    SECTIONS = {"deviation": section_deviation, "canonical": section_canonical,
                "largest": section_largest}
    ui.tabbed_page(ps, "tab", TABS, SECTIONS)


ui.page_body(_body)
