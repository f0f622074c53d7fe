"""Real browser: serve the app with ``streamlit run`` and drive Debian's headless Chromium.

Checks what AppTest cannot: the server starts from a clean process, every page renders in a
browser without an exception box, charts and tables reach the DOM, a permalink reproduces a
view, hostile links are cleaned, and a download button returns the table as CSV. One
screenshot per page goes to ``tests/explorer/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.explorer.streamlit_server import (
    CHROMIUM,
    PAGES,
    charts_clipped,
    charts_drawn,
    charts_truncated,
    chromium_page,
    labels_cut_short,
    serve_app,
    wait_run_done,
)

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(__file__).resolve().parent / "screenshots"

#: Every tab of every tabbed page (URL parameter → slugs), so each one is opened and checked.
TABS = {
    "axes_use_cases": ("view", ("radar", "dots", "heatmap", "table")),
    "identifiers": ("tab", ("deviation", "canonical", "largest")),
    "consistency": ("tab", ("kendall", "quadrant", "wording", "merit", "fairness", "parse")),
}
#: Views that are a table only.
NO_CHART = {("axes_use_cases", "?view=table")}
#: Pages whose data exists for the paper's nine models: a paper model must be on screen.
PAPER_PAGES = ("", "axes_use_cases", "language_shift", "consistency")
PAPER_LABEL = "GPT 5.4"

pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's /usr/bin/chromium is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def server(synthetic_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(synthetic_dir, tmp_path_factory.mktemp("streamlit-log") / "server.log")


@pytest.fixture(scope="module")
def shipped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The repository's own data/ (published tables + the bundled SmolLM2 run)."""
    if not (REPO / "data" / "metrics").is_dir():
        pytest.skip("no shipped data/metrics in this checkout")
    yield from _serve(REPO / "data", tmp_path_factory.mktemp("streamlit-log") / "shipped.log")


@pytest.fixture
def fresh_server(synthetic_dir: Path, tmp_path: Path) -> Iterator[str]:
    """A server of its own, so that the test's request is the first one it sees."""
    yield from _serve(synthetic_dir, tmp_path / "server.log")


def _serve(synthetic_dir: Path, log: Path) -> Iterator[str]:
    with serve_app({**os.environ, "RUPEEBIAS_DATA_DIR": str(synthetic_dir)}, log) as url:
        yield url


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    with chromium_page(tmp_path_factory.mktemp("chromium-profile")) as page:
        page.errors = []  # console errors and uncaught page errors, reset per test
        # A failed request is logged twice (console + response): keep the response, which
        # names the URL. Served by serve.py, a deep link no longer makes the frontend probe
        # /<page>/_stcore/{health,host-config} (two 404s before it found /_stcore/): any 4xx
        # or 5xx, those included, is an error here.
        page.on("console", lambda m: page.errors.append(f"console: {m.text}")
                if m.type == "error" and not m.text.startswith("Failed to load resource")
                else None)
        page.on("pageerror", lambda e: page.errors.append(f"pageerror: {e}"))
        page.on("response", lambda r: page.errors.append(f"HTTP {r.status}: {r.url}")
                if r.status >= 400 else None)
        yield page


def _settle(page: object, title: str, marker: str) -> None:
    """Wait until the script run finished: title and a content marker visible, no spinner."""
    wait_run_done(page, title, marker)
    page.wait_for_timeout(800)  # let Vega finish drawing before the screenshot


def test_deep_link_on_a_fresh_server_runs_through_the_router(server: str,
                                                              browser_page: object) -> None:
    """First request after start: a deep link into pages/ must still get app.py's frame."""
    page = browser_page
    page.goto(f"{server}/identifiers?axis=Gender")
    _settle(page, "Identifiers", "Deviation from the axis average")
    nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "Drill down" in nav and "Pair browser" in nav  # app.py's sections, not file names
    assert "5 of 5 identifiers" in page.content()
    assert "axis=Gender" in page.url


