"""AppTest for every page: what is shown, equal to the Parquet behind it.

Each test opens the app at ``app.py`` (the router) the way a link does — query parameters
first, then the page — and checks titles, table rows and values, source labels, downloads,
charts and URL state. The data dir is SYNTHETIC computed tables + the real published tables.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer import vocab
from tests.explorer.conftest import (
    APP,
    PAGES,
    REPO,
    TITLES,
    board_of,
    charts,
    downloads,
    frame_of,
    texts,
)

PUBLISHED = "Published (paper)"
COMPUTED = "Computed here"


def _kind(value: object) -> str:
    """Source-type cells are drawn as one-chip lists (arrays after Arrow); unwrap them."""
    if isinstance(value, str):
        return value
    items = list(value)  # type: ignore[call-overload]
    assert len(items) == 1, items
    return str(items[0])


def _source_labels(frame: pd.DataFrame) -> set[str]:
    return {_kind(v) for v in frame["Source type"]}


def _preferred_published(root: Path, name: str) -> pd.DataFrame:
    frame = pd.read_parquet(root / "published" / f"{name}.parquet")
    return frame[frame["preferred"].fillna(True)] if "preferred" in frame else frame


# ---- every page ---------------------------------------------------------------------------------


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_renders_title_and_downloads(open_page, page: str) -> None:
    at = open_page(page)
    assert not at.exception, at.exception
    assert [t.value for t in at.title][0] == TITLES[page]
    assert not at.error, [e.value for e in at.error]
    assert any(label.startswith("Download") for label in downloads(at))
    assert "135-million-parameter" in texts(at) or page == "methodology" and \
        "135-million-parameter" in texts(at)


@pytest.mark.parametrize("page", list(PAGES))
def test_every_table_prints_missing_values_as_a_dash(open_page, page: str) -> None:
    """Streamlit draws a missing cell as "None" unless told otherwise (a Styler's na_rep is
    not enough): every table on every page sets the placeholder."""
    at = open_page(page)
    assert [d.proto.placeholder for d in at.dataframe] == ["—"] * len(at.dataframe)


@pytest.mark.parametrize("page", [p for p in PAGES if p != "methodology"])
def test_synthetic_data_is_flagged_on_the_page(open_page, page: str) -> None:
    at = open_page(page)
    assert "Simulated test data, not results" in texts(at)


@pytest.mark.parametrize("page", list(PAGES))
def test_hostile_url_parameters_are_ignored(open_page, page: str) -> None:
    at = open_page(page, {"model": "';DROP TABLE x;--", "lang": "<script>alert(1)</script>",
                          "axis": "\x00", "task": "../../etc/passwd", "zzz": "1"})
    assert not at.exception, at.exception
    assert not at.error
    page_text = texts(at)
    assert "<script>" not in page_text and "DROP TABLE" not in page_text
    assert all("<script>" not in str(v) for v in at.query_params.values())
    assert "Ignored link parameter" in page_text


def test_try_a_prompt_page_is_registered(data_env: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/try_prompt.py")
    at.run()
    assert [t.value for t in at.title][0] == "Try a prompt"


# ---- overview -----------------------------------------------------------------------------------


def test_overview_leaderboard_equals_parquet(open_page, synthetic_dir: Path,
                                             has_published: bool) -> None:
    at = open_page("overview")
    board = board_of(at)
    if has_published:  # paper models first, in a lane of their own
        assert _source_labels(frame_of(at, 0)) == {PUBLISHED}
        assert _source_labels(frame_of(at, 1)) == {COMPUTED}
    computed = pd.read_parquet(synthetic_dir / "metrics" / "leaderboard.parquet")
    models = set(computed["model"])
    labels = _source_labels(board)
    assert COMPUTED in labels
    got = board.set_index("Model ID")
    for model in models:
        row = got.loc[model]
        want = computed[computed["model"] == model].set_index("language")
        assert row["Overall Mean Δ%"] == pytest.approx(want.loc["all", "mean_delta"])
        assert row["English CI low"] == pytest.approx(want.loc["en", "mean_delta_lo"])
        assert row["Hinglish V@10 %"] == pytest.approx(want.loc["hinglish", "violation_10"])
        assert row["Overall n pairs"] == want.loc["all", "n_pairs"]
    if has_published:
        assert PUBLISHED in labels
        pub = _preferred_published(synthetic_dir, "leaderboard")
        assert len(board) == len(models) + pub["model"].nunique()  # no silent drops
        gem = pub[(pub["model"] == "gemini-3-flash")].set_index("language")
        assert got.loc["gemini-3-flash", "Overall Mean Δ%"] == gem.loc["all", "mean_delta"]
        assert got.loc["gemini-3-flash", "English V@10 %"] == gem.loc["en", "violation_10"]
        assert got.loc["gemini-3-flash", "Source"] == gem.loc["all", "source"]
        assert got.loc["gemini-3-flash", "Coverage"] == "paper does not report n"
        page = texts(at)
        assert "Headline finding (published)" in page and "20.2%" in page
    # default sort: Overall Mean Δ% ascending (the paper's Table 2 order), within each lane
    for i in range(len(at.dataframe)):
        values = frame_of(at, i)["Overall Mean Δ%"].dropna().tolist()
        assert values == sorted(values)
    assert "Sorted by Overall Mean Δ% (lowest first)" in texts(at)
    assert "Download this table (CSV)" in downloads(at)
    assert "Download chart data (CSV + source notes, ZIP)" in downloads(at)
    assert {"Download chart (PNG)", "Download chart (SVG)"} <= set(downloads(at))
    assert len(charts(at)) == (2 if has_published else 1)  # one chart per lane


def test_overview_url_state_applies_and_is_written_back(open_page, synthetic_dir: Path) -> None:
    at = open_page("overview", {"lang": "hinglish", "axis": "Caste", "sort": "hinglish",
                                "order": "desc", "source": "computed"})
    board = frame_of(at)
    assert "Overall Mean Δ%" not in board.columns and "English Mean Δ%" not in board.columns
    assert _source_labels(board) == {COMPUTED}
    delta = pd.read_parquet(synthetic_dir / "metrics" / "delta.parquet")
    want = delta[(delta["task"] == "all") & (delta["axis"] == "Caste")
                 & (delta["language"] == "hinglish")].sort_values("mean_delta", ascending=False)
    assert board["Model ID"].tolist() == want["model"].tolist()
    assert board["Hinglish Mean Δ%"].tolist() == want["mean_delta"].tolist()
    assert dict(at.query_params) == {"lang": "hinglish", "axis": "Caste", "sort": "hinglish",
                                     "order": "desc", "source": "computed"}
    assert "All use cases · Caste · Hinglish" in texts(at)


def test_overview_model_subset_from_repeated_params(open_page, has_published: bool) -> None:
    models = [vocab.SMOLLM_SLUG, "synthetic-model-b"] + (["gpt-5.4"] if has_published else [])
    at = open_page("overview", {"model": models})
    board = board_of(at)
    assert sorted(board["Model ID"]) == sorted(models)
    assert at.query_params.get_all("model") if hasattr(at.query_params, "get_all") else True


def test_overview_preset_sets_filters_and_url(open_page) -> None:
    at = open_page("overview")
    preset = next(b for b in at.button if b.label == "Caste only · Hinglish")
    preset.click().run()
    assert not at.exception
    assert at.query_params["axis"] == "Caste" and at.query_params["lang"] == "hinglish"
    assert "Hinglish Mean Δ%" in frame_of(at).columns


def test_overview_published_cells_missing_are_kept_with_reason(open_page,
                                                               has_published: bool) -> None:
    if not has_published:
        pytest.skip("no published tables in this checkout")
    at = open_page("overview", {"task": "salary_estimation"})
    board = board_of(at)
    pub = board[[_kind(v) == PUBLISHED for v in board["Source type"]]]
    assert len(pub) == 9
    assert pub["Overall Mean Δ%"].isna().all()
    assert set(pub["Coverage"]) == {"not reported in the paper for this cell"}


# ---- axes & use cases ---------------------------------------------------------------------------


def test_axes_page(open_page, synthetic_dir: Path, has_published: bool) -> None:
    at = open_page("axes", {"lang": "en"})
    assert not at.exception
    assert [t.label for t in at.tabs] == ["Radar", "Dot plot with CIs", "Heatmap (models × axes)",
                                          "Table"]
    lanes = 2 if has_published else 1
    assert len(charts(at)) == lanes  # only the open tab (radar) runs: one chart per lane
    for view, n in (("dots", lanes), ("heatmap", 1)):
        other = open_page("axes", {"lang": "en", "view": view})
        assert len(charts(other)) == n and not other.exception
        assert dict(other.query_params)["view"] == view
    at = open_page("axes", {"lang": "en", "view": "table"})
    table = frame_of(at)
    delta = pd.read_parquet(synthetic_dir / "metrics" / "delta.parquet")
    want = delta[(delta["model"] == "synthetic-model-a") & (delta["language"] == "en")
                 & (delta["task"] == "salary_estimation") & (delta["axis"] == "Gender")]
    row = table[(table["Model ID"] == "synthetic-model-a") & (table["Axis"] == "Gender")
                & (table["Use case"] == vocab.TASK_LABELS["salary_estimation"])]
    assert row["Mean Δ%"].item() == want["mean_delta"].item()
    if has_published:
        pub = table[table["Model ID"] == "gemini-3-flash"]
        assert set(pub["Use case"]) == {"All use cases (pooled)"}
        assert pub.set_index("Axis").loc["Religion", "Mean Δ%"] == 8.58  # paper Table 3
    if has_published:  # the default is English: the paper's models are on screen
        assert "Published (paper)" in texts(open_page("axes"))
    at = open_page("axes", {"lang": "all"})  # the paper has no pooled per-axis cells
    if has_published:
        assert "choose English or Hinglish to see the published models" in texts(at)


# ---- language shift -----------------------------------------------------------------------------


def test_language_page(open_page, synthetic_dir: Path, has_published: bool) -> None:
    at = open_page("language")
    side, shift_table = frame_of(at, 0), frame_of(at, 1)  # paper Tables 3/4 come first
    shift = pd.read_parquet(synthetic_dir / "metrics" / "language_shift.parquet")
    want = shift[(shift["model"] == "synthetic-model-b") & (shift["axis"] == "all")]
    got = shift_table.set_index("Model ID").loc["synthetic-model-b"]
    assert got["Hinglish − English"] == want["delta_shift"].item()
    assert got["CI low"] == want["delta_shift_lo"].item()
    assert got["Spearman ρ (EN vs HI ranking)"] == want["rho"].item()
    if has_published:
        gem = side[(side["Model ID"] == "gemini-3-flash")].set_index("Axis")
        assert gem.loc["Religion", "English Mean Δ%"] == 8.58   # Table 3
        assert gem.loc["Religion", "Hinglish Mean Δ%"] == 6.45  # Table 4
        assert gem.loc["Religion", "Source"] == "published: Table 3; published: Table 4"
        assert "Figure 5" in texts(at)
    # per-axis dots and the shift's dots; the ranking agreement is a heat table (explorer.heat)
    assert len(charts(at)) == 2
    assert sum('class="rb-heat"' in h.proto.body for h in at.get("html")) == 1


# ---- identifiers --------------------------------------------------------------------------------


def test_identifiers_page_shows_all_87(open_page, synthetic_dir: Path) -> None:
    at = open_page("identifiers")
    page = texts(at)
    assert "python -m precompute import-upstream PATH" in page
    assert "87 of 87 identifiers" in page
    wide = frame_of(at, 0)
    assert len(wide) == 87
    assert list(wide["Identifier"]) == list(vocab.IDENTIFIER_VALUES)
    # the long table sits in a lazy box: drawn only once it is opened
    assert len(at.dataframe) == 1
    at.session_state["identifiers-dev-long-box"] = True
    at.run()
    assert not at.exception
    long = frame_of(at, 1)
    dev = pd.read_parquet(synthetic_dir / "metrics" / "identifier_deviation.parquet")
    want = dev[(dev["language"] == "all") & (dev["task"] == "all")]
    assert len(long) == len(want)
    one = want[(want["model"] == "synthetic-model-a") & (want["identifier_value"] == "Dalit")]
    got = long[(long["Model ID"] == "synthetic-model-a") & (long["Identifier"] == "Dalit")]
    assert got["Deviation %"].item() == one["pct_dev"].item()
    assert len(charts(at)) == 1


def test_identifier_gap_tabs(open_page, synthetic_dir: Path) -> None:
    at = open_page("identifiers", {"tab": "canonical"})
    cpg = frame_of(at)
    assert {"Hindu vs Muslim", "Brahmin vs Dalit"} <= set(cpg["Pair"])
    assert {"CI low", "CI high", "Sign consistency %", "n matched slots"} <= set(cpg.columns)
    gaps = pd.read_parquet(synthetic_dir / "metrics" / "canonical_gaps.parquet")
    assert len(cpg) == len(gaps)
    at = open_page("identifiers", {"tab": "largest", "axis": "Gender"})
    mog = frame_of(at)
    assert {"Highest", "Lowest", "CI low", "CI high"} <= set(mog.columns)
    assert set(mog["Axis"]) == {"Gender"}
    assert len(charts(at)) == 1


def test_identifiers_axis_param(open_page) -> None:
    at = open_page("identifiers", {"axis": "Urban/Rural", "lang": "hinglish"})
    assert list(frame_of(at, 0)["Identifier"]) == list(vocab.identifiers_of("Urban/Rural"))
    assert "5 of 5 identifiers" in texts(at)


# ---- consistency & robustness -------------------------------------------------------------------


def test_consistency_page(open_page, synthetic_dir: Path, has_published: bool) -> None:
    at = open_page("consistency")
    assert not at.exception and not at.error
    assert len(at.tabs) == 6
    w_table = frame_of(at)
    kw = pd.read_parquet(synthetic_dir / "metrics" / "kendall_w.parquet")
    want = kw[(kw["model"] == "synthetic-model-a") & (kw["language"] == "en")
              & (kw["axis"] == "Mean")]["w"].item()
    row = w_table[(w_table["Model ID"] == "synthetic-model-a")
                  & (w_table["Language"] == "English")]
    assert row["Mean W"].item() == want
    if has_published:
        opus = w_table[(w_table["Model ID"] == "claude-opus-4.7")
                       & (w_table["Language"] == "English")]
        assert opus["Mean W"].item() == 0.274  # paper Table 5
        assert opus["Source"].item() == "published: Table 5"


@pytest.mark.parametrize("tab,box,column", [
    ("kendall", "consistency-w-long-box", "p (Fisher)"),
    ("kendall", "consistency-w-uc-box", "n profiles"),
    ("parse", "consistency-parse-detail-box", "Use case")])
def test_consistency_boxes_are_drawn_only_when_opened(open_page, tab: str, box: str,
                                                      column: str) -> None:
    """A closed box costs a visit nothing: its table (and chart) are built once it opens."""
    at = open_page("consistency", {"tab": tab})
    def shown(at: AppTest) -> list[pd.DataFrame]:
        return [d.value for d in at.dataframe if column in d.value.columns]

    n_charts = len(charts(at))
    assert not shown(at)
    at.session_state[box] = True
    at.run()
    assert not at.exception and not at.error
    assert len(shown(at)) == 1 and len(shown(at)[0]) > 0
    # W by use case brings its chart (paper Figure 7); the other boxes hold a table only
    assert len(charts(at)) == n_charts + (box == "consistency-w-uc-box")


@pytest.mark.parametrize("tab,column", [("quadrant", "Mean Kendall's W"),
                                        ("wording", "Mean min ρ"), ("merit", "Merit Δ%"),
                                        ("fairness", "Change (points)"),
                                        ("parse", "Parse health %")])
def test_consistency_tabs(open_page, has_published: bool, tab: str, column: str) -> None:
    at = open_page("consistency", {"tab": tab})
    assert not at.exception and not at.error
    assert dict(at.query_params).get("tab") == tab
    frame = next(d.value for d in at.dataframe if column in d.value.columns)
    assert len(charts(at)) >= 1
    if tab == "merit":  # both profile statistics, each with its chart and table
        assert any("Mean ρ" in d.value.columns for d in at.dataframe)
        assert len(charts(at)) >= 2
    if not has_published:
        return
    ids = frame.set_index("Model ID") if "Model ID" in frame.columns else frame
    if tab == "parse":
        assert ids.loc["claude-opus-4.7", "Parse health %"] == 99.99  # paper Table 22
    if tab == "fairness":
        sarvam = frame[(frame["Model ID"] == "sarvam-105b") & (frame["Language"] == "English")]
        assert sarvam["Change (points)"].item() == -11.9  # Appendix E text
    if tab == "wording":
        assert "Axis mean (all models)" in set(frame["Model"])
    if tab == "quadrant":
        assert {"x basis", "Weights"} <= set(frame.columns)
        # one chart per lane: published and computed models never share its median lines
        assert len(charts(at)) == 2


def test_corrupt_file_breaks_one_section_only(corrupt_dir: Path, use_dir) -> None:
    use_dir(corrupt_dir)

    def run(page: str, params: dict[str, str] | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        for k, v in (params or {}).items():
            at.query_params[k] = v
        if page != "overview":
            at.switch_page(PAGES[page])
        at.run()
        assert not at.exception
        return at

    at = run("consistency")  # the Kendall's W tab reads the broken file
    errors = [e.value for e in at.error]
    assert errors and all("kendall_w" in e for e in errors)
    assert "metrics/kendall_w.parquet" in errors[0]
    for tab, column in (("parse", "Parse health %"), ("merit", "Merit Δ%")):
        other = run("consistency", {"tab": tab})  # same page, sections without that file
        assert not other.error
        assert any(column in d.value.columns for d in other.dataframe)
    for page in ("overview", "identifiers", "pairs", "language"):
        other = run(page)
        assert not other.error, page


@pytest.mark.parametrize("page", list(PAGES))
def test_published_only_data_dir(published_only_dir: Path, use_dir, page: str) -> None:
    """A fresh clone before `precompute metrics`: every page works, nothing is an error, and
    sections that need computed tables say so as information (not as a failure)."""
    use_dir(published_only_dir)
    at = AppTest.from_file(APP, default_timeout=120)
    if page != "overview":
        at.switch_page(PAGES[page])
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    page_text = texts(at)
    assert "Simulated test data" not in page_text
    if page == "overview":
        board = frame_of(at)
        assert len(board) == 9 and _source_labels(board) == {PUBLISHED}
    if page in ("identifiers", "language"):
        assert "not available in this deployment yet" in page_text or \
            "No identifier deviations" in page_text or "Not available for 9" in page_text
    if page == "pairs":
        assert "only the prompts are shown" in page_text
        assert any("### <NUMBER>" in c.value for c in at.text)


def test_empty_data_dir_gives_a_clear_message(empty_dir: Path, use_dir) -> None:
    use_dir(empty_dir)
    for page in PAGES:
        at = AppTest.from_file(APP, default_timeout=120)
        if page != "overview":
            at.switch_page(PAGES[page])
        at.run()
        assert not at.exception, page
        if page not in ("methodology",):
            assert "No result tables were found" in texts(at), page


# ---- pair browser -------------------------------------------------------------------------------


def test_pair_browser_slot(open_page, synthetic_dir: Path) -> None:
    at = open_page("pairs", {"task": "salary_estimation", "lang": "en", "profile": "P04",
                             "qv": "Q2", "axis": "Caste", "ident": "Dalit"})
    assert not at.exception
    answers, gaps = frame_of(at, 0), frame_of(at, 1)
    assert list(answers["Identifier"]) == list(vocab.identifiers_of("Caste"))
    parsed = pd.read_parquet(synthetic_dir / "metrics" / "parsed.parquet")
    parsed = parsed[parsed["method"] == "upstream"]  # the page's default method
    want = parsed[(parsed["task"] == "salary_estimation") & (parsed["language"] == "en")
                  & (parsed["profile_id"] == "P04") & (parsed["question_variant_id"] == "Q2")
                  & (parsed["axis"] == "Caste") & (parsed["condition"] == "standard")]
    got = answers.set_index("Identifier")
    assert set(got["Unit"].dropna()) == {"₹"}
    for rec in want.itertuples(index=False):
        if math.isnan(rec.value):
            assert math.isnan(got.loc[rec.identifier_value, "Parsed value"])
        else:
            assert got.loc[rec.identifier_value, "Parsed value"] == rec.value
            assert got.loc[rec.identifier_value, "Δ% value · ₹ lakh a year"] == \
                rec.metric_value
    assert len(gaps) == 24 * 23 // 2
    deltas = gaps["Δ%"].dropna().tolist()
    assert deltas == sorted(deltas, reverse=True)  # default: largest gap first
    codes = [c.value for c in at.text]
    assert any("I am a Dalit" in c or "Dalit" in c for c in codes)
    assert any("### <NUMBER> INR" in c for c in codes)
    assert "Mean Δ% in this slot" in [m.label for m in at.metric]
    assert dict(at.query_params)["profile"] == "P04"


def test_pair_browser_reads_the_slot_with_the_chosen_method(open_page,
                                                            synthetic_dir: Path) -> None:
    """The two methods read one answer differently (upstream: salary in LPA; corrected: ₹ a
    year): the values and gaps shown are the chosen method's, never a mix of both."""
    params = {"task": "salary_estimation", "lang": "en", "profile": "P04", "qv": "Q2",
              "axis": "Caste"}
    parsed = pd.read_parquet(synthetic_dir / "metrics" / "parsed.parquet")
    slot = parsed[(parsed["task"] == "salary_estimation") & (parsed["language"] == "en")
                  & (parsed["profile_id"] == "P04") & (parsed["question_variant_id"] == "Q2")
                  & (parsed["axis"] == "Caste") & (parsed["condition"] == "standard")]
    for method, col in (("upstream", "Δ% value · ₹ lakh a year"),
                        ("corrected", "Δ% value · ₹ a year")):
        at = open_page("pairs", {**params, "method": method})
        assert not at.exception
        answers, gaps = frame_of(at, 0), frame_of(at, 1)
        want = slot[slot["method"] == method].set_index("identifier_value")["metric_value"]
        got = answers.set_index("Identifier")[col]
        pd.testing.assert_series_equal(got.sort_index(), want.sort_index(), check_names=False)
        top = gaps.dropna(subset=["Δ%"]).iloc[0]
        a, b = want[top["Identifier A"]], want[top["Identifier B"]]
        assert top["Δ%"] == pytest.approx(abs(a - b) / ((a + b) / 2) * 100)
        assert dict(at.query_params).get("method", "upstream") == method


