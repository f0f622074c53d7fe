"""The heat table (explorer.heat): Vega's colours and text colours, escaped text, a title block."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from explorer import charts, export, heat

VALUES = [-1.0, -0.93, -0.81, -0.5, -0.37, -0.12, 0.0, 0.05, 0.29, 0.5, 0.64, 0.77, 0.88, 1.0]


def _rgb(color: str) -> tuple[int, ...]:
    if color == "white":
        return (255, 255, 255)
    if color.startswith("rgb("):
        return tuple(int(c) for c in color[4:-1].split(","))
    return heat._rgb(color)


def test_cells_and_their_text_are_coloured_as_vega_draws_the_heatmap() -> None:
    vlc = pytest.importorskip("vl_convert")
    frame = pd.DataFrame({"Axis": [f"a{i:02d}" for i in range(len(VALUES))], "Model": "m",
                          "ρ": VALUES, "Label": [f"{v:+.2f}" for v in VALUES]})
    spec = charts.spec(charts.heatmap, frame, x="Axis", y="Model", value="ρ", text="Label",
                       x_order=list(frame["Axis"]), y_order=["m"], title="ρ", diverging=True,
                       domain=(-1, 1))
    svg = vlc.vegalite_to_svg(spec)
    rects = re.search(r'<g class="mark-rect[^"]*"[^>]*>(.*?)</g>', svg, re.S)
    texts = re.search(r'<g class="mark-text[^"]*"[^>]*>(.*?)</g>', svg, re.S)
    assert rects and texts
    vega_fills = [_rgb(c) for c in re.findall(r'fill="([^"]+)"', rects.group(1))]
    ours = [heat.diverging_color(v, (-1.0, 1.0)) for v in VALUES]
    assert vega_fills == [_rgb(c) for c in ours]
    vega_ink = {label: _rgb(c) for c, label in re.findall(
        r'<text[^>]*fill="([^"]+)"[^>]*>([^<]*)</text>', texts.group(1))}
    assert {f"{v:+.2f}": _rgb(heat.text_color(c)) for v, c in zip(VALUES, ours, strict=True)
            } == vega_ink
    assert heat.text_color(ours[0]) == heat.ON_DARK and heat.text_color(ours[6]) == heat.INK


def test_an_uneven_domain_puts_its_mid_at_the_scheme_centre() -> None:
    centre = heat.BLUE_ORANGE[len(heat.BLUE_ORANGE) // 2]
    assert heat.diverging_color(0.0, (-0.2, 5.0)) == centre
    assert heat.diverging_color(-0.2, (-0.2, 5.0)) == heat.BLUE_ORANGE[0]
    assert heat.diverging_color(5.0, (-0.2, 5.0)) == heat.BLUE_ORANGE[-1]
    assert heat.diverging_color(9.0, (-0.2, 5.0)) == heat.BLUE_ORANGE[-1]  # clamped


def _table(frame: pd.DataFrame, **kw: object) -> str:
    prov = export.provenance("Do they agree?", "Every axis · Corrected method",
                             "Computed with RupeeBias Explorer from 10 answers of m", "2026-12-05")
    args: dict[str, object] = dict(x="Axis", y="Model", value="ρ", text="Label",
                                   x_order=["Religion", "Caste"], y_order=list(
                                       dict.fromkeys(frame["Model"])), domain=(-1.0, 1.0),
                                   legend="Spearman ρ", tips=("p-value",), prov=prov,
                                   alt_text="Table of ρ")
    args.update(kw)
    return heat.html_table(frame, **args)  # type: ignore[arg-type]


def test_the_table_escapes_names_marks_gaps_and_carries_title_source_and_date() -> None:
    hostile = '<img src=x onerror="alert(1)"> · Computed here'
    frame = pd.DataFrame({"Model": [hostile, "plain"], "Axis": ["Religion", "Religion"],
                          "ρ": [-0.95, float("nan")], "Label": ["-0.95‡", "—"],
                          "p-value": [0.0042, None]})
    out = _table(frame)
    assert "<img" not in out and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in out
    # the dark blue cell: its fill, white text, and a tooltip with the value and the p-value
    cell = re.search(r'<td style="background:([^;]+);color:([^"]+)" title="([^"]+)">([^<]+)</td>',
                     out)
    assert cell and cell.group(1) == heat.diverging_color(-0.95, (-1.0, 1.0))
    assert cell.group(2) == heat.ON_DARK and cell.group(4) == "-0.95‡"
    assert "ρ −0.950" in cell.group(3) and "p-value 0.004" in cell.group(3)
    # no value, no colour: a missing ρ and a column the frame lacks read "—"
    assert out.count('<td class="rb-heat-none">—</td>') == 3
    for line in ("Do they agree?", "Every axis · Corrected method",
                 "Computed with RupeeBias Explorer from 10 answers of m · 2026-12-05"):
        assert line in out
    assert 'aria-label="Table of ρ"' in out and "<span>−1</span>" in out