def test_deep_link_opens_without_probing_the_page_path(server: str, browser_page: object
                                                      ) -> None:
    """serve.py sets the backend base in the page: on a deep link the frontend asks
    /_stcore/ at once, instead of /<page>/_stcore/ first (a 404 and a 100 ms back-off)."""
    page = browser_page
    asked: list[str] = []

    def log(request: object) -> None:
        asked.append(request.url)  # type: ignore[attr-defined]

    page.on("request", log)
    try:
        page.goto(f"{server}/language_shift?axis=Caste")
        _settle(page, "Language shift: English vs Hinglish", "How much does the gap change")
    finally:
        page.remove_listener("request", log)
    core = [u.removeprefix(server) for u in asked if "/_stcore/" in u]
    assert core and all(u.startswith("/_stcore/") for u in core), core
    assert {"/_stcore/health", "/_stcore/host-config"} <= set(core)
    assert "axis=Caste" in page.url  # the view's parameters survive
    base = page.evaluate("() => window.__streamlit && window.__streamlit.BACKEND_BASE_URL")
    assert base == f"{server}/"
    # the icon is the app's own image, sent with the page (before: a request for "/₹")
    icons = page.evaluate("() => [...document.querySelectorAll('link[rel*=icon]')]"
                          ".map(l => l.href)")
    assert icons and all(h.startswith("data:image/svg+xml") for h in icons), icons
    assert not [u for u in asked if "%E2%82%B9" in u]


def test_deep_link_to_try_a_prompt_on_a_fresh_server_gets_the_router(fresh_server: str,
                                                                     browser_page: object
                                                                     ) -> None:
    """The live page has widgets with state: it too must be handed to app.py on a fresh start
    (and then keep its link parameters)."""
    page = browser_page
    page.goto(f"{fresh_server}/try_prompt?task=service_pricing_client&axis=Caste")
    _settle(page, "Try a prompt", "What to send")
    nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "Drill down" in nav and "Pair browser" in nav
    assert "task=service_pricing_client" in page.url and "axis=Caste" in page.url


def _views() -> list[tuple[str, str]]:
    out = [(path, "") for path in PAGES]
    for path, (param, slugs) in TABS.items():
        out += [(path, f"?{param}={slug}") for slug in slugs[1:]]  # the first is the default
    return out


@pytest.mark.parametrize(("path", "query"), _views())
def test_every_page_and_tab_in_a_real_browser(server: str, browser_page: object, path: str,
                                              query: str) -> None:
    """No console or page error, no exception box, every chart drawn with a real height, and
    the paper's models on screen by default wherever the paper has data."""
    page = browser_page
    page.errors.clear()
    title, marker = PAGES[path]
    page.goto(f"{server}/{path}{query}")
    _settle(page, title, marker if not query else title)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Page not found").count() == 0
    if path not in ("try_prompt", "methodology") and (path, query) not in NO_CHART:
        heights = charts_drawn(page)
        assert heights and min(heights) > 60, heights
        assert not charts_clipped(page)
        # on a wide screen every title, panel name and label is whole (a chart drawn at its
        # own width once read its box as 0 px wide and cut them all to ~100 px)
        assert not charts_truncated(page)
    assert not labels_cut_short(page)
    if path in PAPER_PAGES and not query:
        assert page.get_by_text(PAPER_LABEL, exact=False).count() >= 1
    page.wait_for_timeout(300)
    assert not page.errors, page.errors
    SHOTS.mkdir(exist_ok=True)
    name = (path or "overview") + (query.replace("?", "-").replace("=", "-") if query else "")
    page.screenshot(path=str(SHOTS / f"tab-{name}.png"), full_page=True)


def test_old_overview_link_opens_without_a_dialog(server: str, browser_page: object) -> None:
    page = browser_page
    page.goto(f"{server}/overview?lang=en")
    _settle(page, "RupeeBias Explorer", "Leaderboard")
    page.wait_for_timeout(500)
    assert page.get_by_text("Page not found").count() == 0
    assert "lang=en" in page.url and "/overview" not in page.url


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_on_the_shipped_data(shipped_server: str, browser_page: object,
                                        path: str) -> None:
    """The same checks on the data the app ships with (no simulated banner there)."""
    page = browser_page
    page.errors.clear()
    title, marker = PAGES[path]
    page.goto(f"{shipped_server}/{path}")
    _settle(page, title, marker)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Page not found").count() == 0
    assert page.get_by_text("Simulated test data, not results").count() == 0
    if path not in ("try_prompt", "methodology", "who_gets_less"):
        heights = charts_drawn(page)
        assert heights and min(heights) > 60, heights
        assert not charts_clipped(page) and not charts_truncated(page)
    assert not labels_cut_short(page)
    if path in PAPER_PAGES:
        assert page.get_by_text(PAPER_LABEL, exact=False).count() >= 1
    if path == "language_shift":  # the ρ heat table (explorer.heat) survives the sanitiser
        cells = page.evaluate(
            "() => [...document.querySelectorAll('.rb-heat td[title]')].map(td => "
            "[getComputedStyle(td).backgroundColor, td.title, td.getBoundingClientRect().height])")
        assert len(cells) >= 7, cells
        assert all(bg.startswith("rgb(") and "Spearman ρ" in tip and h > 10
                   for bg, tip, h in cells), cells
        assert len({bg for bg, _, _ in cells}) > 1  # coloured by value, not one fill
    page.wait_for_timeout(300)
    assert not page.errors, page.errors
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"shipped-{path or 'overview'}.png"), full_page=True)


