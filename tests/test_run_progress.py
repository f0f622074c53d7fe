"""scripts/run_progress.py: increments hold each finished answer once, and seed rebuilds the
Parquet collect resumes from."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scripts.run_progress import load_parts, save, seed

SLUG = "sim-run"


def _write_run(run: Path, rows: list[tuple[str, str]]) -> None:
    out = run / "responses"
    out.mkdir(parents=True, exist_ok=True)
    table = pa.table({"id": [r[0] for r in rows], "condition": ["standard"] * len(rows),
                      "cache_key": [f"k-{r[0]}" for r in rows],
                      "status": [r[1] for r in rows], "response": ["### 1 INR"] * len(rows)})
    pq.write_table(table, out / f"{SLUG}.parquet")
    (out / f"{SLUG}.manifest.json").write_text(json.dumps(
        {"counts": {"rows_in_parquet": len(rows)}}))


def test_increments_hold_each_answer_once_and_seed_rebuilds(tmp_path: Path) -> None:
    run, folder = tmp_path / "run", tmp_path / "progress" / SLUG
    _write_run(run, [("a", "ok"), ("b", "error"), ("c", "empty")])
    assert save(run, SLUG, folder) == 2  # the error row is not a finished answer
    _write_run(run, [("a", "ok"), ("b", "ok"), ("c", "empty"), ("d", "ok")])
    assert save(run, SLUG, folder) == 2  # only b (now answered) and d are new
    assert save(run, SLUG, folder) == 0  # nothing new: no empty increment written
    assert sorted(p.name for p in folder.glob("*.parquet")) == ["0001.parquet", "0002.parquet"]
    assert (folder / "0002.manifest.json").is_file()
    table = load_parts(folder)
    assert table is not None and sorted(table.column("id").to_pylist()) == ["a", "b", "c", "d"]
    fresh = tmp_path / "fresh"
    assert seed(fresh, SLUG, folder) == 4
    assert pq.read_table(fresh / "responses" / f"{SLUG}.parquet").num_rows == 4
    with pytest.raises(SystemExit, match="already holds"):
        seed(fresh, SLUG, folder)
