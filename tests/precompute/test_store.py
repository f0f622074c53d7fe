"""`precompute.store`: exactly-once upserts, group commits, atomic writes, bad files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from precompute.store import (
    ResponseStore,
    StoredResult,
    StoreError,
    StoreWriter,
    atomic_write_bytes,
)


def rec(key: str, status: str, text: str | None, rid: str = "a", cfg: str = "c1") -> StoredResult:
    return StoredResult(cache_key=key, status=status, request={"model": "m"},
                        result={"response": text, "finish_reason": "stop"},
                        finished_at="2026-11-30T00:00:00+00:00", config_hash=cfg, id=rid,
                        condition="standard", item={"id": rid, "condition": "standard"})


def test_success_is_final_and_errors_are_replaced(tmp_path: Path) -> None:
    with ResponseStore(tmp_path / "s.sqlite") as st:
        st.put_many([rec("k1", "error", None)])
        assert st.statuses(["k1", "nope"]) == {"k1": "error"}
        st.put_many([rec("k1", "ok", "### 1 INR")])
        st.put_many([rec("k1", "ok", "### 2 INR")])  # a success is never overwritten
        st.put_many([rec("k1", "error", None)])
        rows = st.export_rows("c1")
        assert len(rows) == 1
        assert rows[0]["response"] == "### 1 INR" and rows[0]["status"] == "ok"
        assert rows[0]["n_sends"] == 2  # the error and the success; ignored resends not counted
        assert st.counts("c1") == {"ok": 1}


def test_export_joins_items_per_config(tmp_path: Path) -> None:
    with ResponseStore(tmp_path / "s.sqlite") as st:
        st.put_many([rec("k1", "ok", "x", "a"), rec("k2", "empty", None, "b"),
                     rec("k3", "ok", "y", "a", cfg="c2")])
        st.link_cached([("c2", "b", "standard", "k2", {"id": "b", "condition": "standard"})])
        assert [r["id"] for r in st.export_rows("c1")] == ["a", "b"]
        assert [(r["id"], r["status"]) for r in st.export_rows("c2")] == [("a", "ok"),
                                                                          ("b", "empty")]


def test_writer_group_commits_and_flushes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with ResponseStore(path) as st:
        w = StoreWriter(st, max_batch=50)
        for i in range(500):
            w.submit(rec(f"k{i}", "ok", str(i), f"id{i:04d}"))
        w.flush()
        # durable: visible from an independent connection
        con = sqlite3.connect(path)
        assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 500
        con.close()
        w.close()
        assert w.committed == 500 and 10 <= w.commits <= 500


def test_writer_surfaces_write_errors(tmp_path: Path) -> None:
    st = ResponseStore(tmp_path / "s.sqlite")
    w = StoreWriter(st)
    w.submit(rec("k", "bogus-status", None))  # violates the CHECK constraint
    with pytest.raises(StoreError):
        w.flush()
    with pytest.raises(StoreError):
        w.submit(rec("k2", "ok", "x"))
    with pytest.raises(StoreError):
        w.close()
    st.close()


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "s.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not usable|cannot open"):
        ResponseStore(bad)


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.json"
    atomic_write_bytes(target, b"one")
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]  # no temp file left