@pytest.mark.parametrize(("path", "query"), _views())
def test_nothing_overflows_at_390_px(server: str, browser_page: object, path: str,
                                     query: str) -> None:
    """A phone-width window, every page and tab: the page itself never scrolls sideways
    (tables and wide charts scroll inside their own box), and no chart cuts off its own
    text."""
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        title, marker = PAGES[path]
        page.goto(f"{server}/{path}{query}")
        _settle(page, title, marker if not query else title)
        # Streamlit scrolls inside its main block, not the document: measure both.
        width = page.evaluate(
            "() => Math.max(document.documentElement.scrollWidth, ...[...document."
            "querySelectorAll('[data-testid=\"stMain\"], [data-testid=\"stAppViewContainer\"]"
            "')].map(e => e.scrollWidth))")
        wide = page.evaluate(
            "() => [...document.querySelectorAll('[data-testid=\"stMain\"] *')].filter("
            "e => e.getBoundingClientRect().right > window.innerWidth + 1 && "
            "!e.closest('[data-testid=\"stDataFrame\"], .vega-embed, .rb-scroll, pre, code'))"
            ".map(e => e.tagName + '.' + (e.className || '')"
            ".toString().slice(0, 40)).slice(0, 5)")
        SHOTS.mkdir(exist_ok=True)
        name = (path or "overview") + (query.replace("?", "-").replace("=", "-") if query else "")
        page.screenshot(path=str(SHOTS / f"narrow-{name}.png"), full_page=True)
        assert width <= 391, (width, wide)
        assert not labels_cut_short(page)
        # a title line wider than the phone made Vega shrink the plot to nothing, and model
        # labels, x titles and legends ran past the box: on a narrow box they are limited,
        # split or stacked (the export keeps every line whole)
        if path not in ("try_prompt", "methodology") and (path, query) not in NO_CHART:
            charts_drawn(page)
            assert not charts_clipped(page)
    finally:
        page.set_viewport_size({"width": 1440, "height": 2400})


def test_quadrant_point_labels_do_not_overlap_on_a_phone(shipped_server: str,
                                                        browser_page: object) -> None:
    """The paper's nine models on the gap-vs-consistency chart at 390 px: their names ran over
    each other and over the wrong point (Kimi K2.5 / GPT 5.4, DeepSeek V3.2 / Sarvam 105B);
    there the points carry numbers, and a key under the plot names every model."""
    with _on_a_phone(browser_page, f"{shipped_server}/consistency?tab=quadrant",
                     "consistency") as page:
        labels = page.evaluate(
            """() => { const svg = document.querySelector('.vega-embed svg.marks');
              return [...svg.querySelectorAll('.mark-text.role-mark text')]
                .filter(t => t.getAttribute('stroke') !== 'white').map(t => {
                const r = t.getBoundingClientRect();
                return [t.textContent, r.left, r.top, r.right, r.bottom]; }); }""")
        key = page.evaluate(
            """() => [...document.querySelector('.vega-embed svg.marks')
                .querySelectorAll('.role-legend-label text')].map(t => t.textContent)""")
        assert sorted(int(t) for t, *_ in labels) == list(range(1, 10)), labels
        for n, (a, *ra) in enumerate(labels):
            for b, *rb in labels[n + 1:]:
                w = min(ra[2], rb[2]) - max(ra[0], rb[0])
                h = min(ra[3], rb[3]) - max(ra[1], rb[1])
                assert w <= 0.5 or h <= 0.5, (a, b, ra, rb)
        assert PAPER_LABEL in [entry.split(" ", 1)[1] for entry in key if " " in entry], key


def test_per_axis_dots_of_the_first_panels_fit_a_phone(shipped_server: str,
                                                      browser_page: object) -> None:
    """Language shift's per-axis chart at 390 px: with full "… · Published (paper)" labels
    and 320-px panels, the dots of the largest gaps (Sarvam 105B) lay beyond the screen's edge,
    as if missing. Every dot of the first panel is on screen now."""
    with _on_a_phone(browser_page, f"{shipped_server}/language_shift",
                     "language_shift") as page:
        # the first column's x axis (its panels' whole range), and the dots drawn over it
        axis_right, right = page.evaluate(
            """() => { const svg = document.querySelector('.vega-embed svg.marks');
               const axis = svg.querySelector('g.column_footer g.role-axis')
                 .getBoundingClientRect();
               return [axis.right, [...svg.querySelectorAll('.role-mark.mark-symbol path')]
                 .map(p => p.getBoundingClientRect()).filter(r => r.left < axis.right)
                 .map(r => r.right)]; }""")
        assert axis_right <= 390, axis_right
        assert len(right) >= 3 * 18, len(right)  # three panels × nine models × two languages
        assert max(right) <= 390, max(right)


