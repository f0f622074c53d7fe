"""One way to start the app for the browser tests (and ``bench/app.py --browser``): a real
`streamlit run` on a free loopback port, waited for on /_stcore/health (bounded), stopped
afterwards; and one way to drive it: Debian's headless Chromium through playwright (never a
browser playwright downloads), the app's pages, and the waits for "the run is done"."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
#: Every page of app.py's navigation: url path → (its title, a text that proves the content
#: rendered). The default page (Overview) lives at "/".
PAGES = {
    "": ("RupeeBias Explorer", "Leaderboard"),
    "who_gets_less": ("Who gets less, and by how much", "Who gets less"),
    "axes_use_cases": ("Axes & use cases", "Radar"),
    "language_shift": ("Language shift: English vs Hinglish", "How much does the gap change"),
    "identifiers": ("Identifiers", "Deviation from the axis average"),
    "consistency": ("Consistency & robustness", "Kendall's W"),
    "pair_browser": ("Pair browser", "Every pair's gap"),
    "try_prompt": ("Try a prompt", "Try a prompt"),
    "methodology": ("Methodology", "Ethics"),
}
#: True while a script run is in progress or a skeleton still stands in for content.
BUSY_JS = ("() => !!document.querySelector('[data-testid=\"stStatusWidget\"] button') || "
           "!!document.querySelector('[data-testid=\"stSkeleton\"]')")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_app(env: Mapping[str, str], log: Path, startup_s: float = 90.0,
              entry: str = "serve.py") -> Iterator[str]:
    """The base URL of a running app; fails the test with the log tail if it does not start.
    ``entry``: serve.py (how the README starts it) or app.py (plain ``streamlit run``)."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(REPO / entry),
             "--server.headless", "true", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=REPO, env=dict(env), stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def chromium_page(profile: Path, width: int = 1440, height: int = 2400) -> Iterator[Page]:
    """A tab of Debian's headless Chromium (persistent profile in ``profile``, removed after)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": width, "height": height}, accept_downloads=True)
        try:
            page = context.new_page()
            page.set_default_timeout(90_000)
            yield page
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


def wait_run_done(page: Page, title: str, marker: str, timeout_ms: float = 90_000) -> None:
    """Wait until the script run finished: title and a content marker visible, no spinner."""
    page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=timeout_ms)
    page.get_by_text(marker, exact=False).first.wait_for(timeout=timeout_ms)
    page.wait_for_function(f"() => !({BUSY_JS})()", timeout=timeout_ms)


#: Text of a Vega SVG that must lie inside it: titles, subtitles, axis and legend titles, axis,
#: legend and facet-header labels. A y title longer than its plot pushed the quadrant's title
#: block above the SVG; five use cases side by side ran a legend past the box.
_CHART_TEXT = (".role-title-text, .role-title-subtitle, .role-axis-title, .role-legend-title, "
               ".role-axis-label text, .role-legend-label text, .role-header-label text")


def charts_clipped(page: Page, roles: str = _CHART_TEXT) -> list[list[object]]:
    """Every chart text (of ``roles``, CSS selectors) cut off by its own SVG's edge:
    [chart index, role, text, px outside]."""
    clipped: list[list[object]] = page.evaluate(
        """(sel) => [...document.querySelectorAll('.vega-embed svg.marks')].flatMap((svg, i) => {
          const s = svg.getBoundingClientRect();
          return [...svg.querySelectorAll(sel)].map(t => [t, t.getBoundingClientRect()])
            .filter(([, r]) => r.height > 0)
            .map(([t, r]) => [i, t.getAttribute('class'), (t.textContent || '').slice(0, 60),
                              Math.round(Math.max(s.top - r.top, r.bottom - s.bottom,
                                                  s.left - r.left, r.right - s.right))])
            .filter(row => row[3] > 1);
        })""", roles)
    return clipped


def charts_truncated(page: Page, roles: str = _CHART_TEXT) -> list[str]:
    """Every chart text (of ``roles``) that Vega cut short with "…"."""
    cut: list[str] = page.evaluate(
        """(sel) => [...document.querySelectorAll('.vega-embed svg.marks')].flatMap(svg =>
          [...svg.querySelectorAll(sel)].map(t => t.textContent || '')
            .filter(t => t.trimEnd().endsWith('\u2026')))""", roles)
    return cut


def labels_cut_short(page: Page) -> list[str]:
    """Every button or tab label drawn cut short with an ellipsis (its text wider than its
    box): a preset named "Counter-offer advice (co…" tells the reader nothing."""
    cut: list[str] = page.evaluate(
        """() => [...document.querySelectorAll(
              '[data-testid="stMain"] button, [data-testid="stMain"] [role="tab"]')]
          .filter(b => b.offsetParent !== null)
          .filter(b => [b, ...b.querySelectorAll('*')].some(e =>
            getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1))
          .map(b => (b.textContent || '').trim())""")
    return cut


def charts_drawn(page: Page) -> list[float]:
    """Heights of every drawn chart (the Vega canvas/SVG, not the empty embed box)."""
    page.locator(".vega-embed").first.wait_for(timeout=60_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.vega-embed')].every("
        "e => e.querySelector('canvas, svg.marks'))", timeout=60_000)
    heights: list[float] = page.evaluate(
        "() => [...document.querySelectorAll('.vega-embed')].map(e => "
        "(e.querySelector('canvas, svg.marks') || e).getBoundingClientRect().height)")
    return heights
