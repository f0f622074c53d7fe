"""Every chart is valid Vega-Lite (the app skips validation for speed, so it happens here)."""

from __future__ import annotations

import json
import math
import re

import altair as alt
import numpy as np
import pandas as pd
import pytest

from explorer import charts, export, vocab


def _valid(chart: alt.TopLevelMixin) -> dict:
    with alt.utils.schemapi.debug_mode(True):
        spec = chart.to_dict(validate=True)
    assert charts.to_spec(chart)["$schema"].startswith("https://vega.github.io/schema/vega-lite")
    return spec


def _cells(models: tuple[str, ...] = ("m1", "m2")) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [{"model": m, "task": t, "axis": a, "mean_delta": float(rng.uniform(2, 30))}
            for m in models for t in (*vocab.TASKS, "all") for a in vocab.AXES]
    return pd.DataFrame(rows)


def test_radar_geometry_and_spec() -> None:
    cells = _cells()
    panels = {m: sub for m, sub in cells.groupby("model")}
    labels = dict(vocab.TASK_LABELS)
    frame = charts.radar_data(panels, shared=True, series_labels=labels)
    poly = frame[(frame["part"] == "poly") & (frame["panel"] == "m1")
                 & (frame["series"] == labels["salary_estimation"])].sort_values("order")
    assert len(poly) == len(vocab.AXES) + 1  # closed: first axis repeated
    assert poly.iloc[0]["axis"] == poly.iloc[-1]["axis"] == vocab.AXES[0]
    top = charts.nice_ticks(cells["mean_delta"].max())[-1]
    source = cells[(cells["model"] == "m1") & (cells["task"] == "salary_estimation")]
    radius = dict(zip(source["axis"], source["mean_delta"], strict=True))
    for rec in poly.itertuples(index=False):
        i = vocab.AXES.index(rec.axis)
        theta = math.pi / 2 - 2 * math.pi * i / len(vocab.AXES)
        r = radius[rec.axis] / top
        assert rec.x == pytest.approx(r * math.cos(theta))
        assert rec.y == pytest.approx(r * math.sin(theta))
    _valid(charts.radars(frame, panel_order=["m1", "m2"], series_labels=labels))
    # the top spoke's name clears the outer ring's label that sits on the same spoke (at 1.12
    # ring radii "Religion" was written over "80%"): 250-px panels span 2.9 radii, so 0.2
    # radii is ~17 px, room for the 9-px label above the ring and half the 11-px name
    m1 = frame[frame["panel"] == "m1"]
    name_y = m1[(m1["part"] == "axis_label") & (m1["label"] == vocab.AXES[0])]["y"].item()
    ring_y = m1[m1["part"] == "ring_label"]["y"].max()
    assert name_y - ring_y >= 0.2


def test_nice_ticks() -> None:
    assert charts.nice_ticks(38.0) == [10, 20, 30, 40]
    assert charts.nice_ticks(0.0)[-1] >= 1


def test_all_chart_builders_validate() -> None:
    f = pd.DataFrame({"Model": ["A", "B"], "Language": ["English", "Hinglish"],
                      "v": [1.0, np.nan], "lo": [0.5, np.nan], "hi": [1.5, np.nan],
                      "Source type": ["Published (paper)", "Computed here"],
                      "Weights": ["open", "closed"], "Significant": ["yes", "no"]})
    _valid(charts.ci_dots(f, x="v", lo="lo", hi="hi", y="Model", color="Language",
                          y_order=["A", "B"], x_title="x", zero_line=True, ref=0.85,
                          color_scale=charts.language_scale()))
    _valid(charts.ci_dots(f, x="v", lo="lo", hi="hi", y="Model", color="Language",
                          y_order=["A", "B"], x_title="x", facet="Source type"))
    _valid(charts.bars_ci(f, x="v", lo="lo", hi="hi", y="Model", color="Language",
                          y_order=["A", "B"], x_title="x", ref=1.0, opacity="Significant"))
    _valid(charts.heatmap(f.assign(t="x"), x="Language", y="Model", value="v", text="t",
                          x_order=["English"], y_order=["A"], title="t", diverging=True,
                          domain=(-1, 1)))
    q = f.assign(x=[1.0, 2.0], y=[0.1, 0.2])
    _valid(charts.quadrant(q, x="x", y="y"))
    _valid(charts.signed_bars(f.fillna(0.0), x="v", y="Model", y_order=["A", "B"],
                              x_title="x"))
    _valid(charts.signed_bars(f.fillna(0.0), x="v", y="Model", y_order=["A", "B"],
                              x_title="x", lo="lo", hi="hi"))


