"""Consistency & robustness: Kendall's W, gap vs consistency, question wording, merit,
the fairness instruction and parse health (paper §5.2, Tables 5–8, 22, Appendices B, D, E, L)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from explorer import charts, data, filters, tables, ui, vocab
from explorer.state import PageState, Param

PAGE = "consistency"
LANG_LABELS = {"all": "English and Hinglish", **vocab.LANGUAGE_LABELS}

ui.page_header(
    "Consistency & robustness",
    "A model can have large gaps that point in random directions, or smaller gaps that always "
    "favour the same identities. These views ask whether the **ordering** of identities is "
    "stable — across prompts, question wordings and candidate profiles — whether a fairness "
    "instruction helps, and how reliably each model's answers could be read at all.",
)
models = filters.load_models()
if models is None:
    st.stop()
TABS = {"kendall": "Kendall's W", "quadrant": "Gap vs consistency",
        "wording": "Question wording", "merit": "Merit & profiles",
        "fairness": "Fairness instruction", "parse": "Parse health"}
ps = PageState(PAGE, [*filters.common_params(models), Param("lang", filters.LANG_OPTIONS, "all"),
                      Param("tab", tuple(TABS), "kendall"),
                      Param("together", ("no", "yes"), "no")])
ps.seed()
filters.draw_common(ps, models)


def _body() -> None:
    """The page's filters, tabs and their sections (a fragment: see ui.page_body)."""
    st.selectbox("Language", filters.LANG_OPTIONS, key=ps.key("lang"), format_func=LANG_LABELS.get)
    st.radio("Published and computed models", ("no", "yes"), key=ps.key("together"),
             horizontal=True,
             format_func={"no": "Separate lanes (default)",
                          "yes": "Rank together in one chart"}.get,
             help="The paper's nine models and models computed here are scored on different runs "
                  "(and small computed models on far fewer, noisier answers), so by default each "
                  "sits in its own lane and is never ranked among the other. Choose *Rank "
                  "together* only to compare them knowingly.")
    sel_models, kinds, method, labels = filters.settle(ps, models)
    lang = str(ps.value("lang"))
    langs = vocab.LANGUAGES if lang == "all" else (lang,)
    ui.source_legend([k for k in vocab.SOURCE_KINDS if k in kinds])
    ui.jargon("Kendall's W", "Mean Δ%", "Spearman ρ")


    def row_label(model: str, kind: str) -> str:
        return tables.model_row_label(model, kind, labels)


    TOGETHER_NOTE = ("**Ranked together at your request.** Published numbers come from the paper's "
                     "runs, computed ones from runs scored here; they are not measured on the same "
                     "answers and a small model's numbers rest on fewer, noisier answers.")


    def laned(frame: pd.DataFrame, draw: Callable[[pd.DataFrame, str], None],
              value: str | None = None, mean_delta: bool = False) -> None:
        """Draw a ranking chart once per lane — published, then computed — so the two are never
        ranked together; with ``?together=yes`` once for both, rows ranked by ``value`` (highest
        first). ``frame`` needs a ``source_kind`` column; ``draw(part, kind)`` gets ``kind`` =
        ``published``, ``computed`` or ``together``. ``mean_delta``: the chart shows the paper's
        Mean Δ%, so its caveat (too-narrow intervals, no noise floor) follows the published
        lane; Kendall's W, ρ and parse rates are not what it is about."""
        present = [k for k in vocab.SOURCE_KINDS if k in set(frame["source_kind"])]
        if ps.value("together") == "yes" and len(present) > 1:
            st.warning(TOGETHER_NOTE, icon=":material/compare_arrows:")
            ranked = (frame.sort_values(value, ascending=False, kind="stable", na_position="last")
                      if value else frame)
            draw(ranked, "together")
            return
        for kind in present:
            ui.lane(kind)
            draw(frame[frame["source_kind"] == kind], kind)
            if kind == "published" and mean_delta:
                ui.paper_ci_caveat()


    def lane_title(title: str, kind: str) -> str:
        if kind == "together":
            return f"{title} — published and computed ranked together"
        return f"{title} — {vocab.SOURCE_LABELS[kind]}"


    def ordered(frame: pd.DataFrame, column: str = "Model ID") -> pd.DataFrame:
        key = [data.model_order_key(m) if m != vocab.ALL else (99, "") for m in frame[column]]
        return frame.assign(_o=key).sort_values("_o", kind="stable").drop(columns="_o").reset_index(
            drop=True)



    # ---- Kendall's W -----------------------------------------------------------------------------
    def section_kendall() -> None:
        with ui.guard("Kendall's W"):
            ui.explain(
                "**Kendall's W** (0–1): do the same identities keep getting the highest and lowest "
                "answers across all base profiles? 0 = the ranking changes from prompt to prompt, "
                "1 = identical ranking every time. Significance: Friedman test per use case, "
                "combined over use cases (Fisher), Benjamini–Hochberg corrected; faint bars are "
                "not significant. Published values: Tables 5 (English) and 6 (Hinglish).")
            kw = data.rows("kendall_w", model=sel_models, language=langs, source_kind=kinds,
                           method=method)
            if kw.empty:
                ui.no_rows("Kendall's W values")
            else:
                kw = ordered(kw.rename(columns={"model": "Model ID"}))
                mean = kw[kw["axis"] == "Mean"]
                chart_df = pd.DataFrame({
                    "Model": [row_label(m, k) for m, k in zip(mean["Model ID"], mean["source_kind"],
                                                              strict=True)],
                    "Language": mean["language"].map(vocab.LANGUAGE_LABELS), "Mean W": mean["w"],
                    "Significant": mean["significant"].map({True: "yes", False: "no"})
                    .fillna("n/a"),
                    "Source": mean["source"], "source_kind": mean["source_kind"].to_numpy(),
                    "Model ID": mean["Model ID"].to_numpy()})

                def draw_w(part: pd.DataFrame, kind: str) -> None:
                    shown = part.drop(columns=["source_kind", "Model ID"])
                    spec = charts.spec(
                        charts.bars_ci, shown, x="Mean W", lo="_", hi="_", y="Model",
                        color="Language", y_order=list(dict.fromkeys(shown["Model"])),
                        x_title="Mean Kendall's W (higher = more consistent ordering)",
                        color_scale=charts.language_scale(shown["Language"]), opacity="Significant",
                        tooltip=("Source",))
                    ui.chart(spec, shown, f"mean kendall w {kind}", f"{PAGE}-w-{kind}",
                             alt_text="Bar chart of mean W",
                             title=lane_title("Mean Kendall's W (six axes)", kind),
                             subtitle=ui.scope(LANG_LABELS[lang], vocab.METHOD_LABELS[method],
                                               "faint bars: not significant (BH)"),
                             source=ui.source_line(part, labels))

                laned(chart_df, draw_w, value="Mean W")
                wide = kw.pivot_table(index=["Model ID", "source_kind", "language"], columns="axis",
                                      values="w", sort=False).reset_index()
                notsig = kw[kw["significant"].eq(False)].groupby(
                    ["Model ID", "source_kind", "language"])["axis"].agg(", ".join).rename(
                    "Not significant").reset_index()
                keys = ["Model ID", "source_kind", "language"]
                src = kw.groupby(keys)["source"].first().reset_index()
                wide = wide.merge(notsig, how="left").merge(src, how="left")
                out = pd.DataFrame({
                    "Model": wide["Model ID"].map(lambda m: labels.get(m, m)),
                    "Source type": wide["source_kind"].map(vocab.SOURCE_LABELS),
                    "Source": wide["source"],
                    "Language": wide["language"].map(vocab.LANGUAGE_LABELS),
                    **{f"{a} W": wide.get(a) for a in (*vocab.AXES, "Mean")},
                    "Not significant (BH)": wide["Not significant"].fillna(""),
                    "Model ID": wide["Model ID"]})
                if "w_chance" in kw.columns:
                    chance = kw[(kw["axis"] == "Mean") & kw["w_chance"].notna()]
                    if len(chance):
                        r = chance.iloc[0]
                        verdict = ("above chance" if pd.notna(r.get("w_perm_p"))
                                   and float(r["w_perm_p"]) < 0.05 else "not above chance")
                        ui.sentence(
                            f"{labels.get(r['Model ID'], r['Model ID'])}'s mean W in "
                            f"{vocab.LANGUAGE_LABELS.get(r['language'], r['language'])} is "
                            f"{float(r['w']):.3f} where random rankings would give "
                            f"{float(r['w_chance']):.3f}: {verdict} (permutation p = "
                            f"{float(r['w_perm_p']):.3f}; computed here). The paper's fixed "
                            "cut-offs ignore the chance level, which depends on the number of "
                            "profiles.")
                    chance_cols = ["Model ID", "source_kind", "language", "w_chance",
                                   "w_corrected", "w_perm_p"]
                    out = out.merge(kw[kw["axis"] == "Mean"][chance_cols]
                                    .assign(Language=lambda f: f["language"].map(
                                        vocab.LANGUAGE_LABELS),
                                        **{"Source type": lambda f: f["source_kind"].map(
                                            vocab.SOURCE_LABELS)})
                                    .drop(columns=["language", "source_kind"])
                                    .rename(columns={"w_chance": "W by chance",
                                                     "w_corrected": "W above chance",
                                                     "w_perm_p": "W permutation p"}),
                                    on=["Model ID", "Source type", "Language"], how="left")
                ui.table(ordered(out), f"kendall w {lang}", f"{PAGE}-w-table")
                if box := ui.lazy_box("All W values with p-values (long format)",
                                       f"{PAGE}-w-long-box"):
                    with box:
                        long = kw[["Model ID", "source_kind", "source", "language", "axis", "w",
                                   "p_value", "p_bh", "significant", "n_tasks"]].rename(columns={
                                       "source_kind": "Source type", "source": "Source", "w": "W",
                                       "p_value": "p (Fisher)", "p_bh": "p (BH)",
                                       "n_tasks": "n use cases"})
                        long["Source type"] = long["Source type"].map(vocab.SOURCE_LABELS)
                        ui.table(long, f"kendall w long {lang}", f"{PAGE}-w-long")
            with ui.guard("Kendall's W by use case"):
                if box := ui.lazy_box("Kendall's W by use case (computed models; paper Figure 7)",
                                       f"{PAGE}-w-uc-box"):
                    with box:
                        uc = data.rows("kendall_w_usecase", model=sel_models, language=langs,
                                       axis="Mean", source_kind=kinds, method=method)
                        if uc.empty:
                            ui.no_rows("per-use-case W values")
                        else:
                            frame = pd.DataFrame({
                                "Model": [row_label(m, k) for m, k in
                                          zip(uc["model"], uc["source_kind"], strict=True)],
                                "Language": uc["language"].map(vocab.LANGUAGE_LABELS),
                                "Use case": uc["task"].map(vocab.TASK_LABELS), "Mean W": uc["w"],
                                "Significant": uc["significant"].map({True: "yes", False: "no"}),
                                "p (BH)": uc.get("p_bh"), "n profiles": uc.get("n_blocks"),
                                "Model ID": uc["model"]})
                            frame = ordered(frame)
                            frame["Row"] = frame["Model"] + " · " + frame["Language"]
                            rows = list(dict.fromkeys(frame["Row"]))
                            spec = charts.spec(
                                charts.bars_ci, frame, x="Mean W", lo="_", hi="_", y="Row",
                                color="Use case", y_order=rows,
                                x_title="Kendall's W (mean of the six axes)",
                                color_scale=charts.task_scale(vocab.TASK_LABELS, frame["Use case"]),
                                opacity="Significant")
                            ui.chart(spec, frame, "kendall w by use case", f"{PAGE}-w-uc",
                                     alt_text="Bar chart of W by use case",
                                     title="Kendall's W by use case",
                                     subtitle=ui.scope(LANG_LABELS[lang],
                                                       vocab.METHOD_LABELS[method],
                                                       "faint bars: not significant (BH)"),
                                     source=ui.source_line(uc, labels))
                            ui.table(frame.drop(columns="Row"), "kendall w by use case",
                                     f"{PAGE}-w-uc-t")

    # ---- Quadrant --------------------------------------------------------------------------------
    def section_quadrant() -> None:
        with ui.guard("The gap-vs-consistency chart"):
            ui.explain(
                "Gap size (x) against ordering consistency (y), as the paper's Figure 3b. Right = "
                "bigger gaps; up = the same identities are favoured more consistently. Triangles "
                "are open-weight models, circles closed ones; both axes start at 0. Dashed lines "
                "are medians of the models shown (three or more). x is the unweighted mean over "
                "use case × axis cells, averaged over English and Hinglish; for published models "
                "only the six per-axis cells exist (Tables 3/4), so their x uses those — the "
                "*x basis* column says which.")
            cells = data.rows("delta", model=sel_models, language=vocab.LANGUAGES, axis=vocab.AXES,
                              source_kind=kinds, method=method)
            cells, _ = tables.prefer_published(cells, ["model", "language", "task", "axis"])
            cells = tables.mask_markup(cells, derive=not data.computed_file_has("delta", "flag"))
            ui.markup_note(cells, labels, "Counter-offer cells", hint=(
                "Their x leaves them out (see x basis); the corrected method keeps them."))
            w_rows = data.rows("kendall_w", model=sel_models, language=vocab.LANGUAGES, axis="Mean",
                               source_kind=kinds, method=method)
            quad = tables.quadrant(cells, w_rows, models)
            quad = quad.dropna(subset=["Mean Δ% (unweighted)", "Mean Kendall's W"], how="any")
            if quad.empty:
                ui.no_rows("models with both a gap and a W value")
            else:
                kinds_of = {v: k for k, v in vocab.SOURCE_LABELS.items()}
                quad = quad.assign(source_kind=quad["Source type"].map(kinds_of))

                def draw_quad(part: pd.DataFrame, kind: str) -> None:
                    part = part.drop(columns="source_kind")
                    lane_rows = pd.concat([cells, w_rows])
                    if kind != "together":
                        lane_rows = lane_rows[lane_rows["source_kind"] == kind]
                    spec = charts.spec(charts.quadrant, part, x="Mean Δ% (unweighted)",
                                       y="Mean Kendall's W")
                    ui.chart(spec, part, f"gap vs consistency {kind}", f"{PAGE}-quad-{kind}",
                             alt_text="Scatter of Mean Δ% against mean Kendall's W",
                             title=lane_title("Gap size against ordering consistency (paper "
                                              "Fig. 3b)", kind),
                             subtitle=ui.scope("English and Hinglish averaged",
                                               vocab.METHOD_LABELS[method],
                                               "dashed lines: medians of the models shown"
                                               if len(part) >= charts.QUADRANT_MIN_MODELS
                                               else ""),
                             source=ui.source_line(lane_rows, labels))

                laned(quad, draw_quad, mean_delta=True)
                ui.table(ordered(quad.drop(columns="source_kind")), "gap vs consistency",
                         f"{PAGE}-quad-table")

    # ---- Question-variant robustness -------------------------------------------------------------
    def section_wording() -> None:
        with ui.guard("Question-variant robustness"):
            ui.explain(
                "Each use case asks the same question in 2–3 wordings. For each wording the "
                "identities are ranked; **min ρ** is the lowest Spearman correlation between any "
                "two wordings' rankings (1 = identical rankings, 0 = unrelated, negative = "
                "reversed), averaged over use cases, with a 95% bootstrap CI. ✓ = mean min ρ ≥ "
                "0.85 (robust). Published: Tables 7 (English) and 8 (Hinglish); their 'Axis mean' "
                "row pools all nine models.")
            qv = data.rows("qv_robustness", model=(*sel_models, vocab.ALL), language=langs,
                           source_kind=kinds, method=method)
            if qv.empty:
                ui.no_rows("question-variant robustness values")
            else:
                qv = ordered(qv.rename(columns={"model": "Model ID"}))
                mean = qv[qv["axis"] == "Mean"]
                chart_df = pd.DataFrame({
                    "Model": [row_label(m, k) for m, k in zip(mean["Model ID"], mean["source_kind"],
                                                              strict=True)],
                    "Language": mean["language"].map(vocab.LANGUAGE_LABELS),
                    "Mean min ρ": mean["min_rho"], "CI low": mean.get("min_rho_lo"),
                    "CI high": mean.get("min_rho_hi"), "Source": mean["source"],
                    "source_kind": mean["source_kind"].to_numpy(),
                    "Model ID": mean["Model ID"].to_numpy()})

                def draw_qv(part: pd.DataFrame, kind: str) -> None:
                    shown = part.drop(columns=["source_kind", "Model ID"])
                    ui.clip_caption(shown, "Mean min ρ", "CI low", "CI high", signed=True)
                    spec = charts.spec(
                        charts.ci_dots, shown, x="Mean min ρ", lo="CI low", hi="CI high", y="Model",
                        color="Language", y_order=list(dict.fromkeys(shown["Model"])),
                        x_title="Mean minimum Spearman ρ across wordings (0.85 = robust)",
                        color_scale=charts.language_scale(shown["Language"]), zero_line=True,
                        ref=0.85,
                        tooltip=("Source",))
                    ui.chart(spec, shown, f"question variant robustness {kind}",
                             f"{PAGE}-qv-{kind}",
                             alt_text="Dot plot of question-variant robustness with CIs",
                             title=lane_title("Robustness to question wording (mean min ρ, 95 % "
                                              "CI)", kind),
                             subtitle=ui.scope(LANG_LABELS[lang], vocab.METHOD_LABELS[method],
                                               "dashed line: 0.85 = robust"),
                             source=ui.source_line(part, labels))

                laned(chart_df, draw_qv, value="Mean min ρ")
                out = pd.DataFrame({
                    "Model": [row_label(m, k).rsplit(" · ", 1)[0] for m, k in
                              zip(qv["Model ID"], qv["source_kind"], strict=True)],
                    "Source type": qv["source_kind"].map(vocab.SOURCE_LABELS),
                    "Source": qv["source"],
                    "Language": qv["language"].map(vocab.LANGUAGE_LABELS),
                    "Axis": qv["axis"].map(lambda a: vocab.AXIS_LABELS.get(a, a)),
                    "Mean min ρ": qv["min_rho"], "CI low": qv.get("min_rho_lo"),
                    "CI high": qv.get("min_rho_hi"),
                    "Robust (≥ 0.85)": qv.get("robust").map({True: "✓", False: ""}),
                    "n use cases": qv.get("n_tasks"), "Notes": qv.get("note", pd.Series(
                        "", index=qv.index)).fillna(""), "Model ID": qv["Model ID"]})
                ui.table(out, f"question variant robustness {lang}", f"{PAGE}-qv-table")

    # ---- Merit sensitivity & profile rank agreement ----------------------------------------------
    def _profile_metric(title: str, explanation: str, table: str, columns: tuple[str, str, str],
                        label: str, x_title: str, key: str, ref: float | None = None) -> None:
        """One per-(model, language, use case) statistic with its CI: bars, then the table.

        ``columns`` names the value and its CI bounds in ``table``; ``label`` is how the value is
        shown."""
        st.markdown(f"**{title}**")
        ui.explain(explanation)
        with ui.guard(title):
            rows = data.rows(table, model=sel_models, language=langs, source_kind=kinds,
                             method=method)
            if rows.empty:
                ui.no_rows(f"{title.lower()} values")
                return
            value, lo, hi = columns
            frame = ordered(pd.DataFrame({
                "Model": [row_label(m, k) for m, k in zip(rows["model"], rows["source_kind"],
                                                          strict=True)],
                "Language": rows["language"].map(vocab.LANGUAGE_LABELS),
                "Use case": rows["task"].map(vocab.TASK_LABELS),
                label: rows[value], "CI low": rows.get(lo), "CI high": rows.get(hi),
                "n pairs": rows.get("n_pairs"), "Model ID": rows["model"]}))
            frame["Row"] = frame["Model"] + " · " + frame["Language"]
            spec = charts.spec(
                charts.bars_ci, frame, x=label, lo="CI low", hi="CI high", y="Row",
                color="Use case", y_order=list(dict.fromkeys(frame["Row"])), x_title=x_title,
                ref=ref,
                color_scale=charts.task_scale(vocab.TASK_LABELS, frame["Use case"]))
            ui.chart(spec, frame, title.lower(), f"{PAGE}-{key}",
                     alt_text=f"Bar chart of {title.lower()} with CIs",
                     title=f"{title} with 95 % CI, by use case",
                     subtitle=ui.scope(LANG_LABELS[lang], vocab.METHOD_LABELS[method]),
                     source=ui.source_line(rows, labels))
            ui.table(frame.drop(columns="Row"), title.lower(), f"{PAGE}-{key}-table")


    def section_merit() -> None:
        _profile_metric(
            "Merit sensitivity",
            "How much the answer changes when the *profile* changes (better university, more "
            "experience, stronger offer) for the same identity — the same Δ% formula, across "
            "profiles instead of identities. Higher = the model responds to merit. Computed models "
            "only (paper Figure 12 is not transcribed).",
            "merit_sensitivity", ("mean_delta", "mean_delta_lo", "mean_delta_hi"), "Merit Δ%",
            "Mean Δ% between profiles (same identity)", "merit")
        _profile_metric(
            "Profile rank agreement",
            "Do different identities agree on which profiles deserve more? Mean Spearman ρ between "
            "identities' rankings of the profiles; 1 (dashed line) = every identity ranks the "
            "profiles the same way. Low values mean identity changes *who* the model treats as the "
            "stronger candidate, not just the level.",
            "profile_rank_agreement", ("rho", "rho_lo", "rho_hi"), "Mean ρ",
            "Mean Spearman ρ between identities' profile rankings", "pra", ref=1.0)

    # ---- Fairness-instruction ablation -----------------------------------------------------------
    def section_fairness() -> None:
        with ui.guard("The fairness-instruction ablation"):
            ui.explain("Salary estimation was also run with *“Please ensure your response is fair "
                       "and unbiased.”* added to the system prompt. Bars: Mean Δ% with the "
                       "instruction − without, on the same prompts (for a computed run, the slots "
                       "answered in both conditions; blue = the gap shrank, vermillion = it grew, "
                       "each only where the 95 % interval excludes 0; grey = it spans 0). "
                       "Published: the paper gives these only as a figure; what its text states "
                       "(mostly the direction, one number) is listed in the table with the quoted "
                       "evidence.")
            fa = data.rows("fairness_ablation", model=sel_models, language=langs, source_kind=kinds,
                           method=method)
            if fa.empty:
                ui.no_rows("fairness-ablation rows")
            else:
                fa = ordered(fa.rename(columns={"model": "Model ID"}))
                frame = pd.DataFrame({
                    "Model": [row_label(m, k) for m, k in zip(fa["Model ID"], fa["source_kind"],
                                                              strict=True)],
                    "Language": fa["language"].map(vocab.LANGUAGE_LABELS),
                    "Mean Δ% standard": fa.get("std_mean_delta"),
                    "Mean Δ% with instruction": fa.get("fair_mean_delta"),
                    "Change (points)": fa.get("delta"),
                    "Change CI low": fa.get("delta_lo", pd.Series(float("nan"), index=fa.index)),
                    "Change CI high": fa.get("delta_hi",
                                             pd.Series(float("nan"), index=fa.index)),
                    "Reduction %": fa.get("reduction_pct"),
                    "Direction": fa.get("direction", pd.Series(pd.NA, index=fa.index)),
                    "n pairs standard": fa.get("n_pairs_std"),
                    "n pairs with instruction": fa.get("n_pairs_fair"), "Source": fa["source"],
                    "Notes": fa.get("note", pd.Series("", index=fa.index)).fillna(""),
                    "Model ID": fa["Model ID"]})
                frame["Direction"] = [
                    d if isinstance(d, str) else charts.change_class(v, lo, hi)
                    if not pd.isna(v) else ""
                    for d, v, lo, hi in zip(frame["Direction"], frame["Change (points)"],
                                            frame["Change CI low"], frame["Change CI high"],
                                            strict=True)]
                numeric = frame.assign(source_kind=fa["source_kind"].to_numpy()).dropna(
                    subset=["Change (points)"])

                def draw_fair(part: pd.DataFrame, kind: str) -> None:
                    part = part.assign(Row=part["Model"] + " · " + part["Language"])
                    shown = part[["Row", "Change (points)", "Change CI low", "Change CI high",
                                  "Mean Δ% standard", "Mean Δ% with instruction",
                                  "n pairs standard", "n pairs with instruction", "Source"]]
                    spec = charts.spec(
                        charts.signed_bars, shown,
                        x="Change (points)", y="Row", y_order=list(part["Row"]),
                        x_title="Mean Δ% with instruction − without (points)",
                        lo="Change CI low", hi="Change CI high")
                    ui.chart(spec, part.drop(columns="source_kind"), f"fairness instruction {kind}",
                             f"{PAGE}-fair-{kind}",
                             alt_text="Bar chart of the change in Mean Δ% with a fairness "
                                      "instruction",
                             title=lane_title("Change in Mean Δ% with a fairness instruction",
                                              kind),
                             subtitle=ui.scope("Salary estimation", LANG_LABELS[lang],
                                               vocab.METHOD_LABELS[method],
                                               "whiskers: 95 % CI · grey: CI spans 0"),
                             source=ui.source_line(part.assign(model=part["Model ID"]), labels))

                if len(numeric):
                    laned(numeric, draw_fair, value="Change (points)", mean_delta=True)
                comp = numeric[numeric["source_kind"] == "computed"]
                ui.thin_data(sorted(set(comp["Model ID"])), method, langs, "salary_estimation",
                             labels, "its changes rest",
                             shown=list(zip(comp["Model ID"], fa.loc[comp.index, "language"],
                                            strict=True)))
                ui.table(frame, f"fairness instruction {lang}", f"{PAGE}-fair-table")

    # ---- Parse health ----------------------------------------------------------------------------
    def section_parse() -> None:
        with ui.guard("Parse health"):
            ui.explain("**Parse health**: share of answers from which a number could be read. "
                       "**Refusal rate**: share where the model declined. **Strict rate** "
                       "(computed only): share that followed the required `### <NUMBER> INR` "
                       "format (`### <NUMBER> %` for salary increments) exactly. Published: "
                       "Table 22.")
            ph = data.rows("parse_health", model=sel_models, source_kind=kinds, method=method)
            if ph.empty:
                ui.no_rows("parse-health rows")
            else:
                top = ph[(ph.get("language", "all") == "all") & (ph.get("task", "all") == "all")]
                frame = ordered(pd.DataFrame({
                    "Model": [labels.get(m, m) for m in top["model"]],
                    "Source type": top["source_kind"].map(vocab.SOURCE_LABELS),
                    "Source": top["source"], "Parse health %": top["parse_health"],
                    "Refusal rate %": top.get("refusal_rate"),
                    "Strict format %": top.get("strict_rate"), "n rows": top.get("n_rows"),
                    "n parsed": top.get("n_parsed"), "n refusals": top.get("n_refusals"),
                    "Notes": top.get("note", pd.Series("", index=top.index)).fillna(""),
                    "Model ID": top["model"]}))
                chart_df = frame.assign(Row=[f"{m} · {k}" for m, k in zip(
                    frame["Model"], frame["Source type"], strict=True)],
                    source_kind=frame["Source type"].map(
                        {v: k for k, v in vocab.SOURCE_LABELS.items()}))

                def draw_parse(part: pd.DataFrame, kind: str) -> None:
                    shown = part.drop(columns="source_kind")
                    spec = charts.spec(
                        charts.bars_ci, shown, x="Parse health %", lo="_", hi="_", y="Row",
                        color="Source type", y_order=list(shown["Row"]),
                        x_title="Answers with a readable number (%)",
                        color_scale=charts.source_scale(shown["Source type"]),
                        ref=100.0)
                    ui.chart(spec, shown, f"parse health {kind}", f"{PAGE}-parse-{kind}",
                             alt_text="Bar chart of parse health per model",
                             title=lane_title("Answers with a readable number", kind),
                             subtitle=ui.scope("All use cases and languages",
                                               vocab.METHOD_LABELS[method],
                                               "dashed line: 100 %"),
                             source=ui.source_line(part.assign(model=part["Model ID"]), labels))

                laned(chart_df, draw_parse, value="Parse health %")
                ui.table(frame, "parse health", f"{PAGE}-parse-table")
                if box := ui.lazy_box("Per use case and language (computed models)",
                                       f"{PAGE}-parse-detail-box"):
                    with box:
                        detail = ph[(ph.get("language", "all") != "all")
                                    | (ph.get("task", "all") != "all")]
                        if detail.empty:
                            ui.no_rows("per-use-case parse-health rows")
                        else:
                            out = ordered(pd.DataFrame({
                                "Model": [labels.get(m, m) for m in detail["model"]],
                                "Language": detail["language"].map(
                                    lambda v: {"all": "Both", **vocab.LANGUAGE_LABELS}.get(v, v)),
                                "Use case": detail["task"].map(
                                    lambda v: vocab.TASK_LABELS.get(v, v)),
                                "Parse health %": detail["parse_health"],
                                "Refusal rate %": detail.get("refusal_rate"),
                                "Strict format %": detail.get("strict_rate"),
                                "n rows": detail.get("n_rows"), "Model ID": detail["model"]}))
                            ui.table(out, "parse health detail", f"{PAGE}-parse-detail")

    SECTIONS = {"kendall": section_kendall, "quadrant": section_quadrant,
                "wording": section_wording, "merit": section_merit,
                "fairness": section_fairness, "parse": section_parse}
    ui.tabbed_page(ps, "tab", TABS, SECTIONS)


ui.page_body(_body)
