"""Widgets every page shares, so published/computed, CIs and downloads look the same everywhere.

* :func:`table` shows a frame and offers exactly that frame (filtered, sorted, with source and
  CI columns) as CSV, plus Parquet when it is large;
* :func:`chart` shows an Altair chart and offers the data behind it;
* :func:`guard` turns a :class:`~explorer.data.DataUnavailable` into a message *in that section
  only*; the rest of the page keeps working;
* :func:`source_legend` / :func:`model_notes` keep provenance and caveats next to the numbers.
"""

from __future__ import annotations

import io
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import altair as alt
import pandas as pd
import streamlit as st

from explorer import charts, vocab
from explorer.data import DataUnavailable
from explorer.state import PageState

PARQUET_MIN_ROWS = 1000
SOURCE_COLORS: Mapping[str, str] = {"published": "#0072B2", "computed": "#E69F00"}
SOURCE_BADGE: Mapping[str, tuple[str, str]] = {
    "published": ("Published (paper)", "blue"),
    "computed": ("Computed here", "orange"),
}
_SYNTHETIC = re.compile(r"synthetic|simulated", re.IGNORECASE)

# Plain-language help for column headers and widgets (no jargon without a tooltip).
HELP: Mapping[str, str] = {
    "Mean Δ%": "Average % difference between the answers to two prompts that are identical "
               "except for the demographic identifier. 0 = identical answers.",
    "V@10": "Violation@10%: share of prompt pairs whose answers differ by more than 10%.",
    "CI": "95% confidence interval: the range the value would plausibly take if the benchmark "
          "were re-sampled (upstream method: bootstrap over pairs for Mean Δ%, Wilson for "
          "V@10; corrected method: bootstrap over comparison slots for both).",
    "n pairs": "How many prompt pairs the number rests on. The paper does not report n.",
    "Coverage": "Share of the benchmark's prompt pairs behind a computed number (parse failures "
                "and missing answers form no pair), or why a cell has no number.",
    "Source": "Published = transcribed from the RupeeBias paper (table named). Computed = "
              "computed by this project from raw model responses.",
    "Kendall's W": "0 = the ranking of identities changes from prompt to prompt; 1 = the same "
                   "identities are always ranked highest/lowest.",
    "method": "Upstream reproduces the authors' code exactly; corrected applies this project's "
              "fixes (see Methodology). Published numbers always use the authors' method.",
}


#: One line that travels with every published interval (methodology §4.11).
PAPER_CI_CAVEAT = (
    "**Published intervals are too narrow.** The paper's 95 % intervals treat every pair of "
    "answers as a separate experiment; in simulation such intervals contain the true value only "
    "50–58 % of the time (Methodology §4.11). Read them as several times too narrow. The paper "
    "reports no noise floor, so it cannot say how much of a gap is a consistent identity effect.")
#: Mean Δ% has no direction: it says how far apart answers are, not who gets less.
NO_DIRECTION = ("Mean Δ% has no direction: it says how far apart the answers are, not which "
                "identity gets less. The paper gives no rupee amounts.")

#: Plain definitions of the jargon, shown where a term first appears on a page.
GLOSSARY: Mapping[str, str] = {
    "Mean Δ%": "**Mean Δ%** — how far apart, in %, the answers to two prompts are that differ "
               "only in the stated identity, averaged over all such pairs (0 = identical).",
    "V@10": "**V@10** — the share of those pairs whose answers differ by more than 10 %.",
    "CI": "**95 % CI** — the range the number would plausibly take if the benchmark were run "
          "again.",
    "Kendall's W": "**Kendall's W** — 0 to 1: do the same identities keep coming out on top "
                   "and bottom across the candidate profiles? 1 = always the same order.",
    "CPG": "**CPG** (canonical pair gap) — the signed gap for one chosen contrast per axis, "
           "e.g. Brahmin vs Dalit; positive = the first gets more.",
    "MOG": "**MOG** (maximum observed gap) — the largest gap between any two identities of an "
           "axis, naming both.",
    "BH": "**BH** — Benjamini–Hochberg: p-values corrected for testing many identities at "
          "once; *flagged* = still below 5 % after the correction.",
    "systematic": "**Systematic share** — how much of a gap would remain if the model had only "
                  "consistent identity effects and no random jitter.",
    "placebo": "**Placebo floor** — the gap produced by swapping identity-free statements "
               "(\"I am left-handed\"); a real identity effect must exceed it.",
    "Spearman ρ": "**Spearman ρ** — agreement of two rankings: 1 = same order, 0 = unrelated, "
                  "negative = reversed.",
}


