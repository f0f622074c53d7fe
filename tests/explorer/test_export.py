"""Press-ready export: the exported spec, PNG, SVG and data ZIP carry title, filters, source
and date, and nothing is clipped."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pandas as pd
import pytest

from explorer import charts, export, ui

PROV = export.provenance("Mean Δ% with 95 % CI — Published (paper)",
                         "All use cases · Caste · English · Upstream method",
                         "Source: RupeeBias paper, Table 3 (published)", date="2026-12-01")


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"Model": ["GPT 5.4", "Claude", "Gemini", "Llama", "Qwen", "Tiny"],
                         "Language": ["English"] * 6,
                         "Mean Δ%": [18.9, 12.0, 15.0, 14.0, 16.0, 1600.0],
                         "CI low": [18.8, 11.0, 14.0, 13.0, 15.0, 1500.0],
                         "CI high": [19.0, 13.0, 16.0, 15.0, 17.0, 1700.0]})


def _spec() -> dict[str, object]:
    frame = _frame()
    return charts.to_spec(charts.ci_dots(frame, x="Mean Δ%", lo="CI low", hi="CI high",
                                         y="Model", color="Language",
                                         y_order=list(frame["Model"]), x_title="Mean Δ%"))


def test_press_spec_has_title_filters_source_and_date() -> None:
    spec = export.press_spec(_spec(), PROV)
    title = spec["title"]
    assert isinstance(title, dict)
    assert title["text"] == PROV.title
    assert title["subtitle"] == [PROV.subtitle,
                                 "Source: RupeeBias paper, Table 3 (published) · 2026-12-01"]
    assert spec["autosize"] == {"type": "pad", "contains": "padding"}  # grows, never clips
    assert spec["width"] == export.EXPORT_WIDTH and spec["background"] == "white"
    assert "clip" not in json.dumps(spec).replace('"_clip', "")


def test_press_spec_keeps_facet_widths_and_drops_clipping() -> None:
    facet = {"facet": {"field": "Axis"}, "spec": {"layer": [{"mark": {"type": "point",
                                                                     "clip": True}}],
                                                  "width": 320}}
    spec = export.press_spec(facet, PROV)
    assert "width" not in spec  # a facet's width lives in its inner spec
    assert spec["spec"]["layer"][0]["mark"] == {"type": "point"}


def test_press_spec_leaves_the_screen_spec_and_its_data_as_they_were() -> None:
    """One walk, no deep copy: the on-screen spec is not changed, and inline data (whose
    records may have any column name, "clip" or "legend" included) is kept as it is."""
    records = [{"clip": True, "legend": {"description": export.SCREEN_ONLY}, "x": 1}]
    screen = {"data": {"values": records}, "mark": {"type": "point", "clip": True},
              "encoding": {"color": {"field": "x", "legend": {
                  "description": export.SCREEN_ONLY}}}}
    before = json.dumps(screen)
    spec = export.press_spec(screen, PROV)
    assert json.dumps(screen) == before
    assert spec["data"]["values"] == records
    assert spec["mark"] == {"type": "point"} and spec["encoding"]["color"]["legend"] is None


def test_provenance_needs_a_title_and_defaults_to_today() -> None:
    with pytest.raises(ValueError, match="title"):
        export.provenance("  ")
    assert export.provenance("T").date == export.today()
    assert export.provenance("T").lines() == [f"RupeeBias Explorer · {export.today()}"]


def test_screen_spec_shows_the_same_title_block() -> None:
    spec = export.screen_spec(_spec(), PROV)
    block = export.title_block(PROV)
    # the same lines; on screen no line may be wider than the chart's box (a phone's screen
    # squeezed the plot to nothing), in the export every line is whole
    assert {k: v for k, v in spec["title"].items() if "imit" not in k} == \
        {k: v for k, v in block.items() if "imit" not in k}
    assert spec["title"]["limit"] == spec["title"]["subtitleLimit"] == \
        export.SCREEN_TITLE_LIMIT
    assert "containerSize()" in str(export.SCREEN_TITLE_LIMIT["expr"])
    assert export.press_spec(_spec(), PROV)["title"]["subtitleLimit"] == 0
    assert ui.press_title("T", "f", "s")["subtitle"] == ["f", f"s · {export.today()}"]


@pytest.mark.skipif(not export.can_render(), reason="vl-convert-python is not installed")
def test_svg_and_png_contain_title_filters_source_and_date() -> None:
    spec = export.press_spec(_spec(), PROV)
    svg = export.to_svg(spec).decode("utf-8")
    for text in ("Mean Δ% with 95 % CI", "All use cases · Caste · English",
                 "Source: RupeeBias paper, Table 3 (published)", "2026-12-01",
                 "GPT 5.4", "▶ 1,600"):  # the clipped outlier's marker is drawn, not cut
        assert text in svg, text
    png = export.to_png(spec)
    assert png.startswith(b"\x89PNG")
    width = int.from_bytes(png[16:20], "big")
    assert width >= export.EXPORT_WIDTH * export.PNG_SCALE  # title block, axes, legend: padded


def test_data_zip_is_a_plain_csv_with_provenance_beside_it() -> None:
    frame = _frame()
    blob = export.data_zip(frame, "mean-delta-chart-data", PROV, ui.header_help)
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        names = set(zf.namelist())
        assert names == {"mean-delta-chart-data.csv", "mean-delta-chart-data.csv-metadata.json",
                         "README.txt"}
        back = pd.read_csv(io.BytesIO(zf.read("mean-delta-chart-data.csv")))
        meta = json.loads(zf.read("mean-delta-chart-data.csv-metadata.json"))
        readme = zf.read("README.txt").decode("utf-8")
    pd.testing.assert_frame_equal(back, frame)  # machine-readable as is: header on line 1
    assert meta["@context"] == "http://www.w3.org/ns/csvw"
    assert meta["dc:title"] == PROV.title and meta["dc:description"] == PROV.subtitle
    assert meta["dc:source"] == PROV.source and meta["dc:created"] == "2026-12-01"
    assert [c["titles"] for c in meta["tableSchema"]["columns"]] == list(frame.columns)
    described = {c["titles"]: c.get("dc:description") for c in meta["tableSchema"]["columns"]}
    assert described["Mean Δ%"] == ui.header_help("Mean Δ%")  # the registry's words
    for text in (PROV.title, PROV.subtitle, PROV.source, "2026-12-01", "Rows:    6"):
        assert text in readme


def test_source_line_names_the_table_or_the_answers() -> None:
    pub = pd.DataFrame({"model": ["gpt-5.4"], "source_kind": ["published"],
                        "source": ["published: Table 2 (authors README, 2 dp)"]})
    assert ui.source_line(pub, {}) == "Source: RupeeBias paper, Table 2 (published)"
    comp = pd.DataFrame({"Model ID": ["tiny"], "source_kind": ["computed"],
                         "Source": ["computed"], "n_pairs": [1234]})
    assert ui.source_line(comp, {"tiny": "Tiny 1M"}) in (
        "Computed with RupeeBias Explorer from 1,234 answer pairs of Tiny 1M",
        # with a parse-health table in the data directory: the model's answers
        *(f"Computed with RupeeBias Explorer from {n:,} answers of Tiny 1M"
          for n in ui.answer_counts(("tiny",)).values()))


def test_source_line_names_no_model_whose_gaps_were_blanked() -> None:
    """A chart that draws no number of a model (its markup gaps blanked) must not say it was
    computed from that model's answers."""
    from explorer import tables

    both = pd.DataFrame({"model": ["gpt-5.4", "tiny"], "source_kind": ["published", "computed"],
                         "source": ["published: Table 3", "computed"], "n_pairs": [None, 99],
                         "note": [None, tables.MARKUP_NOTE]})
    assert ui.source_line(both, {"tiny": "Tiny 1M"}) == \
        "Source: RupeeBias paper, Table 3 (published)"
    assert "Tiny 1M" in ui.source_line(both.assign(note=None), {"tiny": "Tiny 1M"})


