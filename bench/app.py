"""Benchmark the explorer: query and page-render times, or end-to-end times in a real browser.

    python -m bench.app [--models 12] [--raw-models 12] [--repeat 20] [--keep DIR]
    python -m bench.app --browser [--data shipped|synthetic|both] [--repeat 10]
                        [--pages PAGE ...] [--entry serve.py|app.py]

The data are simulated by ``tests/explorer/synthetic.py`` (labelled SYNTHETIC everywhere) in
a temporary directory — never in ``data/``. Reported:

* **queries** — each page's DuckDB queries run directly on a fresh cursor (no Streamlit
  cache), p50/p95 per query and per page (sum of that page's queries). Target: p50 ≤ 50 ms.
* **renders** — AppTest runs of each page through ``app.py``: the first render in the process
  (imports, connection, empty caches), then p50/p95 of *uncached* renders (query cache cleared
  before every run: what a reader pays for a new filter) and of *cached* renders (same view
  again). Target: each page ≤ 1 s.

**--browser** (issue 17 item 9) serves the app with a real ``streamlit run serve.py`` (as the
README does; ``--entry app.py`` for plain ``streamlit run app.py``) and drives Debian's
headless Chromium (``/usr/bin/chromium``) through playwright, with the server starter and the
browser launcher of the browser tests (``tests/explorer/streamlit_server.py``). Every page of
``app.py``'s navigation, on the shipped ``data/`` and/or the SYNTHETIC data dir above, each
page in a tab opened for it (:func:`browse_pages` says why):

* **warm page** — one untimed visit warms the server caches (and teaches the bench how many
  charts the view has); then ``--repeat`` fresh ``page.goto`` of the page URL, each timed in the
  page itself from navigation start (``performance.timeOrigin``) to the first animation frame
  at which the app reports its script run finished (``stApp[data-test-script-state]`` back to
  ``notRunning`` after ``running``), no status widget or skeleton is left, and every Vega chart
  of the view has a canvas/SVG with a real height. Target: p95 ≤ 1.0 s.
* **filter change** — on pages with a filter (a Language/Method/Axis select or the Language
  radio, see ``BROWSER_FILTERS``): the widget is toggled between its default and the next
  option. An untimed round default → next → default warms both views and teaches the bench
  their chart counts and how many charts a change redraws; its first change (that view not yet
  in the server cache) is reported apart as the cold one. Then ``--repeat`` changes, each timed
  in the page from the ``pointerdown`` that makes the selection to the same "done" frame, where
  in addition a run started after the click and the charts it redraws are new canvases (charts
  still showing the previous view do not count). Target: p95 ≤ 0.6 s.
* **by sidebar link** (no target; reported beside the warm page) — ``--repeat`` visits to the
  page by its sidebar link from the Overview (:func:`_sidebar_visits`): what a reader moving
  between pages waits for, where the warm page is the page's link opened again in its tab.
* **in a new tab** (no target; reported beside the warm page) — ``--repeat`` visits to the
  page's link, each in a tab opened for it and closed after (:func:`_new_tab_visits`), timed
  like the warm page: what a reader who opens a shared link in a new tab waits for. Chromium
  starts a renderer for each new tab, so these start later and run colder than the warm page,
  which is the same tab navigating again (measured: about 0.2 s later to the script run and
  0.5 s longer in all, docs/explorer.md, session 33).

Both also record when the script run started (``run_start``: navigation start or click → the
app's ``running`` state), which splits a time into the frontend/websocket part and the run +
drawing part (unknown, and left out of that median, for a run too short to show its
``running`` state; new charts are then the proof that it ran). Browser numbers include
everything a reader waits for: websocket round trips, the script run, React and Vega
rendering. Run them on a quiet machine; every sample is kept in
the JSON. How quiet it was is measured, not assumed (``bench/host.py``): for each page's warm
visits and for each data dir's whole run, the CPU time the hypervisor stole and the CPU that
processes outside the bench's own tree (server and browser included in the tree) used, as
shares of all CPU time; and before each page's warm visits a one-core speed probe (the same
loop's time says how fast the machine itself was at that moment).

Results go to stdout (markdown) and ``bench/out/app.json`` (each mode replaces only its own
keys; the browser mode's are under ``"browser"``). Timings depend on the machine and its load;
the JSON records ``os.getloadavg()`` next to them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from bench import host  # noqa: E402
from explorer import data, vocab  # noqa: E402
from rupeebias_core.registry import DataLayout  # noqa: E402
from tests.explorer import synthetic  # noqa: E402
from tests.explorer.streamlit_server import (  # noqa: E402
    CHROMIUM,
    chromium_page,
    serve_app,
    wait_run_done,
)
from tests.explorer.streamlit_server import PAGES as BROWSER_PAGES  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

PAGES = {
    "overview": "pages/overview.py", "who_gets_less": "pages/who_gets_less.py",
    "axes_use_cases": "pages/axes_use_cases.py",
    "language_shift": "pages/language_shift.py", "identifiers": "pages/identifiers.py",
    "consistency": "pages/consistency.py", "pair_browser": "pages/pair_browser.py",
    "methodology": "pages/methodology.py",
}
Query = Callable[[data.Store], pd.DataFrame]
SLOT = {"task": "salary_increment_estimation", "language": "hinglish", "profile": "R14",
        "qv": "Q2", "axis": "Region", "condition": "standard"}  # a 30-identifier slot
SLOT_IDS: list[str] = []


def page_queries(models: tuple[str, ...], raw_model: str) -> dict[str, dict[str, Query]]:
    """The queries each page issues on its default view (mirrors the page code)."""
    sel = (("model", models), ("method", ("upstream",)),
           ("source_kind", ("published", "computed")))

    def q(table: str, *extra: tuple[str, tuple[str, ...]]) -> Query:
        filters = tuple(sorted((*sel, *extra)))
        return lambda st_: data.select_rows(st_, table, filters)

    langs = ("en", "hinglish")
    return {
        "overview": {
            "models": data.models_query,
            "headline": lambda st_: data.select_rows(st_, "leaderboard", (
                ("language", ("all",)), ("method", ("upstream",)),
                ("source_kind", ("published",)))),
            "leaderboard": q("leaderboard"),
        },
        "who_gets_less": {
            "identity_effects": lambda st_: data.select_rows(st_, "identity_effects", (
                ("axis", ("Caste",)), ("language", ("en",)), ("method", ("upstream",)),
                ("model", (raw_model,)), ("task", ("salary_estimation",)))),
            "missingness": lambda st_: data.select_rows(st_, "missingness", (
                ("axis", ("Caste",)), ("language", ("en",)), ("method", ("upstream",)),
                ("model", (raw_model,)), ("task", ("salary_estimation",)))),
            "gap_decomposition": lambda st_: data.select_rows(st_, "gap_decomposition", (
                ("axis", ("Caste", "all")), ("language", ("en",)), ("method", ("upstream",)),
                ("model", (raw_model,)), ("task", ("salary_estimation",))))},
        "axes_use_cases": {"delta cells": q("delta", ("language", ("en",)),
                                            ("task", (*vocab.TASKS, "all")),
                                            ("axis", vocab.AXES))},
        "language_shift": {"language_shift": q("language_shift"),
                           "tables 3/4": q("delta", ("task", ("all",)), ("axis", vocab.AXES),
                                           ("language", langs))},
        "identifiers": {"deviation": q("identifier_deviation", ("axis", vocab.AXES),
                                       ("language", ("all",)), ("task", ("all",))),
                        "canonical gaps": q("canonical_gaps", ("axis", vocab.AXES),
                                            ("task", vocab.TASKS)),
                        "max gaps": q("max_gaps", ("axis", vocab.AXES), ("task", vocab.TASKS))},
        "consistency": {"kendall_w": q("kendall_w", ("language", langs)),
                        "kendall_w_usecase": q("kendall_w_usecase", ("language", langs),
                                               ("axis", ("Mean",))),
                        "quadrant cells": q("delta", ("language", langs), ("axis", vocab.AXES)),
                        "qv": q("qv_robustness", ("language", langs)),
                        "merit": q("merit_sensitivity", ("language", langs)),
                        "rank agreement": q("profile_rank_agreement", ("language", langs)),
                        "fairness": q("fairness_ablation", ("language", langs)),
                        "parse health": q("parse_health")},
        "pair_browser": {"models": data.models_query,
                         "slot prompts": lambda st_: data.slot_prompts(st_, SLOT),
                         "slot parsed": lambda st_: data.slot_parsed(st_, raw_model, SLOT),
                         "slot responses": lambda st_: data.slot_responses(
                             st_, raw_model, "standard", SLOT_IDS)},
        "methodology": {"models": data.models_query,
                        "dataset composition": lambda st_: data.select_rows(
                            st_, "dataset_composition", ())},
    }


def pct_rank(n: int, q: float) -> int:
    """The 1-based rank (by time) of the run that :func:`pct` reports among ``n``: with fewer
    than 20 runs the nearest-rank p95 is the slowest run, so one slow load decides it."""
    return min(n - 1, max(0, round(q * (n - 1)))) + 1


def pct(values: list[float], q: float) -> float:
    return sorted(values)[pct_rank(len(values), q) - 1]


def pct_known(values: list[float | None], q: float) -> float:
    """:func:`pct` of the values known (a run too short to show its start has none); NaN if
    none is."""
    known = [v for v in values if v is not None]
    return pct(known, q) if known else float("nan")


def time_queries(root: Path, models: tuple[str, ...], raw_model: str, repeat: int
                 ) -> dict[str, dict[str, Any]]:
    st_ = data.build_store(root)
    SLOT_IDS[:] = list(data.slot_prompts(st_, SLOT)["id"])
    out: dict[str, dict[str, Any]] = {}
    for page, queries in page_queries(models, raw_model).items():
        per_query: dict[str, list[float]] = {name: [] for name in queries}
        totals: list[float] = []
        for _ in range(repeat):
            total = 0.0
            for name, fn in queries.items():
                t0 = time.perf_counter()
                rows = len(fn(st_))
                dt = time.perf_counter() - t0
                per_query[name].append(dt)
                total += dt
            totals.append(total)
        out[page] = {"queries": {n: {"p50_ms": 1e3 * pct(v, .5), "p95_ms": 1e3 * pct(v, .95)}
                                 for n, v in per_query.items()},
                     "page_p50_ms": 1e3 * pct(totals, .5), "page_p95_ms": 1e3 * pct(totals, .95),
                     "rows_last": rows}
    return out


def time_renders(root: Path, repeat: int) -> dict[str, dict[str, Any]]:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ[data.DATA_ENV] = str(root)
    out: dict[str, dict[str, Any]] = {}
    first_in_process = True
    for page, path in PAGES.items():
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
        if page != "overview":
            at.switch_page(path)
        t0 = time.perf_counter()
        at.run()
        first = time.perf_counter() - t0
        if at.exception:
            raise SystemExit(f"{page}: {at.exception}")
        uncached, cached, cpu = [], [], []
        for _ in range(repeat):
            st.cache_data.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            at.run()
            uncached.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        for _ in range(repeat):
            t0 = time.perf_counter()
            at.run()
            cached.append(time.perf_counter() - t0)
        out[page] = {"first_s": first, "first_in_process": first_in_process,
                     "uncached_p50_s": pct(uncached, .5), "uncached_p95_s": pct(uncached, .95),
                     "uncached_cpu_p50_s": pct(cpu, .5),
                     "cached_p50_s": pct(cached, .5), "cached_p95_s": pct(cached, .95)}
        first_in_process = False
    return out


# ---- --browser: end-to-end times in headless Chromium --------------------------------------

WARM_PAGE_S, FILTER_CHANGE_S = 1.0, 0.6
#: url path → (widget kind, its label): the filter toggled on that page (default ↔ next option).
BROWSER_FILTERS: dict[str, tuple[str, str]] = {
    "": ("select", "Language"), "who_gets_less": ("select", "Method"),
    "axes_use_cases": ("select", "Language"), "language_shift": ("select", "Axis"),
    "identifiers": ("select", "Language"), "consistency": ("select", "Language"),
    "pair_browser": ("radio", "Language"), "try_prompt": ("radio", "Language"),
}
#: Installed in every document before the app's own scripts. It logs, with page timestamps,
#: every change of the app's script-run state (a MutationObserver, so a short run is not
#: missed) and, at every animation frame where something changed, [state, busy, number of Vega
#: charts, all drawn with a real height, how many of them were drawn after the last armed
#: pointerdown ("fresh"), smallest height, state changes so far]. The first pointerdown after
#: ``__rbPointer`` is reset is kept and marks the charts then on screen as old.
#: ``__rbDoneAt(t0, n, fresh)`` is the first frame after a run that started at or after t0
#: where the run is over, nothing is busy, at least n charts are all drawn and at least
#: ``fresh`` of them are new (null until then). The log is kept, so a later call can re-read
#: an earlier run with a stricter n.
_PROBE_JS = """(() => {
  if (window.__rbDoneAt) return;
  const states = [], frames = [];
  const marks = () => [...document.querySelectorAll('.vega-embed')].map(
    e => [e, e.querySelector('canvas, svg.marks')]);
  window.__rbPointer = null;
  addEventListener('pointerdown', e => {
    if (window.__rbPointer !== null) return;
    window.__rbPointer = e.timeStamp;
    for (const [, m] of marks()) if (m) m.__rbOld = true;
  }, true);
  const stateOf = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app ? app.dataset.testScriptState : 'none'; };
  new MutationObserver(() => {
    const s = stateOf();
    if (!states.length || states[states.length - 1][1] !== s) states.push([performance.now(), s]);
  }).observe(document, {attributes: true, subtree: true,
                        attributeFilter: ['data-test-script-state']});
  // content changes of the main block (text and elements, not attributes): on a page without
  // charts, the proof that a run too short to show its running state happened
  let edits = 0;
  const watchMain = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    if (!main) { requestAnimationFrame(watchMain); return; }
    new MutationObserver(() => { edits += 1; }).observe(
      main, {childList: true, characterData: true, subtree: true});
  };
  watchMain();
  let last = '';
  const tick = () => {
    // also polled here: a page change can remount stApp with its state already set, which
    // the attribute observer does not see
    const now = stateOf();
    if (!states.length || states[states.length - 1][1] !== now)
      states.push([performance.now(), now]);
    const embeds = marks();
    let drawn = true, fresh = 0, minH = Infinity;
    for (const [, m] of embeds) {
      const h = m ? m.getBoundingClientRect().height : 0;
      if (!(h > 0)) drawn = false;
      else if (!m.__rbOld) fresh += 1;
      minH = Math.min(minH, h);
    }
    const busy = !!document.querySelector(
      '[data-testid="stStatusWidget"] button, [data-testid="stSkeleton"]');
    // a sidebar visit's page: its title and content marker on screen (__rbNavDoneAt)
    const want = window.__rbWant;
    const there = !!want && [...document.querySelectorAll('h1')].some(
      h => h.textContent.trim() === want[0]) && document.body.textContent.includes(want[1]);
    const row = [stateOf(), busy, embeds.length, drawn, fresh,
                 embeds.length ? Math.round(minH) : 0, states.length, there, edits];
    const key = row.join('|');
    if (key !== last) { last = key; frames.push([performance.now(), ...row]); }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__rbLog = () => ({states: states.slice(-8), frames: frames.slice(-8)});
  // A sidebar visit (window.__rbWant = [title, marker] set before the click): stApp's run
  // state does not always show the new page's run (seen on Try a prompt), so
  // done is the first frame after t0 with the page's title and content marker on screen, the
  // run state notRunning, nothing busy and every chart new and drawn.
  window.__rbNavDoneAt = (t0, expected) => {
    for (const [t, state, busy, n, drawn, fresh, minH, , there] of frames) {
      if (t >= t0 && there && state === 'notRunning' && !busy && n >= expected && drawn &&
          fresh >= expected)
        return {t: t, run_start: t0, charts: n, fresh: fresh, min_height: minH};
    }
    return null;
  };
  // A run so short that its running and notRunning states reach React in one update leaves
  // no 'running' entry (seen on a fast host): then new charts drawn after t0 are the proof
  // that it ran (run_start null), or, on a view without charts (Try a prompt), the first
  // change of the main block's content after t0.
  window.__rbDoneAt = (t0, expected, expectedFresh) => {
    const ran = states.find(s => s[0] >= t0 && s[1] === 'running');
    const before = frames.filter(f => f[0] < t0);
    const edits0 = before.length ? before[before.length - 1][9] : 0;
    const from = ran ? ran[0] : t0;
    for (const [t, state, busy, n, drawn, fresh, minH, , , edited] of frames) {
      const proof = ran || (expectedFresh > 0 ? true : edited > edits0);
      if (t >= from && proof && state === 'notRunning' && !busy && n >= expected && drawn &&
          fresh >= expectedFresh)
        return {t: t, run_start: ran ? ran[0] : null, charts: n, fresh: fresh,
                min_height: minH};
    }
    return null;
  };
})();"""


def _done(page: Page, t0: float, expected: int, fresh: int, what: str,
          probe: str = "__rbDoneAt") -> dict[str, Any]:
    """Wait for the probe's "done" frame after t0 (page time, ms); its time and chart count.
    ``probe``: ``__rbDoneAt``, or ``__rbNavDoneAt`` for a sidebar visit."""
    try:
        handle = page.wait_for_function(f"([t0, n, f]) => window.{probe}(t0, n, f)",
                                        arg=[t0, expected, fresh], timeout=120_000)
    except Exception as exc:  # playwright's TimeoutError; say which view hung, and how far
        log = page.evaluate("() => window.__rbLog()")
        raise SystemExit(f"browser bench: {what} never finished (t0 {t0:.0f} ms, {expected} "
                         f"charts / {fresh} new expected): {exc}\nprobe log: {log}") from exc
    done: dict[str, Any] = handle.json_value()
    return done


def _grace_count(page: Page) -> tuple[int, int]:
    """(charts, charts drawn since the last armed pointerdown) on a settled view: counted again
    every 0.5 s until the same for 1.5 s (at most 15 s), so a large chart still being drawn on
    a cold visit is counted (counted short, the timed visits would not wait for it)."""
    js = ("() => { const m = [...document.querySelectorAll('.vega-embed')].map("
          "e => e.querySelector('canvas, svg.marks')); "
          "return [m.length, m.filter(c => c && !c.__rbOld).length, "
          "m.filter(c => c && c.getBoundingClientRect().height > 0).length]; }")
    deadline = time.monotonic() + 15
    counts: list[int] = page.evaluate(js)
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(500)
        now: list[int] = page.evaluate(js)
        if now != counts:
            counts, stable_since = now, time.monotonic()
        elif time.monotonic() - stable_since >= 1.5 and counts[2] == counts[0]:
            break
    return counts[0], counts[1]


def _widget(page: Page, kind: str, label: str) -> Locator:
    if kind == "select":
        return page.get_by_role("combobox", name=label, exact=True).first
    return page.get_by_role("radiogroup", name=label, exact=True).first


def _filter_options(page: Page, kind: str, label: str) -> tuple[str, str]:
    """(current value, the next option) of the page's filter widget, as shown."""
    widget = _widget(page, kind, label)
    if kind == "radio":
        opts = widget.get_by_test_id("stRadioOption")
        texts = [t.strip() for t in opts.all_inner_texts()]
        current = next(t.strip() for o, t in zip(opts.all(), texts, strict=True)
                       if o.get_attribute("data-selected") == "true")
    else:
        current = widget.input_value()
        widget.click()
        texts = [t.strip() for t in page.get_by_role("option").all_inner_texts()]
        page.keyboard.press("Escape")
        page.get_by_role("option").first.wait_for(state="detached")
    i = texts.index(current)
    return current, texts[(i + 1) % len(texts)]


