"""Altair charts. Colours are Okabe–Ito (colour-blind safe); models keep one order everywhere.

Radar: Vega-Lite has no polar line mark (vega/vega-lite#7423), so each point is placed at
x = r·cos θ, y = r·sin θ, the polygon is closed by repeating the first axis, and rings, spokes
and labels are extra layers on hidden cartesian axes. All models' radars are one faceted chart;
radii are normalised per panel (1 = the panel's outer ring) so a shared or per-model scale is
just a choice of outer ring, and ring labels show real percentages. Every radar view has a
dot-plot-with-CI alternative, which reads more exactly.

Speed (measured in bench/app.py): pages draw through :func:`spec`, which keeps the Vega-Lite
dict of each (builder, arguments), so a view seen before costs no Altair work at all; each
chart has **one** inline dataset shared by its layers (layers pick their rows with a filter),
encodings use explicit channel objects with ``field=`` (shorthand strings are resolved against
the whole schema, ~0.1 s each), Altair's eager validation is off, and :func:`to_spec`
serialises without re-validation — the full schema check runs in
``tests/explorer/test_charts.py`` instead. Small multiples are facets, not many charts.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, TypeVar

import altair as alt
import numpy as np
import pandas as pd
from altair.utils.schemapi import UndefinedType

from explorer import export, numbers, vocab

alt.utils.schemapi.disable_debug_mode()

SOURCE_DOMAIN = [vocab.SOURCE_LABELS[k] for k in vocab.SOURCE_KINDS]
SOURCE_RANGE = [vocab.SOURCE_COLORS[k] for k in vocab.SOURCE_KINDS]
TASK_COLORS = {
    "all": "#000000",
    "salary_estimation": "#0072B2",
    "salary_increment_estimation": "#E69F00",
    "counter_offer_recommendation": "#009E73",
    "service_pricing_vendor": "#CC79A7",
    "service_pricing_client": "#56B4E9",
}
LANGUAGE_COLORS = {"Overall": "#555555", "English": "#0072B2", "Hinglish": "#D55E00"}
#: Okabe–Ito first, then darker/lighter companions: distinguishable for colour-blind readers.
MODEL_PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
                 "#000000", "#7F7F7F", "#8C564B", "#1B9E77", "#7570B3", "#E7298A", "#66A61E"]
_Q: Final = "quantitative"
_N: Final = "nominal"


def _legend(**kw: Any) -> alt.Legend:  # Legend options, passed through
    return alt.Legend(orient="bottom", title=None, labelLimit=0, **kw)


def records(frame: pd.DataFrame) -> alt.Data:
    """Inline data as plain records (NaN/NA → null), built column by column: much cheaper than
    Altair's DataFrame sanitising for pandas' Arrow-backed string columns."""
    cols: dict[str, list[object]] = {}
    for name in frame.columns:
        cols[str(name)] = [_plain(v) for v in frame[name].tolist()]
    return alt.Data(values=[dict(zip(cols, row, strict=True)) for row in zip(*cols.values(),
                                                                              strict=True)])


def _plain(value: object) -> object:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


_Chart = TypeVar("_Chart", bound=alt.TopLevelMixin)


def with_data(chart: _Chart, frame: pd.DataFrame) -> _Chart:
    """Attach the data last: Altair deep-copies a chart's data on every ``properties()`` /
    ``facet()`` call, which for inline records cost more than everything else."""
    chart.data = records(frame)
    return chart


#: Characters Vega parses inside a field name (nested access, quoting, escapes). A field
#: "Mean Kendall's W" made Vega fail with "Access path missing closing quote" and drew an
#: empty chart; such names are replaced by look-alikes that Vega reads literally.
_VEGA_UNSAFE = {"'": "\u2019", '"': "\u201d", ".": "\u2024", "[": "(", "]": ")", "\\": "/"}


def safe_field(name: str) -> str:
    """``name`` with every character Vega would parse replaced by a look-alike."""
    return "".join(_VEGA_UNSAFE.get(ch, ch) for ch in str(name))


def _rename_fields(node: object, names: dict[str, str]) -> object:
    """Rewrite field references (``field``, ``groupby``, ``as``, facet/sort fields) and the
    keys of inline records. Titles stay as they were."""
    if isinstance(node, dict):
        out: dict[str, object] = {}
        for key, value in node.items():
            if key in ("field", "as") and isinstance(value, str):
                out[key] = names.get(value, value)
            elif key == "groupby" and isinstance(value, list):
                out[key] = [names.get(v, v) if isinstance(v, str) else v for v in value]
            elif key == "values" and isinstance(value, list) and value and isinstance(
                    value[0], dict):
                out[key] = [{names.get(k, k): v for k, v in rec.items()} for rec in value]
            else:
                out[key] = _rename_fields(value, names)
        return out
    if isinstance(node, list):
        return [_rename_fields(v, names) for v in node]
    return node


def _field_names(node: object, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("field", "as") and isinstance(value, str):
                found.add(value)
            elif key == "values" and isinstance(value, list):
                for rec in value[:1]:
                    if isinstance(rec, dict):
                        found.update(str(k) for k in rec)
            else:
                _field_names(value, found)
    elif isinstance(node, list):
        for v in node:
            _field_names(v, found)


def sanitize_fields(spec: dict[str, Any]) -> dict[str, Any]:
    """Make every field name of a Vega-Lite spec safe for Vega's access-path parser."""
    found: set[str] = set()
    _field_names(spec, found)
    names = {f: safe_field(f) for f in found if safe_field(f) != f}
    renamed = _rename_fields(spec, names) if names else spec
    return renamed if isinstance(renamed, dict) else spec


