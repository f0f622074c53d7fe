"""Table shaping: no silent drops, published preference, exact values, pair gaps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from explorer import tables, vocab


def _models() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["pub-a", "comp-b", "both-c"], "label": ["A", "B", "C"],
        "sources": ["published", "computed", "published + computed"],
        "published": [True, False, True], "computed": [False, True, True],
        "weights": ["closed", "open", "open"], "note": ["", "", ""],
        "has_raw": [False, True, True]})


def _cell(model: str, kind: str, lang: str, value: float, n: int | None = None,
          source: str | None = None, preferred: bool | None = None) -> dict:
    return {"model": model, "source_kind": kind, "language": lang, "task": "all", "axis": "all",
            "mean_delta": value, "mean_delta_lo": value - 1, "mean_delta_hi": value + 1,
            "violation_10": 20.0, "violation_10_lo": 19.0, "violation_10_hi": 21.0,
            "n_pairs": n, "source": source or ("computed" if kind == "computed" else
                                               "published: Table 2"),
            "preferred": preferred, "note": None}


def test_leaderboard_keeps_rows_without_a_value() -> None:
    cells = pd.DataFrame([_cell("comp-b", "computed", lang, 10.0 + i, 1000)
                          for i, lang in enumerate(("all", "en", "hinglish"))])
    universe = tables.model_frame(_models(), ["pub-a", "comp-b", "both-c"],
                                  vocab.SOURCE_KINDS)
    board = tables.leaderboard(cells, universe, "all", "all", "all")
    assert len(board) == 4  # pub-a, comp-b, both-c ×2 sources
    row = board.set_index(["Model ID", "Source type"])
    assert row.loc[("comp-b", "Computed here"), "Overall Mean Δ%"] == 10.0
    assert row.loc[("comp-b", "Computed here"), "English Mean Δ%"] == 11.0
    assert math.isnan(row.loc[("pub-a", "Published (paper)"), "Overall Mean Δ%"])
    assert row.loc[("pub-a", "Published (paper)"), "Coverage"] == \
        "not reported in the paper for this cell"
    assert row.loc[("both-c", "Computed here"), "Coverage"] == "no usable answer pairs in this cell"
    assert row.loc[("comp-b", "Computed here"), "Coverage"].startswith("0.3% of pairs (1,000")


def test_leaderboard_single_language_columns() -> None:
    cells = pd.DataFrame([_cell("comp-b", "computed", "en", 11.0, 191700)])
    universe = tables.model_frame(_models(), ["comp-b"], ("computed",))
    board = tables.leaderboard(cells, universe, "all", "all", "en")
    assert "Overall Mean Δ%" not in board.columns and "Hinglish Mean Δ%" not in board.columns
    assert board.loc[0, "Coverage"].startswith("100.0% of pairs")


def test_prefer_published_sets_aside_the_alternative_transcription() -> None:
    cells = pd.DataFrame([
        _cell("pub-a", "published", "all", 8.1, source="published: Table 2", preferred=False),
        _cell("pub-a", "published", "all", 8.11, source="published: Table 2 (README)",
              preferred=True),
        _cell("comp-b", "computed", "all", 9.0)])
    kept, hidden = tables.prefer_published(cells, ["model", "language", "task", "axis"])
    assert hidden == 1
    assert sorted(kept["mean_delta"]) == [8.11, 9.0]


def test_headline_is_unweighted_mean_of_models() -> None:
    cells = pd.DataFrame([_cell("a", "published", "all", 10.0),
                          _cell("b", "published", "all", 20.0),
                          _cell("b", "published", "en", 99.0)])
    assert tables.headline(cells) == (15.0, 2)


def test_sort_frame_puts_missing_last() -> None:
    frame = pd.DataFrame({"v": [2.0, math.nan, 1.0]})
    assert tables.sort_frame(frame, "v", False)["v"].tolist()[:2] == [1.0, 2.0]
    assert math.isnan(tables.sort_frame(frame, "v", True)["v"].iloc[-1])


def test_pair_gaps_match_the_paper_formula() -> None:
    slot = pd.DataFrame({"identifier_value": ["A", "B", "C"],
                         "metric_value": [10.0, 12.0, np.nan]})
    gaps = tables.pair_gaps(slot)
    assert len(gaps) == 3  # C(3, 2): pairs with a missing value are listed, not hidden
    ab = gaps.iloc[0]
    assert ab["Δ%"] == pytest.approx(abs(10 - 12) / 11 * 100)
    assert ab["Higher"] == "B" and bool(ab["> 10%"]) is True
    assert gaps["Δ%"].isna().sum() == 2
    summary = tables.slot_summary(gaps, "test")
    assert summary["n"] == 1 and summary["n_missing"] == 2


def test_side_by_side_and_quadrant() -> None:
    rows = []
    for lang, v in (("en", 10.0), ("hinglish", 14.0)):
        for axis in vocab.AXES:
            rows.append({**_cell("pub-a", "published", lang, v), "task": "all", "axis": axis,
                         "source": f"published: Table {3 if lang == 'en' else 4}"})
    cells = pd.DataFrame(rows)
    side = tables.side_by_side(cells, {"pub-a": "A"})
    assert len(side) == 6
    assert side["Hinglish − English"].tolist() == [4.0] * 6
    assert side.loc[0, "Source"] == "published: Table 3; published: Table 4"
    w = pd.DataFrame([{"model": "pub-a", "source_kind": "published", "language": lang,
                       "axis": "Mean", "w": w_} for lang, w_ in (("en", 0.2), ("hinglish", 0.3))])
    quad = tables.quadrant(cells, w, _models())
    assert quad.loc[0, "Mean Δ% (unweighted)"] == 12.0
    assert quad.loc[0, "Mean Kendall's W"] == pytest.approx(0.25)
    assert quad.loc[0, "x basis"] == "six axis cells (Tables 3/4)"
