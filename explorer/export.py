"""Press-ready exports: a chart as PNG/SVG that stands on its own, and its data with provenance.

A chart saved from a page must say what it is when it is pasted into a story or a briefing:

* a **title**;
* a **subtitle** naming the filters (use case, axis, language, method …);
* a **source line** — "Source: RupeeBias paper, Table 2 (published)" or "Computed with
  RupeeBias Explorer from N answer pairs of MODEL";
* the **date** it was exported.

:func:`press_spec` adds that block to a Vega-Lite spec and fixes the size (a chart on screen
fills its container; an exported one needs a width of its own) with ``autosize: pad``, so marks
at the edge of the scale — the ▶ markers of clipped outliers, the last dot of a range — grow
the image instead of being cut off. :func:`to_svg` / :func:`to_png` render it on the server
with ``vl-convert`` (Vega's own renderer, shipped inside the PyPI wheel: no browser, nothing
fetched at run time). Without that package the explorer still works and the chart menu's
"Download as PNG" (Streamlit's, from the view on screen) carries the same title block.

The data behind the chart travels as a ZIP, the way data desks expect from a public data tool:
``<name>.csv`` — plain CSV, header on line 1, nothing else, so any tool reads it as is —
beside ``<name>.csv-metadata.json`` (W3C *CSV on the Web* metadata: title, filters, source,
date, and each column's meaning from the table registry) and a plain-text ``README.txt`` that
says the same in words. See docs/explorer.md, "Exports".
"""

from __future__ import annotations

import datetime as dt
import io
import json
import textwrap
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from explorer import vocab

#: The width of an exported single-view chart, in px (a newspaper column at 2× is ~700 px).
EXPORT_WIDTH = 680
#: The PNG scale factor (2 = sharp on retina screens and in print at column width).
PNG_SCALE = 2
TOOL = "RupeeBias Explorer"


def today() -> str:
    """The export date (UTC, ISO 8601): the same on the chart, in the CSV notes and README."""
    return dt.datetime.now(tz=dt.UTC).date().isoformat()


@dataclass(frozen=True)
class Provenance:
    """What a chart or its data must carry wherever it goes."""

    title: str
    subtitle: str
    source: str
    date: str

    def lines(self) -> list[str]:
        """The subtitle lines under the title: the filters, then "source · date"."""
        tail = f"{self.source} · {self.date}" if self.source else f"{TOOL} · {self.date}"
        return [line for line in (self.subtitle, tail) if line]


def provenance(title: str, subtitle: str = "", source: str = "",
               date: str | None = None) -> Provenance:
    if not title.strip():
        raise ValueError("an exported chart needs a title")
    return Provenance(title.strip(), subtitle.strip(), source.strip(), date or today())


#: Longest subtitle line, in characters (~530 px at 11 px): a longer one — the source line of a
#: chart with published and computed models names every model — made Vega squeeze the plot to
#: make room for it and still cut it off on screen.
SUBTITLE_WRAP = 96


def title_block(prov: Provenance) -> dict[str, object]:
    """A Vega-Lite title: title, then the filters, then the source line and the date, each
    wrapped at :data:`SUBTITLE_WRAP` characters."""
    lines = [part for line in prov.lines()
             for part in textwrap.wrap(line, SUBTITLE_WRAP, break_long_words=False,
                                       break_on_hyphens=False)]
    return {"text": prov.title, "subtitle": lines, "anchor": "start", "fontSize": 14,
            "subtitleColor": "#444444", "subtitleFontSize": 11, "offset": 10,
            "limit": 0, "subtitleLimit": 0}


def _single_view(spec: Mapping[str, Any]) -> bool:
    return ("mark" in spec or "layer" in spec) and not any(
        k in spec for k in ("facet", "hconcat", "vconcat", "concat", "repeat"))