def _choose(page: Page, kind: str, label: str, value: str) -> float:
    """Select ``value``; the page timestamp of the pointerdown that selected it. A click that
    did not take (the list still moving under the pointer) is tried again, from a new t0.

    When the probe missed the pointerdown, t0 is the page time just before the click (a
    little early, so the change is timed a little long, never short); and a retry finds the
    value already chosen by the attempt before, it returns that attempt's t0 instead of
    clicking again (a click on the chosen option starts no run, and the bench would wait for
    one for ever). For the same reason, when the click that opens a select's list already
    chose the value, that click's pointerdown is t0."""
    widget = _widget(page, kind, label)

    def shown() -> bool:
        return (widget.input_value() == value if kind == "select" else
                widget.locator('[data-testid="stRadioOption"][data-selected="true"]')
                .inner_text().strip() == value)

    def arm() -> float:
        """Forget the last pointerdown; the page time now (t0 if the probe misses the next)."""
        now: float = page.evaluate("() => { window.__rbPointer = null; return performance.now(); }")
        return now

    last: float | None = None
    for _ in range(3):
        if last is not None and shown():
            return last
        if kind == "select":
            before = arm()
            widget.click()  # opening the list does not rerun; the option click does
            option = page.get_by_role("option", name=value, exact=True)
            option.wait_for()
            if shown():
                # the click meant to open the list chose the value (a list still open under
                # the pointer): that click is the change, and clicking the option again
                # would start no run
                opened: float | None = page.evaluate("() => window.__rbPointer")
                return opened if opened is not None else before
            before = arm()
            option.click()
        else:
            before = arm()
            widget.get_by_test_id("stRadioOption").filter(has_text=value).first.click()
        pointer: float | None = page.evaluate("() => window.__rbPointer")
        last = pointer if pointer is not None else before
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if shown():
                return last
            time.sleep(0.05)
        page.keyboard.press("Escape")
    raise SystemExit(f"browser bench: could not choose {label} = {value}")


