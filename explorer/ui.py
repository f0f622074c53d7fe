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
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.elements.lib.column_types import ColumnConfig

from explorer import charts, data, export, heat, sentences, tables, vocab
from explorer.data import DataUnavailable
from explorer.numbers import MISSING
from explorer.state import PageState
from rupeebias_core import registry

PARQUET_MIN_ROWS = 1000
#: The badge colours Streamlit offers that the source badges use.
BadgeColor = Literal["blue", "orange"]
SOURCE_BADGE: Mapping[str, tuple[str, BadgeColor]] = {
    "published": ("Published (paper)", "blue"),
    "computed": ("Computed here", "orange"),
}
_SYNTHETIC = re.compile(r"synthetic|simulated", re.IGNORECASE)

#: Plain-language help for column headers and widgets (no jargon without a tooltip): header ->
#: description, exactly as the table registry declares each column (label or alias).
HELP: Mapping[str, str] = registry.HEADER_HELP


def column_help(column: str, table: str = "") -> str:
    """The description of a stored (or explorer-derived) column, e.g. for a widget's help."""
    if column in registry.DERIVED:
        return registry.DERIVED[column].description
    return registry.column_info(table, column).description


def header_help(header: str) -> str | None:
    """The tooltip of a column header: the registry column it names exactly, or, for the
    per-language columns (``English Mean Δ%``), the column after the group name."""
    if header in HELP:
        return HELP[header]
    group, _, rest = header.partition(" ")
    return HELP.get(rest) if group in vocab.GROUP_LABELS.values() else None


#: One line that travels with every published interval (methodology §4.11).
PAPER_CI_CAVEAT = (
    "**Published intervals are too narrow.** The paper's 95 % intervals treat every pair of "
    "answers as a separate experiment; in simulation such intervals contain the true value only "
    f"{registry.PAIR_INTERVAL_COVERAGE} of the time (Methodology §4.11). Read them as several "
    "times too narrow. The paper "
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


def page_body(draw: Callable[[], None]) -> None:
    """Run ``draw`` — a page's own controls and the content they steer — as a fragment.

    Why: a change of one of those controls then reruns only this part, not the router, the
    sidebar and the header (issue 17 item 9: a filter change in ≤ 0.6 s). A sidebar filter
    still reruns the whole page, fragment included, so anything a control inside sets must
    be drawn inside too. ``PageState.sync`` inside writes the URL, so the view stays
    linkable."""
    st.fragment(draw)()


def page_header(title: str, intro: str) -> None:
    ensure_router()
    st.title(title)
    st.markdown(intro)


def verbatim(text: str) -> None:
    """Exact text (a prompt, a raw answer) with its line breaks, never read as Markdown.

    ``st.text``, drawn as a monospace block by app.py's style sheet (``stText``). Not
    ``st.code``: its syntax highlighter is a separate bundle that cost 0.4–0.6 s of every
    page load showing one, measured in the browser bench."""
    st.text(text)


def explain(text: str) -> None:
    """A plain-language note placed right next to the chart or table it explains."""
    st.caption(text)


def markup_note(frame: pd.DataFrame, labels: Mapping[str, str], what: str,
                hint: str = "Choose the corrected method (sidebar) to see them.") -> list[str]:
    """Say next to a chart which models' ``what`` were blanked by ``tables.mask_markup``
    (upstream counter-offer markups: not distances between answers); returns those models."""
    names = tables.blanked_models(frame, labels)
    if names:
        st.caption(f"{what} are not shown for {', '.join(names)}: under the authors' method, "
                   "counter-offer answers enter them as markups, which are not distances between "
                   f"answers. {hint}")
    return names


def caveats(frame: pd.DataFrame) -> str:
    """The caveats a chart's data carries into its README: published intervals undercover;
    blank gaps are counter-offer markups under the authors' method."""
    lines = []
    src = frame["Source"] if "Source" in frame else frame.get("source")
    if src is not None and src.astype(str).str.startswith("published").any():
        lines.append(PAPER_CI_CAVEAT.replace("**", ""))
    note = frame.get("note")
    if note is not None and (note == tables.MARKUP_NOTE).any():
        lines.append(f"Blank gaps: {tables.MARKUP_NOTE}.")
    return "\n\n".join(lines)


def clip_caption(frame: pd.DataFrame, x: str, lo: str, hi: str, signed: bool = False) -> None:
    """Say next to a ``charts.ci_dots`` chart which points and intervals it draws cut at its
    edge (the same range the chart computes)."""
    note = charts.clip_note(charts.ci_limits(frame, x, lo, hi, signed), frame, x, (lo, hi))
    if note:
        explain(note)


def source_legend(kinds: Sequence[str] | None = None) -> None:
    """Badges saying which kinds of numbers follow, and what each means."""
    with st.container(horizontal=True):  # one flex row, not a column block per badge
        for kind in kinds or vocab.SOURCE_KINDS:
            label, color = SOURCE_BADGE[kind]
            st.badge(label, color=color, help=column_help("source"))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:120] or "table"


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def downloads(frame: pd.DataFrame, name: str, key: str, what: str = "this table") -> None:
    """CSV (always) and Parquet (large tables) of exactly ``frame``, generated on click."""
    stem = _slug(name)
    with st.container(horizontal=True):  # see chart_downloads
        st.download_button(f"Download {what} (CSV)", data=lambda: _csv(frame),
                           file_name=f"{stem}.csv", mime="text/csv", key=f"dl-csv-{key}",
                           on_click="ignore", icon=":material/download:")
        if len(frame) >= PARQUET_MIN_ROWS:
            st.download_button(f"Download {what} (Parquet)", data=lambda: _parquet(frame),
                               file_name=f"{stem}.parquet",
                               mime="application/vnd.apache.parquet", key=f"dl-pq-{key}",
                               on_click="ignore", icon=":material/download:")


