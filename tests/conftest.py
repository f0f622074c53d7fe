"""Shared test fixtures: where the authors' released data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """`../shared` beside the checkout (CI has it), or $RUPEEBIAS_SHARED."""
    env = os.environ.get("RUPEEBIAS_SHARED")
    return Path(env) if env else REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_dir()
    if not (path / "upstream").is_dir():
        pytest.skip(f"the authors' released data is not at {path} (set RUPEEBIAS_SHARED)")
    return path
