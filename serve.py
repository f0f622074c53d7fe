"""The explorer's server: ``streamlit run serve.py`` serves ``app.py`` and opens deep links faster.

Why not plain ``streamlit run app.py`` (which still works): on a direct visit to a page's own
URL (``/language_shift?axis=Caste``) Streamlit's frontend does not know where the server's base
is. It first pings ``/language_shift/_stcore/health``, gets a 404, waits its 100 ms retry period
and only then tries ``/``; the script run cannot start before (docs/explorer.md, "Speed"). The
frontend skips that guess when ``window.__streamlit.BACKEND_BASE_URL`` is set before its bundle
runs. This file serves Streamlit's own ``index.html`` for the app's page URLs with that setting
added, through the routes ``st.App`` lets an app put before Streamlit's (nothing else changes).

The base is resolved in the browser as the page URL's folder (``new URL(".", location)``), the
same rule ``index.html`` already relies on for its ``./static/…`` assets, so a path prefix added
by a proxy keeps working; under ``server.baseUrlPath`` the routes sit where Streamlit serves the
pages. Only the app's own page URLs get the setting: any other path falls through to Streamlit
unchanged.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import streamlit as st
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route
from streamlit import config, file_util

HERE = Path(__file__).resolve().parent
#: Sets the backend base before Streamlit's bundle reads ``window.__streamlit`` (it freezes a
#: copy when it loads), keeping anything a host page set there.
BASE_SCRIPT = ('<script>window.__streamlit = Object.assign({}, window.__streamlit, '
               '{BACKEND_BASE_URL: new URL(".", window.location.href).href});</script>')
_MODULE_TAG = '<script type="module"'


def page_paths(base_url_path: str | None = None) -> tuple[str, ...]:
    """URL paths of the app's pages: the root, ``home`` (the default page's own path), the
    ``overview`` alias and one per ``pages/*.py`` (app.py keeps ``url_path`` = file stem), under
    ``server.baseUrlPath`` when one is set (read from Streamlit's config by default)."""
    if base_url_path is None:
        base_url_path = str(config.get_option("server.baseUrlPath") or "")
    base = "/" + base_url_path.strip("/") if base_url_path.strip("/") else ""
    stems = sorted(p.stem for p in (HERE / "pages").glob("*.py") if not p.stem.startswith("_"))
    return (f"{base}/", *(f"{base}/{s}" for s in ("home", "overview", *stems)))


@cache
def index_html() -> str:
    """Streamlit's ``index.html`` with :data:`BASE_SCRIPT` before its module script."""
    html = (Path(file_util.get_static_dir()) / "index.html").read_text(encoding="utf-8")
    if _MODULE_TAG not in html:  # an unknown layout: serve it unchanged rather than guess
        return html
    return html.replace(_MODULE_TAG, BASE_SCRIPT + "\n    " + _MODULE_TAG, 1)


async def page(_request: Request) -> HTMLResponse:
    # As Streamlit serves index.html: never cached (its asset names change with each release).
    return HTMLResponse(index_html(), headers={"Cache-Control": "no-cache"})


ROUTES = [Route(path, page, methods=["GET", "HEAD"]) for path in page_paths()]
app = st.App(str(HERE / "app.py"), routes=ROUTES)