def _sidebar_visits(page: Page, url: str, path: str, charts: int, repeat: int,
                    shown: tuple[str, str]) -> list[float]:
    """Times of ``repeat`` visits to ``path`` by its sidebar link from the Overview: what a
    reader moving between pages waits for — no page load, no frontend start, no websocket
    (reported beside the warm page, which is a direct visit to a link). Timed like a filter
    change: pointerdown → the done frame, every chart of the page new."""
    home_title, home_marker = BROWSER_PAGES[""]
    link = page.locator(f'[data-testid="stSidebarNav"] a[href="{url}/{path}"]')
    home = page.locator(f'[data-testid="stSidebarNav"] a[href="{url}/"]')
    page.goto(f"{url}/")
    wait_run_done(page, home_title, home_marker)
    page.evaluate("want => { window.__rbWant = want; }", list(shown))
    times = []
    for _ in range(repeat):
        page.evaluate("() => { window.__rbPointer = null; }")
        before: float = page.evaluate("() => performance.now()")
        link.click()
        pointer: float | None = page.evaluate("() => window.__rbPointer")
        t0 = pointer if pointer is not None else before
        done = _done(page, t0, charts, charts, f"{path} (sidebar link)", "__rbNavDoneAt")
        times.append((done["t"] - t0) / 1e3)
        wait_run_done(page, *shown)  # the right page, really there
        home.click()  # back, untimed
        wait_run_done(page, home_title, home_marker)
    page.evaluate("() => { window.__rbWant = null; }")
    return times