def column_config(frame: pd.DataFrame) -> dict[str, ColumnConfig]:
    """Number formats inferred from column names (thousands separated, a fixed number of
    decimals: 1,234 and 12,345.68); header tooltips from the table registry.

    The formats are the grid's own (printf with ``,``), not a pandas Styler: a Styler renders
    every cell to text on the server on each run, which was a third of a table page's run."""
    config: dict[str, ColumnConfig] = {}
    for col in frame.columns:
        name = str(col)
        help_text = header_help(name)
        if name in NAME_COLUMNS:  # never truncate the names
            config[name] = st.column_config.TextColumn(name, width=name_width(frame[col]),
                                                       pinned=True, help=help_text)
        elif _is_count(name) and pd.api.types.is_numeric_dtype(frame[col]):
            config[name] = st.column_config.NumberColumn(name, format="%,d", help=help_text)
        elif pd.api.types.is_float_dtype(frame[col]):
            config[name] = st.column_config.NumberColumn(
                name, format=f"%,.{_digits(name)}f", help=help_text)
        elif help_text:
            config[name] = st.column_config.Column(name, help=help_text)
    return config


#: Columns that name a table's rows: pinned on the left and as wide as their longest name.
NAME_COLUMNS = ("Model", "Row", "Identifier")
#: A name column's width in px: 200 (Streamlit's "medium") unless a name needs more: 7 px a
#: character (the grid's 14-px font draws ~6) plus the cell's padding, at most 320. At a fixed
#: 200 px "Qwen2.5-Coder-1.5B-Instruct (local)" was cut to "…(loc" in the computed lane.
NAME_MIN_WIDTH, NAME_MAX_WIDTH = 200, 320
NAME_PX_PER_CHAR, NAME_PADDING_PX = 7.0, 28


def name_width(names: pd.Series) -> int:
    """The width of a name column holding ``names``."""
    longest = int(names.astype(str).str.len().max()) if len(names) else 0
    need = math.ceil(longest * NAME_PX_PER_CHAR + NAME_PADDING_PX)
    return min(NAME_MAX_WIDTH, max(NAME_MIN_WIDTH, need))


def _is_count(name: str) -> bool:
    return name.endswith("n pairs") or name.startswith("n ") or name in ("n", "n rows")