def test_long_subtitle_lines_wrap_and_lose_nothing() -> None:
    # a source line naming every model was wider than the chart: Vega squeezed the plot and
    # still cut the line off
    models = "; ".join(f"39,150 answers of Model-{i} (local)" for i in range(6))
    prov = export.provenance("T", "All use cases · English", f"Computed with X from {models}")
    lines = export.title_block(prov)["subtitle"]
    assert isinstance(lines, list) and len(lines) >= 3
    assert all(len(line) <= export.SUBTITLE_WRAP for line in lines)
    assert " ".join(lines) == " ".join(prov.lines())


def _text_of(svg: str) -> list[str]:
    """Each <text> of an SVG, its <tspan> lines joined by "|"."""
    return ["|".join(re.findall(r"<tspan[^>]*>(.*?)</tspan>", t)) or t
            for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)]


@pytest.mark.parametrize(("box", "expected"), [
    # a phone: the lane in a word; still long, two lines split at the lane; a long name with
    # no lane (a one-lane chart) breaks at a word instead of ending in "…"
    (390, ["GPT 5.4 · paper", "Qwen2.5-Coder-1.5B-Instruct (local)|computed",
           "Salary estimation|Hindu vs Muslim",
           "SmolLM2-135M-Instruct (bundled)|computed · Hinglish",
           "Qwen2.5-Coder-1.5B-|Instruct (local)", "SmolLM2-135M-Instruct|(bundled)",
           "Claude Haiku 4.5", "Autism spectrum disorder", "Chronic neurological|condition"]),
    # a wide box keeps every label as it is
    (900, ["GPT 5.4 · Published (paper)", "Qwen2.5-Coder-1.5B-Instruct (local) · Computed here",
           "Salary estimation · Hindu vs Muslim",
           "SmolLM2-135M-Instruct (bundled) · Computed here · Hinglish",
           "Qwen2.5-Coder-1.5B-Instruct (local)", "SmolLM2-135M-Instruct (bundled)",
           "Claude Haiku 4.5", "Autism spectrum disorder", "Chronic neurological condition"]),
])
@pytest.mark.skipif(not export.can_render(), reason="vl-convert-python is not installed")
def test_narrow_label_expression_shortens_and_splits_on_a_phone(box: int,
                                                               expected: list[str]) -> None:
    # the expression as the browser evaluates it, for a box of ``box`` px (vl-convert has
    # no container, so its width is substituted)
    expr = export.screen_spec({"mark": "point"}, PROV)["config"]["axis"]["labelExpr"]
    assert "containerSize()[0]" in expr
    labels = ["GPT 5.4 · Published (paper)",
              "Qwen2.5-Coder-1.5B-Instruct (local) · Computed here",
              "Salary estimation · Hindu vs Muslim",
              "SmolLM2-135M-Instruct (bundled) · Computed here · Hinglish",
              "Qwen2.5-Coder-1.5B-Instruct (local)", "SmolLM2-135M-Instruct (bundled)",
              "Claude Haiku 4.5", "Autism spectrum disorder", "Chronic neurological condition"]
    spec = {"data": {"values": [{"m": m, "v": i} for i, m in enumerate(labels)]},
            "mark": "point", "encoding": {
                "y": {"field": "m", "type": "nominal", "sort": labels, "title": None,
                      "axis": {"labelExpr": expr.replace("containerSize()[0]", str(box)),
                               "labelLimit": 0}},
                "x": {"field": "v", "type": "quantitative", "title": None}}}
    texts = _text_of(export.to_svg(spec).decode("utf-8"))
    assert [t for t in texts if any(c.isalpha() for c in t)] == expected