def _timed_goto(page: Page, page_url: str, charts: int, what: str) -> tuple[float, float | None]:
    """One visit to ``page_url`` in ``page``, timed in the page from navigation start to the
    done frame: (seconds, seconds to the script run's start or None when unseen)."""
    page.goto(page_url, wait_until="commit")
    done = _done(page, 0.0, charts, charts, what)
    start = done["run_start"]
    return done["t"] / 1e3, None if start is None else start / 1e3


def _new_tab_visits(page: Page, page_url: str, charts: int, repeat: int, name: str
                    ) -> tuple[list[float], list[float | None]]:
    """Times (and script-run starts) of ``repeat`` visits to ``page_url``, each in a new tab
    of ``page``'s browser that is closed after it; ``page`` itself stays open and idle, as a
    reader's other tabs do. The probe comes from the context's init script."""
    times: list[float] = []
    starts: list[float | None] = []
    for _ in range(repeat):
        tab = page.context.new_page()
        try:
            t, start = _timed_goto(tab, page_url, charts, f"{name} (new tab)")
        finally:
            tab.close()
        times.append(t)
        starts.append(start)
    return times, starts


def browse_pages(browser_page: Page, url: str, repeat: int, only: Sequence[str] = ()
                 ) -> dict[str, dict[str, Any]]:
    """Every page's measurements, each page in a tab of its own (opened for it, closed after).

    Why a tab per page: a tab's renderer keeps the garbage of what it did before until a
    major collection, and the loads after it are slower. Measured (docs/explorer.md, session
    37): Language shift's warm p50 went from 0.70 to 0.77–0.87 s in a tab that had just made
    another page's 20 sidebar visits; a new tab, or one forced collection, brought it back to
    0.68–0.70 s. In one shared tab every page after the first was timed after the previous
    page's work, so the order of the pages decided part of their times."""
    out: dict[str, dict[str, Any]] = {}
    for path in BROWSER_PAGES:
        name = path or "overview"
        if only and name not in only:
            continue
        page = browser_page.context.new_page()
        page.set_default_timeout(90_000)  # as chromium_page's: a cold SYNTHETIC page is slow
        try:
            out[name] = _browse_page(page, url, path, repeat)
        finally:
            page.close()
    return out


