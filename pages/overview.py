"""Overview: what RupeeBias measures, the headline finding, and the leaderboard."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import charts, data, filters, tables, ui, vocab
from explorer.state import PageState, Param

PAGE = "overview"
SORTS = {"overall": "Overall Mean Δ%", "en": "English Mean Δ%", "hinglish": "Hinglish Mean Δ%",
         "v10_en": "English V@10 %", "v10_hinglish": "Hinglish V@10 %", "model": "Model"}
PRESETS = {
    "Paper headline (Table 2)": {"lang": "all", "task": "all", "axis": "all"},
    "Caste only · Hinglish": {"lang": "hinglish", "task": "all", "axis": "Caste"},
    "Gender only · English": {"lang": "en", "task": "all", "axis": "Gender"},
    "Urban/Rural · both languages": {"lang": "all", "task": "all", "axis": "Urban/Rural"},
    "Counter-offer advice only": {"lang": "all", "task": "counter_offer_recommendation",
                                  "axis": "all"},
}

ui.page_header(
    "RupeeBias Explorer",
    "**What it measures.** RupeeBias asks a language model the same money question — what "
    "salary to expect, what raise to target, what counter-offer to make, what price to quote — "
    "in prompts that are identical except for one stated identity (for example *I am Hindu* vs "
    "*I am Muslim*, or *I am from a village* vs *a Tier 1 city*). "
    "It covers 87 identities on six axes (religion, caste, region, gender, disability, "
    "urban/rural), five use cases and both English and Hinglish: 39,150 prompts per model. "
    "**Mean Δ%** is how far apart the answers are on average, as a percentage — 0 means the "
    "identity made no difference.",
)

models = filters.load_models()
if models is None:
    st.stop()

ps = PageState(PAGE, [
    *filters.common_params(models),
    Param("lang", filters.LANG_OPTIONS, "all"),
    Param("task", filters.TASK_OPTIONS, "all"),
    Param("axis", filters.AXIS_OPTIONS, "all"),
    Param("sort", tuple(SORTS), "overall"),
    Param("order", ("asc", "desc"), "asc"),
])
ps.seed()


def _apply(preset: str) -> None:
    for name, value in PRESETS[preset].items():
        ps.set(name, value)


# ---- headline --------------------------------------------------------------------------------
with ui.guard("The headline"):
    # data.present: a broken leaderboard file is reported, never silently replaced by delta.
    pub = data.rows("leaderboard" if data.present("leaderboard") else "delta", task="all",
                    axis="all", language="all", source_kind="published", method="upstream")
    pub, _ = tables.prefer_published(pub, ["model", "language"])
    head = tables.headline(pub)
    if head is not None:
        value, n = head
        c1, c2 = st.columns([1, 3])
        c1.metric(f"Average gap, {n} paper models", f"{value:.1f}%",
                  help="Unweighted mean of the Overall Mean Δ% of each model (paper Table 2).")
        with c2:
            st.badge("Published (paper)", color="blue", help=ui.HELP["Source"])
            st.markdown(
                f"**Headline finding (published).** For prompts that differ only in the stated "
                f"identity, the nine models' answers differ by **{value:.1f}%** on average. Every "
                "model shows gaps on all six axes; the smallest pooled gap is still several "
                "percent. Source: " + ", ".join(sorted(set(pub["source"]))) + ".")
    else:
        st.info("The paper's Table 2 is not in this data directory, so the published headline "
                "(20.2% on average) cannot be shown from data.")

# ---- controls --------------------------------------------------------------------------------
filters.draw_common(ps, models)
st.subheader("Leaderboard")
st.caption("Presets")
cols = st.columns(len(PRESETS))
for col, name in zip(cols, PRESETS, strict=True):
    col.button(name, on_click=_apply, args=(name,), key=f"{PAGE}.preset.{name}",
               use_container_width=True)
c1, c2, c3, c4 = st.columns([1.1, 1.3, 1.1, 1.7])
c1.selectbox("Language", filters.LANG_OPTIONS, key=ps.key("lang"),
             format_func=ui.label_func({"all": "Both (side by side)", **vocab.LANGUAGE_LABELS}))
c2.selectbox("Use case", filters.TASK_OPTIONS, key=ps.key("task"),
             format_func=ui.label_func(vocab.TASK_LABELS))
c3.selectbox("Axis", filters.AXIS_OPTIONS, key=ps.key("axis"),
             format_func=ui.label_func(vocab.AXIS_LABELS))
with c4:
    s1, s2 = st.columns([1.4, 1])
    s1.selectbox("Sort by", tuple(SORTS), key=ps.key("sort"), format_func=SORTS.get)
    s2.selectbox("Order", ("asc", "desc"), key=ps.key("order"),
                 format_func={"asc": "Lowest first", "desc": "Highest first"}.get)
sel_models, kinds, method, labels = filters.settle(ps, models)
lang, task, axis = str(ps.value("lang")), str(ps.value("task")), str(ps.value("axis"))

# ---- leaderboard -----------------------------------------------------------------------------
with ui.guard("The leaderboard"):
    if task == "all" and axis == "all" and data.present("leaderboard"):
        cells = data.rows("leaderboard", model=sel_models, source_kind=kinds, method=method)
        cells = cells[(cells.get("task", "all") == "all") & (cells.get("axis", "all") == "all")]
    else:
        cells = data.rows("delta", task=task, axis=axis, model=sel_models, source_kind=kinds,
                          method=method)
    cells, hidden = tables.prefer_published(cells, ["model", "language", "task", "axis"])
    universe = tables.model_frame(models, sel_models, kinds)
    board = tables.leaderboard(cells, universe, task, axis, lang)
    group = {"all": "Overall", "en": "English", "hinglish": "Hinglish"}
    sort = str(ps.value("sort"))
    col = SORTS[sort]
    if sort in ("overall", "en", "hinglish") and col not in board.columns:
        col = f"{group[lang]} Mean Δ%"
    if sort.startswith("v10") and col not in board.columns:
        col = next((c for c in board.columns if c.endswith("V@10 %")), f"{group[lang]} Mean Δ%")
    board = tables.sort_frame(board, col, ps.value("order") == "desc")

    ui.source_legend([k for k in vocab.SOURCE_KINDS if k in kinds])
    scope = (f"{vocab.TASK_LABELS[task]} · {vocab.AXIS_LABELS[axis]} · "
             f"{ {'all': 'English + Hinglish', **vocab.LANGUAGE_LABELS}[lang] }")
    n_pub = int((board["Source type"] == vocab.SOURCE_LABELS["published"]).sum())
    n_comp = int((board["Source type"] == vocab.SOURCE_LABELS["computed"]).sum())
    n_empty = int(board[[c for c in board.columns if c.endswith("Mean Δ%")][0]].isna().sum())
    ui.explain(
        f"**{scope}.** {len(board)} rows: {n_pub} published, {n_comp} computed. "
        + (f"{n_empty} row(s) have no number for this cell — kept in the table, with the reason "
           "in *Coverage*. " if n_empty else "")
        + ("The paper publishes only the pooled Table 2 cell and the per-axis cells of Tables "
           "3/4 (pooled over use cases, per language); other cells exist only for computed "
           "models. " if "published" in kinds else "")
        + (f"{hidden} alternative published transcription row(s) (the paper's 1-dp Table 2) are "
           "set aside in favour of the authors' 2-dp README version. " if hidden else "")
        + "Lower Mean Δ% is better. Sorted by " + col + (" (highest first)." if
                                                         ps.value("order") == "desc" else
                                                         " (lowest first)."))
    if board.empty:
        ui.no_rows("models")
    else:
        ui.table(board, f"rupeebias leaderboard {task} {axis} {lang}", f"{PAGE}-board")

    # ---- chart: Mean Δ% with CI per model ----------------------------------------------------
    st.markdown("**Mean Δ% with 95% confidence intervals**")
    ui.explain("Mean Δ% = the average % difference between the answers for two identities that "
               "differ only in that identity. Whiskers are 95% confidence intervals; a dot "
               "without whiskers means the source did not report an interval.")
    long = []
    for rec in cells.itertuples(index=False):
        if lang != "all" and rec.language != lang:
            continue
        if pd.isna(rec.mean_delta):
            continue
        label = labels.get(rec.model, rec.model)
        long.append({"Model": f"{label} · {vocab.SOURCE_LABELS[rec.source_kind]}",
                     "Language": group.get(rec.language, rec.language),
                     "Mean Δ%": rec.mean_delta, "CI low": rec.mean_delta_lo,
                     "CI high": rec.mean_delta_hi, "Source": rec.source,
                     "Model ID": rec.model})
    chart_df = pd.DataFrame(long, columns=["Model", "Language", "Mean Δ%", "CI low", "CI high",
                                           "Source", "Model ID"])
    if chart_df.empty:
        ui.no_rows("Mean Δ% values to chart")
    else:
        order = list(dict.fromkeys(
            f"{m} · {k}" for m, k in zip(board["Model"], board["Source type"], strict=True)))
        spec = charts.ci_dots(chart_df, x="Mean Δ%", lo="CI low", hi="CI high", y="Model",
                              color="Language", y_order=order, x_title="Mean Δ% (lower is better)",
                              color_scale=charts.language_scale(),
                              tooltip=("Source",))
        ui.chart(spec, chart_df, f"mean delta {task} {axis}", f"{PAGE}-ci",
                 alt_text="Dot plot of Mean Δ% per model with 95% confidence intervals.")

st.divider()
ui.permalink(ps.link())
