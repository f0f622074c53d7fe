"""Issue 18, items 5 and 6: one collector per (data directory, model), stale locks taken over,
and a damaged store reported as StoreError with exit 2. Fake server on 127.0.0.1 only."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from precompute import store as store_mod
from precompute.store import ResponseStore, StoredResult, StoreError
from tests.precompute.conftest import (
    REPO,
    collect_args,
    committed_rows,
    run_collect,
    run_collect_subprocess,
    subprocess_env,
)
from tests.precompute.fake_openai_server import FakeOpenAIServer

SLUG = "test-model"


def _popen(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "precompute", *argv], cwd=REPO,
                            env=subprocess_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _sent_users(srv: FakeOpenAIServer) -> list[str]:
    """Every request's messages (system + user: the fairness condition shares user texts)."""
    return [json.dumps(r.body["messages"], sort_keys=True) for r in srv.received]


def test_second_concurrent_collect_refuses_and_nothing_is_sent_twice(
        small_prompts: Path, tmp_path: Path) -> None:
    """The audit: two runs started at once sent all prompts twice, and both exited 0."""
    n_prompts = len(pd.read_parquet(small_prompts))
    db = tmp_path / "responses" / f"{SLUG}.store" / "responses.sqlite"
    # 0.3 s a request: the first run sends for ~12 s, so the second (a fresh interpreter,
    # several seconds to start on a loaded 2-core machine) meets it still running.
    with FakeOpenAIServer(latency_s=0.3) as srv:
        argv = collect_args(srv.base_url, tmp_path, small_prompts, "--concurrency", "2")
        first = _popen(argv)
        deadline = time.monotonic() + 60
        while committed_rows(db) < 2 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.02)
        assert first.poll() is None, "the first run must still be sending"
        second = run_collect_subprocess(argv, timeout=60)
        out, err = first.communicate(timeout=120)
        users = _sent_users(srv)
    assert first.returncode == 0, err
    assert second.returncode == 2, second.stderr
    assert "another collect is already running" in second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert len(users) == n_prompts and len(set(users)) == n_prompts  # each prompt exactly once


def test_two_collects_started_together_send_each_prompt_once(small_prompts: Path,
                                                             tmp_path: Path) -> None:
    n_prompts = len(pd.read_parquet(small_prompts))
    with FakeOpenAIServer(latency_s=0.05) as srv:
        argv = collect_args(srv.base_url, tmp_path, small_prompts, "--concurrency", "4")
        procs = [_popen(argv), _popen(argv)]
        results = [p.communicate(timeout=120) for p in procs]
        users = _sent_users(srv)
    codes = sorted(p.returncode for p in procs)
    assert codes in ([0, 0], [0, 2]), results  # refused, or started after the first finished
    assert len(users) == n_prompts and len(set(users)) == n_prompts


def test_stale_lock_of_a_killed_run_is_taken_over(small_prompts: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "responses" / f"{SLUG}.store"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from precompute.store import "
         "CollectorLock; CollectorLock(Path(sys.argv[1])).acquire(); print('held', flush=True);"
         " time.sleep(120)", str(store_dir)],
        cwd=REPO, env=subprocess_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(store_mod.StoreLocked, match=f"pid {holder.pid}"):
            store_mod.CollectorLock(store_dir).acquire()  # alive: refused
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    with FakeOpenAIServer() as srv:
        res = run_collect_subprocess(collect_args(srv.base_url, tmp_path, small_prompts))
    assert res.returncode == 0, res.stderr
    assert f"took over a stale lock of pid {holder.pid}" in res.stderr
    assert (store_dir / "collect.lock").read_text() == ""  # a clean exit leaves no holder
    again = store_mod.CollectorLock(store_dir).acquire()
    assert again.stale_holder is None
    again.release()


def test_lock_tolerates_a_store_made_by_earlier_code_and_dry_runs_need_none(
        fake_server: FakeOpenAIServer, small_prompts: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    argv = collect_args(fake_server.base_url, tmp_path, small_prompts)
    assert run_collect(argv, monkeypatch) == 0
    lock_file = tmp_path / "responses" / f"{SLUG}.store" / "collect.lock"
    lock_file.unlink()  # a store directory as the code before the lock left it
    sent = fake_server.count()
    with store_mod.CollectorLock(lock_file.parent):
        assert run_collect([*argv, "--dry-run"], monkeypatch) == 0  # reads, sends nothing
    assert run_collect(argv, monkeypatch) == 0
    assert fake_server.count() == sent  # everything was found in the store


def _damaged_store(path: Path) -> None:
    """A real store with one zeroed page in the middle, as the audit made it."""
    st = ResponseStore(path)
    st.put_many([StoredResult(f"k{i}", "ok", {"m": i}, {"response": "x" * 200}, "t", "c",
                              f"id{i}", "standard", {"id": f"id{i}"}) for i in range(300)])
    st.close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(path.read_bytes())
    data[3 * 4096:4 * 4096] = bytes(4096)
    path.write_bytes(bytes(data))


def test_zeroed_page_is_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    _damaged_store(db)
    with pytest.raises(StoreError, match="damaged or unreadable"):
        ResponseStore(db)  # the check on opening finds it before anything is sent
    st = ResponseStore(db, check=False)  # unchecked, page 1 is intact: opening works
    with pytest.raises(StoreError, match="damaged or unreadable"):
        st.export_rows("c")  # the join reads the zeroed page
    with pytest.raises(StoreError, match="damaged or unreadable"):
        st.counts("c")
    st.close()


def test_collect_on_a_damaged_store_exits_2_without_a_traceback(
        small_prompts: Path, tmp_path: Path) -> None:
    db = tmp_path / "responses" / f"{SLUG}.store" / "responses.sqlite"
    db.parent.mkdir(parents=True)
    _damaged_store(db)
    with FakeOpenAIServer() as srv:
        res = run_collect_subprocess(collect_args(srv.base_url, tmp_path, small_prompts))
        sent = srv.count()
    assert res.returncode == 2, res.stderr
    assert "damaged or unreadable" in res.stderr and "Traceback" not in res.stderr
    assert sent == 0
    assert json.dumps(res.stderr)  # one clear line, printable
