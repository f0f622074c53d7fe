"""A computed model whose run does not cover the benchmark yet is flagged as partial."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]


def _data_dir(tmp_path: Path, per_task: dict[str, int]) -> Path:
    shutil.copytree(REPO / "data" / "published", tmp_path / "published")
    (tmp_path / "metrics").mkdir()
    counts = {"all": sum(per_task.values()), **per_task}
    pd.DataFrame({  # SYNTHETIC computed parse-health rows, for this test only
        "model": "sim-partial", "language": "all", "task": list(counts),
        "n_rows": list(counts.values()), "parse_health": 50.0, "refusal_rate": 0.0,
        "strict_rate": 0.0, "n_parsed": [n // 2 for n in counts.values()], "n_refusals": 0,
        "n_strict": 0, "source": "computed", "method": "upstream",
    }).to_parquet(tmp_path / "metrics" / "parse_health.parquet", index=False)
    return tmp_path


COMPLETE = {"salary_estimation": 9_396, "salary_increment_estimation": 14_094,
            "counter_offer_recommendation": 9_396, "service_pricing_vendor": 3_132,
            "service_pricing_client": 3_132}  # standard prompts only: what parse health counts


@pytest.mark.parametrize(("per_task", "flagged"), [
    ({"salary_estimation": 1_000, "counter_offer_recommendation": 278}, True),
    ({**COMPLETE, "service_pricing_client": 3_131}, True),
    (COMPLETE, False),  # a complete run: 39,150 standard answers, not 48,546
])
def test_partial_run_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             per_task: dict[str, int], flagged: bool) -> None:
    monkeypatch.setenv("RUPEEBIAS_DATA_DIR", str(_data_dir(tmp_path, per_task)))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.query_params["model"] = ["sim-partial"]
    at.run()
    assert not at.exception
    notes = [w.value for w in at.warning if "Partial run" in w.value]
    if not flagged:
        assert not notes
        return
    assert len(notes) == 1
    n = sum(per_task.values())
    assert f"{n:,} of the 39,150 standard prompts" in notes[0]
    if n == 1_278:
        assert "(3 %; per use case: Salary estimation 11 % · Salary increment 0 % · " \
               "Counter-offer 3 % · Service pricing (vendor) 0 % · Service pricing (client) " \
               "0 %)" in notes[0]
