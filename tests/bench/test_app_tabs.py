"""bench/app.py: the tabs it measures in — a tab per page, and the new-tab visits reported
beside the warm page."""

from __future__ import annotations

from typing import Any

import pytest

from bench import app


class _Handle:
    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value

    def json_value(self) -> dict[str, Any]:
        return self.value


class _Tab:
    """A stand-in for a playwright page: records its visit, answers the probe."""

    def __init__(self, context: _Context, done: dict[str, Any] | None) -> None:
        self.context, self.done, self.url, self.closed = context, done, "", False
        self.timeout: float | None = None

    def goto(self, url: str, wait_until: str = "load") -> None:
        assert wait_until == "commit"  # timed from navigation start, in the page
        self.url = url

    def wait_for_function(self, js: str, arg: Any = None, timeout: int = 0) -> _Handle:
        assert "__rbDoneAt" in js and arg[0] == 0.0  # from the tab's own navigation start
        if self.done is None:
            raise TimeoutError("never drawn")
        return _Handle(self.done)

    def evaluate(self, js: str) -> Any:
        return {"states": [], "frames": []}

    def close(self) -> None:
        self.closed = True

    def set_default_timeout(self, ms: float) -> None:
        self.timeout = ms


class _Context:
    def __init__(self, results: list[dict[str, Any] | None]) -> None:
        self.results = list(results)
        self.tabs: list[_Tab] = []

    def new_page(self) -> _Tab:
        tab = _Tab(self, self.results.pop(0))
        self.tabs.append(tab)
        return tab


def test_new_tab_visits_use_one_fresh_tab_each_and_close_it() -> None:
    ctx = _Context([{"t": 1510.0, "run_start": 430.0}, {"t": 1320.0, "run_start": None}])
    opener = _Tab(ctx, None)
    times, starts = app._new_tab_visits(opener, "http://x/identifiers", 1, 2,  # type: ignore[arg-type]
                                        "identifiers")
    assert times == [1.51, 1.32] and starts == [0.43, None]  # ms in the page → s
    assert [t.url for t in ctx.tabs] == ["http://x/identifiers"] * 2
    assert all(t.closed for t in ctx.tabs) and not opener.closed and opener.url == ""


def test_a_new_tab_that_never_finishes_is_closed_and_named() -> None:
    ctx = _Context([None])
    with pytest.raises(SystemExit, match=r"identifiers \(new tab\) never finished"):
        app._new_tab_visits(_Tab(ctx, None), "http://x/identifiers", 1, 1,  # type: ignore[arg-type]
                            "identifiers")
    assert ctx.tabs[0].closed


def test_each_page_is_measured_in_a_tab_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tab keeps the garbage of what it did before, so one page's visits must not run in
    the tab that measured the page before it (docs/explorer.md, session 37)."""
    ctx = _Context([None, None])
    seen: list[tuple[_Tab, str]] = []

    def measure(page: _Tab, url: str, path: str, repeat: int) -> dict[str, Any]:
        assert not page.closed and url == "http://x" and repeat == 3
        assert page.timeout == 90_000  # a cold page may take long; playwright's default is 30 s
        seen.append((page, path))
        return {"path": path}

    monkeypatch.setattr(app, "_browse_page", measure)
    opener = _Tab(ctx, None)
    out = app.browse_pages(opener, "http://x", 3, ("identifiers", "language_shift"))  # type: ignore[arg-type]
    assert out == {"language_shift": {"path": "language_shift"},
                   "identifiers": {"path": "identifiers"}}  # in the navigation's order
    assert [t for t, _ in seen] == ctx.tabs and len(set(map(id, ctx.tabs))) == 2
    assert all(t.closed for t in ctx.tabs) and not opener.closed


def test_a_page_that_fails_still_closes_its_tab(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(page: _Tab, url: str, path: str, repeat: int) -> dict[str, Any]:
        raise SystemExit(f"browser bench: {path} shows an exception")

    monkeypatch.setattr(app, "_browse_page", fail)
    ctx = _Context([None])
    with pytest.raises(SystemExit, match="identifiers shows an exception"):
        app.browse_pages(_Tab(ctx, None), "http://x", 1, ("identifiers",))  # type: ignore[arg-type]
    assert ctx.tabs[0].closed