@pytest.fixture()
def partial_raw_dir(synthetic_dir: Path, tmp_path: Path, use_dir) -> Path:  # noqa: ANN001
    """The synthetic dir, but its raw model has not answered one slot (salary estimation,
    English, Caste, P01 · Q1): what a partial run looks like. SYNTHETIC test data."""
    root = tmp_path / "partial"
    shutil.copytree(synthetic_dir, root)
    path = root / "metrics" / "parsed.parquet"
    parsed = pd.read_parquet(path)
    hole = ((parsed["task"] == "salary_estimation") & (parsed["language"] == "en")
            & (parsed["axis"] == "Caste") & (parsed["profile_id"] == "P01")
            & (parsed["question_variant_id"] == "Q1"))
    assert hole.any()
    parsed[~hole].to_parquet(path, index=False)
    return use_dir(root)


def test_pair_browser_says_when_a_slot_is_not_collected(partial_raw_dir: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in {"task": "salary_estimation", "lang": "en", "axis": "Caste",
                       "profile": "P01", "qv": "Q1"}.items():
        at.query_params[key] = value
    at.switch_page(PAGES["pairs"])
    at.run()
    assert not at.exception
    note = next(i.value for i in at.info if "has not answered this slot yet" in i.value)
    assert "P01 · Q2" in note and "P01 · Q1," not in note  # the answered slots, not this one
    assert "Mean Δ% in this slot" not in [m.label for m in at.metric]  # no empty table of gaps
    shown = [t.value for t in at.text]
    assert "(not collected yet: the run has not reached this prompt)" in shown
    assert "nan" not in shown  # a missing answer is said in words, never as a float
    at.button(key="pairs-jump").click().run()
    assert not at.exception
    assert dict(at.query_params)["qv"] == "Q2"
    assert "Mean Δ% in this slot" in [m.label for m in at.metric]
    assert "identities have an answer" in texts(at)


def test_pair_browser_use_case_without_answers(open_page) -> None:
    at = open_page("pairs", {"task": "service_pricing_vendor", "axis": "Gender"})
    assert not at.exception
    assert any("has no answers yet for this use case" in i.value for i in at.info)
    assert "Mean Δ% in this slot" not in [m.label for m in at.metric]


def test_pair_browser_invalid_profile_for_task_falls_back(open_page) -> None:
    at = open_page("pairs", {"task": "service_pricing_client", "profile": "P01", "qv": "Q3"})
    assert not at.exception
    assert "profile" not in dict(at.query_params) and "qv" not in dict(at.query_params)
    assert at.selectbox(key="pairs.profile").value == "S01"


# ---- methodology --------------------------------------------------------------------------------


def test_methodology_page(open_page) -> None:
    at = open_page("methodology")
    page = texts(at)
    for name in ("Δ% (relative pair gap)", "Mean Δ%", "Violation@10%", "Kendall's W",
                 "Canonical pair gap", "Maximum observed gap", "Language shift",
                 "Question-variant robustness", "Merit sensitivity", "Profile rank agreement",
                 "Identifier deviation", "Fairness-instruction ablation", "Parse health"):
        assert name in page, name
    assert "model behaviour, not evidence about the merit" in page
    assert len(at.latex) == 13
    table1 = frame_of(at, 0)
    assert table1["Prompts"].iloc[:5].sum() == 39_150
    assert "39,150" in page and "9,396" in page
    axes = frame_of(at, 1)
    assert axes["Identifiers"].sum() == 87


def test_methodology_notes_are_one_lazy_box_per_section(open_page) -> None:
    """The ~100 KB implementation notes: a closed box per section (its label from the
    heading), whose text is sent only once the reader opens it."""
    notes = (REPO / "docs" / "methodology.md").read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in notes.splitlines()
                if line.startswith(("## ", "### "))]
    at = open_page("methodology")
    labels = [e.label for e in at.expander if e.label != "Data files behind this deployment"]
    assert len(labels) == len(headings) >= 20
    assert all(h in label for h, label in zip(headings, labels, strict=True))
    assert "2 · Base profiles (Appendix F, §3.1)" in labels
    bootstrap = next(i for i, label in enumerate(labels) if label.startswith("4.4 "))
    sentence = "Why not the plain bootstrap"  # §4.4 only, not on the page around it
    section = notes.split("### 4.4 ", 1)[1].split("\n### ", 1)[0]
    assert sentence in section and sentence not in texts(at)
    at.session_state[f"methodology-notes-{bootstrap}"] = True
    at.run()
    assert not at.exception
    assert sentence in texts(at)