#: On screen, a title or subtitle line wider than the chart's box ends in "…" (the PNG/SVG
#: export keeps it whole): unlimited, a line wider than a phone's screen made Vega shrink the
#: plot to nothing to make room for it, and was cut off anyway.
SCREEN_TITLE_LIMIT = {"expr": "max(160, containerSize()[0] - 24)"}


#: Below this chart-box width (px) the screen spec fits axes and legends into the box.
NARROW_BOX = 600
#: True on a narrow box (a Vega expression; also used by charts whose marks change there).
NARROW = f"containerSize()[0] < {NARROW_BOX}"


def on_narrow(narrow_value: object, wide_value: object, narrow: str = NARROW) -> dict[str, str]:
    """A Vega expression parameter: ``narrow_value`` where ``narrow`` holds (a narrow box by
    default), else ``wide_value`` (both Vega expressions, e.g. ``1``, ``'end'``)."""
    return {"expr": f"{narrow} ? {narrow_value} : {wide_value}"}


#: A label limit that is "none" (0) on a wide box and ~40 % of a narrow one.
_NARROW_LABEL_LIMIT = on_narrow("max(90, round(containerSize()[0] * 0.4))", 0)
#: Longest one-line label on a narrow box (~130 px at 10 px).
NARROW_LABEL_CHARS = 24


