"""Language shift: does asking in Hinglish instead of English change the gaps (paper §6, Fig. 5)?"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from explorer import charts, data, filters, numbers, sentences, tables, ui, vocab
from explorer.state import PageState, Param

PAGE = "language"

ui.page_header(
    "Language shift: English vs Hinglish",
    "Many people in India write to chatbots in Hinglish. Here the same prompts are compared in "
    "both languages: **does the size of the gap change** (Hinglish Mean Δ% − English Mean Δ%), "
    "and **are the same identities favoured** in both (Spearman ρ between the two rankings of "
    "identities; 1 = same order, 0 = unrelated, negative = reversed)?",
)
models = filters.load_models()
if models is None:
    st.stop()

ps = PageState(PAGE, [*filters.common_params(models), Param("axis", filters.AXIS_OPTIONS, "all")])
ps.seed()
filters.draw_common(ps, models)


def _mark(p: float) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return "‡" if p < 0.01 else "†" if p < 0.05 else ""


def _body() -> None:
    """The axis filter and everything it steers (a fragment: see ui.page_body)."""
    st.selectbox("Axis", filters.AXIS_OPTIONS, key=ps.key("axis"),
                 format_func=ui.label_func(vocab.AXIS_LABELS))
    sel_models, kinds, method, labels = filters.settle(ps, models)
    axis = str(ps.value("axis"))
    ui.source_legend([k for k in vocab.SOURCE_KINDS if k in kinds])
    ui.jargon("Mean Δ%", "Spearman ρ", "CI")


    # ---- 3. published Tables 3/4 side by side ---------------------------------------------------
    st.subheader("1 · Per-axis gaps, English and Hinglish side by side (paper Tables 3/4)")
    with ui.guard("The per-axis language table"):
        axes = vocab.AXES if axis == "all" else (axis,)
        cells = data.rows("delta", task="all", axis=axes, language=vocab.LANGUAGES,
                          model=sel_models, source_kind=kinds, method=method)
        cells, _ = tables.prefer_published(cells, ["model", "language", "task", "axis"])
        cells = tables.mask_markup(cells, derive=not data.computed_file_has("delta", "flag"))
        cells = cells.assign(_o=[data.model_order_key(m) for m in cells["model"]]).sort_values(
            ["_o", "source_kind"]).drop(columns="_o")
        side = tables.side_by_side(cells, labels)
        blanked = ui.markup_note(cells, labels, "Pooled per-axis gaps")
        if side.empty:
            ui.no_rows("per-axis cells")
        elif not side[["English Mean Δ%", "Hinglish Mean Δ%"]].notna().any(axis=None):
            st.info("No per-axis gap to draw for this selection"
                    + (" (see the note above)." if blanked else "."), icon=":material/block:")
        else:
            pub_side = side[side["Source type"] == vocab.SOURCE_LABELS["published"]].dropna(
                subset=["Hinglish − English"])
            if len(pub_side):
                worse = int((pub_side["Hinglish − English"] > 0).sum())
                ui.sentence(f"In {worse} of {len(pub_side)} published model × axis cells the "
                            "gap is larger in Hinglish than in English (paper Tables 3/4). The "
                            "paper gives no interval for that difference, and its per-language "
                            "intervals are too narrow, so small differences may be noise.")
            ui.explain("Mean Δ% per axis pooled over the five use cases, as the paper's Tables 3 "
                       "(English) and 4 (Hinglish). *Hinglish − English* is derived here by "
                       "subtraction; the paper gives no CI for that difference, so none is shown.")
            dumb = side.melt(id_vars=["Model", "Source type", "Axis"],
                             value_vars=["English Mean Δ%", "Hinglish Mean Δ%"],
                             var_name="Language", value_name="Mean Δ%")
            dumb["Language"] = dumb["Language"].str.replace(" Mean Δ%", "", regex=False)
            lo = side.melt(id_vars=["Model", "Source type", "Axis"],
                           value_vars=["English CI low", "Hinglish CI low"], value_name="CI low")
            hi = side.melt(id_vars=["Model", "Source type", "Axis"],
                           value_vars=["English CI high", "Hinglish CI high"], value_name="CI high")
            dumb["CI low"], dumb["CI high"] = lo["CI low"].to_numpy(), hi["CI high"].to_numpy()
            dumb["Row"] = [f"{m} · {k}" for m, k in zip(dumb["Model"], dumb["Source type"],
                                                        strict=True)]
            # a model with no gap here (blanked above) gets no empty row in the chart
            dumb = dumb[dumb.groupby("Row")["Mean Δ%"].transform("count").to_numpy() > 0]
            ui.clip_caption(dumb, "Mean Δ%", "CI low", "CI high")
            spec = charts.spec(
                charts.ci_dots, dumb, x="Mean Δ%", lo="CI low", hi="CI high", y="Row",
                color="Language", y_order=list(dict.fromkeys(dumb["Row"])), x_title="Mean Δ%",
                color_scale=charts.language_scale(dumb["Language"]), facet="Axis",
                facet_order=list(axes),
                columns=2)
            ui.chart(spec, dumb, "english vs hinglish per axis", f"{PAGE}-dumbbell",
                     alt_text="English and Hinglish Mean Δ% per model and axis", stretch=False,
                     title="Mean Δ% in English and in Hinglish, per axis (95 % CI)",
                     subtitle=ui.scope("All use cases pooled", vocab.AXIS_LABELS[axis],
                                       vocab.METHOD_LABELS[method]),
                     source=ui.source_line(cells, labels))
            ui.table(side, "english vs hinglish per axis tables 3 4", f"{PAGE}-side")

    # ---- 1. change in gap size and ranking agreement ------------------------------------------
    st.subheader("2 · How much does the gap change in Hinglish? (models computed here)")
    shift = pd.DataFrame()
    with ui.guard("The language-shift table"):
        shift = data.rows("language_shift", model=sel_models, source_kind=kinds, method=method)
        shift = tables.mask_markup(shift, derive=not data.computed_file_has("language_shift",
                                                                            "flag"))
        ui.markup_note(shift, labels, "Language shifts", hint=(
            "Choose the corrected method (sidebar) to see them; the ranking agreement (section "
            "3) stays shown."))
        universe = tables.model_frame(models, sel_models, kinds)
        have = set(shift["model"]) if len(shift) else set()
        lacking = [r.label for r in universe.itertuples(index=False)
                   if r.source_kind == "published" and r.model not in have]
        if lacking:
            ui.explain(f"Not available for {len(lacking)} published model(s) "
                       f"({', '.join(lacking)}): the paper shows this only as a figure (Figure "
                       "5), which is not transcribed. Section 1 above gives the "
                       "English/Hinglish difference from the paper's Tables 3/4 instead.")
        shown = shift[shift["axis"] == axis] if len(shift) else shift
        frame = pd.DataFrame({
            "Model": shown["model"].map(labels),
            "Source type": shown["source_kind"].map(vocab.SOURCE_LABELS),
            "Source": shown["source"], "Axis": shown["axis"].map(vocab.AXIS_LABELS),
            "English Mean Δ%": shown.get("mean_delta_en"),
            "Hinglish Mean Δ%": shown.get("mean_delta_hinglish"),
            "Hinglish − English": shown["delta_shift"],
            "CI low": shown.get("delta_shift_lo"), "CI high": shown.get("delta_shift_hi"),
            "Like-for-like shift": shown.get("delta_shift_std", pd.Series(float("nan"),
                                                                          index=shown.index)),
            "Like-for-like CI low": shown.get("delta_shift_std_lo", pd.Series(
                float("nan"), index=shown.index)),
            "Like-for-like CI high": shown.get("delta_shift_std_hi", pd.Series(
                float("nan"), index=shown.index)),
            "Spearman ρ (EN vs HI ranking)": shown.get("rho"), "ρ p-value": shown.get("rho_p"),
            "ρ significance": [_mark(p) for p in shown.get("rho_p", pd.Series(dtype=float))],
            "n identifiers": shown.get("n_identifiers"),
            "English n pairs": shown.get("n_pairs_en"),
            "Hinglish n pairs": shown.get("n_pairs_hinglish"),
            "Model ID": shown["model"]})
        frame = frame.assign(_o=[data.model_order_key(m) for m in frame["Model ID"]]).sort_values(
            "_o").drop(columns="_o").reset_index(drop=True)
        if frame.empty:
            ui.no_rows("language-shift rows")
        else:
            for rec in frame.head(3).itertuples(index=False):
                row = frame[frame["Model ID"] == rec[-1]].iloc[0]
                std_v = row["Like-for-like shift"]
                std_ci = sentences.ci(row["Like-for-like CI low"],
                                      row["Like-for-like CI high"])
                if pd.notna(std_v):
                    ui.sentence(
                        f"Asked in Hinglish instead of English, on answers usable in both, "
                        f"{row['Model']}'s gap changes by {numbers.num(std_v)} points "
                        f"({std_ci}, "
                        "computed here); the pooled figure "
                        f"({numbers.num(row['Hinglish − English'])}) mixes in the two "
                        "languages' different use-case mixes, so quote the like-for-like one.")
                elif pd.notna(row["Hinglish − English"]):
                    ui.sentence(
                        f"Asked in Hinglish instead of English, {row['Model']}'s gap changes by "
                        f"{numbers.num(row['Hinglish − English'])} points "
                        f"({sentences.ci(row['CI low'], row['CI high'])}, computed here, "
                        "pooled over use cases: the languages' different use-case mixes are "
                        "part of it).")
            # The like-for-like shift is the figure to quote; the pooled one only where a
            # model has none (it mixes in the languages' use-case mixes).
            like = bool(frame["Like-for-like shift"].notna().any())
            x, lo, hi = (("Like-for-like shift", "Like-for-like CI low", "Like-for-like CI high")
                         if like else ("Hinglish − English", "CI low", "CI high"))
            chart_df = frame.loc[frame[x].notna(),
                                 ["Model", "Source type", x, lo, hi, "Source"]].copy()
            if len(chart_df):
                ui.explain("Positive = the gap between identities is **larger** in Hinglish; "
                           "negative = smaller. Whiskers: 95% interval (corrected method: "
                           "profiles resampled; authors' method: pairs resampled, too narrow). "
                           "† p < 0.05, ‡ p < 0.01 for ρ.")
                chart_df["Row"] = [f"{m} · {k}" for m, k in zip(
                    chart_df["Model"], chart_df["Source type"], strict=True)]
                ui.clip_caption(chart_df, x, lo, hi, signed=True)
                spec = charts.spec(
                    charts.ci_dots, chart_df, x=x, lo=lo, hi=hi, y="Row", color="Source type",
                    y_order=list(chart_df["Row"]),
                    x_title="Hinglish Mean Δ% − English Mean Δ% (percentage points)",
                    color_scale=charts.source_scale(chart_df["Source type"]), zero_line=True,
                    tooltip=("Source",))
                ui.chart(spec, chart_df, f"language shift {method} {axis}", f"{PAGE}-shift",
                         alt_text="Dot plot of the change in Mean Δ% from English to Hinglish",
                         title="Change in Mean Δ% from English to Hinglish (points, 95 % CI)",
                         subtitle=ui.scope(vocab.AXIS_LABELS[axis],
                                           "like for like: answers usable in both languages"
                                           if like else "all use cases pooled",
                                           vocab.METHOD_LABELS[method],
                                           "positive = larger in Hinglish"),
                         source=ui.source_line(shown, labels))
            # blanked gaps (the authors' method's markups) leave whole columns of "—": the
            # table then starts with what it can answer, the ranking agreement
            frame, dropped = tables.drop_empty(frame)
            if dropped:
                st.caption("Left out, empty for every model shown: " + ", ".join(dropped) + ".")
            ui.table(frame, f"language shift {method} {axis}", f"{PAGE}-shift-table")

    # ---- 2. ranking agreement heatmap ---------------------------------------------------------
    st.subheader("3 · Are the same identities favoured in both languages?")
    with ui.guard("The ranking-agreement heatmap"):
        if len(shift) and "rho" in shift.columns:
            hm = pd.DataFrame({
                "Model": [f"{labels.get(m, m)} · {vocab.SOURCE_LABELS[k]}"
                          for m, k in zip(shift["model"], shift["source_kind"], strict=True)],
                "Axis": shift["axis"].map(vocab.AXIS_LABELS), "Spearman ρ": shift["rho"],
                "p-value": shift.get("rho_p"), "n identifiers": shift.get("n_identifiers"),
                "Model ID": shift["model"]})
            hm["Label"] = [f"{numbers.signed(r, 2)}{_mark(p)}" if not pd.isna(r)
                           else numbers.MISSING
                           for r, p in zip(hm["Spearman ρ"], hm["p-value"], strict=True)]
            order = list(dict.fromkeys(hm.sort_values("Model ID", key=lambda s: s.map(
                data.model_order_key))["Model"]))
            ui.explain("Each cell: ρ between the English and the Hinglish ranking of that axis's "
                       "identities (by their mean answer). Orange = same order (ρ near +1), pale = "
                       "unrelated (ρ near 0), blue = reversed (ρ near −1). Point at a cell for "
                       "its p-value.")
            x_order = [vocab.AXIS_LABELS[a] for a in (*vocab.AXES, "all")]
            tips = ("p-value", "n identifiers")
            # drawn as a table of coloured cells (explorer.heat); the PNG/SVG is this heatmap
            spec = charts.spec(
                charts.heatmap, hm, x="Axis", y="Model", value="Spearman ρ", text="Label",
                x_order=x_order, y_order=order, title="Spearman ρ", diverging=True,
                domain=(-1, 1), tooltip=tips)
            ui.heat_table(hm, spec, hm.drop(columns="Label"), "language ranking agreement",
                          f"{PAGE}-rho", "Table of English–Hinglish ranking agreement "
                          "(Spearman ρ) by model and axis, cells coloured by ρ",
                          x="Axis", y="Model", value="Spearman ρ", text="Label",
                          x_order=x_order, y_order=order, domain=(-1.0, 1.0),
                          legend="Spearman ρ", tips=tips,
                          title="Do English and Hinglish rank identities the same way? "
                                "(Spearman ρ)",
                          subtitle=ui.scope("Every axis", vocab.METHOD_LABELS[method],
                                            "† p < 0.05 · ‡ p < 0.01"),
                          # ρ is no gap, so mask_markup keeps it: these rows are drawn and
                          # name their source (with the markup note they named none)
                          source=ui.source_line(shift.drop(columns="note", errors="ignore"),
                                                labels))
        else:
            ui.no_rows("ranking-agreement values")

    st.divider()
    ui.permalink(ps.link())


ui.page_body(_body)