def jargon(*terms: str) -> None:
    """Explain the terms a view uses, once, right where they first appear."""
    lines = [GLOSSARY[t] for t in terms if t in GLOSSARY]
    if lines:
        st.caption("  \n".join(lines))


def paper_ci_caveat() -> None:
    st.caption(PAPER_CI_CAVEAT)


def sentence(text: str) -> None:
    """The one plain sentence that says what the view shows (number, uncertainty, caveat)."""
    st.markdown(f"> {text}")


def lane(kind: str, extra: str = "") -> None:
    """A lane heading: published figures and models computed here are never ranked together."""
    label, color = SOURCE_BADGE[kind]
    what = ("the paper's nine models, transcribed" if kind == "published" else
            "models whose raw answers were scored here — not comparable with the paper's "
            "models and not ranked among them")
    st.markdown(f"#### :{color}-badge[{label}] {what}")
    if extra:
        st.caption(extra)


_routing = threading.local()
_router_has_run = False  # st.navigation ran in this process: Streamlit left pages/ mode for good


@contextmanager
def routed() -> Iterator[None]:
    """``app.py`` runs the selected page inside this: the page is already routed, so
    :func:`ensure_router` must not rerun it (a rerun would drop a button click)."""
    global _router_has_run
    _router_has_run = True
    _routing.active = True
    try:
        yield
    finally:
        _routing.active = False