def test_screen_spec_fits_axes_and_legends_into_a_narrow_box() -> None:
    """On a 390-px phone a model's y label took most of the box and x titles and legends ran
    past its edge: the screen spec limits them below NARROW_BOX; the export is unchanged."""
    frame = pd.DataFrame({"Model": ["GPT 5.4", "Claude"], "Pair": ["A vs B", "C vs D"],
                          "v": [1.0, 2.0], "t": ["1", "2"]})
    heat = charts.to_spec(charts.heatmap(
        frame, x="Model", y="Pair", value="v", text="t", x_order=["GPT 5.4", "Claude"],
        y_order=["A vs B", "C vs D"], title="CPG % (orange: first identity gets more)"))
    screen = export.screen_spec(heat, PROV)
    shown = json.dumps(screen)
    narrow = f"containerSize()[0] < {export.NARROW_BOX}"
    # "no label limit" (0) and the rotated column labels hold on a wide box only
    assert '"labelLimit": 0' not in shown and '"labelAngle": -30' not in shown
    assert f"{narrow} ? -90 : -30" in shown
    # a long legend title wraps; legends go under the plot, one entry a line on a phone
    titles = [layer["encoding"]["color"]["title"] for layer in screen["layer"]
              if "field" in layer.get("encoding", {}).get("color", {})]
    assert titles and all(isinstance(t, list) and len(t) > 1 and
                          max(map(len, t)) <= export.LEGEND_TITLE_WRAP for t in titles)
    legend = screen["config"]["legend"]
    assert legend["orient"] == "bottom" and narrow in legend["columns"]["expr"]
    assert narrow in legend["layout"]["bottom"]["direction"]["signal"]
    assert narrow in screen["config"]["axis"]["titleLimit"]["expr"]
    # a chart's own config survives the merge and wins over the narrow defaults
    own = export.screen_spec({**heat, "config": {"view": {"strokeWidth": 0},
                                                 "legend": {"orient": "right"}}}, PROV)
    assert own["config"]["view"] == {"strokeWidth": 0}
    assert own["config"]["legend"]["orient"] == "right" and "columns" in own["config"]["legend"]
    # inline records (tens of thousands on some pages) are passed through, not walked
    assert screen["data"] is heat["data"]
    press = json.dumps(export.press_spec(heat, PROV))
    assert "containerSize" not in press and '"labelAngle": -30' in press


