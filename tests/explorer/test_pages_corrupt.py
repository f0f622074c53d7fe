"""Issue 18, item 6: type-corrupt and non-finite files break one section, never a page, and the
page says "this file is unreadable". Each case is a failure the audit found."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer import data
from tests.explorer.conftest import APP, PAGES


def _variant(synthetic_dir: Path, tmp: pytest.TempPathFactory, name: str,
             change: Callable[[Path], None]) -> Path:
    root = tmp.mktemp(f"rupeebias-{name}")
    shutil.copytree(synthetic_dir, root, dirs_exist_ok=True)
    change(root)
    return root


def _text_delta(root: Path) -> None:
    path = root / "metrics" / "delta.parquet"
    frame = pd.read_parquet(path)
    frame["mean_delta"] = frame["mean_delta"].astype(str)  # right name, wrong type
    frame.to_parquet(path)


def _inf_delta(root: Path) -> None:
    path = root / "metrics" / "delta.parquet"
    frame = pd.read_parquet(path)
    frame.loc[frame.index[::5], "mean_delta"] = np.inf
    frame.to_parquet(path)


@pytest.fixture(scope="module")
def text_dir(synthetic_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _variant(synthetic_dir, tmp_path_factory, "text-delta", _text_delta)


@pytest.fixture(scope="module")
def inf_dir(synthetic_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _variant(synthetic_dir, tmp_path_factory, "inf-delta", _inf_delta)


def _run(page: str, params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    if page != "overview":
        at.switch_page(PAGES[page])
    at.run()
    assert not at.exception, (page, params, [e.value for e in at.exception])
    return at


#: The views the audit crashed (radar, heatmap, quadrant) and the others reading `delta`.
DELTA_VIEWS = [("axes", {"view": "radar"}), ("axes", {"view": "heatmap"}),
               ("consistency", {"tab": "quadrant"}), ("language", {})]


@pytest.mark.parametrize("page,params", DELTA_VIEWS)
@pytest.mark.parametrize("which,needle", [("text", "`mean_delta` is VARCHAR"),
                                          ("inf", "infinite values in `mean_delta`")])
def test_corrupt_delta_breaks_its_sections_only(request: pytest.FixtureRequest, use_dir,
                                                page: str, params: dict[str, str], which: str,
                                                needle: str) -> None:
    use_dir(request.getfixturevalue(f"{which}_dir"))
    at = _run(page, params)
    errors = [e.value for e in at.error]
    assert errors and all("this file is unreadable" in e for e in errors), errors
    assert any("metrics/delta.parquet" in e and needle in e for e in errors), errors


@pytest.mark.parametrize("which", ["text", "inf"])
def test_sections_without_the_corrupt_file_still_work(request: pytest.FixtureRequest, use_dir,
                                                      which: str) -> None:
    use_dir(request.getfixturevalue(f"{which}_dir"))
    at = _run("consistency", {"tab": "parse"})  # parse health does not read delta
    assert not at.error and any("Parse health %" in d.value.columns for d in at.dataframe)
    overview = _run("overview")  # the leaderboard table, not delta
    assert not overview.error and len(overview.dataframe)


def test_broken_leaderboard_is_reported_not_replaced_by_delta(
        synthetic_dir: Path, tmp_path_factory: pytest.TempPathFactory, use_dir) -> None:
    def garbage(root: Path) -> None:
        (root / "metrics" / "leaderboard.parquet").write_bytes(b"PAR1 not parquet PAR1")
        shutil.rmtree(root / "published", ignore_errors=True)  # only the computed file

    use_dir(_variant(synthetic_dir, tmp_path_factory, "bad-leaderboard", garbage))
    at = _run("overview")
    errors = [e.value for e in at.error]
    assert any("leaderboard" in e and "this file is unreadable" in e for e in errors), errors
    assert not any("Mean Δ%" in d.value.columns for d in at.dataframe)  # no silent fallback


def test_garbage_responses_say_unreadable_in_the_pair_browser(
        synthetic_dir: Path, tmp_path_factory: pytest.TempPathFactory, use_dir) -> None:
    def garbage(root: Path) -> None:
        for path in (root / "responses").glob("*.parquet"):
            path.write_bytes(b"\x00" * 512)

    use_dir(_variant(synthetic_dir, tmp_path_factory, "bad-responses", garbage))
    at = _run("pairs")
    errors = " ".join(e.value for e in at.error)
    assert "this file is unreadable" in errors and "responses/" in errors
    assert "No model with raw answers" not in " ".join(w.value for w in at.warning)


def test_numeric_check_accepts_the_shipped_and_synthetic_data(synthetic_dir: Path) -> None:
    for root in (synthetic_dir, Path(__file__).resolve().parents[2] / "data"):
        if root.is_dir():
            assert data.build_store(root).problems == {}, root