def test_a_change_is_called_shrank_or_grew_only_when_its_interval_says_so() -> None:
    assert charts.change_class(-0.76, -2.0, 0.52) == "unclear: 95 % CI spans 0"
    assert charts.change_class(-3.0, -5.0, -1.0) == "shrank"
    assert charts.change_class(76.0, 10.0, 140.0) == "grew"
    assert charts.change_class(-11.9) == "no interval: shrank"
    assert charts.change_class(0.0, math.nan, math.nan) == "no interval: shrank"
    assert charts.change_class(2.0) == "no interval: grew"
    dev = pd.DataFrame({"Model": ["A"] * 3, "Axis": ["Gender", "Gender", "Religion"],
                        "Identifier": ["Male", "Female", "Hindu"], "Deviation %": [1.0, -1, 0],
                        "n rows": [1, 1, 1], "Source type": ["Computed here"] * 3})
    _valid(charts.deviation_dots(dev, y_order=vocab.IDENTIFIER_VALUES, color_order=["A"],
                                 facet_order=vocab.AXES))
    _valid(charts.deviation_dots(dev[dev["Axis"] == "Gender"], y_order=vocab.IDENTIFIER_VALUES,
                                 color_order=["A"]))


def test_records_turn_missing_values_into_null() -> None:
    frame = pd.DataFrame({"a": [1.0, np.nan], "b": pd.array([1, None], dtype="Int64"),
                          "c": ["x", None]})
    values = charts.records(frame).values
    assert values == [{"a": 1.0, "b": 1, "c": "x"}, {"a": None, "b": None, "c": None}]


def test_spec_is_kept_per_builder_and_arguments() -> None:
    """charts.spec: the same (builder, arguments) is built once; any change in the data or an
    argument builds anew; callers get copies they may change."""
    calls: list[int] = []

    def counted(frame: pd.DataFrame, **kw: object) -> alt.TopLevelMixin:
        calls.append(1)
        return charts.bars_ci(frame, **kw)  # type: ignore[arg-type]

    frame = pd.DataFrame({"Model": ["a", "b"], "v": [1.0, 2.0], "Language": ["English"] * 2})
    kw = dict(x="v", lo="_", hi="_", y="Model", color="Language", y_order=["a", "b"],
              x_title="v", color_scale=charts.language_scale())
    first = charts.spec(counted, frame, **kw)
    assert first == charts.to_spec(charts.bars_ci(frame, **kw))  # type: ignore[arg-type]
    first["title"] = "changed by a caller"
    nested = next(v for v in first.values() if isinstance(v, dict) and v)
    nested["changed"] = True  # as Streamlit patches a legend title inside the encoding
    again = charts.spec(counted, frame.copy(), **kw)
    assert len(calls) == 1 and "title" not in again
    assert not any(isinstance(v, dict) and "changed" in v for v in again.values())
    assert again == charts.to_spec(charts.bars_ci(frame, **kw))  # type: ignore[arg-type]
    charts.spec(counted, frame.assign(v=[1.0, 2.5]), **kw)  # new data
    charts.spec(counted, frame, **{**kw, "y_order": ["b", "a"]})  # new argument
    charts.spec(counted, frame, **{**kw, "color_scale": charts.source_scale()})  # new scale
    assert len(calls) == 4
    long = [str(i) for i in range(3000)]  # numpy and pandas elide the middle of long reprs
    changed = [*long[:1500], "x", *long[1501:]]
    for wrap in (np.array, pd.Index):  # the same values in either: built once each
        charts.spec(counted, frame, **{**kw, "y_order": wrap(long)})
        charts.spec(counted, frame, **{**kw, "y_order": wrap(changed)})
    assert len(calls) == 6


def test_quadrant_axes_start_at_zero_and_two_models_get_no_median_lines() -> None:
    # two computed models with W 0.153 and 0.157 filled the whole height (zero=False)
    two = pd.DataFrame({"Model": ["a", "b"], "Source type": ["Computed here"] * 2,
                        "x": [8.6, 46.0], "y": [0.157, 0.153], "x basis": ["x"] * 2,
                        "Weights": ["open"] * 2})
    spec = charts.to_spec(charts.quadrant(two, x="x", y="y"))
    layers = spec["layer"]
    assert all(layer["mark"]["type"] != "rule" for layer in layers)
    enc = layers[-1]["encoding"]
    assert enc["x"]["scale"]["zero"] is True and enc["y"]["scale"]["zero"] is True
    # a y title longer than the plot pushed the chart's title block out of its box (seen)
    assert len(enc["y"]["title"]) <= 32
    three = pd.concat([two, two.head(1).assign(Model="c", x=20.0, y=0.2)])
    spec = charts.to_spec(charts.quadrant(three, x="x", y="y"))
    assert sum(layer["mark"]["type"] == "rule" for layer in spec["layer"]) == 2


