"""bench/app.py: the new-tab visits reported beside the warm page."""

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