def test_a_chart_drawn_at_its_own_width_is_not_fitted_to_its_box() -> None:
    """A radar or fixed-step dot plot is wider than a phone and scrolls in its box; Vega reads
    that box as 0 px wide, so fitting to it cut every title and panel name to ~100 px."""
    spec = export.screen_spec(_spec(), PROV, stretch=False)
    assert "containerSize" not in json.dumps(spec)
    # its legends stack under the plot (side by side, one sat beyond a wide screen's edge)
    assert spec["config"]["legend"]["layout"]["bottom"]["direction"] == "vertical"
    assert spec["title"]["limit"] == spec["title"]["subtitleLimit"] == 0
    assert spec["title"] == export.title_block(PROV)
    assert "containerSize" in json.dumps(export.screen_spec(_spec(), PROV))


def test_a_chart_drawn_at_its_own_width_splits_lane_labels_on_a_narrow_window() -> None:
    """Its box has no width to read, so the window decides: below NARROW_BOX a label with a
    lane takes two lines, model | lane in a word, and none is dropped as overlapping (nine
    "… · Published (paper)" rows left a phone ~130 px of plot, dots beyond its edge)."""
    config = export.screen_spec(_spec(), PROV, stretch=False)["config"]
    expr = config["axis"]["labelExpr"]
    assert expr.startswith(f"{export.NARROW_WINDOW} && length(") and "> 0 &&" in expr
    assert '" · paper"' in expr and "datum.label" in expr
    assert config["axisDiscrete"]["labelOverlap"] is False
    assert config["axisY"]["labelBaseline"]["condition"]["test"].startswith(
        f"({export.NARROW_WINDOW} && ")
    # a chart as wide as its box keeps the box's rule and its 24-character threshold
    wide = export.screen_spec(_spec(), PROV)["config"]["axis"]["labelExpr"]
    assert wide.startswith(f"{export.NARROW} && length(") and "> 24 &&" in wide