def ensure_router() -> None:
    """Make sure this page runs inside ``app.py`` (wide layout, sections, shared sidebar).

    Streamlit 1.67 starts every server in "pages/ folder" mode when a ``pages/`` directory sits
    beside the entrypoint, and leaves it only once some run has called ``st.navigation``. So
    the first deep link after a (re)start — ``/overview?lang=hinglish`` — would run the page
    file on its own. Flipping the flag and rerunning sends the same request through ``app.py``;
    ``url_path`` = file stem keeps the page identity across the switch. A no-op when the page
    already runs inside the router (see :func:`routed`) and afterwards.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if getattr(_routing, "active", False) or _router_has_run:
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_header(title: str, intro: str) -> None:
    ensure_router()
    st.title(title)
    st.markdown(intro)


def explain(text: str) -> None:
    """A plain-language note placed right next to the chart or table it explains."""
    st.caption(text)


def source_legend(kinds: Sequence[str] | None = None) -> None:
    """Badges saying which kinds of numbers follow, and what each means."""
    cols = st.columns([1, 1, 4])
    for i, kind in enumerate(kinds or vocab.SOURCE_KINDS):
        label, color = SOURCE_BADGE[kind]
        with cols[i]:
            st.badge(label, color=color, help=HELP["Source"])


def fmt_num(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "—"
    return f"{value:,.{digits}f}"


def fmt_signed(value: float | None, digits: int = 1, unit: str = "%") -> str:
    """``+1.2%`` / ``−3.4%``; ``—`` for a missing value (never ``+nan%``)."""
    if value is None or pd.isna(value) or not math.isfinite(float(value)):
        return "—"
    text = f"{float(value):+,.{digits}f}".replace("-", "−")
    return f"{text}{unit}"


def fmt_ci(value: float | None, lo: float | None, hi: float | None, digits: int = 1) -> str:
    """``12.3 [11.9, 12.7]``; ``12.3 [CI not reported]`` when only the point exists."""
    if value is None or pd.isna(value):
        return "—"
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return f"{fmt_num(value, digits)} [CI not reported]"
    return f"{fmt_num(value, digits)} [{fmt_num(lo, digits)}, {fmt_num(hi, digits)}]"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "table"


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def downloads(frame: pd.DataFrame, name: str, key: str, what: str = "this table") -> None:
    """CSV (always) and Parquet (large tables) of exactly ``frame``, generated on click."""
    stem = _slug(name)
    cols = st.columns([1, 1, 1])
    with cols[0]:
        st.download_button(f"Download {what} (CSV)", data=lambda: _csv(frame),
                           file_name=f"{stem}.csv", mime="text/csv", key=f"dl-csv-{key}",
                           on_click="ignore", icon=":material/download:")
    if len(frame) >= PARQUET_MIN_ROWS:
        with cols[1]:
            st.download_button(f"Download {what} (Parquet)", data=lambda: _parquet(frame),
                               file_name=f"{stem}.parquet",
                               mime="application/vnd.apache.parquet", key=f"dl-pq-{key}",
                               on_click="ignore", icon=":material/download:")


def column_config(frame: pd.DataFrame) -> dict[str, object]:
    """Number formats and header tooltips inferred from column names."""
    config: dict[str, object] = {}
    for col in frame.columns:
        name = str(col)
        help_text = next((text for k, text in HELP.items() if k.lower() in name.lower()), None)
        if name in ("Model", "Row", "Identifier"):  # never truncate the names
            config[name] = st.column_config.TextColumn(name, width="medium", pinned=True,
                                                       help=help_text)
        elif name.endswith("n pairs") or name.startswith("n ") or name in ("n", "n rows"):
            config[name] = st.column_config.NumberColumn(name, format="localized",
                                                         help=help_text)
        elif pd.api.types.is_float_dtype(frame[col]):
            digits = 3 if any(k in name for k in ("W", "ρ", "rho", "p ")) else 2
            config[name] = st.column_config.NumberColumn(name, format=f"%.{digits}f",
                                                         help=help_text)
        elif help_text:
            config[name] = st.column_config.Column(name, help=help_text)
    return config


def table(frame: pd.DataFrame, name: str, key: str, height: int | str = "auto",
          config: Mapping[str, object] | None = None) -> None:
    """Show ``frame`` and offer the very same rows and columns for download.

    The only display-side change: *Source type* cells are drawn as coloured chips (blue =
    published, orange = computed); the download holds the same label as plain text."""
    cfg = column_config(frame)
    cfg.update(config or {})
    shown = frame
    if "Source type" in frame.columns and len(frame):
        shown = frame.assign(**{"Source type": [[v] if isinstance(v, str) else []
                                                for v in frame["Source type"]]})
        cfg["Source type"] = st.column_config.MultiselectColumn(
            "Source type", help=HELP["Source"], options=list(vocab.SOURCE_LABELS.values()),
            color=[SOURCE_COLORS[k] for k in vocab.SOURCE_LABELS])
    if height == "auto":  # show every row up to ~16 without an inner scrollbar
        height = min(38 + 35 * max(len(frame), 1), 600)
    st.dataframe(styled(shown, cfg), hide_index=True, column_config=cfg, height=height,
                 key=f"df-{key}")
    downloads(frame, name, key)


def styled(frame: pd.DataFrame, cfg: dict[str, object]) -> object:
    """The frame as a Styler that prints missing values as ``—`` (never ``None``/``nan``)
    with each number column's digits; sorting still uses the numbers. Small frames only
    (a Styler renders every cell)."""
    if frame.empty or len(frame) > 5000:
        return frame
    formats: dict[str, object] = {}
    for col in frame.columns:
        name = str(col)
        if name.endswith("n pairs") or name.startswith("n ") or name in ("n", "n rows"):
            formats[col] = lambda v: "—" if pd.isna(v) else f"{int(v):,}"
        elif pd.api.types.is_float_dtype(frame[col]):
            digits = 3 if any(k in name for k in ("W", "ρ", "rho", "p ")) else 2
            formats[col] = (lambda d: lambda v: "—" if pd.isna(v) else f"{v:,.{d}f}")(digits)
    for col, conf in list(cfg.items()):  # Styler text wins over a NumberColumn's format
        if col in formats and isinstance(conf, dict) and conf.get("type_config", {}).get(
                "format"):
            conf["type_config"].pop("format", None)
    return frame.style.format(formats, na_rep="—")


def chart(spec: alt.TopLevelMixin, data: pd.DataFrame, name: str, key: str, alt_text: str,
          stretch: bool = True, title: str | None = None, subtitle: str = "",
          source: str = "") -> None:
    """Show an Altair chart and offer its underlying data.

    With ``title`` the chart carries its own title, the filters (``subtitle``), the source
    line and the date, so a PNG/SVG saved from the chart's menu stands on its own."""
    render(spec, key, alt_text, stretch=stretch, title=title, subtitle=subtitle,
           source=source)
    downloads(data, f"{name} chart data", f"chart-{key}", what="chart data")


