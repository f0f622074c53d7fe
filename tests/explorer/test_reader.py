"""Issue 17: the explorer for the people who read it — paper models first, one plain sentence
per view, honest display (no broken Vega field names, no "+nan%", clipped outliers, markup
"gaps" never shown as gaps), the Who-gets-less view and the short Methodology opening."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from explorer import charts, sentences, tables, vocab
from tests.explorer.conftest import frame_of, texts

UNSAFE = re.compile(r"['\".\[\]\\]")


def _fields(node: object, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("field", "as") and isinstance(value, str):
                out.add(value)
            elif key == "values" and isinstance(value, list):
                for rec in value:
                    out.update(rec)
            else:
                _fields(value, out)
    elif isinstance(node, list):
        for v in node:
            _fields(v, out)
    return out


def test_vega_field_names_are_escaped_everywhere() -> None:
    """The Consistency quadrant was blank: Vega choked on "Mean Kendall's W"."""
    frame = pd.DataFrame({"Model": ["a", "b", "c"], "Source type": ["Computed here"] * 3,
                          "Mean Δ% (unweighted)": [1.0, 2.0, 3.0],
                          "Mean Kendall's W": [0.1, 0.2, 0.3], "x basis": ["x"] * 3,
                          "Weights": ["open"] * 3, "V@10 [pp.]": [1.0, 2.0, 3.0]})
    for chart in (charts.quadrant(frame, x="Mean Δ% (unweighted)", y="Mean Kendall's W"),
                  charts.ci_dots(frame, x="V@10 [pp.]", lo="V@10 [pp.]", hi="V@10 [pp.]",
                                 y="Model", color="Source type", y_order=["a", "b", "c"],
                                 x_title="t")):
        spec = charts.to_spec(chart)
        names = _fields(spec, set())
        assert names and not [n for n in names if UNSAFE.search(n)]
    spec = charts.to_spec(charts.quadrant(frame, x="Mean Δ% (unweighted)",
                                          y="Mean Kendall's W"))
    assert "Mean Kendall’s W" in _fields(spec, set())  # a look-alike, still readable
    assert charts.QUADRANT_Y_TITLE in str(spec)  # the axis title keeps its apostrophe


def test_outliers_are_clipped_with_a_marker() -> None:
    values = pd.Series([5.0, 6, 7, 8, 9, 10, 11, 12, 13, 1600])
    lo, hi = charts.clip_limits(values)
    assert hi < 100 and lo == 0
    assert charts.clip_limits(pd.Series([5.0, 6, 7, 8])) is None  # nothing to clip
    frame = pd.DataFrame({"Model": list("abcdefghij"), "L": ["x"] * 10, "v": values,
                          "lo": values - 1, "hi": values + 1})
    spec = charts.to_spec(charts.ci_dots(frame, x="v", lo="lo", hi="hi", y="Model", color="L",
                                         y_order=list("abcdefghij"), x_title="t"))
    recs = spec["data"]["values"]
    assert max(r["_c_v"] for r in recs) == hi  # drawn at the edge
    assert [r["_clip"] for r in recs if r["_clip"]] == ["▶ 1,600"]  # with its true value
    assert "1 value(s) beyond" in charts.clip_note((lo, hi), frame, "v")


@pytest.mark.parametrize("flag", ["upstream_markup_gaps", "includes_upstream_markup_gaps"])
def test_markup_rows_are_never_shown_as_gaps(flag: str) -> None:
    cells = pd.DataFrame({"model": ["m", "m"], "source_kind": ["computed"] * 2,
                          "method": ["upstream"] * 2, "task": ["all", "salary_estimation"],
                          "mean_delta": [-62.0, 12.0], "mean_delta_lo": [-70.0, 11.0],
                          "mean_delta_hi": [-50.0, 13.0], "flag": [flag, None]})
    out = tables.mask_markup(cells)
    assert out["mean_delta"].isna().tolist() == [True, False]
    assert out.loc[0, "note"] == tables.MARKUP_NOTE
    old = cells.drop(columns="flag")  # files written before the flag column: derived
    assert tables.mask_markup(old)["mean_delta"].isna().tolist() == [True, False]
    assert tables.blanked_models(out, {"m": "Model M"}) == ["Model M"]


def test_markup_masking_covers_pair_gaps_deviations_and_shifts() -> None:
    """The same rule for every table built on markups: CPG, MOG, deviation, language shift
    (which pools every use case and has no task column); other values stay."""
    row = {"model": "m", "source_kind": "computed", "method": "upstream",
           "flag": "upstream_markup_gaps"}
    for values in ({"cpg": 745.9, "cpg_lo": 500.0, "cpg_hi": 900.0, "sign_consistency": 60.0},
                   {"gap": 1070.9, "gap_lo": 1.0, "gap_hi": 2.0, "top_identifier": "Hindu"},
                   {"pct_dev": 9435.2, "n_rows": 40}):
        out = tables.mask_markup(pd.DataFrame([{**row, "task": "counter_offer_recommendation",
                                                **values}]))
        kept = {k for k in values if k in ("sign_consistency", "top_identifier", "n_rows")}
        assert {k for k in values if pd.isna(out.loc[0, k])} == set(values) - kept
    shift = pd.DataFrame([{"model": "m", "source_kind": "computed", "method": "upstream",
                           "axis": "all", "rho": 0.5, "delta_shift": -12.2,
                           "delta_shift_std": 22.0, "mean_delta_en": 37.5}])
    out = tables.mask_markup(shift, derive=True)  # no task column: pools every use case
    assert out[["delta_shift", "delta_shift_std", "mean_delta_en"]].isna().all(axis=None)
    assert out.loc[0, "rho"] == 0.5
    assert not tables.mask_markup(shift.assign(method="corrected"), derive=True)[
        "delta_shift"].isna().any()


def test_sentences_carry_number_interval_and_caveat() -> None:
    text = sentences.gap("GPT 5.4", 18.9, 18.8, 19.0, lang="en", task="salary_estimation",
                         axis="Religion", published=True)
    assert "GPT 5.4's English salary answers differ by 18.9 %" in text
    assert "95 % CI 18.8–19.0, published" in text and "no noise floor" in text
    assert "nan" not in sentences.gap("X", float("nan"), None, None, lang="en", task="all",
                                      axis="all", published=False)
    assert sentences.ci(-8.5, -4.2) == "95 % CI −8.5 to −4.2"


def test_overview_sort_box_and_caption_agree(open_page) -> None:
    at = open_page("overview", {"lang": "hinglish"})
    box = next(s for s in at.selectbox if s.label == "Sort by")
    assert box.value == "hinglish"
    page = texts(at)
    assert "Sorted by Hinglish Mean Δ% (lowest first)" in page
    assert "Sorted by Overall" not in page


def test_overview_has_one_plain_sentence_per_lane(open_page, has_published: bool) -> None:
    at = open_page("overview")
    said = [m.value for m in at.markdown if str(m.value).startswith("> ")]
    assert len(said) == (2 if has_published else 1)
    if has_published:
        assert "published; the paper's intervals are too narrow" in said[0]
        assert "Across the 9 paper models" in said[0]
        assert "Published intervals are too narrow" in texts(at)  # the §4.11 caveat
    assert not [t for t in texts(at).split("\n") if "+nan" in t or "None" == t.strip()]


def test_who_gets_less_writes_its_data_chosen_defaults_into_the_url(open_page) -> None:
    """Model and use case default to what the data holds, so a link always names them: it
    keeps its view when new data changes the default (the synthetic data has no corrected
    parse health, so the page falls back to the most answered model and salary estimation,
    and says nothing about a readable opening)."""
    at = open_page("who")
    assert not at.exception, at.exception
    assert set(at.query_params) == {"model", "task"}
    assert at.query_params["task"] == "salary_estimation"
    assert "the most answers the corrected parser could read" not in texts(at)


def test_most_readable_picks_the_cell_with_most_readable_answers(monkeypatch) -> None:
    from explorer import data, filters

    health = pd.DataFrame({
        "model": ["a", "a", "b", "b", "b"],
        "task": ["salary_estimation", "salary_increment_estimation", "salary_estimation",
                 "service_pricing_vendor", vocab.ALL],
        "n_rows": [5000, 7000, 9000, 1500, 99999], "n_parsed": [80, 7000, 150, 7000, 99999]})
    monkeypatch.setattr(data, "rows", lambda table, **kw: health)
    monkeypatch.setattr(filters, "most_answered", lambda c: "z")
    # the pooled "all" row never counts; a tie goes to the first candidate, then task order
    assert filters.most_readable(["a", "b"]) == ("a", "salary_increment_estimation", 7000, 7000)
    assert filters.most_readable(["b", "a"]) == ("b", "service_pricing_vendor", 7000, 1500)

    def broken(table: str, **kw: object) -> pd.DataFrame:
        raise data.DataUnavailable("parse_health", "unreadable")

    monkeypatch.setattr(data, "rows", broken)
    assert filters.most_readable(["a", "b"]) == ("z", None, 0, 0)
    assert filters.most_readable([]) == ("", None, 0, 0)


def test_readable_slot_picks_the_slot_with_most_readable_answers(monkeypatch) -> None:
    from explorer import data, filters

    task = "salary_increment_estimation"
    slots = pd.DataFrame({  # in the query's text order: R10 sorts before R02 as text
        "profile_id": ["R10", "R02", "R02", "R03"], "question_variant_id": ["Q1", "Q2", "Q1", "Q3"],
        "n_answers": [24, 24, 24, 24], "n_readable": [20, 20, 3, 19]})
    monkeypatch.setattr(data, "answered_slots", lambda *a: slots)
    # most readable first; a tie goes to benchmark order (R02 before R10), not text order
    assert filters.readable_slot("m", task, "en", "Caste", "standard") == ("R02", "Q2")
    monkeypatch.setattr(data, "answered_slots", lambda *a: slots.iloc[0:0])
    assert filters.readable_slot("m", task, "en", "Caste", "standard") is None
    assert filters.readable_slot("", task, "en", "Caste", "standard") is None

    def broken(*a: object) -> pd.DataFrame:
        raise data.DataUnavailable("parsed", "unreadable")

    monkeypatch.setattr(data, "answered_slots", broken)
    assert filters.readable_slot("m", task, "en", "Caste", "standard") is None


def test_who_gets_less_page(open_page, synthetic_dir: Path) -> None:
    eff_all = pd.read_parquet(synthetic_dir / "metrics" / "identity_effects.parquet")
    model = str(eff_all["model"].iloc[0])
    at = open_page("who", {"model": model, "task": "salary_estimation"})
    assert not at.exception, at.exception
    page = texts(at)
    assert "tables report only unsigned gaps" in page and "not transcribed here" in page
    table = frame_of(at, 0)
    eff = pd.read_parquet(synthetic_dir / "metrics" / "identity_effects.parquet")
    want = eff[(eff["model"] == model) & (eff["method"] == "upstream") & (eff["language"] == "en")
               & (eff["task"] == "salary_estimation") & (eff["axis"] == "Caste")]
    assert list(table["Identifier"]) == list(vocab.identifiers_of("Caste"))
    got = table.set_index("Identifier")["Effect %"]
    assert got.to_dict() == pytest.approx(want.set_index("identifier_value")["effect_pct"]
                                          .to_dict())
    assert {"Refusal rate %", "Unusable rate %", "BH flag", "Effect in ₹", "₹ CI"} <= set(table)
    assert table["Effect in ₹"].str.contains("₹").all()
    low = want.loc[want["effect_pct"].idxmin(), "identifier_value"]
    assert f"{low} gets the least" in page  # the plain sentence names who gets less
    assert "consistent identity effect" in page and "identity-free statements" in page
    assert dict(at.query_params) == {"model": model, "task": "salary_estimation"}


def test_who_gets_less_on_a_cell_without_answers_says_so(open_page, synthetic_dir: Path
                                                         ) -> None:
    # the raw model has no increment answers: the tables exist, this cell has no pairs, and the
    # page must not say the decomposition is "not computed in this deployment"
    eff = pd.read_parquet(synthetic_dir / "metrics" / "identity_effects.parquet")
    model = str(eff["model"].iloc[0])
    assert not (eff["task"] == "salary_increment_estimation").any()
    at = open_page("who", {"model": model, "task": "salary_increment_estimation"})
    assert not at.exception, at.exception
    page = texts(at)
    assert "no usable answer pairs of this model in this cell" in page
    assert "has no usable answer pairs in this cell, so there is no gap to split" in page
    assert "not computed in this deployment" not in page
    assert not any("Axis" in t.columns for t in (frame_of(at, i) for i in range(len(at.dataframe))))


def test_who_gets_less_without_the_tables(published_only_dir: Path, use_dir) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.explorer.conftest import APP, PAGES

    use_dir(published_only_dir)
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(PAGES["who"])
    at.run()
    assert not at.exception and not at.error
    assert "not computed in this deployment yet" in texts(at)


def test_methodology_opens_with_a_short_how_to_read() -> None:
    import ast

    src = (Path(__file__).resolve().parents[2] / "pages" / "methodology.py").read_text()
    tree = ast.parse(src)
    text = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", "") == "HOW_TO_READ")
    assert 300 <= len(text.split()) <= 600
    assert src.index('st.subheader("How to read these numbers")') < src.index(
        'st.subheader("Ethics')


def test_methodology_page_order(open_page) -> None:
    at = open_page("methodology")
    heads = [h.value for h in at.subheader]
    assert heads[0] == "How to read these numbers" and heads[1].startswith("Ethics")
    # a journalist quoting a number finds what to name with it, next to the ethics note
    assert heads[2] == "How to cite a number from this site"
    page = texts(at)
    assert "arXiv:2609.31245" in page and "Table 2" in page
    # the footer of every results page points to it
    assert "Methodology → How to cite" in texts(open_page("overview"))


def test_an_interval_cut_at_the_chart_edge_is_marked_and_said() -> None:
    """A point inside the drawn range whose whisker runs past it gets a › (‹) at the edge, and
    the caption counts it; points beyond the range keep their ▶ marker."""
    values = pd.Series([5.0, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    frame = pd.DataFrame({"Model": list("abcdefghij"), "L": ["x"] * 10, "v": values,
                          "lo": values - 1, "hi": values + 1})
    frame.loc[0, "hi"] = 1600.0  # point 5 is inside, its interval is not
    limits = charts.ci_limits(frame, "v", "lo", "hi")
    assert limits is not None and limits[1] < 1600
    spec = charts.to_spec(charts.ci_dots(frame, x="v", lo="lo", hi="hi", y="Model", color="L",
                                         y_order=list("abcdefghij"), x_title="t"))
    recs = spec["data"]["values"]
    assert [r["Model"] for r in recs if r.get("_cut_›") == limits[1]] == ["a"]
    note = charts.clip_note(limits, frame, "v", ("lo", "hi"))
    assert "1 interval(s) run past the edge" in note and "value(s) beyond" not in note


def test_chart_data_readme_carries_the_caveats_of_its_rows() -> None:
    from explorer import ui

    pub = pd.DataFrame({"Model": ["A"], "Source": ["published: Table 2"], "v": [1.0]})
    assert "Published intervals are too narrow" in ui.caveats(pub)
    assert ui.caveats(pub.assign(Source="computed")) == ""
    blank = pd.DataFrame({"model": ["m"], "source": ["computed"], "note": [tables.MARKUP_NOTE]})
    assert tables.MARKUP_NOTE in ui.caveats(blank)
