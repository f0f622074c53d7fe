"""A fresh checkout resumes a long run from the committed responses Parquet (no local store)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.precompute.conftest import collect_args, run_collect
from tests.precompute.fake_openai_server import FakeOpenAIServer


def test_resume_from_committed_parquet_without_store(
        fake_server: FakeOpenAIServer, small_prompts: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = pd.read_parquet(small_prompts)
    argv = collect_args(fake_server.base_url, tmp_path, small_prompts)
    assert run_collect(argv, monkeypatch) == 0
    first = pd.read_parquet(tmp_path / "responses" / "test-model.parquet")
    sent = fake_server.count()
    assert sent == len(prompts)

    # What a new clone has: the committed Parquet, minus a few rows, and no store.
    shutil.rmtree(tmp_path / "responses" / "test-model.store")
    kept = first.iloc[3:]
    kept.to_parquet(tmp_path / "responses" / "test-model.parquet", index=False)

    assert run_collect(argv, monkeypatch) == 0
    assert fake_server.count() - sent == 3  # only the missing rows were sent
    again = pd.read_parquet(tmp_path / "responses" / "test-model.parquet")
    assert len(again) == len(prompts) and not again.duplicated(["id", "condition"]).any()
    merged = again.merge(first, on=["id", "condition"], suffixes=("", "_first"))
    assert (merged.response == merged.response_first).all()
    assert (merged.cache_key == merged.cache_key_first).all()


def test_parquet_from_other_parameters_is_not_reused(
        fake_server: FakeOpenAIServer, small_prompts: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    argv = collect_args(fake_server.base_url, tmp_path, small_prompts)
    assert run_collect(argv, monkeypatch) == 0
    sent = fake_server.count()
    shutil.rmtree(tmp_path / "responses" / "test-model.store")
    assert run_collect([*argv, "--max-tokens", "41"], monkeypatch) == 0
    assert fake_server.count() - sent == sent  # different request body: everything re-sent
