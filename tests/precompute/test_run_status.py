"""`precompute status`: busy time, the rendered paragraph, and the doc staying true to the data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from precompute import run_status as rs
from tests.precompute.conftest import REPO


def _t(sec: float) -> str:
    return (pd.Timestamp("2026-11-30T00:00:00Z") + pd.Timedelta(seconds=sec)).isoformat()


def test_busy_time_is_the_union_of_request_intervals() -> None:
    starts = pd.Series([_t(0), _t(5), _t(1), _t(100), _t(100)])
    ends = pd.Series([_t(10), _t(12), _t(2), _t(130), _t(110)])
    # [0,12] overlapping requests + [100,130]: 12 + 30 s; the 88 s pause does not count
    assert rs.busy_seconds(starts, ends) == pytest.approx(42.0)
    assert rs.busy_seconds(pd.Series([], dtype=str), pd.Series([], dtype=str)) == 0.0


def _data(tmp: Path, n_metrics_rows: int) -> Path:
    (tmp / "responses").mkdir(parents=True)
    (tmp / "metrics").mkdir()
    rows = [{"id": f"salary_estimation_en_{i:05d}", "condition": "standard",
             "task": "salary_estimation", "language": "en", "status": "ok",
             "started_at": _t(2 * i), "finished_at": _t(2 * i + 1)} for i in range(6)]
    rows += [{"id": "salary_estimation_hi_00001", "condition": "fairness",
              "task": "salary_estimation", "language": "hinglish", "status": "ok",
              "started_at": _t(20), "finished_at": _t(21)},
             {"id": "salary_estimation_hi_00002", "condition": "standard",
              "task": "salary_estimation", "language": "hinglish", "status": "error",
              "started_at": _t(30), "finished_at": _t(31)}]
    pd.DataFrame(rows).to_parquet(tmp / "responses" / "m.parquet")
    ph = [{"model": "m", "method": m, "language": "all", "task": "all", "n_rows": n_metrics_rows,
           "parse_health": h, "refusal_rate": 1.25, "strict_rate": 0.0}
          for m, h in (("upstream", 90.0), ("corrected", 50.0))]
    ph.append({**ph[0], "model": "other", "parse_health": 1.0})
    pd.DataFrame(ph).to_parquet(tmp / "metrics" / "parse_health.parquet")
    lb = [{"model": "m", "method": "upstream", "language": "all", "task": "all", "axis": "all",
           "mean_delta": 12.34, "mean_delta_lo": 10.0, "mean_delta_hi": 15.0, "n_pairs": 1234},
          {"model": "m", "method": "corrected", "language": "all", "task": "all", "axis": "all",
           "mean_delta": float("nan"), "mean_delta_lo": float("nan"),
           "mean_delta_hi": float("nan"), "n_pairs": 0}]
    pd.DataFrame(lb).to_parquet(tmp / "metrics" / "leaderboard.parquet")
    return tmp


def test_status_counts_answers_and_quotes_the_metrics(tmp_path: Path) -> None:
    st = rs.run_status(_data(tmp_path, 6), "m")  # parse health counts the 6 standard rows
    assert (st.n_rows, st.n_standard, st.n_fairness) == (7, 6, 1)  # the error row is not answered
    assert not st.complete
    assert st.busy_hours * 3600 == pytest.approx(7.0)  # six 1 s requests + one
    text = rs.render(st)
    assert "partial.** 7 of 48,546 prompts answered (0.0 %): 6 of 39,150 standard and 1 of " \
           "9,396 fairness" in text
    # 7 answers in 7 s of busy time: 1 prompt/s, so 48,539 left take 13.5 h
    assert "At that rate the remaining 48,539 prompts need ≈ 13.5 h more." in text
    table = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert table[0] == "| task | en | hinglish | en, fairness | hinglish, fairness |"
    # the error row (hinglish standard) is not counted; fairness applies to one task only
    assert "| salary_estimation | 6 of 4,698 | 0 of 4,698 | 0 of 4,698 | 1 of 4,698 |" in table
    assert "| service_pricing_client | 0 of 1,566 | 0 of 1,566 | – | – |" in table
    assert len(table) == 2 + 5
    assert "Parse health 90.0 % with the authors' extractor, 50.0 % usable with ours" in text
    assert "refusals 1.2 %" in text or "refusals 1.3 %" in text
    assert "Mean Δ% 12.3 [10.0, 15.0] (1,234 pairs) with the upstream method and no matched " \
           "pairs yet corrected" in text
    # the upstream interval is never shown without saying that it undercovers
    assert "The upstream interval is the authors' pair bootstrap" in text
    assert "far too narrow" in text
    assert "rerun" not in text


def test_stale_metrics_are_called_out(tmp_path: Path) -> None:
    text = rs.render(rs.run_status(_data(tmp_path, 5), "m"))
    assert "computed on 5 standard-condition responses, not the 6 collected" in text


def test_write_doc_replaces_only_its_block(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from precompute.__main__ import main

    data = _data(tmp_path / "d", 6)
    doc = tmp_path / "doc.md"
    doc.write_text("before\n<!-- run-status:m:start -->\nold\n<!-- run-status:m:end -->\nafter\n")
    assert main(["status", "--data", str(data), "--slug", "m", "--write-doc", str(doc)]) == 0
    out = doc.read_text()
    assert out.startswith("before\n") and out.endswith("after\n") and "old" not in out
    assert rs.read_block(out, "m") == rs.render(rs.run_status(data, "m"))
    doc.write_text("no markers here\n")
    assert main(["status", "--data", str(data), "--slug", "m", "--write-doc", str(doc)]) == 2
    assert "markers" in capsys.readouterr().err and doc.read_text() == "no markers here\n"
    assert main(["status", "--data", str(data), "--slug", "absent"]) == 2


@pytest.mark.parametrize("slug", sorted(p.name.removesuffix(".parquet") for p in
                                         (REPO / "data" / "responses").glob("*.parquet")))
def test_methodology_quotes_the_shipped_run_exactly(slug: str) -> None:
    """docs/methodology.md §6 must say what data/ holds, for every shipped run (regenerate
    with `status --write-doc`)."""
    doc = (REPO / "docs" / "methodology.md").read_text(encoding="utf-8")
    shipped = rs.render(rs.run_status(REPO / "data", slug))
    assert rs.read_block(doc, slug) == shipped
    assert "rerun `python -m precompute metrics`" not in shipped


def test_status_before_metrics_says_so(tmp_path: Path) -> None:
    data = _data(tmp_path, 6)
    for f in (data / "metrics").iterdir():
        f.unlink()
    text = rs.render(rs.run_status(data, "m"))
    assert "7 of 48,546 prompts answered" in text
    assert "Metrics not computed yet: run `python -m precompute metrics`." in text


@pytest.mark.parametrize(("excess", "lo", "hi", "says"), [
    (-0.7, -1.8, 0.4, "-0.7 points [-1.8, 0.4]: no more than the floor within noise."),
    (3.9, 2.3, 5.5, "3.9 points [2.3, 5.5]: above the floor."),
    (-2.0, -3.0, -1.0, "-2.0 points [-3.0, -1.0]: below the floor."),
    (0.5, float("nan"), float("nan"), "0.5 points (no interval)."),
])
def test_placebo_excess_is_quoted_with_units_and_what_its_interval_says(
        tmp_path: Path, excess: float, lo: float, hi: float, says: str) -> None:
    data = _data(tmp_path, 6)
    row = {"model": "m", "method": "corrected", "language": "all", "task": "all", "axis": "all",
           "mean_delta": 5.26, "systematic_share": 0.29, "systematic_share_lo": 0.26,
           "systematic_share_hi": 0.32, "p_value": 0.001, "placebo_delta": 5.94,
           "excess_delta": excess, "excess_delta_lo": lo, "excess_delta_hi": hi}
    pd.DataFrame([row, {**row, "model": "other", "excess_delta": 99.0}]).to_parquet(
        data / "metrics" / "gap_decomposition.parquet")
    text = rs.render(rs.run_status(data, "m"))
    assert "Of the corrected gap (5.3 % on the decomposition's pairs), 29 % [26, 32] is " \
           "systematic" in text
    assert ("Swapping identity-free statements (placebo) in the same slots moves answers by "
            f"5.9 %, so the excess over the placebo floor is {says}") in text


def test_a_thin_placebo_floor_is_not_compared_with(tmp_path: Path) -> None:
    """An early snapshot's floor (a few placebo answers) gets no excess and no verdict."""
    data = _data(tmp_path, 6)
    row = {"model": "m", "method": "corrected", "language": "all", "task": "all", "axis": "all",
           "mean_delta": 5.26, "systematic_share": 0.29, "systematic_share_lo": 0.26,
           "systematic_share_hi": 0.32, "p_value": 0.001, "placebo_delta": 0.0,
           "excess_delta": 5.26, "excess_delta_lo": 4.0, "excess_delta_hi": 6.5,
           "n_placebo_pairs": 12, "placebo_coverage": 0.04}
    pd.DataFrame([row]).to_parquet(data / "metrics" / "gap_decomposition.parquet")
    text = rs.render(rs.run_status(data, "m"))
    assert ("The placebo floor rests on 12 placebo pairs covering 4 % of the identity pairs: "
            "too few to compare the gap with yet.") in text
    assert "excess" not in text