def test_quadrant_numbers_its_points_on_a_narrow_box_with_a_key_the_export_leaves_out(
) -> None:
    # on a phone the paper models' names ran over each other and over the wrong point
    frame = pd.DataFrame({"Model": ["GPT 5.4", "Kimi K2.5", "GLM 5.1", "Sarvam 105B"],
                          "Source type": ["Published (paper)"] * 4, "x": [19.4, 13.9, 19.4, 39.0],
                          "y": [0.21, 0.2, 0.18, 0.12], "x basis": ["x"] * 4,
                          "Weights": ["closed", "open", "open", "open"]})
    keys = charts.quadrant_keys(frame, "x")
    # left to right, a tie by name: Kimi 1, GLM 2, GPT 3, Sarvam 4
    assert keys[charts.QUADRANT_KEY] == ["3", "1", "2", "4"]
    assert keys[charts.QUADRANT_KEY_ENTRY][0] == "3 GPT 5.4"
    spec = charts.to_spec(charts.quadrant(frame, x="x", y="y"))
    texts = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    # a label and, under it, its white halo (a median line crossed the names) on each side
    assert len(texts) == 4
    assert [layer["mark"].get("stroke") for layer in texts] == ["white", None] * 2
    for layer in texts:
        calc = next(t for t in layer["transform"] if "calculate" in t)["calculate"]
        assert calc == f"{export.NARROW} ? datum.{charts.QUADRANT_KEY} : datum.Model"
    legends = [enc["legend"] for layer in spec["layer"] for enc in layer["encoding"].values()
               if isinstance(enc, dict) and isinstance(enc.get("legend"), dict)
               and enc["legend"].get("title") == "Key"]
    assert len(legends) == 1 and legends[0]["description"] == export.SCREEN_ONLY
    key_scale = next(layer["encoding"]["opacity"]["scale"] for layer in spec["layer"]
                     if "opacity" in layer.get("encoding", {}))
    assert key_scale["domain"] == ["1 Kimi K2.5", "2 GLM 5.1", "3 GPT 5.4", "4 Sarvam 105B"]
    # every size of the key is 0 on a wide box, where the names label the points
    assert legends[0]["labelFontSize"] == {"expr": f"{export.NARROW} ? 12 : 0"}
    press = json.dumps(export.press_spec(spec, export.provenance("T")))
    assert '"Key"' not in press and "Kimi K2.5" in press


def test_language_legend_lists_only_the_languages_drawn() -> None:
    scale = charts.language_scale(["Hinglish", "English", "English"]).to_dict()
    assert scale["domain"] == ["English", "Hinglish"]  # fixed order, no "Overall"
    assert scale["range"] == [charts.LANGUAGE_COLORS["English"],
                              charts.LANGUAGE_COLORS["Hinglish"]]  # colours stay fixed
    assert charts.language_scale().to_dict()["domain"] == list(charts.LANGUAGE_COLORS)


def test_source_legend_lists_only_the_source_types_drawn() -> None:
    """A lane's chart (parse health, the language shift) listed "Published (paper)" under
    computed models alone; the colours stay fixed, and both show when both are drawn."""
    computed = vocab.SOURCE_LABELS["computed"]
    scale = charts.source_scale([computed, computed]).to_dict()
    assert scale["domain"] == [computed]
    assert scale["range"] == [vocab.SOURCE_COLORS["computed"]]
    both = charts.source_scale(list(vocab.SOURCE_LABELS.values())).to_dict()
    assert both["domain"] == charts.source_scale().to_dict()["domain"] == charts.SOURCE_DOMAIN


def test_heatmap_draws_thin_cells_faint_with_a_legend_saying_why() -> None:
    f = pd.DataFrame({"m": ["a", "b"], "r": ["x", "x"], "v": [200.0, 5.0], "t": ["1", "2"],
                      "Basis": ["too few", "enough"]})
    spec = _valid(charts.heatmap(f, x="m", y="r", value="v", text="t", x_order=["a", "b"],
                                 y_order=["x"], title="T", faded="Basis",
                                 faded_values=("enough", "too few")))
    rect, label = spec["layer"]
    for layer in (rect, label):
        op = layer["encoding"]["opacity"]
        assert op["field"] == "Basis" and op["scale"]["domain"] == ["enough", "too few"]
        assert op["scale"]["range"] == [1.0, charts.FADED_OPACITY]
    assert rect["encoding"]["opacity"]["legend"]["title"] == "Basis"
    assert label["encoding"]["opacity"]["legend"] is None  # one legend, not two
    plain = _valid(charts.heatmap(f, x="m", y="r", value="v", text="t", x_order=["a", "b"],
                                  y_order=["x"], title="T"))
    assert all("opacity" not in layer["encoding"] for layer in plain["layer"])


