"""A diverging heatmap drawn as an HTML table: the same cells, colours and labels as
:func:`explorer.charts.heatmap`, without a Vega chart on the page.

Why: on a results page every Vega chart is drawn by the browser's one main thread, and each
one re-lays out the whole page. Language shift's ranking-agreement heatmap (a few rows of
Spearman ρ) cost about 0.1 s of every load there, and a table of coloured cells about half of
that (docs/explorer.md, "Session 34"). A table also reads better for this kind of figure:
the numbers are text a reader can select, and a screen reader reads it row by row. The PNG
and SVG downloads beside it stay the Vega heatmap (``ui.heat_table``).

The colours are Vega's own: :data:`BLUE_ORANGE` holds the stops of ``charts.DIVERGING_SCHEME``,
interpolated the way Vega does (piecewise in RGB), and the text turns white on the same dark
cells; ``tests/explorer/test_heat.py`` checks both against a heatmap Vega drew.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Final

import pandas as pd

from explorer import charts, export, numbers

#: The stops of Vega's ``blueorange`` scheme (vega-scale; ``charts.DIVERGING_SCHEME``), dark
#: blue to dark orange.
BLUE_ORANGE: Final = ("#134b85", "#2f78b3", "#5da2cb", "#9dcae1", "#d2e5ef", "#f2f0eb",
                      "#fce0ba", "#fbbf74", "#e8932f", "#c5690d", "#994a07")
#: Text colours on a light and on a dark cell (as the chart's cell labels).
INK, ON_DARK = "#111111", "#ffffff"


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def scheme_color(t: float, stops: Sequence[str] = BLUE_ORANGE) -> str:
    """The colour at ``t`` (0–1, clamped) of a scheme: linear in RGB between neighbouring
    stops, each channel rounded, as d3's ``piecewise(interpolateRgb)`` that Vega uses."""
    t = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    f = t - i
    a, b = _rgb(stops[i]), _rgb(stops[i + 1])
    # JavaScript's Math.round (halves up), not Python's round (halves to even)
    return "#" + "".join(f"{math.floor(x + (y - x) * f + 0.5):02x}"
                         for x, y in zip(a, b, strict=True))


def diverging_color(value: float, domain: tuple[float, float], mid: float = 0.0) -> str:
    """The fill of ``value`` on the heatmap's diverging scale: ``domain`` with ``mid`` at the
    scheme's centre (Vega-Lite's ``domainMid``), each half stretched to its half of the
    scheme."""
    lo, hi = domain
    if value < mid:
        t = 0.5 * (value - lo) / (mid - lo)
    else:
        t = 0.5 + 0.5 * (value - mid) / (hi - mid)
    return scheme_color(t)


def luminance(hex_color: str) -> float:
    """WCAG relative luminance, as Vega's ``luminance()`` expression computes it."""
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in _rgb(hex_color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def text_color(fill: str) -> str:
    """White on a dark cell, else near-black (the chart's rule, charts.HEATMAP_DARK_LUMINANCE)."""
    return ON_DARK if luminance(fill) < charts.HEATMAP_DARK_LUMINANCE else INK


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_table(frame: pd.DataFrame, *, x: str, y: str, value: str, text: str,
               x_order: Sequence[str], y_order: Sequence[str], domain: tuple[float, float],
               legend: str, tips: Sequence[str], prov: export.Provenance,
               alt_text: str) -> str:
    """The heat table's HTML: the title block (title, filters, source · date, as on a chart),
    one row per ``y``, one column per ``x``, ``text`` in each cell on its ``value``'s colour,
    a tooltip with ``value`` and ``tips``, and a colour key. A missing cell reads "—".

    Every string from the data is escaped (model names come from data files, and a user may
    add a model with any name)."""
    cells = {(str(r[y]), str(r[x])): r for _, r in frame.iterrows()}
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in x_order)
    rows = []
    for row in y_order:
        tds = []
        for col in x_order:
            r = cells.get((str(row), str(col)))
            if r is None or pd.isna(r[value]):
                tds.append(f'<td class="rb-heat-none">{numbers.MISSING}</td>')
                continue
            v = float(r[value])
            fill = diverging_color(v, domain)
            tip = " · ".join([f"{row} — {col}", f"{value} {numbers.cell(v)}",
                              *(f"{t} {numbers.cell(r[t])}" for t in tips if t in r.index)])
            tds.append(f'<td style="background:{fill};color:{text_color(fill)}" '
                       f'title="{_e(tip)}">{_e(r[text])}</td>')
        rows.append(f'<tr><th scope="row">{_e(row)}</th>{"".join(tds)}</tr>')
    lo, hi = (numbers.signed(end, 0 if float(end).is_integer() else 2) for end in domain)
    ramp = ", ".join(BLUE_ORANGE)
    lines = "".join(f'<div class="rb-heat-sub">{_e(line)}</div>' for line in prov.lines())
    return (f'<div class="rb-heat" role="figure" aria-label="{_e(alt_text)}">'
            f'<div class="rb-heat-title">{_e(prov.title)}</div>{lines}'
            f'<div class="rb-scroll"><table><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>'
            f'<div class="rb-heat-key"><span>{_e(legend)}</span><span>{lo}</span>'
            f'<span class="rb-heat-ramp" style="background:linear-gradient(to right, {ramp})">'
            f'</span><span>{hi}</span></div></div>')
