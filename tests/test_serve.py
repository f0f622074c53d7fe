"""serve.py: the app's page URLs get Streamlit's own index.html with the backend base set, so a
deep link opens without the frontend's failed guess at ``/<page>/_stcore/health`` (the browser
test ``test_deep_link_opens_without_probing_the_page_path`` checks the effect)."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from starlette.requests import Request
from streamlit import config, file_util

REPO = Path(__file__).resolve().parents[1]

# Importing serve builds its st.App, which pins the process's main script path (used to find
# config and secrets files); put it back so the other tests' AppTest runs see what they did.
_pinned = config._main_script_path
import serve  # noqa: E402

config._main_script_path = _pinned


def _app_url_paths() -> set[str]:
    """Every ``url_path=`` app.py's navigation declares."""
    tree = ast.parse((REPO / "app.py").read_text(encoding="utf-8"))
    return {str(kw.value.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
            for kw in node.keywords
            if kw.arg == "url_path" and isinstance(kw.value, ast.Constant)}


def test_page_paths_are_exactly_the_apps_pages() -> None:
    declared = _app_url_paths()
    assert {"home", "overview", "who_gets_less", "try_prompt", "methodology"} <= declared
    assert set(serve.page_paths("")) == {"/", *(f"/{p}" for p in declared)}
    # under server.baseUrlPath, as Streamlit serves the app there (its root with the slash)
    assert set(serve.page_paths("/rb/")) == {"/rb/", *(f"/rb/{p}" for p in declared)}
    assert serve.page_paths() == serve.page_paths("")  # this process sets no base path


def test_index_html_sets_the_base_before_streamlits_bundle() -> None:
    html = serve.index_html()
    assert html.count(serve.BASE_SCRIPT) == 1
    assert html.index(serve.BASE_SCRIPT) < html.index('<script type="module"')
    # nothing else of Streamlit's page changes
    assert html.replace(serve.BASE_SCRIPT + "\n    ", "", 1) == (
        Path(file_util.get_static_dir()) / "index.html").read_text(encoding="utf-8")


def test_an_unknown_index_layout_is_served_unchanged(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "index.html").write_text("<html><script src='x.js'></script></html>")
    monkeypatch.setattr(file_util, "get_static_dir", lambda: str(tmp_path))
    serve.index_html.cache_clear()
    try:
        assert serve.index_html() == "<html><script src='x.js'></script></html>"
    finally:
        serve.index_html.cache_clear()


def test_routes_cover_only_page_urls_and_answer_uncached_html() -> None:
    assert sorted(r.path for r in serve.ROUTES) == sorted(serve.page_paths())
    assert all(r.methods == {"GET", "HEAD"} for r in serve.ROUTES)  # no POST body ever reaches it
    scope = {"type": "http", "method": "GET", "path": "/language_shift", "headers": [],
             "query_string": b"axis=Caste"}
    response = asyncio.run(serve.page(Request(scope)))
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-cache"
    assert response.media_type == "text/html"
    assert serve.BASE_SCRIPT.encode() in response.body