def test_deviation_dots_draw_thin_identities_faint() -> None:
    f = pd.DataFrame({"Model": ["a", "a"], "Axis": ["Caste"] * 2, "Identifier": ["x", "y"],
                      "Deviation %": [1.0, -50.0], "n rows": [300, 2], "Source type": ["c"] * 2,
                      "Basis": ["enough", "too few"]})
    spec = _valid(charts.deviation_dots(f, y_order=["x", "y"], color_order=["a"],
                                        faded="Basis", faded_values=("enough", "too few")))
    dots = [layer for layer in spec["layer"] if "opacity" in layer.get("encoding", {})]
    assert len(dots) == 1
    op = dots[0]["encoding"]["opacity"]
    assert op["scale"] == {"domain": ["enough", "too few"], "range": [1.0, charts.FADED_OPACITY]}
    assert op["legend"]["title"] == "Basis"


def test_a_low_outlier_is_marked_inside_the_plot_not_over_the_labels() -> None:
    """A marker left of the left edge ran into the identity names (Identifiers, '-60 ◀'
    over 'Sikh'): low markers are written right of the edge, high ones left of it."""
    f = pd.DataFrame({"Model": ["a"] * 12, "Axis": ["Caste"] * 12,
                      "Identifier": [f"i{k}" for k in range(12)],
                      "Deviation %": [1.0, -2.0, 3.0, -1.0, 2.0, 0.5, -0.5, 1.5, -1.5, 2.5,
                                      -900.0, 900.0],
                      "n rows": [300] * 12, "Source type": ["c"] * 12})
    spec = _valid(charts.deviation_dots(f, y_order=list(f["Identifier"]), color_order=["a"]))
    marks = {}
    for layer in spec["layer"]:
        low = [t["filter"]["equal"] for t in layer.get("transform", [])
               if t.get("filter", {}).get("field") == "_clip_low"]
        if low:
            marks[low[0]] = (layer["mark"]["align"], layer["mark"]["dx"])
    assert marks == {True: ("left", 6), False: ("right", -6)}
    recs = {r["Identifier"]: r["_clip"] for r in spec["data"]["values"] if r["_clip"]}
    assert recs == {"i10": "◀ −900", "i11": "▶ 900"}  # a true minus (explorer.numbers)


def test_heatmap_cells_take_their_short_label_on_a_narrow_box() -> None:
    """'4.4 % Sikh>Sunni' is wider than a phone's cell, and Vega shrank the whole plot to
    hold it; on a narrow box the cell shows its short label, on a wide one the full label."""
    from explorer import export

    f = pd.DataFrame({"m": ["a"], "r": ["x"], "v": [4.4], "Label": ["4.4% Sikh>Sunni"],
                      "Short": ["4.4%"]})
    spec = _valid(charts.heatmap(f, x="m", y="r", value="v", text="Label", x_order=["a"],
                                 y_order=["x"], title="T", narrow_text="Short"))
    label = spec["layer"][1]
    calc = next(t for t in label["transform"] if t.get("as") == "_cell")["calculate"]
    assert calc == f'{export.NARROW} ? datum["Short"] : datum["Label"]'
    assert label["encoding"]["text"]["field"] == "_cell"
    plain = _valid(charts.heatmap(f, x="m", y="r", value="v", text="Label", x_order=["a"],
                                  y_order=["x"], title="T"))
    assert plain["layer"][1]["encoding"]["text"]["field"] == "Label"


def test_heatmap_text_is_white_on_dark_cells_and_dark_on_faint_ones() -> None:
    """Black labels on the darkest blues (the largest gaps) were hard to read: a cell whose
    fill is darker than WCAG's 4.5:1 point for black text gets white text, unless it is drawn
    faint (too few answers), which makes it light whatever its value."""
    frame = pd.DataFrame({"M": ["a", "b", "c"], "R": ["r"] * 3, "v": [1.0, 199.0, 199.0],
                          "L": ["low", "high", "thin"],
                          "B": ["enough", "enough", "too few"]})
    spec = charts.to_spec(charts.heatmap(
        frame, x="M", y="R", value="v", text="L", x_order=["a", "b", "c"], y_order=["r"],
        title="t", faded="B", faded_values=("enough", "too few")))
    color = next(layer["encoding"]["color"] for layer in spec["layer"]
                 if layer["mark"]["type"] == "text")
    assert "luminance(scale('color', datum[\"v\"]))" in color["condition"]["test"]
    if not export.can_render():
        return
    svg = export.to_svg(export.press_spec(spec, export.provenance("T"))).decode()
    fills = {label: fill for fill, label
             in re.findall(r'<text[^>]*fill="([^"]+)"[^>]*>(low|high|thin)</text>', svg)}
    assert fills == {"low": "#111111", "high": "white", "thin": "#111111"}, fills