def to_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The Vega-Lite dict for ``st.vega_lite_chart``, without re-validation and without
    Altair's default 300-px view size (charts fill their container); field names are made
    safe for Vega (:func:`sanitize_fields`)."""
    spec = sanitize_fields(chart.to_dict(validate=False))
    config = spec.get("config", {})
    view = config.get("view", {})
    for key in ("continuousWidth", "continuousHeight"):
        view.pop(key, None)
    if "view" in config and not view:
        config.pop("view")
    if "config" in spec and not config:
        spec.pop("config")
    return spec


#: How many chart specs :func:`spec` keeps (a few KB each; a page shows at most ~4 charts).
SPEC_CACHE_SIZE: Final = 256
_SPECS: OrderedDict[str, dict[str, Any]] = OrderedDict()
_SPECS_LOCK = threading.Lock()


def _feed(h: Any, value: object) -> None:
    """Add ``value`` to the digest ``h``: frames by their content, Altair objects by their
    dict, containers element by element, anything else by its repr."""
    if isinstance(value, pd.DataFrame | pd.Series):
        frame = value.to_frame() if isinstance(value, pd.Series) else value
        h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
        try:
            h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
        except TypeError:  # unhashable cells (lists): their JSON instead
            h.update(frame.to_json(orient="split", default_handler=str).encode())
    elif isinstance(value, np.ndarray | pd.Index):  # their repr elides long arrays
        _feed(h, value.tolist())
    elif isinstance(value, alt.SchemaBase):
        h.update(json.dumps(value.to_dict(validate=False), sort_keys=True,
                            default=str).encode())
    elif isinstance(value, Mapping):
        h.update(b"{")
        for k in sorted(value, key=repr):
            _feed(h, k)
            _feed(h, value[k])
        h.update(b"}")
    elif isinstance(value, list | tuple):
        h.update(b"[")
        for v in value:
            _feed(h, v)
        h.update(b"]")
    else:
        h.update(f"{type(value).__name__}:{value!r};".encode())


def spec(builder: Callable[..., alt.TopLevelMixin], /, *args: Any, **kwargs: Any
         ) -> dict[str, Any]:
    """``to_spec(builder(*args, **kwargs))``, kept per (builder, arguments) digest.

    Building and serialising an Altair chart took most of a page's server time (0.1–0.4 s per
    run); the same view drawn again — another visit, a widget that changes nothing in the
    chart — now only hashes its data. Returns a copy: callers may change it."""
    h = hashlib.sha256(f"{builder.__module__}.{builder.__qualname__}".encode())
    _feed(h, args)
    _feed(h, kwargs)
    key = h.hexdigest()
    with _SPECS_LOCK:
        hit = _SPECS.get(key)
        if hit is not None:
            _SPECS.move_to_end(key)
    if hit is None:
        hit = to_spec(builder(*args, **kwargs))
        with _SPECS_LOCK:
            _SPECS[key] = hit
            while len(_SPECS) > SPEC_CACHE_SIZE:
                _SPECS.popitem(last=False)
    return _copy_spec(hit)


def _copy_spec(value: Any, in_data: bool = False) -> Any:
    """A copy of a spec's dicts and lists that shares its data rows (``datasets`` and
    ``data.values``: read, never changed, and most of a spec): deep-copying them cost ~50 ms
    of every cached run of Axes & use cases (py-spy)."""
    if isinstance(value, dict):
        return {k: (list(v) if isinstance(v, list) and (in_data or k == "values") else
                    _copy_spec(v, k == "datasets")) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_spec(v) for v in value]
    return value


def language_scale(present: Sequence[str] | None = None) -> alt.Scale:
    """Fixed language colours; with ``present``, only those languages (a legend listing
    "Overall" beside a chart without it sent readers looking for grey dots)."""
    keep = [k for k in LANGUAGE_COLORS if present is None or k in set(present)] or \
        list(LANGUAGE_COLORS)
    return alt.Scale(domain=keep, range=[LANGUAGE_COLORS[k] for k in keep])


def source_scale(present: Sequence[str] | None = None) -> alt.Scale:
    """Fixed published/computed colours; with ``present``, only those source types (a lane's
    legend listed "Published (paper)" under a chart of computed models alone)."""
    keep = [n for n, label in enumerate(SOURCE_DOMAIN) if present is None or label in set(present)]
    keep = keep or list(range(len(SOURCE_DOMAIN)))
    return alt.Scale(domain=[SOURCE_DOMAIN[n] for n in keep], range=[SOURCE_RANGE[n] for n in keep])


def task_scale(labels: dict[str, str], present: Sequence[str]) -> alt.Scale:
    """Fixed use-case colours (by task) for the labels actually present."""
    keep = [k for k in TASK_COLORS if labels.get(k, k) in set(present)]
    return alt.Scale(domain=[labels.get(k, k) for k in keep], range=[TASK_COLORS[k] for k in keep])


def _tips(fields: Sequence[str], frame: pd.DataFrame) -> list[alt.Tooltip]:
    out = []
    for f in dict.fromkeys(fields):
        if f not in frame.columns:
            continue
        numeric = pd.api.types.is_numeric_dtype(frame[f]) and not pd.api.types.is_bool_dtype(
            frame[f])
        fmt = ".2f" if numeric and pd.api.types.is_float_dtype(frame[f]) else alt.Undefined
        out.append(alt.Tooltip(field=f, type=_Q if numeric else _N, format=fmt))
    return out


def _rule_at(value: float, channel: str = "x", dash: Sequence[int] = (4, 4),
             color: str = "#888888") -> alt.Chart:
    enc = alt.XDatum(value) if channel == "x" else alt.YDatum(value)
    return alt.Chart().mark_rule(color=color, strokeDash=list(dash)).encode(enc)


#: Fewest pixels per category row: a label split onto two lines on a phone needs ~24.
ROW_MIN_STEP = 26


def _row_step(frame: pd.DataFrame, color: str) -> alt.Step:
    """Height per category row: room for one offset mark per colour. Streamlit fits a fixed
    height *including* axes and legend, which squeezed small charts flat; a step grows with
    the number of rows instead."""
    colours = max(1, frame[color].nunique()) if color in frame.columns else 1
    return alt.Step(max(ROW_MIN_STEP, 9 * colours + 8), **{"for": "position"})


def _facet(chart: alt.LayerChart, facet: str | None, order: Sequence[str] | None, columns: int
           ) -> alt.TopLevelMixin:
    if not facet:
        return chart
    return alt.FacetChart(spec=chart, columns=columns, facet=alt.Facet(
        field=facet, type=_N, sort=list(order or []), title=None,
        header=alt.Header(labelFontWeight="bold", labelLimit=0)))


def clip_limits(values: Sequence[float] | pd.Series, signed: bool = False
                ) -> tuple[float, float] | None:
    """An axis range that one outlier cannot flatten, or None when nothing needs clipping.

    The cap is a round number above 3 × the upper quartile of |value| (robust to a few
    outliers); it applies only when some value lies beyond it. Points past the
    cap are drawn at the edge with a ▶/◀ marker and their true value in the label."""
    arr = np.asarray(pd.to_numeric(pd.Series(values), errors="coerce"), dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size < 3:
        return None
    mag = np.abs(arr) if signed else np.clip(arr, 0, None)
    q = float(np.quantile(mag, 0.75))
    if q <= 0:
        return None
    cap = nice_ticks(3.0 * q)[-1]
    if float(mag.max()) <= cap:
        return None
    low = -cap if signed else min(0.0, float(arr.min()))
    return (low, cap)


def _clip_marks(scale: alt.Scale | UndefinedType, *enc: Any) -> list[alt.Chart]:
    """The true values of points held at the edge (:func:`_clip_columns`), written inside the
    plot: left of the right edge, right of the left edge (written left of it, a low marker
    ran into the axis labels)."""
    return [alt.Chart().mark_text(align="left" if low else "right", dx=6 if low else -6,
                                  fontSize=10, fontWeight="bold", color="#B00020")
            .transform_filter(alt.FieldValidPredicate(field="_clip_x", valid=True))
            .transform_filter(alt.FieldEqualPredicate(field="_clip_low", equal=low))
            .encode(alt.X(field="_clip_x", type=_Q, scale=scale), *enc,
                    alt.Text(field="_clip", type=_N))
            for low in (False, True)]


def _clip_columns(frame: pd.DataFrame, cols: Sequence[str], limits: tuple[float, float],
                  value: str) -> pd.DataFrame:
    """Add ``_c_<col>`` (value held inside the limits) and ``_clip`` (a marker with the true
    value for points beyond them)."""
    lo_lim, hi_lim = limits
    out = frame.copy()
    for c in cols:
        if c in out.columns:
            out[f"_c_{c}"] = pd.to_numeric(out[c], errors="coerce").clip(lo_lim, hi_lim)
    v = pd.to_numeric(out[value], errors="coerce")
    out["_clip"] = [f"▶ {numbers.num(x, 0)}" if x > hi_lim else
                    f"◀ {numbers.num(x, 0)}" if x < lo_lim else None for x in v.fillna(0.0)]
    out["_clip_x"] = [hi_lim if x > hi_lim else lo_lim if x < lo_lim else None
                      for x in v.fillna(0.0)]
    out["_clip_low"] = v.fillna(0.0) < lo_lim
    inside = (v >= lo_lim) & (v <= hi_lim)
    # an interval cut at the edge while its point is inside: marked where it is cut
    ends = [(cols[-1], hi_lim, "›", True)] + ([(cols[1], lo_lim, "‹", False)]
                                              if len(cols) > 2 else [])
    for c, edge, mark, above in ends:
        if c not in out.columns:
            continue
        end = pd.to_numeric(out[c], errors="coerce")
        cut = (inside & ((end > edge) if above else (end < edge))).to_numpy()
        out[f"_cut_{mark}"] = np.where(cut, edge, np.nan)
    return out


def clip_note(limits: tuple[float, float] | None, frame: pd.DataFrame, value: str,
              interval: tuple[str, str] | None = None) -> str:
    """One line for the caption: how many points lie beyond the drawn range (both sides), and
    how many intervals run past its edge (``interval``: the low and high columns)."""
    if limits is None:
        return ""
    lo_lim, hi_lim = limits
    v = pd.to_numeric(frame[value], errors="coerce")
    n = int(((v > hi_lim) | (v < lo_lim)).sum())
    cut = 0
    if interval is not None:
        lo = pd.to_numeric(frame[interval[0]], errors="coerce")
        hi = pd.to_numeric(frame[interval[1]], errors="coerce")
        cut = int((((hi > hi_lim) | (lo < lo_lim)) & (v >= lo_lim) & (v <= hi_lim)).sum())
    where = f"±{hi_lim:g}" if lo_lim == -hi_lim else f"{hi_lim:g}"
    parts = []
    if n:
        parts.append(f"{n} value(s) beyond {where} are drawn at the edge with ▶ (◀) and their "
                     "true value, so that one outlier does not flatten the rest.")
    if cut:
        parts.append(f"{cut} interval(s) run past the edge of the chart (marked › or ‹); the "
                     "table gives their ends.")
    return " ".join(parts)


def ci_limits(frame: pd.DataFrame, x: str, lo: str, hi: str, signed: bool = False
              ) -> tuple[float, float] | None:
    """The range :func:`ci_dots` draws for these columns (so a caption can describe it)."""
    if not len(frame):
        return None
    return clip_limits(pd.concat([frame[x], frame.get(lo, frame[x]), frame.get(hi, frame[x])]),
                       signed=signed)


def ci_dots(frame: pd.DataFrame, *, x: str, lo: str, hi: str, y: str, color: str,
            y_order: Sequence[str], x_title: str, color_scale: alt.Scale | None = None,
            zero_line: bool = False, ref: float | None = None, tooltip: Sequence[str] = (),
            facet: str | None = None, facet_order: Sequence[str] | None = None,
            columns: int = 2, clip: bool = True) -> alt.TopLevelMixin:
    """Points with 95% CI whiskers, one row per ``y``; several colours per row are offset.

    With ``clip`` an outlier is held at the edge of an outlier-proof range (see
    :func:`clip_limits`), marked ▶ with its true value; the tooltip shows the real numbers."""
    ych = alt.Y(field=y, type=_N, sort=list(y_order), title=None, axis=alt.Axis(labelLimit=0))
    off = alt.YOffset(field=color, type=_N)
    col = alt.Color(field=color, type=_N, scale=color_scale or alt.Undefined, legend=_legend())
    limits = ci_limits(frame, x, lo, hi, signed=zero_line) if clip else None
    xs, los, his = x, lo, hi
    scale: alt.Scale | UndefinedType = alt.Undefined
    if limits is not None:
        frame = _clip_columns(frame, (x, lo, hi), limits, x)
        xs, los, his = f"_c_{x}", f"_c_{lo}", f"_c_{hi}"
        scale = alt.Scale(domain=list(limits), nice=False)
    layers: list[alt.Chart] = []
    if zero_line:
        layers.append(_rule_at(0.0))
    if ref is not None:
        layers.append(_rule_at(ref, dash=(6, 3), color="#444444"))
    if lo in frame.columns:
        layers.append(alt.Chart().mark_rule(strokeWidth=2).encode(
            alt.X(field=los, type=_Q, title=x_title, scale=scale), alt.X2(field=his), ych, off,
            col))
    layers.append(alt.Chart().mark_point(filled=True, size=70, opacity=1).encode(
        alt.X(field=xs, type=_Q, title=x_title, scale=scale), ych, off, col,
        tooltip=_tips((y, color, x, lo, hi, *tooltip), frame)))
    if limits is not None:
        layers += _clip_marks(scale, ych, off)
        cut_marks: tuple[tuple[str, Literal["left", "right"], int], ...] = (
            ("›", "left", 2), ("‹", "right", -2))
        for mark, align, dx in cut_marks:
            if f"_cut_{mark}" in frame.columns and frame[f"_cut_{mark}"].notna().any():
                layers.append(alt.Chart().mark_text(
                    align=align, fontSize=14, fontWeight="bold", color="#B00020", text=mark,
                    dx=dx).transform_filter(
                    alt.FieldValidPredicate(field=f"_cut_{mark}", valid=True)).encode(
                    alt.X(field=f"_cut_{mark}", type=_Q, scale=scale), ych, off))
    chart = alt.LayerChart(layer=layers)
    if facet:
        return with_data(_facet(chart.properties(height=_row_step(frame, color),
                                                 width=FACET_PANEL_WIDTH),
                                facet, facet_order, columns), frame)
    return with_data(chart.properties(height=_row_step(frame, color)), frame)


#: A dot-plot panel's plot width (px) when faceted: with its two-line labels on a phone
#: (export._OWN_WIDTH_CONFIG) a 250-px panel fits a 390-px screen; at 320 px the largest gaps'
#: dots lay beyond the edge, as if missing.
FACET_PANEL_WIDTH = 250


#: Height (in ring radii) of the top spoke's name, above the outer ring's label.
RADAR_TOP_LABEL_Y = 1.24


def radar_data(panels: dict[str, pd.DataFrame], *, shared: bool,
               series_labels: dict[str, str]) -> pd.DataFrame:
    """All radar layers as one long frame: ``part`` says which layer a row belongs to."""
    axes = list(vocab.AXES)
    n = len(axes)
    angle = {a: math.pi / 2 - 2 * math.pi * i / n for i, a in enumerate(axes)}
    closed = [*axes, axes[0]]  # repeat axis 0: closes the polygon
    r_all = max([float(f["mean_delta"].max()) for f in panels.values() if len(f)] or [1.0])
    rows: list[dict[str, Any]] = []
    for panel, frame in panels.items():
        ticks = nice_ticks(r_all if shared else float(frame["mean_delta"].max() or 1.0))
        top = ticks[-1]
        for key, sub in frame.groupby("task", sort=False):
            values = dict(zip(sub["axis"], sub["mean_delta"], strict=False))
            for order, a in enumerate(closed):
                r = values.get(a)
                if r is None or pd.isna(r):
                    continue
                rows.append({"panel": panel, "part": "poly", "series": series_labels.get(
                    key, key), "axis": a, "order": order, "Mean Δ%": round(float(r), 2),
                    "x": float(r) / top * math.cos(angle[a]),
                    "y": float(r) / top * math.sin(angle[a])})
        for t in ticks:
            for order, a in enumerate(closed):
                rows.append({"panel": panel, "part": "ring", "series": f"{t:g}", "order": order,
                             "x": t / top * math.cos(angle[a]), "y": t / top * math.sin(angle[a])})
            rows.append({"panel": panel, "part": "ring_label", "label": f"{t:g}%", "x": 0.0,
                         "y": t / top})
        for a in axes:
            rows.append({"panel": panel, "part": "spoke", "axis": a, "x": 0.0, "y": 0.0,
                         "x2": math.cos(angle[a]), "y2": math.sin(angle[a])})
            # the top spoke's name sits higher: the ring labels run up that spoke, and at 1.12
            # "Religion" was written over the outer ring's "80%"
            lift = RADAR_TOP_LABEL_Y if a == axes[0] else 1.12
            rows.append({"panel": panel, "part": "axis_label", "label": a,
                         "x": 1.22 * math.cos(angle[a]), "y": lift * math.sin(angle[a])})
    cols = ["panel", "part", "series", "axis", "order", "Mean Δ%", "label", "x", "y", "x2", "y2"]
    return pd.DataFrame(rows, columns=cols)


def radars(data: pd.DataFrame, *, panel_order: Sequence[str], series_labels: dict[str, str],
           size: int = 250, columns: int = 3) -> alt.FacetChart:
    """Faceted radars from :func:`radar_data` (one panel per model)."""
    dom = [-1.45, 1.45]
    sx = alt.Scale(domain=dom, nice=False, zero=False)
    sy = alt.Scale(domain=dom, nice=False, zero=False)
    xy = [alt.X(field="x", type=_Q, scale=sx, axis=None),
          alt.Y(field="y", type=_Q, scale=sy, axis=None)]

    def part(name: str) -> alt.FieldEqualPredicate:
        return alt.FieldEqualPredicate(field="part", equal=name)

    polys = data[data["part"] == "poly"]
    color = alt.Color(field="series", type=_N,
                      scale=task_scale(series_labels, polys["series"].dropna().unique()),
                      legend=_legend(columns=3))
    layers = [
        alt.Chart().mark_line(color="#cccccc", strokeWidth=0.8).transform_filter(part("ring"))
        .encode(*xy, alt.Detail(field="series", type=_N), alt.Order(field="order", type=_Q)),
        alt.Chart().mark_rule(color="#cccccc").transform_filter(part("spoke")).encode(
            *xy, alt.X2(field="x2"), alt.Y2(field="y2")),
        alt.Chart().mark_text(color="#666666", fontSize=9, dx=3, align="left",
                              baseline="bottom").transform_filter(part("ring_label"))
        .encode(*xy, alt.Text(field="label", type=_N)),
        alt.Chart().mark_text(fontSize=11, fontWeight="bold").transform_filter(
            part("axis_label")).encode(*xy, alt.Text(field="label", type=_N)),
        alt.Chart().mark_line(strokeWidth=2, opacity=0.85).transform_filter(part("poly"))
        .encode(*xy, color, alt.Detail(field="series", type=_N),
                alt.Order(field="order", type=_Q)),
        alt.Chart().mark_point(filled=True, size=40).transform_filter(part("poly"))
        .transform_filter(alt.FieldLTPredicate(field="order", lt=len(vocab.AXES)))
        .encode(*xy, color, tooltip=[alt.Tooltip(field="panel", type=_N, title="Model"),
                                     alt.Tooltip(field="series", type=_N, title="Use case"),
                                     alt.Tooltip(field="axis", type=_N, title="Axis"),
                                     alt.Tooltip(field="Mean Δ%", type=_Q, format=".2f")]),
    ]
    chart = alt.LayerChart(layer=layers).properties(width=size, height=size)
    return with_data(alt.FacetChart(spec=chart, columns=columns, facet=alt.Facet(
        field="panel", type=_N, sort=list(panel_order), title=None,
        header=alt.Header(labelFontWeight="bold", labelLimit=0))).configure_view(
        strokeWidth=0), data)


def nice_ticks(r_max: float) -> list[float]:
    """Four rings ending at a round number ≥ r_max."""
    r_max = max(float(r_max or 0), 1.0)
    step = 10 ** math.floor(math.log10(r_max / 4))
    for mult in (1, 2, 2.5, 5, 10):
        if 4 * step * mult >= r_max:
            step *= mult
            break
    return [round(step * i, 6) for i in range(1, 5)]


#: Opacity of a heatmap cell that rests on too few answers (see ``faded``).
FADED_OPACITY = 0.3


def _fade(faded: str | None, values: tuple[str, str]) -> list[alt.Opacity]:
    """Opacity by ``faded`` (a column holding ``values``: enough answers, too few): the
    first with the *Basis* legend, the second for further layers, without one."""
    if not faded:
        return []
    scale = alt.Scale(domain=list(values), range=[1.0, FADED_OPACITY])
    return [alt.Opacity(field=faded, type=_N, scale=scale,
                        legend=alt.Legend(orient="bottom", title="Basis")),
            alt.Opacity(field=faded, type=_N, scale=scale, legend=None)]


#: Cells darker than this (WCAG relative luminance of the fill) get white text: black on it
#: falls below a 4.5:1 contrast.
HEATMAP_DARK_LUMINANCE = 0.18
#: The diverging heatmap's Vega colour scheme; explorer.heat draws the same colours as HTML.
DIVERGING_SCHEME: Final[Literal["blueorange"]] = "blueorange"


def heatmap(frame: pd.DataFrame, *, x: str, y: str, value: str, text: str,
            x_order: Sequence[str], y_order: Sequence[str], title: str, diverging: bool = False,
            domain: tuple[float, float] | None = None, tooltip: Sequence[str] = (),
            faded: str | None = None, faded_values: tuple[str, str] = ("", ""),
            narrow_text: str | None = None) -> alt.LayerChart:
    """A labelled heatmap; diverging (blue–orange around 0) for signed gaps.

    ``narrow_text`` names a shorter cell label for a narrow box: a label wider than its cell
    made Vega shrink the whole plot to hold it (on a phone, the largest gaps' "4.4 %
    Sikh>Sunni" left 30-px columns with every label over its neighbour).

    ``faded`` names a column holding ``faded_values`` (enough, too few answers): cells of
    the second are drawn faint, with a legend saying why — at full strength the thinnest
    cells (one answer against one) were the darkest on the chart."""
    dom = list(domain) if domain else alt.Undefined
    scale = (alt.Scale(scheme=DIVERGING_SCHEME, domainMid=0, domain=dom) if diverging
             else alt.Scale(scheme="blues", domain=dom))
    xch = alt.X(field=x, type=_N, sort=list(x_order), title=None,
                axis=alt.Axis(labelAngle=-30, labelLimit=0, orient="top"))
    ych = alt.Y(field=y, type=_N, sort=list(y_order), title=None, axis=alt.Axis(labelLimit=0))
    fade = _fade(faded, faded_values)
    rect = alt.Chart().mark_rect().encode(
        xch, ych, alt.Color(field=value, type=_Q, scale=scale, title=title,
                            legend=alt.Legend(orient="bottom")),
        *fade[:1], tooltip=_tips((y, x, value, *tooltip, *([faded] if faded else [])), frame))
    label = alt.Chart().mark_text(fontSize=10, color="#111111")
    if narrow_text:
        label = label.transform_calculate(
            _cell=f"{export.NARROW} ? datum[{json.dumps(narrow_text)}] : "
                  f"datum[{json.dumps(text)}]")
    # white text on a dark cell (black on the darkest blues was hard to read); a faint cell is
    # light whatever its value, so its text stays dark
    dark = f"luminance(scale('color', datum[{json.dumps(value)}])) < {HEATMAP_DARK_LUMINANCE}"
    if faded:
        dark += f" && datum[{json.dumps(faded)}] !== {json.dumps(faded_values[1])}"
    label = label.encode(xch, ych, alt.Text(field="_cell" if narrow_text else text, type=_N),
                         *fade[1:], color=alt.condition(dark, alt.value("white"),
                                                        alt.value("#111111")))
    return with_data(alt.LayerChart(layer=[rect, label]).properties(height=alt.Step(28)),
                     frame)


#: Fewest models for which the quadrant draws its median lines.
QUADRANT_MIN_MODELS = 3
#: Beyond this share of the largest x a quadrant point's label sits on its left: on the
#: right it ran past the plot, and on a phone Vega pushed the whole chart off its box.
QUADRANT_LABEL_LEFT = 0.55
#: The quadrant's y title: at most ~32 characters, or it sticks out above the plot.
QUADRANT_Y_TITLE = "Kendall's W — more consistent ↑"
#: The quadrant's plot height in px (its legends add to it).
QUADRANT_PLOT_HEIGHT = 360


def quadrant(frame: pd.DataFrame, *, x: str, y: str) -> alt.LayerChart:
    """Mean Δ% vs Kendall's W: open-weight models are triangles, closed ones circles.

    Both axes start at 0: fitted to the data, two models whose W differ by 0.004 (far less
    than its Monte-Carlo and sampling noise) filled the whole height and read as opposites.
    The y title is short: a title longer than the plot is high stuck out above it, and Vega
    then laid the chart's title block out above the chart's box, where it was cut off. Median
    lines need at least three models: between two they only split the pair. On a narrow box
    the points carry numbers and a key names them (:func:`quadrant_keys`): the names ran over
    each other there."""
    xch = alt.X(field=x, type=_Q, title="Mean Δ% (unweighted) — bigger gaps →",
                scale=alt.Scale(zero=True))
    ych = alt.Y(field=y, type=_Q, title=QUADRANT_Y_TITLE, scale=alt.Scale(zero=True))
    layers: list[alt.Chart] = []
    if len(frame) >= QUADRANT_MIN_MODELS:
        layers += [_rule_at(float(frame[x].median())),
                   _rule_at(float(frame[y].median()), channel="y")]
    layers.append(alt.Chart().mark_point(filled=True, size=130).encode(
        xch, ych,
        alt.Shape(field="Weights", type=_N,
                  scale=alt.Scale(domain=["closed", "open", "unknown"],
                                  range=["circle", "triangle-up", "square"]),
                  legend=alt.Legend(orient="bottom", title="Weights", symbolSize=60,
                                    direction="horizontal", columns=3)),
        # one lane per chart: its title names the lane, and a legend would only take room
        alt.Color(field="Source type", type=_N, scale=source_scale(),
                  legend=_legend() if frame["Source type"].nunique() > 1 else None),
        tooltip=_tips(("Model", "Source type", "Weights", x, y, "x basis"), frame)))
    left = "_label_left"
    frame = frame.assign(**{left: frame[x] > QUADRANT_LABEL_LEFT * frame[x].max()},
                         **quadrant_keys(frame, x))
    keyed = frame.sort_values(QUADRANT_KEY, key=lambda s: s.astype(int), kind="stable")
    # the key, read on a narrow box only: an entry per point, "3 GPT 5.4", under the plot; on a
    # wide box (and in exports) its text and spacing are 0, so it draws nothing
    layers.append(alt.Chart().mark_point(opacity=0, size=0).encode(
        xch, ych, alt.Opacity(field=QUADRANT_KEY_ENTRY, type=_N,
                              scale=alt.Scale(domain=keyed[QUADRANT_KEY_ENTRY].tolist(),
                                              range=[0.0]), legend=_key_legend())))
    for on_left in (False, True):
        names = (alt.Chart()
                 .transform_filter(alt.FieldEqualPredicate(field=left, equal=on_left))
                 .transform_calculate(
                     _label=f"{export.NARROW} ? datum.{QUADRANT_KEY} : datum.Model")
                 .encode(xch, ych, alt.Text(field="_label", type=_N)))
        place: dict[str, Any] = {"align": "right" if on_left else "left",
                                 "dx": -9 if on_left else 9, "fontSize": 10}
        # each name over a white halo of itself: a median line running through a name (Kimi
        # K2.5 sits on the W median) crossed its letters
        layers += [names.mark_text(**place, stroke="white", strokeWidth=3, strokeJoin="round"),
                   names.mark_text(**place)]
    # the plot keeps its height and the chart grows by its legends (the narrow key's nine
    # lines took their room from a fitted plot, which shrank to a strip)
    return with_data(alt.LayerChart(layer=layers).properties(
        height=QUADRANT_PLOT_HEIGHT, autosize=alt.AutoSizeParams(type="fit-x",
                                                                 contains="padding")), frame)


#: The quadrant's point numbers and key entries (a narrow box labels points by number: the
#: models of the paper sit so close that their names ran over each other and the wrong point).
QUADRANT_KEY, QUADRANT_KEY_ENTRY = "_key", "_key_entry"


def quadrant_keys(frame: pd.DataFrame, x: str) -> dict[str, list[str]]:
    """Point numbers 1…n from left to right (ties by model name), and "n Model" entries."""
    order = np.lexsort((frame["Model"].astype(str).to_numpy(), frame[x].to_numpy(float)))
    number = np.empty(len(frame), dtype=int)
    number[order] = np.arange(1, len(frame) + 1)
    keys = [str(n) for n in number]
    return {QUADRANT_KEY: keys,
            QUADRANT_KEY_ENTRY: [f"{k} {m}" for k, m in zip(keys, frame["Model"], strict=True)]}


def _key_legend() -> alt.Legend:
    """A legend that shows only on a narrow box: every size and gap is 0 on a wide one, and
    an export leaves it out (:data:`export.SCREEN_ONLY`). A line may take the box's width
    less the y axis the legend starts beside (~110 px): "11 Qwen2.5-Coder-1.5B-Instruct
    (local)" fits a 390-px phone at 12 px."""
    def narrow(on: float | str) -> dict[str, str]:
        return export.on_narrow(on, 0)
    return alt.Legend(orient="bottom", title="Key", description=export.SCREEN_ONLY,
                      direction="vertical", columns=1,
                      symbolSize=0, symbolStrokeWidth=0, labelFontSize=narrow(12),
                      titleFontSize=narrow(14), rowPadding=narrow(2), titlePadding=narrow(6),
                      padding=narrow(2), offset=narrow(18), labelOffset=0,
                      labelLimit=narrow("max(120, containerSize()[0] - 110)"))


def bars_ci(frame: pd.DataFrame, *, x: str, lo: str, hi: str, y: str, color: str,
            y_order: Sequence[str], x_title: str, ref: float | None = None,
            color_scale: alt.Scale | None = None, opacity: str | None = None,
            tooltip: Sequence[str] = ()) -> alt.LayerChart:
    """Horizontal bars with CI whiskers (merit sensitivity, rank agreement, W by model).

    ``opacity`` names a boolean column: False bars are drawn faint (e.g. not significant)."""
    ych = alt.Y(field=y, type=_N, sort=list(y_order), title=None, axis=alt.Axis(labelLimit=0))
    off = alt.YOffset(field=color, type=_N)
    enc = [alt.X(field=x, type=_Q, title=x_title), ych, off,
           # at most three entries a line: five use cases side by side ran past the box
           alt.Color(field=color, type=_N, scale=color_scale or alt.Undefined,
                     legend=_legend(columns=3))]
    if opacity:
        enc.append(alt.Opacity(field=opacity, type=_N,
                               scale=alt.Scale(domain=["yes", "no"], range=[0.9, 0.3]),
                               legend=alt.Legend(orient="bottom", title=opacity)))
    layers: list[alt.Chart] = [alt.Chart().mark_bar().encode(
        *enc, tooltip=_tips((y, color, x, lo, hi, *tooltip), frame))]
    if lo in frame.columns and frame[lo].notna().any():
        layers.append(alt.Chart().mark_rule(color="#222222").encode(
            alt.X(field=lo, type=_Q), alt.X2(field=hi), ych, off))
    if ref is not None:
        layers.append(_rule_at(ref, dash=(5, 4), color="#444444"))
    return with_data(alt.LayerChart(layer=layers).properties(height=_row_step(frame, color)),
                     frame)


#: How a signed change is read: by its 95 % interval when it has one, else by its sign.
CHANGE_CLASSES = ("shrank", "grew", "unclear: 95 % CI spans 0", "no interval: shrank",
                  "no interval: grew")


def change_class(value: float, lo: float | None = None, hi: float | None = None) -> str:
    """A change with an interval is "shrank"/"grew" only when the interval excludes 0; one
    without an interval is said to have none (a change of 0 counts as shrank: not grown)."""
    if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
        return "shrank" if hi < 0 else "grew" if lo > 0 else CHANGE_CLASSES[2]
    return CHANGE_CLASSES[3] if value <= 0 else CHANGE_CLASSES[4]


def signed_bars(frame: pd.DataFrame, *, x: str, y: str, y_order: Sequence[str], x_title: str,
                lo: str | None = None, hi: str | None = None) -> alt.LayerChart:
    """Bars left (blue: gap reduced) or right (vermillion: gap increased) of zero, with the
    95 % interval as a whisker when ``lo``/``hi`` are given; grey where it spans 0."""
    los = frame[lo] if lo in frame.columns else pd.Series(math.nan, index=frame.index)
    his = frame[hi] if hi in frame.columns else pd.Series(math.nan, index=frame.index)
    data = frame.assign(Effect=[change_class(float(v), float(a), float(b))
                                for v, a, b in zip(frame[x], los, his, strict=True)])
    ych = alt.Y(field=y, type=_N, sort=list(y_order), title=None, axis=alt.Axis(labelLimit=0))
    bars = alt.Chart().mark_bar().encode(
        alt.X(field=x, type=_Q, title=x_title), ych,
        alt.Color(field="Effect", type=_N, scale=alt.Scale(
            domain=list(CHANGE_CLASSES),
            range=["#0072B2", "#D55E00", "#BBBBBB", "#7FB8D9", "#EBAA80"]),
            legend=alt.Legend(orient="bottom", title="Gap after the instruction")),
        tooltip=_tips([c for c in data.columns if c != "Model ID"], data))
    layers: list[alt.Chart] = [bars]
    if lo is not None and hi is not None and lo in frame.columns and hi in frame.columns \
            and frame[lo].notna().any():
        layers.append(alt.Chart().mark_rule(color="#222222").encode(
            alt.X(field=lo, type=_Q), alt.X2(field=hi), ych))
    return with_data(alt.LayerChart(layer=layers).properties(height=alt.Step(ROW_MIN_STEP)), data)


def deviation_dots(frame: pd.DataFrame, *, y_order: Sequence[str], color_order: Sequence[str],
                   facet_order: Sequence[str] | None = None, faded: str | None = None,
                   faded_values: tuple[str, str] = ("", "")) -> alt.TopLevelMixin:
    """% deviation of each identifier from its axis mean, one dot per model; one panel per
    axis when several axes are shown (each panel lists that axis's identifiers). ``faded``:
    as :func:`heatmap` — dots resting on too few answers are drawn faint."""
    ych = alt.Y(field="Identifier", type=_N, sort=list(y_order), title=None,
                axis=alt.Axis(labelLimit=0))
    limits = clip_limits(frame["Deviation %"], signed=True) if len(frame) else None
    xfield = "Deviation %"
    scale: alt.Scale | UndefinedType = alt.Undefined
    if limits is not None:
        frame = _clip_columns(frame, ("Deviation %",), limits, "Deviation %")
        xfield, scale = "_c_Deviation %", alt.Scale(domain=list(limits), nice=False)
    dots = alt.Chart().mark_point(filled=True, size=55, opacity=0.9).encode(
        alt.X(field=xfield, type=_Q, title="% above (+) or below (−) the axis average",
              scale=scale),
        ych,
        alt.Color(field="Model", type=_N, sort=list(color_order), legend=_legend(columns=3),
                  scale=alt.Scale(domain=list(color_order),
                                  range=(MODEL_PALETTE * 4)[:max(1, len(color_order))])),
        *_fade(faded, faded_values)[:1],
        tooltip=_tips(("Model", "Axis", "Identifier", "Deviation %", "n rows", "Source type",
                       *([faded] if faded else [])), frame))
    layers = [_rule_at(0.0), dots]
    if limits is not None:
        layers += _clip_marks(scale, ych)
    layer = alt.LayerChart(layer=layers)
    axes = frame["Axis"].nunique() if len(frame) else 1
    if axes > 1:
        sizes = frame.groupby("Axis")["Identifier"].nunique()
        row = alt.FacetFieldDef(field="Axis", type=_N, sort=list(facet_order or sizes.index),
                                title=None, header=alt.Header(labelAngle=0, labelAlign="left",
                                                              labelFontWeight="bold"))
        return with_data(alt.FacetChart(
            spec=layer.properties(width=520, height=alt.Step(16)),
            facet=alt.FacetMapping(row=row)).resolve_scale(y="independent"), frame)
    return with_data(layer.properties(height=alt.Step(18)), frame)


def flag_scale(flagged: str, not_flagged: str, untested: str) -> alt.Scale:
    """Vermillion for a BH-flagged effect, grey for one that could be noise, light grey for
    one that could not be tested."""
    return alt.Scale(domain=[flagged, not_flagged, untested],
                     range=["#D55E00", "#8C8C8C", "#C8C8C8"])
