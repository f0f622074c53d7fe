"""A computed model whose run does not cover the benchmark yet is flagged as partial."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]


def _data_dir(tmp_path: Path, n_rows: int) -> Path:
    shutil.copytree(REPO / "data" / "published", tmp_path / "published")
    (tmp_path / "metrics").mkdir()
    pd.DataFrame({  # a SYNTHETIC computed parse-health row, for this test only
        "model": ["sim-partial"], "language": ["all"], "task": ["all"], "n_rows": [n_rows],
        "parse_health": [50.0], "refusal_rate": [0.0], "strict_rate": [0.0],
        "n_parsed": [n_rows // 2], "n_refusals": [0], "n_strict": [0],
        "source": ["computed"], "method": ["upstream"],
    }).to_parquet(tmp_path / "metrics" / "parse_health.parquet", index=False)
    return tmp_path


@pytest.mark.parametrize(("n_rows", "flagged"), [(1_278, True), (48_546, False)])
def test_partial_run_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n_rows: int,
                             flagged: bool) -> None:
    monkeypatch.setenv("RUPEEBIAS_DATA_DIR", str(_data_dir(tmp_path, n_rows)))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.query_params["model"] = ["sim-partial"]
    at.run()
    assert not at.exception
    notes = [w.value for w in at.warning if "Partial run" in w.value]
    if flagged:
        assert notes and "1,278 of the 48,546 prompts" in notes[0]
    else:
        assert not notes