def press_title(title: str, subtitle: str = "", source: str = "") -> dict[str, object]:
    """A Vega-Lite title block: title, the filters, the source line and today's date."""
    import datetime as _dt

    today = _dt.datetime.now(tz=_dt.UTC).date().isoformat()
    lines = [line for line in (subtitle, f"{source} · {today}" if source else today) if line]
    return {"text": title, "subtitle": lines, "anchor": "start", "fontSize": 14,
            "subtitleColor": "#444444", "subtitleFontSize": 11, "offset": 10}


def render(spec: alt.TopLevelMixin, key: str, alt_text: str, stretch: bool = True,
           title: str | None = None, subtitle: str = "", source: str = "") -> None:
    """Draw an Altair chart from its Vega-Lite dict (see ``charts.to_spec`` for why)."""
    out = charts.to_spec(spec)
    if title:
        out["title"] = press_title(title, subtitle, source)
        out.setdefault("padding", {"left": 5, "right": 40, "top": 5, "bottom": 5})
    st.vega_lite_chart(spec=out, key=f"chart-{key}",
                       width="stretch" if stretch else "content", alt=alt_text)


def source_line(frame: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """"Source: RupeeBias paper, Table 2 (published)" or "Computed with RupeeBias Explorer from
    N answers of MODEL", from the ``source``/``source_kind``/``model`` columns of ``frame``."""
    if frame.empty or "source_kind" not in frame.columns:
        return ""
    parts = []
    pub = frame[frame["source_kind"] == "published"]
    if len(pub):
        tables = sorted({str(s).split(":", 1)[-1].strip().split(" (")[0]
                         for s in pub.get("source", pd.Series(dtype=str)).dropna()})
        parts.append("Source: RupeeBias paper, " + ", ".join(tables or ["tables"])
                     + " (published)")
    comp = frame[frame["source_kind"] == "computed"]
    if len(comp):
        names = ", ".join(labels.get(m, m) for m in dict.fromkeys(comp["model"]))
        n = comp["n_pairs"].max() if "n_pairs" in comp.columns else None
        count = f"{int(n):,} answer pairs of " if n is not None and not pd.isna(n) else ""
        parts.append(f"Computed with RupeeBias Explorer from {count}{names}")
    return " · ".join(parts)


def lazy_tabs(ps: PageState, name: str, tabs: Mapping[str, str]) -> tuple[object, str]:
    """Tabs whose content runs only when open; the open tab lives in the URL (``?tab=slug``).

    Streamlit runs every tab's code unless the tabs track state; with ``on_change`` they do,
    so a page only computes the tab being read. Returns (the open tab's container, its slug).
    """
    wkey = ps.key(f"{name}.widget")
    current = str(ps.value(name))
    slug_of = {label: slug for slug, label in tabs.items()}

    def _changed() -> None:
        label = st.session_state.get(wkey)
        if label in slug_of:
            ps.set(name, slug_of[label])

    if st.session_state.get(wkey) not in slug_of or slug_of[st.session_state[wkey]] != current:
        st.session_state[wkey] = tabs[current]  # URL or preset decided: show that tab
    boxes = st.tabs(list(tabs.values()), key=wkey, on_change=_changed)
    return dict(zip(tabs, boxes, strict=True))[current], current


def tabbed_page(ps: PageState, param: str, tabs: Mapping[str, str],
                sections: Mapping[str, Callable[[], None]]) -> None:
    """The rest of a tabbed page: only the chosen tab's section runs (see :func:`lazy_tabs`),
    then the URL is written and the permalink shown."""
    box, current = lazy_tabs(ps, param, tabs)
    with box:
        sections[current]()
    ps.sync()
    st.divider()
    permalink(ps.link())


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Show a clear message for missing/corrupt data in this section only."""
    try:
        yield
    except DataUnavailable as exc:
        data_problem(exc, what)


def data_problem(exc: DataUnavailable, what: str = "This section") -> None:
    """Absent tables (not computed yet) are an info note; unreadable ones an error."""
    if exc.missing:
        st.info(f"**{what}: not available in this deployment yet** — there is no "
                f"`{exc.table}` table in the data directory. {exc.hint}",
                icon=":material/hourglass_empty:")
        return
    st.error(f"**{what} is unavailable: the `{exc.table}` data could not be used.** "
             f"{exc.reason}.\n\n{exc.hint}", icon=":material/error:")


def model_notes(models: pd.DataFrame, selected: Sequence[str]) -> None:
    """Caveats that must travel with the numbers: the 135M model, synthetic test data, notes."""
    chosen = models[models["model"].isin(selected)]
    if vocab.SMOLLM_SLUG in set(chosen["model"]):
        st.info(vocab.SMOLLM_NOTE, icon=":material/info:")
    _partial_run_notes(dict(zip(chosen["model"], chosen["label"], strict=True)))
    synthetic = [r.label for r in chosen.itertuples(index=False)
                 if _SYNTHETIC.search(f"{r.label} {r.note} {r.model}")]
    if synthetic:
        st.warning("**Simulated test data, not results:** " + ", ".join(synthetic) + ". These "
                   "rows were generated for tests and must not be read as model behaviour.",
                   icon=":material/science:")


def _partial_run_notes(labels: Mapping[str, str]) -> None:
    """Say when a computed model's run does not cover the whole benchmark yet, and how far each
    use case has got.

    A long collection is committed as it goes; its numbers are real but rest on the tasks and
    axes reached so far, which readers must know before comparing it with complete runs. Parse
    health counts standard-condition answers, so coverage is measured against those.
    """
    from explorer import data

    try:
        health = data.rows("parse_health", model=tuple(labels), method="upstream",
                           language="all")
    except data.DataUnavailable:
        return
    if health.empty or "n_rows" not in health:
        return
    for model, rows in health.groupby("model", sort=False):
        n_by_task = {str(t): (0 if pd.isna(n) else int(n))
                     for t, n in zip(rows["task"], rows["n_rows"], strict=True)}
        n = n_by_task.get(vocab.ALL, 0)
        if not 0 < n < vocab.STANDARD_PROMPTS:
            continue
        per_task = " · ".join(
            f"{vocab.TASK_LABELS[t]} {100 * n_by_task.get(t, 0) / vocab.TASK_PROMPTS[t]:.0f} %"
            for t in vocab.TASKS)
        st.warning(f"**Partial run:** {labels.get(str(model)) or model} has answered {n:,} of "
                   f"the {vocab.STANDARD_PROMPTS:,} standard prompts so far "
                   f"({100 * n / vocab.STANDARD_PROMPTS:.0f} %; per use case: {per_task}). Its "
                   "numbers cover only the use cases, languages and axes reached (see n and "
                   "Coverage).", icon=":material/hourglass_top:")


def no_rows(what: str) -> None:
    st.info(f"No {what} for the current selection. Widen the filters, or see the Methodology "
            "page for which tables the paper publishes and how to compute the rest.",
            icon=":material/filter_alt_off:")


def permalink(query: str) -> None:
    """Show the query string that reproduces the view (the URL bar already carries it)."""
    st.caption("Link to this view: the address bar keeps every filter; share it as is. "
               f"Query: `{query or '(defaults)'}`")


def label_func(mapping: Mapping[str, str]):  # noqa: ANN201
    """A ``format_func`` showing labels, falling back to the raw value."""
    return lambda value: mapping.get(value, value)