def _browse_page(page: Page, url: str, path: str, repeat: int) -> dict[str, Any]:
    """One page's warm visits, new-tab visits, filter changes and sidebar visits, in ``page``."""
    name = path or "overview"
    title, marker = BROWSER_PAGES[path]
    page_url = f"{url}/{path}"
    page.goto(page_url)  # the warming visit: server caches, the browser's static files
    wait_run_done(page, title, marker)
    charts, _ = _grace_count(page)
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit(f"browser bench: {name} shows an exception")
    warm, wall = [], []
    boot: list[float | None] = []
    speed = host.speed_probe()
    before = host.snapshot()
    for _ in range(repeat):
        w0 = time.perf_counter()
        t, start = _timed_goto(page, page_url, charts, f"{name} (goto)")
        wall.append(time.perf_counter() - w0)
        warm.append(t)
        boot.append(start)
    load = host.between(before, host.snapshot())
    wait_run_done(page, title, marker)  # the right page, really there
    row: dict[str, Any] = {
        "host_during_warm": {**load.as_dict(), "speed_probe_s": speed},
        "url": page_url, "charts": charts, "warm_s": warm, "warm_wall_s": wall,
        "warm_run_start_s": boot, "warm_run_start_p50_s": pct_known(boot, .5),
        "warm_p50_s": pct(warm, .5), "warm_p95_s": pct(warm, .95),
        "warm_over_target": sum(t > WARM_PAGE_S for t in warm),
        "warm_met": pct(warm, .95) <= WARM_PAGE_S}
    tab, tab_start = _new_tab_visits(page, page_url, charts, repeat, name)
    row.update({"tab_s": tab, "tab_p50_s": pct(tab, .5), "tab_p95_s": pct(tab, .95),
                "tab_run_start_s": tab_start,
                "tab_run_start_p50_s": pct_known(tab_start, .5)})
    if path in BROWSER_FILTERS:
        kind, label = BROWSER_FILTERS[path]
        a, b = _filter_options(page, kind, label)
        # Untimed round a → b → a (the first change is reported as the cold one): the
        # server caches both views, and the bench learns how many charts each view has
        # and how many of them a change redraws.
        counts, fresh = {a: charts}, {}
        t_first = _choose(page, kind, label, b)
        _done(page, t_first, 0, 0, f"{name}: {label} → {b} (first)")
        counts[b], fresh[b] = _grace_count(page)
        first = _done(page, t_first, counts[b], fresh[b], f"{name}: {label} → {b}")
        t0 = _choose(page, kind, label, a)
        _done(page, t0, 0, 0, f"{name}: {label} → {a} (first)")
        counts[a], fresh[a] = _grace_count(page)
        changes, current = [], a
        start: list[float | None] = []
        for _ in range(repeat):
            target = a if current == b else b
            t0 = _choose(page, kind, label, target)
            done = _done(page, t0, counts[target], fresh[target],
                         f"{name}: {label} → {target}")
            changes.append((done["t"] - t0) / 1e3)
            start.append(None if done["run_start"] is None
                         else (done["run_start"] - t0) / 1e3)
            current = target
        row["filter"] = {
            "widget": f"{kind} {label!r}", "values": [a, b], "charts": counts,
            "redrawn_charts": fresh, "first_s": (first["t"] - t_first) / 1e3,
            "change_s": changes, "change_run_start_s": start,
            "change_run_start_p50_s": pct_known(start, .5),
            "change_p50_s": pct(changes, .5), "change_p95_s": pct(changes, .95),
            "change_met": pct(changes, .95) <= FILTER_CHANGE_S}
    if path:  # after the filter, which runs as before; the visits start at the Overview
        nav = _sidebar_visits(page, url, path, charts, repeat, (title, marker))
        row.update({"nav_s": nav, "nav_p50_s": pct(nav, .5), "nav_p95_s": pct(nav, .95)})
    print(f"  {name}: warm p50 {row['warm_p50_s']:.2f} s (steal {load.steal_pct:.1f} %, "
          f"others {load.others_pct:.1f} % of CPU, speed probe {speed:.3f} s)"
          + f", in a new tab p50 {row['tab_p50_s']:.2f} s"
          + (f", by sidebar link p50 {row['nav_p50_s']:.2f} s" if "nav_s" in row else "")
          + (f", filter change p50 {row['filter']['change_p50_s']:.2f} s"
             if "filter" in row else ""), flush=True)
    return row


