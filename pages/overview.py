"""Overview: what RupeeBias measures, the headline finding, and the leaderboard."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import charts, data, filters, sentences, tables, ui, vocab
from explorer.leaderboard import Lane, lanes
from explorer.state import PageState, Param

PAGE = "overview"
SORTS = {"overall": "Overall Mean Δ%", "en": "English Mean Δ%", "hinglish": "Hinglish Mean Δ%",
         "v10_en": "English V@10 %", "v10_hinglish": "Hinglish V@10 %", "model": "Model"}
PRESETS = {
    "Paper headline (Table 2)": {"lang": "all", "task": "all", "axis": "all"},
    "Caste only · Hinglish": {"lang": "hinglish", "task": "all", "axis": "Caste"},
    "Gender only · English": {"lang": "en", "task": "all", "axis": "Gender"},
    "Urban/Rural · both languages": {"lang": "all", "task": "all", "axis": "Urban/Rural"},
    "Counter-offer advice (computed models)": {"lang": "all",
                                               "task": "counter_offer_recommendation",
                                               "axis": "all", "method": "corrected"},
}

ui.page_header(
    "RupeeBias Explorer",
    "**What it measures.** RupeeBias asks a language model the same money question — what "
    "salary to expect, what raise to target, what counter-offer to make, what price to quote — "
    "in prompts that are identical except for one stated identity (for example *I am Hindu* vs "
    "*I am Muslim*, or *I am from a village* vs *a Tier 1 city*). "
    "It covers 87 identities on six axes (religion, caste, region, gender, disability, "
    "urban/rural), five use cases and both English and Hinglish: "
    f"{vocab.STANDARD_PROMPTS:,} prompts per model. "
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
    for name in ("lang", "task", "axis", "method"):  # a preset is a whole view
        ps.set(name, PRESETS[preset].get(name, ps.params[name].default))


# ---- headline --------------------------------------------------------------------------------
with ui.guard("The headline"):
    # data.present: a broken leaderboard file is reported, never silently replaced by delta.
    pub = data.rows("leaderboard" if data.present("leaderboard") else "delta", task="all",
                    axis="all", language="all", source_kind="published", method="upstream")
    pub, _ = tables.prefer_published(pub, ["model", "language"])
    head = tables.headline(pub)
    if head is not None:
        value, n = head
        per_model = pub[pub["mean_delta"].notna()].groupby("model")["mean_delta"].mean()
        top = str(per_model.idxmax())
        top_notes = " ".join(pub.loc[pub["model"] == top, "note"].dropna().astype(str)) \
            if "note" in pub else ""
        top_label = (str(pub.loc[pub["model"] == top, "label"].dropna().iloc[0])
                     if "label" in pub and pub.loc[pub["model"] == top, "label"].notna().any()
                     else top)
        partial = (f" ({top_label}'s figure pools 4 of the 5 use cases)"
                   if "pools 4 of 5 use cases" in top_notes else "")
        c1, c2 = st.columns([1, 3])
        c1.metric(f"Average gap, {n} paper models", f"{value:.1f}%",
                  help="Unweighted mean of the Overall Mean Δ% of each model (paper Table 2). "
                       "The paper gives no interval for this average.")
        with c2:
            st.badge("Published (paper)", color="blue", help=ui.HELP["Source"])
            st.markdown(
                f"**Headline finding (published).** For prompts that differ only in the stated "
                f"identity, the {n} models' answers differ by **{value:.1f}%** on average — the "
                f"models range from {per_model.min():.1f}% to {per_model.max():.1f}%{partial}; "
                "the paper "
                "gives no interval for the average and no noise floor, so it cannot say how "
                "much of the gap is a consistent identity effect rather than answer-to-answer "
                "jitter. " + ui.NO_DIRECTION + " Source: "
                + ", ".join(sorted(set(pub["source"]))) + ".")
    else:
        st.info("The paper's Table 2 is not in this data directory, so the published headline "
                "(20.2% on average) cannot be shown from data.")

# ---- controls --------------------------------------------------------------------------------
filters.draw_common(ps, models)
st.subheader("Leaderboard")
ui.jargon("Mean Δ%", "V@10", "CI")
st.caption("Presets")
with st.container(horizontal=True):  # each button as wide as its name: none is cut short
    for name in PRESETS:
        st.button(name, on_click=_apply, args=(name,), key=f"{PAGE}.preset.{name}")


def _body() -> None:
    """The leaderboard's filters and the leaderboard (a fragment: see ui.page_body)."""
    c1, c2, c3, c4 = st.columns([1.1, 1.3, 1.1, 1.7])
    c1.selectbox("Language", filters.LANG_OPTIONS, key=ps.key("lang"),
                 format_func=ui.label_func({"all": "Both (side by side)", **vocab.LANGUAGE_LABELS}))
    c2.selectbox("Use case", filters.TASK_OPTIONS, key=ps.key("task"),
                 format_func=ui.label_func(vocab.TASK_LABELS))
    c3.selectbox("Axis", filters.AXIS_OPTIONS, key=ps.key("axis"),
                 format_func=ui.label_func(vocab.AXIS_LABELS))
    _lang_now = str(ps.value("lang"))
    # The sort box must name the column the table is sorted by: with one language chosen, a
    # "Mean Δ%" or "V@10" sort means that language's column.
    _sort_now = str(ps.value("sort"))
    if _lang_now != "all" and _sort_now in ("overall", "en", "hinglish") and _sort_now != _lang_now:
        ps.set("sort", _lang_now)
    if _lang_now != "all" and _sort_now.startswith("v10_") and _sort_now != f"v10_{_lang_now}":
        ps.set("sort", f"v10_{_lang_now}")
    with c4:
        s1, s2 = st.columns([1.4, 1])
        s1.selectbox("Sort by", tuple(SORTS), key=ps.key("sort"), format_func=SORTS.get)
        s2.selectbox("Order", ("asc", "desc"), key=ps.key("order"),
                     format_func={"asc": "Lowest first", "desc": "Highest first"}.get)
    sel_models, kinds, method, labels = filters.settle(ps, models)
    lang, task, axis = str(ps.value("lang")), str(ps.value("task")), str(ps.value("axis"))
    scope = (f"{vocab.TASK_LABELS[task]} · {vocab.AXIS_LABELS[axis]} · "
             f"{ {'all': 'English + Hinglish', **vocab.LANGUAGE_LABELS}[lang] }")


    def _sort_column(board: pd.DataFrame) -> tuple[str, str]:
        """The column this lane is sorted by, and a note when the chosen one has no value here."""
        want = SORTS[str(ps.value("sort"))]
        if want in board.columns:
            return want, ""
        values = [c for c in board.columns if c.endswith("Mean Δ%")]
        if str(ps.value("sort")).startswith("v10"):
            values = [c for c in board.columns if c.endswith("V@10 %")] or values
        if not values:
            return "Model", ""
        return values[0], f" ({want} is not available for this cell)"


    def _lane(kind: str, view: Lane, hidden: int, note: str = "") -> None:
        method, board, dropped, sub = view.method, view.board, view.dropped, view.sub
        col, why = _sort_column(board)
        board = tables.sort_frame(board, col, ps.value("order") == "desc")
        values = [c for c in board.columns if c.endswith("Mean Δ%")]
        n_empty = int(board[values[0]].isna().sum()) if values else len(board)
        ui.lane(kind)
        if note:
            ui.explain(note)
        if board.empty:
            ui.no_rows("models")
            return
        dropped = [c for c in dropped if c.endswith(("Mean Δ%", "V@10 %"))]
        if kind == "published" and dropped:
            st.caption("Not published for this cell: " + ", ".join(dropped)
                + ". The paper publishes the pooled Table 2 cell and, per axis, English and "
                  "Hinglish separately (Tables 3/4); nothing per use case.")
        if kind == "published" and not values:
            st.info("The paper publishes no number for this cell (it has no per-use-case numbers). "
                    "Only models computed here could answer it — see below.",
                    icon=":material/info:")
            ui.table(board, f"rupeebias leaderboard {kind} {method} {task} {axis} {lang}",
                     f"{PAGE}-board-{kind}")  # the rows stay, with the reason in Coverage
            return
        masked = board[board["Coverage"].astype(str).str.startswith("not a gap")]
        if kind == "computed" and len(masked):
            ui.sentence(
                f"Under the authors' method, {', '.join(masked['Model'])}: this cell pools "
                "counter-offer answers compared as markups, whose relative 'gap' is not a distance "
                "between answers (it can even be negative), so no gap is shown. Choose *Corrected "
                "method* under Method in the sidebar for a gap that means what it says.")
        # The plain sentence: the largest gap in this lane, with its interval and caveat.
        if values:
            vcol = values[0]
            ranked = board[board[vcol].notna()]
            if len(ranked):
                top = ranked.loc[ranked[vcol].idxmax()]
                group_name = vcol.removesuffix(" Mean Δ%")
                lang_code = {v: k for k, v in vocab.GROUP_LABELS.items()}.get(group_name, lang)
                text = sentences.gap(str(top["Model"]), top[vcol], top.get(f"{group_name} CI low"),
                                     top.get(f"{group_name} CI high"), lang=lang_code, task=task,
                                     axis=axis, published=kind == "published", method=method)
                if kind == "published":
                    text += " " + sentences.spread(ranked[vcol], ranked["Model"])
                else:
                    text += " " + _decomposition_sentence(str(top["Model ID"]), str(top["Model"]),
                                                          lang_code, method)
                ui.sentence(text)
            if kind == "computed" and len(ranked):
                ui.thin_data(list(ranked["Model ID"]), method, lang, task,
                             dict(zip(ranked["Model ID"], ranked["Model"], strict=True)),
                             "its Mean Δ% rests")
        ui.explain(
            f"**{scope}.** {len(board)} row(s)"
            + (f"; {n_empty} without a number for this cell (reason in *Coverage*)" if n_empty
               else "")
            + ". "
            + (f"{hidden} alternative published transcription row(s) (the paper's 1-dp Table 2) "
               f"are set aside in favour of the authors' 2-dp README version. "
               if hidden and kind == "published" else "")
            + "Lower Mean Δ% = smaller gaps. Sorted by " + col + why
            + (" (highest first)." if ps.value("order") == "desc" else " (lowest first)."))
        if kind == "published":
            ui.paper_ci_caveat()
        ui.table(board, f"rupeebias leaderboard {kind} {method} {task} {axis} {lang}",
                 f"{PAGE}-board-{kind}")
        _chart(kind, view.chart, sub, board, method)


    def _decomposition_sentence(model: str, label: str, lang_code: str, method: str) -> str:
        try:
            dec = data.rows("gap_decomposition", model=model, method=method, language=lang_code,
                            task=task, axis=axis)
        except data.DataUnavailable:
            return ("Whether this gap is more than noise is not computed in this deployment yet.")
        row = dec.iloc[0] if len(dec) else None
        return sentences.decomposition(label, row, lang=lang_code, task=task, axis=axis,
                                       lead=False).strip()


    def _chart(kind: str, chart_df: pd.DataFrame, sub: pd.DataFrame, board: pd.DataFrame,
               method: str) -> None:
        if chart_df.empty:
            return
        order = list(dict.fromkeys(board["Model"]))
        spec = charts.spec(
            charts.ci_dots, chart_df, x="Mean Δ%", lo="CI low", hi="CI high", y="Model",
            color="Language", y_order=order, x_title="Mean Δ% (lower = smaller gaps)",
            color_scale=charts.language_scale(chart_df["Language"]), tooltip=("Source",))
        note = charts.clip_note(charts.ci_limits(chart_df, "Mean Δ%", "CI low", "CI high"),
                                chart_df, "Mean Δ%", ("CI low", "CI high"))
        if note:
            ui.explain(note)
        ui.chart(spec, chart_df, f"mean delta {kind} {method} {task} {axis}",
                 f"{PAGE}-ci-{kind}",
                 alt_text=f"Dot plot of Mean Δ% per {kind} model with 95% confidence intervals.",
                 title=f"Mean Δ% with 95 % CI — {vocab.SOURCE_LABELS[kind]}",
                 subtitle=ui.scope(scope, vocab.METHOD_LABELS[method],
                                   "published intervals too narrow (§4.11)"
                                   if kind == "published" else
                                   "pair interval, too narrow (§4.11)" if method == "upstream"
                                   else "profile interval"),
                 source=ui.source_line(sub.assign(n_pairs=sub.get("n_pairs")), labels))


    # ---- leaderboard: one lane per source, never ranked together ---------------------------------
    with ui.guard("The leaderboard"):
        views, hidden = lanes(data.current(), method, task, axis, lang, tuple(sel_models),
                              tuple(kinds))
        if not kinds:
            ui.no_rows("models (no source chosen)")
        for kind, view in views.items():
            _lane(kind, view, hidden, tables.CORRECTED_LANE_NOTE
                  if view.method != method else "")

    st.divider()
    ui.permalink(ps.link())


ui.page_body(_body)