@contextlib.contextmanager
def _on_a_phone(page: Any, url: str, path: str) -> Iterator[Any]:
    """``url`` open at 390 px with its charts drawn; the desktop size is back afterwards."""
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        title, _ = PAGES[path]
        page.goto(url)
        _settle(page, title, title)
        charts_drawn(page)
        yield page
    finally:
        page.set_viewport_size({"width": 1440, "height": 2400})


@pytest.mark.parametrize("path", list(PAGES))
def test_page_renders_in_a_real_browser(server: str, browser_page: object, path: str) -> None:
    page = browser_page
    title, marker = PAGES[path]
    page.goto(f"{server}/{path}")
    _settle(page, title, marker)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Page not found").count() == 0
    if path not in ("try_prompt", "methodology"):
        # waits, not counts: on a loaded machine Vega may draw after the script run ends
        page.locator(".vega-embed").first.wait_for(timeout=60_000)
        if path != "axes_use_cases":  # opens on the radar tab: a chart, no table
            page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=60_000)
        assert page.get_by_text("Simulated test data, not results").count() >= 1
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{path or 'overview'}.png"), full_page=True)


def test_permalink_reproduces_the_view(server: str, browser_page: object) -> None:
    page = browser_page
    page.goto(f"{server}/?lang=hinglish&axis=Caste&sort=hinglish&order=desc")
    _settle(page, "RupeeBias Explorer", "Leaderboard")
    assert page.get_by_text("All use cases · Caste · Hinglish").count() >= 1
    assert "axis=Caste" in page.url and "lang=hinglish" in page.url
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "overview-permalink.png"), full_page=True)


@pytest.mark.parametrize(("path", "label", "value", "param"), [
    ("language_shift", "Axis", "Religion", "axis=Religion"),
    ("identifiers", "Language", "English", "lang=en"),
])
def test_a_page_filter_reruns_its_fragment_and_keeps_the_link(
        server: str, browser_page: object, path: str, label: str, value: str,
        param: str) -> None:
    """The page's own filters run as a fragment (ui.page_body): a change there updates the
    URL and the view; a sidebar filter then reruns the whole page and keeps it."""
    page = browser_page
    title, marker = PAGES[path]
    page.goto(f"{server}/{path}")
    _settle(page, title, marker)
    page.get_by_role("combobox", name=label, exact=True).first.click()
    page.get_by_role("option", name=value, exact=True).click()
    page.wait_for_url(re.compile(re.escape(param)), timeout=30_000)
    _settle(page, title, marker)
    assert page.get_by_role("combobox", name=label, exact=True).first.input_value() == value
    page.get_by_test_id("stSidebar").get_by_role("button", name="Published (paper)",
                                                 exact=True).click()  # computed only
    page.wait_for_url(re.compile("source=computed"), timeout=30_000)
    _settle(page, title, marker)
    assert param in page.url
    assert page.get_by_role("combobox", name=label, exact=True).first.input_value() == value
    assert page.locator('[data-testid="stException"]').count() == 0


def test_hostile_link_is_cleaned(server: str, browser_page: object) -> None:
    page = browser_page
    page.goto(f"{server}/?model=%27%3BDROP%20TABLE%20x%3B--"
              "&lang=%3Cscript%3Ealert(1)%3C%2Fscript%3E&axis=%00")
    _settle(page, "RupeeBias Explorer", "Leaderboard")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "DROP" not in page.url and "script" not in page.url
    assert page.get_by_text("Ignored link parameter").count() >= 1


def test_download_returns_the_shown_table(server: str, browser_page: object,
                                          synthetic_dir: Path) -> None:
    page = browser_page
    page.goto(f"{server}/?source=computed")
    _settle(page, "RupeeBias Explorer", "Leaderboard")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download this table (CSV)").first.click()
    csv = Path(info.value.path()).read_bytes()
    table = pd.read_csv(io.BytesIO(csv))
    models = pd.read_parquet(synthetic_dir / "metrics" / "models.parquet")["model"]
    assert sorted(table["Model ID"]) == sorted(models)
    assert set(table["Source type"]) == {"Computed here"}
    assert {"Overall Mean Δ%", "Overall CI low", "Overall CI high", "Coverage"} <= set(table)
