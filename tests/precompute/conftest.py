"""Fixtures for the collect stage: a fake OpenAI server and a small real prompt set."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.precompute.fake_openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
FAKE_KEY = "sk-test-NEVER-LOG-THIS-4f9a2c71e0d3"


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(scope="session")
def small_prompts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 real prompts (3 tasks x 2 languages x 10, whole slots) as a prompts.parquet."""
    from rupeebias_core.prompts import build_prompts

    frame = build_prompts(condition="benchmark",
                          tasks=("salary_estimation", "service_pricing_vendor",
                                 "salary_increment_estimation"))
    parts = []
    for _, group in frame.groupby(["task", "language", "condition"], sort=True):
        parts.append(group.head(10))
    out = tmp_path_factory.mktemp("prompts") / "prompts.parquet"
    pd.concat(parts).reset_index(drop=True).to_parquet(out)
    return out


def collect_args(base_url: str, data: Path, prompts: Path, *extra: str) -> list[str]:
    return ["collect", "--model", "acme/test-model", "--base-url", base_url,
            "--api-key-env", "RB_TEST_KEY", "--data", str(data), "--prompts", str(prompts),
            "--condition", "all", "--no-progress", "--timeout", "2", "--max-attempts", "3",
            "--backoff-base", "0.01", "--backoff-max", "0.05", *extra]


def run_collect(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    from precompute.__main__ import main

    monkeypatch.setenv("RB_TEST_KEY", FAKE_KEY)
    return main(argv)


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ, RB_TEST_KEY=FAKE_KEY, PYTHONPATH=str(REPO))
    return env


def run_collect_subprocess(argv: list[str],
                           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "precompute", *argv], cwd=REPO,
                          env=subprocess_env(), capture_output=True, text=True, timeout=timeout,
                          check=False)


def committed_rows(db: Path) -> int:
    """Responses committed to a collect store so far (0 while it does not exist yet); read-only,
    so it is safe to poll while a collect process is writing."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0