#: Headers printed with more digits than their kind's default (as the paper prints them).
DIGITS: Mapping[str, int] = {"PABAK": 4}


def _digits(name: str) -> int:
    """Decimals of a float column: as :data:`DIGITS` says, 3 for W, ρ and p-values, else 2."""
    if name in DIGITS:
        return DIGITS[name]
    return 3 if any(k in name for k in ("W", "ρ", "rho", "p ")) else 2


def table(frame: pd.DataFrame, name: str, key: str, height: int | Literal["auto"] = "auto",
          config: Mapping[str, ColumnConfig] | None = None) -> None:
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
            "Source type", help=column_help("source_kind"),
            options=list(vocab.SOURCE_LABELS.values()),
            color=[vocab.SOURCE_COLORS[k] for k in vocab.SOURCE_LABELS])
    # "auto": show every row up to ~16 without an inner scrollbar
    rows_height = height if isinstance(height, int) else min(38 + 35 * max(len(frame), 1), 600)
    # placeholder: Streamlit draws a missing cell as "None" otherwise
    st.dataframe(shown, hide_index=True, column_config=cfg, height=rows_height,
                 key=f"df-{key}", placeholder=MISSING)
    downloads(frame, name, key)


def chart(spec: dict[str, Any], data: pd.DataFrame, name: str, key: str, alt_text: str,
          *, title: str, subtitle: str, source: str, stretch: bool = True) -> None:
    """Show a chart (its Vega-Lite dict from :func:`charts.spec`) and offer it press-ready,
    with the data behind it.

    The chart carries its own title, the filters (``subtitle``), the source line (see
    :func:`source_line`) and the date, on screen and in the PNG/SVG; the data comes as a ZIP
    of a plain CSV with the same provenance beside it (see :mod:`explorer.export`)."""
    prov = export.provenance(title, subtitle, source)
    out = render(spec, key, alt_text, stretch=stretch, prov=prov)
    chart_downloads(out, data, name, key, prov)


def press_title(title: str, subtitle: str = "", source: str = "") -> dict[str, object]:
    """A Vega-Lite title block: title, the filters, the source line and today's date."""
    return export.title_block(export.provenance(title, subtitle, source))


def render(spec: dict[str, Any], key: str, alt_text: str, stretch: bool = True,
           prov: export.Provenance | None = None) -> dict[str, Any]:
    """Draw a chart from its Vega-Lite dict (from :func:`charts.spec`); with ``prov`` it
    carries the press title block. Returns the spec drawn (before the title)."""
    shown = export.screen_spec(spec, prov, stretch=stretch) if prov else spec
    st.vega_lite_chart(spec=shown, key=f"chart-{key}",
                       width="stretch" if stretch else "content", alt=alt_text)
    return spec


def chart_downloads(spec: Mapping[str, Any], data: pd.DataFrame, name: str, key: str,
                    prov: export.Provenance, chart_menu: bool = True) -> None:
    """PNG and SVG of the chart (title, filters, source, date; nothing clipped) and its data
    as CSV + provenance (ZIP), each made only when clicked.

    One horizontal row, not ``st.columns``: the columns were three more blocks per row for the
    browser to draw on every load (Language shift had fifteen). Without ``vl-convert`` a Vega
    chart's own menu still offers a PNG (``chart_menu``); a heat table has no such menu."""
    stem = _slug(f"{name} chart")
    with st.container(horizontal=True):
        if export.can_render():
            def press() -> dict[str, Any]:  # built only when a reader asks for the image
                return export.press_spec(spec, prov)

            st.download_button("Download chart (PNG)", data=lambda: export.to_png(press()),
                               file_name=f"{stem}.png", mime="image/png",
                               key=f"dl-png-chart-{key}", on_click="ignore",
                               icon=":material/image:",
                               help="Title, filters, source line and date are in the image.")
            st.download_button("Download chart (SVG)", data=lambda: export.to_svg(press()),
                               file_name=f"{stem}.svg", mime="image/svg+xml",
                               key=f"dl-svg-chart-{key}", on_click="ignore",
                               icon=":material/image:",
                               help="Vector image for print; title, filters, source line and "
                                    "date included.")
        elif chart_menu:
            st.caption("PNG: the chart's ⋯ menu → *Download as PNG* (title and source "
                       "included).")
        st.download_button("Download chart data (CSV + source notes, ZIP)",
                           data=lambda: export.data_zip(data, f"{stem}-data", prov,
                                                        header_help, caveats(data)),
                           file_name=f"{stem}-data.zip", mime="application/zip",
                           key=f"dl-zip-chart-{key}", on_click="ignore",
                           icon=":material/download:",
                           help="A plain CSV (header on line 1) with a README and W3C "
                                "CSV-on-the-Web metadata naming the title, filters, source "
                                "and date.")


