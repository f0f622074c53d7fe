"""explorer.heap: a page's first run freezes what is alive, once per page, after collecting."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer import heap

APP = Path(__file__).resolve().parents[2] / "app.py"


class _Node:
    me: _Node


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(heap, "_settled", set())
    yield
    gc.unfreeze()


def _tracked(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_first_run_of_each_page_freezes_what_is_alive(fresh: None) -> None:
    alive = [1, 2]  # a list: the collector tracks it
    assert _tracked(alive)
    assert heap.settle("overview")
    assert not _tracked(alive)  # permanent generation: full collections no longer walk it
    later = [3, 4]
    assert not heap.settle("overview")  # the page again: nothing more is frozen
    assert _tracked(later)
    assert heap.settle("identifiers")
    assert not _tracked(later)


def test_garbage_is_collected_not_frozen(fresh: None) -> None:
    """A dead cycle at the first run is freed, not kept for ever in the permanent generation."""
    gc.disable()  # so only settle's own collection can free the cycle
    try:
        node = _Node()
        node.me = node
        ref = weakref.ref(node)
        del node
        assert ref() is not None
        heap.settle("overview")
        assert ref() is None
    finally:
        gc.enable()


def test_the_app_settles_after_a_page_run(fresh: None) -> None:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception
    assert len(heap._settled) == 1