def _json(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _short_label() -> str:
    """The label with its lane in a word ("GPT 5.4 · paper"), as a Vega expression."""
    short = "datum.label"
    for kind, label in vocab.SOURCE_LABELS.items():
        short = (f"replace({short}, {_json(vocab.LANE_SEP + label)}, "
                 f"{_json(vocab.LANE_SEP + vocab.SOURCE_SHORT[kind])})")
    return short


_SHORT = _short_label()
_AT = f"indexof({_SHORT}, {_json(vocab.LANE_SEP)})"


#: Longest label without a "·" kept on one line by a chart drawn at its own width on a narrow
#: window (its labels may take 180 px, Vega's default): the longest identifier ("Chronic
#: neurological condition", 30) stays on one line, so the 87 rows of the identifier chart keep
#: one line each. A chart fitted to its box uses :data:`NARROW_LABEL_CHARS` (its limit is 40 %
#: of a phone's box, ~140 px).
OWN_WIDTH_WORD_CHARS = 30


def _break_at(chars: int) -> str:
    """Where a long label without a "·" breaks: after its last space or hyphen within its
    first ``chars`` + 1 characters ("Qwen2.5-Coder-1.5B-" | "Instruct (local)" at 24)."""
    head = f"substring({_SHORT}, 0, {chars + 1})"
    return f"max(lastindexof({head}, ' '), lastindexof({head}, '-') + 1)"


def _two_lines(narrow: str, chars: int) -> str:
    """True for a label that takes two lines at its lane: when ``narrow`` holds, longer than
    ``chars`` once its lane is a word, and with a "·" to split at."""
    return f"{narrow} && length({_SHORT}) > {chars} && {_AT} > 0"


def _word_lines(narrow: str, chars: int) -> str:
    """True for a label with no lane that takes two lines at a word: when ``narrow`` holds,
    longer than ``chars`` and with a space or hyphen to break at (on a phone
    "Qwen2.5-Coder-1.5B-Instruct (local)" was cut to "Qwen2.5-Coder-1.5B-Instr…")."""
    return f"{narrow} && {_AT} < 0 && length({_SHORT}) > {chars} && {_break_at(chars)} > 0"


def _label_expr(narrow: str, chars: int = NARROW_LABEL_CHARS,
                word_chars: int = NARROW_LABEL_CHARS) -> str:
    """When ``narrow`` holds a label names its lane in a word, and one longer than ``chars``
    is split at its first "·" onto two lines (model | lane · language; use case | pair); one
    with no "·" longer than ``word_chars`` breaks at a word (:func:`_word_lines`); otherwise
    the label stays as it is."""
    cut = _break_at(word_chars)
    return (f"{_two_lines(narrow, chars)} ? [substring({_SHORT}, 0, {_AT}), "
            f"substring({_SHORT}, {_AT} + {len(vocab.LANE_SEP)})] : "
            f"{_word_lines(narrow, word_chars)} ? [trim(substring({_SHORT}, 0, {cut})), "
            f"trim(substring({_SHORT}, {cut}))] : "
            f"({narrow} ? {_SHORT} : datum.label)")


def _two_line_baseline(narrow: str, chars: int = NARROW_LABEL_CHARS,
                       word_chars: int = NARROW_LABEL_CHARS) -> dict[str, Any]:
    """Vega hangs a label's second line below the first: with the baseline at "bottom" the
    two lines sit centred on their row."""
    test = f"({_two_lines(narrow, chars)}) || ({_word_lines(narrow, word_chars)})"
    return {"condition": {"test": test, "value": "bottom"}, "value": "middle"}


_NARROW_LABEL_EXPR = _label_expr(NARROW)
_TWO_LINE_BASELINE = _two_line_baseline(NARROW)
#: Axis titles and legends no wider than a narrow box; an x title ends at the plot's right
#: edge there, so that a title longer than the plot runs left over the labels, not off-box.
_NARROW_TEXT_LIMIT = on_narrow("max(120, containerSize()[0] - 70)", 0)
_NARROW_CONFIG: dict[str, Any] = {
    "axis": {"labelExpr": _NARROW_LABEL_EXPR, "titleLimit": _NARROW_TEXT_LIMIT},
    "axisDiscrete": {"labelOverlap": False},
    "axisY": {"labelBaseline": _TWO_LINE_BASELINE},
    "axisX": {"titleAnchor": on_narrow("'end'", "'middle'")},
    # legends under the plot; on a narrow box one below the other, one entry per line: side
    # by side they ran past a phone's edge
    "legend": {"orient": "bottom", "columns": on_narrow(1, 0),
               "titleLimit": _NARROW_TEXT_LIMIT,
               "labelLimit": _NARROW_TEXT_LIMIT,
               "layout": {"bottom": {"anchor": "start", "direction": {
                   "signal": f"{NARROW} ? 'vertical' : 'horizontal'"}}}},
    "header": {"labelExpr": _NARROW_LABEL_EXPR, "labelLimit": _NARROW_TEXT_LIMIT},
}


def screen_spec(spec: dict[str, Any], prov: Provenance, stretch: bool = True
                ) -> dict[str, Any]:
    """The on-screen spec: the title block, each line at most as wide as the chart's box,
    room on the right for edge labels, and axes and legends that fit a phone's screen.

    Unlimited, a model's y label took most of a 390-px box and its x title and legend ran
    past the box's edge; below :data:`NARROW_BOX` labels split at "·" onto two lines, long
    ones end in "…", and legends sit under the plot. Wide boxes look as before.

    Only a chart as wide as its box (``stretch``) is fitted: one drawn at its own width
    (radars, fixed-step dot plots) scrolls sideways in its box, whose width Vega reads as 0 —
    fitted to that, its title, panel names and legend were cut to ~100 px on every screen."""
    out = dict(spec)
    out.setdefault("padding", {"left": 5, "right": 40, "top": 5, "bottom": 5})
    if not stretch:
        out["title"] = title_block(prov)
        return _with_config(out, _OWN_WIDTH_CONFIG)
    out = _fit_narrow(out)
    out["title"] = {**title_block(prov), "limit": SCREEN_TITLE_LIMIT,
                    "subtitleLimit": SCREEN_TITLE_LIMIT}
    return _with_config(out, _NARROW_CONFIG)


#: True on a narrow window: a chart drawn at its own width has no box width to read (Vega sees
#: 0 px), so the window says whether the reader is on a phone.
NARROW_WINDOW = f"windowSize()[0] < {NARROW_BOX}"
#: A chart drawn at its own width stacks its legends under the plot: side by side, the
#: Identifiers dot plot's *Basis* legend sat beyond the right edge of a 1440-px screen. On a
#: narrow window a label with a lane takes two lines, model | lane in a word ("GPT 5.4" |
#: "paper"): in full, the nine "… · Published (paper)" rows of Language shift's per-axis chart
#: left a phone ~130 px of plot, and the dots of the larger gaps lay beyond the screen's edge,
#: as if missing.
_OWN_WIDTH_CONFIG: dict[str, Any] = {
    "axis": {"labelExpr": _label_expr(NARROW_WINDOW, 0, OWN_WIDTH_WORD_CHARS)},
    "axisDiscrete": {"labelOverlap": False},  # two-line labels: none may be dropped
    "axisY": {"labelBaseline": _two_line_baseline(NARROW_WINDOW, 0, OWN_WIDTH_WORD_CHARS)},
    "legend": {"layout": {"bottom": {"anchor": "start", "direction": "vertical"}}}}


def _with_config(spec: dict[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` with ``defaults`` under its own config (the chart's own settings win)."""
    config = dict(spec.get("config") or {})
    for key, value in defaults.items():
        config[key] = {**value, **(config.get(key) or {})}
    return {**spec, "config": config}


#: Longest line of a legend title on screen: a legend starts under the plot, not at the
#: box's left edge, so on a phone a long one ran past the box.
LEGEND_TITLE_WRAP = 28


def _narrow_part(key: str, part: dict[str, Any]) -> dict[str, Any]:
    """One axis, legend or header of :func:`_fit_narrow`."""
    out = dict(part)
    if out.get("labelLimit") == 0:
        out["labelLimit"] = _NARROW_LABEL_LIMIT
    angle = out.get("labelAngle")
    if key == "axis" and isinstance(angle, int | float) and angle:
        out["labelAngle"] = on_narrow(-90, angle)
    columns = out.get("columns")
    # a legend that says horizontal has short entries: one line fits
    if key == "legend" and isinstance(columns, int) and out.get("direction") != "horizontal":
        out["columns"] = on_narrow(1, columns)
    return out


_DATA_KEYS = frozenset({"data", "datasets"})


def _fit_narrow(node: Any) -> Any:
    """Every explicit ``labelLimit: 0`` (no limit) of an axis, legend or header becomes
    :data:`_NARROW_LABEL_LIMIT` ("none" on a wide box only); rotated axis labels stand
    upright on a narrow box, leaving the columns their width, and a legend lists one entry
    per line there (unless it says ``direction: horizontal``); long legend titles wrap."""
    if isinstance(node, dict):
        # inline data can be tens of thousands of records: nothing in them to fit
        out = {k: v if k in _DATA_KEYS else _fit_narrow(v) for k, v in node.items()}
        for key in ("axis", "legend", "header"):
            part = out.get(key)
            if isinstance(part, dict):
                out[key] = _narrow_part(key, part)
        title = out.get("title")
        if "legend" in out and isinstance(title, str) and len(title) > LEGEND_TITLE_WRAP:
            out["title"] = textwrap.wrap(title, LEGEND_TITLE_WRAP)
        return out
    if isinstance(node, list):
        return [_fit_narrow(v) for v in node]
    return node


def press_spec(spec: Mapping[str, Any], prov: Provenance) -> dict[str, Any]:
    """The spec to export: title block, fixed width, white background, nothing clipped.

    ``autosize: pad`` makes the image grow to hold every mark, axis and legend, and no layer
    clips its marks to the plot area."""
    out = _for_press(dict(spec))
    out["title"] = title_block(prov)
    if _single_view(out) and not isinstance(out.get("width"), int | float):
        out["width"] = EXPORT_WIDTH
    out["autosize"] = {"type": "pad", "contains": "padding"}
    out["padding"] = {"left": 12, "right": 48, "top": 12, "bottom": 12}
    out["background"] = "white"
    return out


#: The ``description`` (also its ARIA label) of a legend drawn on screen only, the quadrant's
#: narrow-box key: an export is drawn wide, where the key has no size, and would keep it as
#: invisible text.
SCREEN_ONLY = "Key to the numbered points (on a narrow screen)"


def _for_press(node: Any) -> Any:
    """``node`` without what an export must not keep, in one walk: every legend described
    :data:`SCREEN_ONLY` (replaced by none) and every ``clip: true`` of marks and layers (an
    exported chart shows every point). Inline data is copied as it is."""
    if isinstance(node, dict):
        return {k: v if k in _DATA_KEYS else None
                if k == "legend" and isinstance(v, dict) and v.get("description") == SCREEN_ONLY
                else _for_press(v)
                for k, v in node.items() if not (k == "clip" and v is True)}
    if isinstance(node, list):
        return [_for_press(v) for v in node]
    return node


def _renderer() -> Any | None:
    try:
        import vl_convert
    except ImportError:  # optional: the chart menu's PNG still carries the title block
        return None
    return vl_convert


def can_render() -> bool:
    """Whether PNG/SVG files can be made on the server (the ``vl-convert-python`` wheel)."""
    return _renderer() is not None


def to_svg(spec: Mapping[str, Any]) -> bytes:
    vlc = _renderer()
    if vlc is None:
        raise RuntimeError("vl-convert-python is not installed")
    return str(vlc.vegalite_to_svg(dict(spec))).encode("utf-8")


def to_png(spec: Mapping[str, Any], scale: int = PNG_SCALE) -> bytes:
    vlc = _renderer()
    if vlc is None:
        raise RuntimeError("vl-convert-python is not installed")
    return bytes(vlc.vegalite_to_png(dict(spec), scale=scale))


def csvw_metadata(frame: pd.DataFrame, csv_name: str, prov: Provenance,
                  describe: Callable[[str], str | None]) -> dict[str, Any]:
    """W3C CSV-on-the-Web metadata for ``csv_name``: provenance plus one entry per column."""
    columns: list[dict[str, Any]] = []
    for col in frame.columns:
        entry: dict[str, Any] = {"name": f"c{len(columns) + 1}", "titles": str(col)}
        text = describe(str(col))
        if text:
            entry["dc:description"] = text
        columns.append(entry)
    return {"@context": "http://www.w3.org/ns/csvw", "url": csv_name,
            "dc:title": prov.title, "dc:description": prov.subtitle,
            "dc:source": prov.source, "dc:created": prov.date, "dc:publisher": TOOL,
            "tableSchema": {"columns": columns}}


def readme(frame: pd.DataFrame, csv_name: str, prov: Provenance,
           describe: Callable[[str], str | None], notes: str = "") -> str:
    lines = [prov.title, "=" * len(prov.title), "",
             f"Filters: {prov.subtitle or '(none)'}",
             f"Source:  {prov.source or TOOL}",
             f"Date:    {prov.date} (exported with {TOOL})",
             f"Rows:    {len(frame):,}", "",
             f"{csv_name} is a plain CSV (UTF-8, comma-separated, header on the first line).",
             f"{csv_name.removesuffix('.csv')}.csv-metadata.json holds the same provenance as "
             "W3C CSV-on-the-Web metadata.", ""]
    if notes:
        lines += [notes, ""]
    lines.append("Columns:")
    for col in frame.columns:
        text = describe(str(col))
        lines.append(f"  {col}" + (f" — {text}" if text else ""))
    return "\n".join(lines) + "\n"


def data_zip(frame: pd.DataFrame, stem: str, prov: Provenance,
             describe: Callable[[str], str | None], notes: str = "") -> bytes:
    """The chart's data: ``stem.csv`` + ``stem.csv-metadata.json`` + ``README.txt``."""
    csv_name = f"{stem}.csv"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(csv_name, frame.to_csv(index=False))
        zf.writestr(f"{csv_name}-metadata.json",
                    json.dumps(csvw_metadata(frame, csv_name, prov, describe), indent=2,
                               ensure_ascii=False))
        zf.writestr("README.txt", readme(frame, csv_name, prov, describe, notes))
    return buf.getvalue()
