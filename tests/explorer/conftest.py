"""Fixtures for the explorer tests: SYNTHETIC data directories and an AppTest opener.

``synthetic_dir`` holds made-up computed tables (see ``synthetic.py``; every model is labelled
SYNTHETIC) next to the repository's real ``data/published/`` tables, so tests can assert that
published figures appear exactly as transcribed and computed ones exactly as written.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer import data
from tests.explorer import synthetic

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGES = {
    "overview": "pages/overview.py",
    "who": "pages/who_gets_less.py",
    "axes": "pages/axes_use_cases.py",
    "language": "pages/language_shift.py",
    "identifiers": "pages/identifiers.py",
    "consistency": "pages/consistency.py",
    "pairs": "pages/pair_browser.py",
    "methodology": "pages/methodology.py",
}
TITLES = {
    "overview": "RupeeBias Explorer",
    "who": "Who gets less, and by how much",
    "axes": "Axes & use cases",
    "language": "Language shift: English vs Hinglish",
    "identifiers": "Identifiers",
    "consistency": "Consistency & robustness",
    "pairs": "Pair browser",
    "methodology": "Methodology",
}


@pytest.fixture(scope="session")
def synthetic_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete SYNTHETIC data dir: 3 computed models (1 with raw answers) + real published."""
    root = tmp_path_factory.mktemp("rupeebias-synthetic-data")
    info = synthetic.build(root, n_models=3, raw_models=1,
                           raw_tasks=("salary_estimation", "counter_offer_recommendation"))
    (root / "BUILD_INFO.txt").write_text(f"SYNTHETIC test data; published: {info['published']}\n")
    return root


@pytest.fixture(scope="session")
def has_published(synthetic_dir: Path) -> bool:
    return "repository" in (synthetic_dir / "BUILD_INFO.txt").read_text() or \
        "precompute" in (synthetic_dir / "BUILD_INFO.txt").read_text()


@pytest.fixture()
def use_dir(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Path]:
    """Point the app at a data dir for this test."""
    def _use(root: Path) -> Path:
        monkeypatch.setenv(data.DATA_ENV, str(root))
        return root
    return _use


@pytest.fixture()
def data_env(synthetic_dir: Path, use_dir: Callable[[Path], Path]) -> Path:
    return use_dir(synthetic_dir)


@pytest.fixture(scope="session")
def corrupt_dir(synthetic_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic dir with one broken file: computed ``kendall_w.parquet`` is garbage."""
    root = tmp_path_factory.mktemp("rupeebias-corrupt-data")
    shutil.copytree(synthetic_dir, root, dirs_exist_ok=True)
    (root / "metrics" / "kendall_w.parquet").write_bytes(b"PAR1 this is not parquet PAR1")
    return root


@pytest.fixture(scope="session")
def published_only_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What a fresh clone ships before any metrics are computed: the real published tables and
    the prompts, no computed tables, no raw answers."""
    src = REPO / "data" / "published"
    if not any(src.glob("*.parquet")):
        pytest.skip("no data/published/ tables in this checkout")
    root = tmp_path_factory.mktemp("rupeebias-published-only")
    shutil.copytree(src, root / "published")
    if (REPO / "data" / "prompts.parquet").is_file():
        shutil.copy(REPO / "data" / "prompts.parquet", root / "prompts.parquet")
    return root


@pytest.fixture(scope="session")
def empty_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rupeebias-empty-data")


@pytest.fixture()
def open_page(data_env: Path) -> Callable[..., AppTest]:
    """Open one page the way a link does: query params set, then that page runs first."""
    def _open(page: str, params: dict[str, str | list[str]] | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        for key, value in (params or {}).items():
            at.query_params[key] = value
        if page != "overview":
            at.switch_page(PAGES[page])
        at.run()
        return at
    return _open


def frame_of(at: AppTest, index: int = 0) -> pd.DataFrame:
    return at.dataframe[index].value


def board_of(at: AppTest) -> pd.DataFrame:
    """Every table of a page stacked: the Overview shows one leaderboard per lane (published,
    then computed), never one ranking of both."""
    return pd.concat([d.value for d in at.dataframe], ignore_index=True)


def texts(at: AppTest) -> str:
    """All visible text of a page (titles, markdown, captions, alerts), for assertions."""
    parts: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning",
                 "error", "success"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [str(e.value) for e in at.get("badge")] if hasattr(at, "get") else []
    return "\n".join(parts)


def downloads(at: AppTest) -> list[str]:
    return [d.proto.label for d in at.get("download_button")]


def charts(at: AppTest) -> list:
    return list(at.get("vega_lite_chart"))


@pytest.fixture(autouse=True)
def _clear_caches() -> Iterator[None]:
    """Each test sees a fresh cache (a data dir may be rewritten between tests)."""
    yield
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
