"""`python -m precompute import-upstream` on a fixture in the authors' released layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from precompute.import_upstream import choose_files

FIXTURE = Path(__file__).parent / "fixtures" / "upstream_runs"


def run(tmp_path: Path, *extra: str) -> int:
    from precompute.__main__ import main

    return main(["import-upstream", str(FIXTURE), "--data", str(tmp_path), *extra])


def test_file_choice_follows_the_authors_rules() -> None:
    chosen = {(c.task, c.language, c.condition): c.path.name
              for c in choose_files(FIXTURE / "fixture-model")}
    assert chosen == {
        ("salary_estimation", "en", "standard"):
            "salary_estimation_en_fixture-model_0.0_retried.jsonl",
        ("salary_estimation", "hinglish", "standard"):
            "salary_estimation_hinglish_fixture-model_0.0.jsonl",
        ("salary_estimation", "en", "fairness"):
            "salary_estimation_en_fairness_fixture-model_0.0.jsonl",
    }


def test_import_rows_duplicates_and_missing_ids(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path) == 0
    err = capsys.readouterr().err
    assert "rows without id at lines [5]" in err and "unreadable lines [6]" in err
    out = pd.read_parquet(tmp_path / "responses" / "fixture-model.parquet")
    assert list(out.columns[:5]) == ["id", "condition", "model", "response", "finish_reason"]
    assert not out.duplicated(["id", "condition"]).any()
    assert list(zip(out.id, out.condition, strict=True)) == sorted(
        zip(out.id, out.condition, strict=True))
    std = out[(out.condition == "standard") & out.id.str.startswith("salary_estimation_en")]
    std = std.set_index("id")
    # first row per id in file order wins; the _retried file superseded the base file
    assert std.loc["salary_estimation_en_00001", "response"] == "### 1500000 INR"
    assert std.loc["salary_estimation_en_00003", "response"] == "### 1200000 INR"
    assert "salary_estimation_en_00004" not in std.index  # its row had no id
    # upstream ERROR rows are kept verbatim (the published numbers parse them) and flagged
    e = std.loc["salary_estimation_en_00002"]
    assert e.response.startswith("ERROR: Validation failed") and e.status == "error"
    assert e.error == e.response and e.finish_reason == "error"
    assert std.loc["salary_estimation_en_00005", "finish_reason"] == "length"
    assert std.loc["salary_estimation_en_00006", "status"] == "empty"
    assert pd.isna(std.loc["salary_estimation_en_00006", "response"])
    fair = out[out.condition == "fairness"]
    assert len(fair) == 3 and set(fair.response) == {"### 1100000 INR"}
    assert set(out.model) == {"fixture-model"}
    assert set(out.model_requested) == {"acme/fixture-model"}
    assert (out.tokens_prompt == 180).all() and (out.latency_s == 0.75).all()
    assert not out.response.fillna("").str.contains("SMOKE|revalidated|superseded").any()
    man = json.loads((tmp_path / "responses" / "fixture-model.manifest.json").read_text())
    c = man["counts"]
    assert c["duplicates_within_files"] == 1 and c["rows_missing_id"] == 1
    assert c["unreadable_lines"] == 1 and c["rows_in_parquet"] == len(out) == 12
    retried = [f for f in man["files"] if f["file"].endswith("_retried.jsonl")][0]
    assert retried["duplicates"] == ["salary_estimation_en_00001"]
    assert "salary_estimation_en_fixture-model_0.0.jsonl" in retried["skipped_files"]


def test_reasoning_content_kept_and_models_filter(tmp_path: Path) -> None:
    assert run(tmp_path, "--models", "fixture-deepseek") == 0
    assert not (tmp_path / "responses" / "fixture-model.parquet").exists()
    ds = pd.read_parquet(tmp_path / "responses" / "fixture-deepseek.parquet")
    assert len(ds) == 4 and ds.reasoning_content.notna().sum() == 2
    assert set(ds.task) == {"service_pricing_client"}


def test_bad_paths_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from precompute.__main__ import main

    assert main(["import-upstream", str(tmp_path / "nope"), "--data", str(tmp_path)]) == 2
    assert "runs folder not found" in capsys.readouterr().err
    assert run(tmp_path, "--models", "no-such-model") == 2
    assert "no model folder" in capsys.readouterr().err
    empty = tmp_path / "runs" / "m" / "salary_estimation"
    empty.mkdir(parents=True)
    assert main(["import-upstream", str(tmp_path / "runs"), "--data", str(tmp_path)]) == 2
    assert "no run files" in capsys.readouterr().err


def test_real_upstream_rows_roundtrip(tmp_path: Path, shared: Path) -> None:
    """Rows of the real released dataset, dressed as a run file, import one to one."""
    src = shared / "upstream" / "counter_offer_recommendation_hinglish.jsonl"
    rows = [json.loads(line) for line in src.read_text().splitlines()]
    d = tmp_path / "runs" / "m1" / "counter_offer_recommendation"
    d.mkdir(parents=True)
    with open(d / "counter_offer_recommendation_hinglish_m1_0.0.jsonl", "w") as fh:
        for r in reversed(rows):  # completion order differs from id order
            fh.write(json.dumps({**r, "response": "### 2000000 INR", "finish_reason": "stop",
                                 "model": "x/m1"}) + "\n")
    shutil.copytree(FIXTURE / "fixture-deepseek", tmp_path / "runs" / "fixture-deepseek")
    from precompute.__main__ import main

    assert main(["import-upstream", str(tmp_path / "runs"), "--data", str(tmp_path)]) == 0
    out = pd.read_parquet(tmp_path / "responses" / "m1.parquet")
    assert out.id.tolist() == sorted(r["id"] for r in rows)
    assert set(out.language) == {"hinglish"} and (out.condition == "standard").all()