OUT = REPO / "bench" / "out" / "app.json"


def write_json(update: dict[str, Any]) -> None:
    """Replace this mode's keys of ``bench/out/app.json``, keeping the other mode's."""
    OUT.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = json.loads(OUT.read_text())
    except (OSError, ValueError):
        old = {}
    OUT.write_text(json.dumps({**(old if isinstance(old, dict) else {}), **update}, indent=2))


def build_synthetic(root: Path, n_models: int, raw_models: int) -> tuple[dict[str, Any], float]:
    t0 = time.perf_counter()
    info = synthetic.build(root, n_models=n_models, raw_models=raw_models,
                           raw_tasks=vocab.TASKS)
    return info, time.perf_counter() - t0


def run_browser(args: argparse.Namespace) -> int:
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"--browser needs Debian's chromium at {CHROMIUM}")
    which = ("shipped", "synthetic") if args.data == "both" else (args.data,)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    described: dict[str, str] = {}
    load_before = os.getloadavg()
    loads: dict[str, host.HostLoad] = {}
    with tempfile.TemporaryDirectory(prefix="rupeebias-bench-browser-") as tmp_name:
        tmp = Path(tmp_name)
        for name in which:
            if name == "shipped":
                root = REPO / "data"
                described[name] = "shipped data/ (published tables + the bundled run)"
            else:
                root = args.keep or tmp / "synthetic"
                _, build_s = build_synthetic(root, args.models, args.raw_models)
                described[name] = (f"SYNTHETIC ({args.models} computed models, "
                                   f"{args.raw_models} with raw answers; built in "
                                   f"{build_s:.1f} s)")
            print(f"{name}: {described[name]} at {root}", flush=True)
            with serve_app({**os.environ, data.DATA_ENV: str(root)},
                           tmp / f"streamlit-{name}.log", entry=args.entry) as url, \
                    chromium_page(tmp / f"chromium-{name}") as page:
                page.context.add_init_script(_PROBE_JS)  # every tab: see _new_tab_visits
                start = host.snapshot()  # server and browser up: their CPU counts as ours
                results[name] = browse_pages(page, url, args.repeat, args.pages)
                loads[name] = host.between(start, host.snapshot())
    load_after = os.getloadavg()

    print("\n| data | page | charts | warm page p50 / p95 (s), loads over the target | "
          "host during the warm visits: "
          "CPU steal / other processes (% of CPU), speed probe (s) | of which before the run "
          "starts, p50 (s) | in a new tab p50 / p95 (s), of which before the run starts (s) | "
          "by sidebar link p50 / p95 (s) | filter toggled | first change, "
          "cold cache (s) | filter change p50 / p95 (s) | of which before the run starts, "
          "p50 (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, pages in results.items():
        for page_name, row in pages.items():
            f = row.get("filter")
            mark = "" if row["warm_met"] else " ✗"
            cells = (f"{f['widget']}: {f['values'][0]} ↔ {f['values'][1]} | {f['first_s']:.2f} | "
                     f"{f['change_p50_s']:.2f} / {f['change_p95_s']:.2f}"
                     f"{'' if f['change_met'] else ' ✗'} | {f['change_run_start_p50_s']:.2f}"
                     if f else "— | — | — | —")
            nav = (f"{row['nav_p50_s']:.2f} / {row['nav_p95_s']:.2f}" if "nav_s" in row
                   else "— (the visits start here)")
            hd = row["host_during_warm"]
            print(f"| {name} | {page_name} | {row['charts']} | {row['warm_p50_s']:.2f} / "
                  f"{row['warm_p95_s']:.2f}{mark}, {row['warm_over_target']} of "
                  f"{len(row['warm_s'])} | {hd['steal_pct']:.1f} / "
                  f"{hd['others_pct']:.1f}, {hd['speed_probe_s']:.3f} | "
                  f"{row['warm_run_start_p50_s']:.2f} | {row['tab_p50_s']:.2f} / "
                  f"{row['tab_p95_s']:.2f}, {row['tab_run_start_p50_s']:.2f} | {nav} | "
                  f"{cells} |")
    rows = [r for pages in results.values() for r in pages.values()]
    worst_warm = max(r["warm_p95_s"] for r in rows)
    changes = [r["filter"]["change_p95_s"] for r in rows if "filter" in r]
    worst_change = max(changes) if changes else 0.0
    warm_ok, change_ok = worst_warm <= WARM_PAGE_S, worst_change <= FILTER_CHANGE_S
    rank = pct_rank(args.repeat, .95)
    print(f"\nTargets (p95 of {args.repeat} runs each: run {rank} of {args.repeat} by time"
          f"{', the slowest' if rank == args.repeat else ''}; ✗ = missed): warm page ≤ "
          f"{WARM_PAGE_S} s "
          f"→ worst {worst_warm:.2f} s ({'met' if warm_ok else 'NOT met'}); filter change ≤ "
          f"{FILTER_CHANGE_S} s → worst {worst_change:.2f} s "
          f"({'met' if change_ok else 'NOT met'}). Load average before {load_before}, after "
          f"{load_after} ({os.cpu_count()} CPUs).")
    for name, load in loads.items():
        print(f"{name}: {load.line()}")
    if args.pages:  # a partial run: the printed table only, the recorded full run stays
        return 0 if warm_ok and change_ok else 1
    write_json({"browser": {
        "how": "headless Chromium via playwright against `streamlit run`; times measured in "
               "the page: warm = navigation start → done frame (the same tab navigating "
               "again), tab = the same in a newly opened tab (no target), filter = pointerdown "
               "→ done frame (run over, no spinner, every Vega chart drawn with a real height)",
        "data": described, "repeat": args.repeat, "pages": results,
        "targets": {"warm_page_p95_s": WARM_PAGE_S, "filter_change_p95_s": FILTER_CHANGE_S,
                    "warm_page_met": warm_ok, "filter_change_met": change_ok},
        "loadavg": load_after, "loadavg_before": load_before, "cpus": os.cpu_count(),
        "host": {name: load.as_dict() for name, load in loads.items()}}})
    return 0 if warm_ok and change_ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--raw-models", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed runs per measurement (default 20; 10 with --browser)")
    parser.add_argument("--keep", type=Path, help="build the synthetic data dir here and keep it")
    parser.add_argument("--browser", action="store_true",
                        help="end-to-end warm-page and filter-change times in headless Chromium")
    parser.add_argument("--data", choices=("shipped", "synthetic", "both"), default="both",
                        help="with --browser: which data dir to serve (default both)")
    parser.add_argument("--pages", nargs="+", default=(), metavar="PAGE",
                        help="with --browser: only these pages (e.g. overview language_shift); "
                             "a partial run does not replace bench/out/app.json")
    parser.add_argument("--entry", choices=("serve.py", "app.py"), default="serve.py",
                        help="with --browser: the script `streamlit run` starts (default "
                             "serve.py, as the README does; app.py to compare)")
    args = parser.parse_args(argv)
    if args.browser:
        args.repeat = args.repeat or 10
        return run_browser(args)
    args.repeat = args.repeat or 20

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="rupeebias-bench-")
    root = args.keep or Path(tmp.name)  # type: ignore[union-attr]
    info, build_s = build_synthetic(root, args.models, args.raw_models)
    models = tuple(data.models_query(data.build_store(root))["model"])
    parsed_rows = len(pd.read_parquet(DataLayout(root).parsed, columns=["id"]))
    print(f"SYNTHETIC data dir {root}: {len(models)} models ({args.models} synthetic computed, "
          f"{len(models) - args.models} published), {parsed_rows:,} parsed rows; "
          f"published tables: {info['published']}; built in {build_s:.1f} s")

    queries = time_queries(root, models, info["raw_models"][0], args.repeat)
    renders = time_renders(root, max(3, args.repeat // 4))

    print("\n| page | queries p50 / p95 (ms) | slowest query p50 (ms) | first render (s) | "
          "uncached render p50 / p95 (s) | uncached CPU p50 (s) | cached render p50 / p95 (s) |")
    print("|---|---|---|---|---|---|---|")
    for page in PAGES:
        qd, rd = queries[page], renders[page]
        slow = max(qd["queries"].items(), key=lambda kv: kv[1]["p50_ms"])
        print(f"| {page} | {qd['page_p50_ms']:.1f} / {qd['page_p95_ms']:.1f} | "
              f"{slow[0]}: {slow[1]['p50_ms']:.1f} | {rd['first_s']:.2f}"
              f"{' (incl. imports)' if rd['first_in_process'] else ''} | "
              f"{rd['uncached_p50_s']:.2f} / {rd['uncached_p95_s']:.2f} | "
              f"{rd['uncached_cpu_p50_s']:.2f} | "
              f"{rd['cached_p50_s']:.2f} / {rd['cached_p95_s']:.2f} |")
    worst_q = max(v["p50_ms"] for p in queries.values() for v in p["queries"].values())
    worst_r = max(r["uncached_p50_s"] for r in renders.values())
    print(f"\nTargets: every query p50 ≤ 50 ms → worst {worst_q:.1f} ms "
          f"({'met' if worst_q <= 50 else 'NOT met'}); every page ≤ 1 s → worst uncached p50 "
          f"{worst_r:.2f} s ({'met' if worst_r <= 1 else 'NOT met'}). "
          f"Load average during the run: {os.getloadavg()}")
    write_json({
        "data": "SYNTHETIC (tests/explorer/synthetic.py)", "models": len(models),
        "synthetic_models": args.models, "parsed_rows": parsed_rows, "queries": queries,
        "renders": renders, "loadavg": os.getloadavg(), "cpus": os.cpu_count(),
        "repeat": args.repeat})
    if tmp is not None:
        tmp.cleanup()
    return 0 if worst_q <= 50 and worst_r <= 1 else 1




if __name__ == "__main__":
    sys.exit(main())