def heat_table(frame: pd.DataFrame, spec: dict[str, Any], data: pd.DataFrame, name: str,
               key: str, alt_text: str, *, x: str, y: str, value: str, text: str,
               x_order: Sequence[str], y_order: Sequence[str], domain: tuple[float, float],
               legend: str, tips: Sequence[str], title: str, subtitle: str,
               source: str) -> None:
    """A diverging heatmap as a table of coloured cells (:mod:`explorer.heat`), with the
    title block a chart carries and the same downloads: PNG/SVG of ``spec`` (the Vega
    heatmap of the same cells) and ``data`` as CSV + provenance."""
    prov = export.provenance(title, subtitle, source)
    st.html(heat.html_table(frame, x=x, y=y, value=value, text=text, x_order=x_order,
                            y_order=y_order, domain=domain, legend=legend, tips=tips,
                            prov=prov, alt_text=alt_text))
    chart_downloads(spec, data, name, key, prov, chart_menu=False)


def source_line(frame: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """"Source: RupeeBias paper, Table 2 (published)" and/or "Computed with RupeeBias Explorer
    from N answers of MODEL", from the ``source``/``source_kind`` and ``model`` (or ``Model
    ID``) columns of ``frame``. N is the model's standard-condition answers (parse health);
    where that table is absent, the answer pairs the rows rest on. Rows whose gaps
    ``tables.mask_markup`` blanked are not drawn, so they name no source."""
    if "note" in frame.columns:
        frame = frame[(frame["note"] != tables.MARKUP_NOTE).to_numpy(bool)]
    if frame.empty or "source_kind" not in frame.columns:
        return ""
    model_col = "model" if "model" in frame.columns else "Model ID"
    source_col = "source" if "source" in frame.columns else "Source"
    parts = []
    pub = frame[frame["source_kind"] == "published"]
    if len(pub):
        named = sorted({str(s).split(":", 1)[-1].strip().split(" (")[0]
                        for s in pub.get(source_col, pd.Series(dtype=str)).dropna()})
        parts.append("Source: RupeeBias paper, " + ", ".join(named or ["tables"])
                     + " (published)")
    comp = frame[frame["source_kind"] == "computed"]
    if len(comp) and model_col in comp.columns:
        names = [str(m) for m in dict.fromkeys(comp[model_col]) if m != vocab.ALL]
        answers = answer_counts(tuple(names))
        pairs = (comp.groupby(model_col)["n_pairs"].max() if "n_pairs" in comp.columns
                 else pd.Series(dtype=float))
        each = []
        for m in names:
            label = labels.get(m, m)
            if answers.get(m):
                each.append(f"{answers[m]:,} answers of {label}")
            elif m in pairs.index and not pd.isna(pairs[m]):
                each.append(f"{int(pairs[m]):,} answer pairs of {label}")
            else:
                each.append(f"the answers of {label}")
        parts.append("Computed with RupeeBias Explorer from " + "; ".join(each))
    return " · ".join(parts)


def answer_counts(models: tuple[str, ...]) -> dict[str, int]:
    """Standard-condition answers per computed model (parse health, all tasks and languages);
    empty when that table is absent."""
    from explorer import data

    if not models:
        return {}
    try:
        health = data.rows("parse_health", model=models, method="upstream", language="all",
                           task=vocab.ALL, source_kind="computed")
    except data.DataUnavailable:
        return {}
    if health.empty or "n_rows" not in health.columns:
        return {}
    return {str(m): int(n) for m, n in zip(health["model"], health["n_rows"], strict=True)
            if not pd.isna(n)}


def scope(*parts: str) -> str:
    """The filters a chart shows, as its subtitle: "Caste · Hinglish · Upstream method"."""
    return " · ".join(p for p in parts if p)


def lazy_box(label: str, key: str) -> DeltaGenerator | None:
    """A collapsed expander whose content is built and sent only while it is open (opening or
    closing it reruns the page): the open box, or None while it is closed.

    Why: Streamlit draws a closed expander's content all the same, so a long table or a chart
    behind a box nobody opened cost the browser its drawing on every visit (docs/explorer.md,
    "Speed")."""
    box = st.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def lazy_tabs(ps: PageState, name: str, tabs: Mapping[str, str]
              ) -> tuple[DeltaGenerator, str]:
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


def thin_data(models: Sequence[str], method: str, language: str | Sequence[str],
              task: str | Sequence[str], labels: Mapping[str, str], what: str,
              shown: Sequence[tuple[str, str]] | None = None,
              shown_tasks: Collection[tuple[str, str]] | None = None) -> None:
    """Warn beside a section's figures for each computed model whose answers in this use case
    and language were mostly unusable (a figure from 19 answers reads like any other); nothing
    when the data dir has no ``parse_health`` table. ``task``: one use case, or the several a
    chart shows together (then one warning per model names its thin use cases). ``shown``: the
    (model, language) rows the section shows, and ``shown_tasks`` its (model, use case) cells,
    when not every one of them has a figure."""
    with guard("Parse health"):
        if not models or not data.present("parse_health"):
            return
        several = not isinstance(task, str)
        health = data.rows("parse_health", model=tuple(models), method=method,
                           language=language, task=task if isinstance(task, str) else tuple(task),
                           source_kind=("computed",))
        if shown is not None:
            keep = set(shown)
            health = health[[(str(m), str(lg)) in keep for m, lg in
                             zip(health["model"], health["language"], strict=True)]]
        if shown_tasks is not None:
            keep = set(shown_tasks)
            health = health[[(str(m), str(t)) in keep for m, t in
                             zip(health["model"], health["task"], strict=True)]]
        notes: list[str] = []
        for (model, lang), part in health.groupby(["model", "language"], sort=False):
            label = labels.get(str(model), str(model))
            answers = ("answers here" if isinstance(language, str) else
                       f"{vocab.LANGUAGE_LABELS.get(str(lang), lang)} answers here")
            if several:
                order = {t: i for i, t in enumerate(task)}
                part = part.sort_values("task", key=lambda c: c.map(order))
                note = sentences.thin_data_cells(
                    label, [(vocab.TASK_LABELS.get(str(r.task), str(r.task)).lower(),
                             int(r.n_parsed), int(r.n_rows)) for r in part.itertuples()],
                    what, answers)
                notes += [note] if note else []
            else:
                notes += [n for r in part.itertuples(index=False)
                          if (n := sentences.thin_data(label, int(r.n_parsed), int(r.n_rows),
                                                       what, answers))]
        if notes:
            st.warning("\n\n".join(notes), icon=":material/warning:")


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
    """Caveats that must travel with the numbers: what each local model is (the 135M model, the
    1.5B code model), partial runs, synthetic test data."""
    chosen = models[models["model"].isin(selected)]
    notes = [vocab.MODEL_NOTES[str(m)] for m in chosen["model"] if str(m) in vocab.MODEL_NOTES]
    if notes:  # one box, a line per model: the content should not start a screen further down
        st.info(notes[0] if len(notes) == 1 else "\n".join(f"- {n}" for n in notes),
                icon=":material/info:")
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
               f"Query: `{query or '(defaults)'}`. Quoting a number? *Methodology → How to "
               "cite* says what to name with it.")


def label_func(mapping: Mapping[str, str]) -> Callable[[str], str]:
    """A ``format_func`` showing labels, falling back to the raw value."""
    return lambda value: mapping.get(value, value)