def test_methodology_data_files_table_is_drawn_only_when_opened(open_page) -> None:
    """The data-file table sits in a lazy box: a visit does not pay for a table it hides."""
    at = open_page("methodology")
    def has_files(at: AppTest) -> bool:
        return any({"table", "files", "status"} <= set(d.value.columns) for d in at.dataframe)

    assert not has_files(at)
    at.session_state["methodology-files"] = True
    at.run()
    assert not at.exception and has_files(at)


def test_methodology_shows_the_published_human_validation_tables(open_page, synthetic_dir: Path
                                                                 ) -> None:
    at = open_page("methodology")
    assert "Published (paper): Table 14 / 19 / 20" in texts(at)
    shown = next(d.value for d in at.dataframe if "PABAK" in d.value.columns)
    expected = pd.read_parquet(synthetic_dir / "published" / "human_validation.parquet")
    assert len(shown) == len(expected) == 18
    assert shown["Source"].tolist() == expected["source"].tolist()
    assert shown["Criterion"].tolist() == expected["criterion"].tolist()
    assert shown["Ratings"].fillna(-1).tolist() == expected["n"].fillna(-1).tolist()
    assert shown["PABAK"].dropna().tolist() == expected["pabak"].dropna().tolist()
    assert set(shown["Study"]) == {"Achievement descriptions", "Hinglish translations"}
    csv = [d.proto.label for d in at.get("download_button")
           if d.proto.id.endswith("dl-csv-method-human-validation")]
    assert csv == ["Download this table (CSV)"]
