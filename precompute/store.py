"""Crash-safe response store that doubles as a never-expiring response cache.

Why SQLite (WAL) rather than an fsync'd JSONL: a primary key gives exactly-once bookkeeping
for free (a success can never be overwritten or duplicated), lookups by cache key need no
index rebuild on start, a torn last line can never happen, and readers (the periodic Parquet
export) run concurrently with the writer. Durability: ``synchronous=FULL`` fsyncs the WAL on
every commit; a single writer thread commits whatever results have queued up (group commit),
so a kill loses at most the requests in flight plus the few milliseconds of results waiting
for the commit under way.

Two tables:
* ``responses`` — cache: ``cache_key`` (sha256 of endpoint, full request body, sample index)
  → the result. An ``ok``/``empty`` row is final and is never replaced; an ``error`` row is
  replaced by the next attempt on a rerun.
* ``items`` — which cache entry answers prompt (``id``, ``condition``) under a run
  configuration (``config_hash``); the Parquet export is a join of the two.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    cache_key    TEXT PRIMARY KEY,
    status       TEXT NOT NULL CHECK (status IN ('ok', 'empty', 'error')),
    request_json TEXT NOT NULL,
    result_json  TEXT NOT NULL,
    n_sends      INTEGER NOT NULL,
    finished_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
    config_hash  TEXT NOT NULL,
    id           TEXT NOT NULL,
    condition    TEXT NOT NULL,
    cache_key    TEXT NOT NULL,
    item_json    TEXT NOT NULL,
    PRIMARY KEY (config_hash, id, condition)
);
CREATE TABLE IF NOT EXISTS configs (
    config_hash  TEXT PRIMARY KEY,
    config_json  TEXT NOT NULL,
    first_seen   TEXT NOT NULL
);
"""

# A success is final: only an error row may be replaced by a newer outcome.
_UPSERT_RESPONSE = """
INSERT INTO responses (cache_key, status, request_json, result_json, n_sends, finished_at)
VALUES (?, ?, ?, ?, 1, ?)
ON CONFLICT (cache_key) DO UPDATE SET
    status = excluded.status,
    request_json = excluded.request_json,
    result_json = excluded.result_json,
    n_sends = responses.n_sends + 1,
    finished_at = excluded.finished_at
WHERE responses.status = 'error'
"""

_UPSERT_ITEM = """
INSERT INTO items (config_hash, id, condition, cache_key, item_json) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (config_hash, id, condition) DO UPDATE SET
    cache_key = excluded.cache_key, item_json = excluded.item_json
"""


class StoreError(RuntimeError):
    """The store cannot be opened or written (corrupt file, disk full, locked)."""


class StoreLocked(StoreError):
    """Another collector holds the store of this (data directory, model slug)."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _damage_is_store_error(method: Callable[Concatenate[ResponseStore, _P], _R]
                           ) -> Callable[Concatenate[ResponseStore, _P], _R]:
    """Turn any SQLite error of a store method into a StoreError naming the file.

    Why: a damaged page (the audit zeroed one) surfaces only when a query touches it, as a raw
    ``sqlite3.DatabaseError`` traceback; the CLI reports StoreError cleanly with exit 2."""

    @functools.wraps(method)
    def wrapper(self: ResponseStore, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except StoreError:
            raise
        except sqlite3.Error as exc:
            raise StoreError(
                f"response store {self.path} is damaged or unreadable ({exc}). Move it aside "
                "and rerun: the run's Parquet file seeds a new store with every finished "
                "answer") from exc

    return wrapper


@dataclass(frozen=True)
class StoredResult:
    """One result ready to be committed: the response plus the item it answers."""

    cache_key: str
    status: str
    request: dict[str, Any]
    result: dict[str, Any]
    finished_at: str
    config_hash: str
    id: str
    condition: str
    item: dict[str, Any]


def _connect(path: Path) -> sqlite3.Connection:
    try:
        con = sqlite3.connect(path, timeout=30.0, isolation_level=None,
                              check_same_thread=False)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.execute("PRAGMA busy_timeout=30000")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot open response store {path}: {exc}") from exc
    return con


class ResponseStore:
    """The store of one model slug: ``<data>/responses/<slug>.store/responses.sqlite``."""

    def __init__(self, path: Path, *, check: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con = _connect(self.path)
        self._lock = threading.Lock()
        try:
            self._con.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._con.close()
            raise StoreError(f"response store {self.path} is not usable: {exc}") from exc
        if check:
            self._quick_check()

    def _quick_check(self) -> None:
        """Refuse a damaged store before anything is sent (a damaged page otherwise surfaces
        only when a query reaches it, possibly after paid requests). `PRAGMA quick_check`
        reads every page once: 0.3 s for a full-size (114 MB) store, measured."""
        try:
            row = self._con.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            row = (str(exc),)
        if not row or row[0] != "ok":
            self._con.close()
            raise StoreError(
                f"response store {self.path} is damaged or unreadable ({row[0] if row else '?'})"
                ". Move it aside and rerun: the run's Parquet file seeds a new store with every "
                "finished answer")

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- reads ---------------------------------------------------------------------------
    @_damage_is_store_error
    def statuses(self, cache_keys: Iterable[str]) -> dict[str, str]:
        """Status of each known cache key (unknown keys are absent)."""
        keys = list(dict.fromkeys(cache_keys))
        out: dict[str, str] = {}
        with self._lock:
            for i in range(0, len(keys), 900):
                chunk = keys[i:i + 900]
                marks = ",".join("?" * len(chunk))
                rows = self._con.execute(
                    f"SELECT cache_key, status FROM responses WHERE cache_key IN ({marks})", chunk)
                out.update(dict(rows.fetchall()))
        return out

    @_damage_is_store_error
    def result(self, cache_key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._con.execute("SELECT result_json FROM responses WHERE cache_key = ?",
                                    (cache_key,)).fetchone()
        return json.loads(row[0]) if row else None

    @_damage_is_store_error
    def export_rows(self, config_hash: str) -> list[dict[str, Any]]:
        """Every item of a configuration joined to its response (one per id, condition)."""
        with self._lock:
            rows = self._con.execute(
                """SELECT i.item_json, r.status, r.result_json, r.n_sends
                   FROM items i JOIN responses r ON r.cache_key = i.cache_key
                   WHERE i.config_hash = ? ORDER BY i.id, i.condition""",
                (config_hash,)).fetchall()
        out = []
        for item_json, status, result_json, n_sends in rows:
            row = json.loads(item_json)
            row.update(json.loads(result_json))
            row["status"] = status
            row["n_sends"] = n_sends
            out.append(row)
        return out

    @_damage_is_store_error
    def counts(self, config_hash: str) -> dict[str, int]:
        with self._lock:
            rows = self._con.execute(
                """SELECT r.status, COUNT(*) FROM items i JOIN responses r
                   ON r.cache_key = i.cache_key WHERE i.config_hash = ? GROUP BY r.status""",
                (config_hash,)).fetchall()
        return {s: int(n) for s, n in rows}

    # ---- writes --------------------------------------------------------------------------
    @_damage_is_store_error
    def register_config(self, config_hash: str, config: dict[str, Any], now: str) -> None:
        with self._lock:
            self._con.execute(
                "INSERT OR IGNORE INTO configs (config_hash, config_json, first_seen) "
                "VALUES (?, ?, ?)", (config_hash, json.dumps(config, sort_keys=True), now))

    @_damage_is_store_error
    def link_cached(self, items: Iterable[tuple[str, str, str, str, dict[str, Any]]]) -> None:
        """Point (config, id, condition) at an existing cache entry (a cache hit)."""
        batch = [(c, i, k, key, json.dumps(item, ensure_ascii=False))
                 for c, i, k, key, item in items]
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                self._con.executemany(_UPSERT_ITEM, batch)
                self._con.execute("COMMIT")
            except BaseException:
                self._con.execute("ROLLBACK")
                raise

    @_damage_is_store_error
    def put_many(self, results: list[StoredResult]) -> None:
        """Commit results in one transaction (durable once this returns)."""
        with self._lock:
            try:
                self._con.execute("BEGIN IMMEDIATE")
                for r in results:
                    self._con.execute(_UPSERT_RESPONSE, (
                        r.cache_key, r.status,
                        json.dumps(r.request, ensure_ascii=False, sort_keys=True),
                        json.dumps(r.result, ensure_ascii=False), r.finished_at))
                    self._con.execute(_UPSERT_ITEM, (
                        r.config_hash, r.id, r.condition, r.cache_key,
                        json.dumps(r.item, ensure_ascii=False)))
                self._con.execute("COMMIT")
            except sqlite3.Error as exc:
                try:
                    self._con.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise StoreError(f"cannot write to response store {self.path}: {exc}") from exc


class StoreWriter:
    """A single writer thread doing group commits, so the event loop never blocks on fsync.

    `submit` is non-blocking; `flush` waits until everything submitted so far is durable.
    A write failure is kept and re-raised by the next `submit`/`flush`/`close`.
    """

    def __init__(self, store: ResponseStore, max_batch: int = 256) -> None:
        self.store = store
        self.max_batch = max_batch
        self._q: queue.Queue[StoredResult | None] = queue.Queue()
        self._error: BaseException | None = None
        self.commits = 0
        self.committed = 0
        self._thread = threading.Thread(target=self._run, name="store-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        stop = False
        while not stop:
            got = [self._q.get()]
            while len(got) <= self.max_batch and got[-1] is not None:
                try:
                    got.append(self._q.get_nowait())
                except queue.Empty:
                    break
            stop = got[-1] is None
            batch = [r for r in got if r is not None]
            if batch and self._error is None:
                try:
                    self.store.put_many(batch)
                    self.commits += 1
                    self.committed += len(batch)
                except BaseException as exc:  # surfaced to the caller by _raise
                    self._error = exc
            for _ in got:
                self._q.task_done()

    def _raise(self) -> None:
        if self._error is not None:
            raise StoreError(str(self._error)) from self._error

    def submit(self, result: StoredResult) -> None:
        self._raise()
        self._q.put(result)

    def flush(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while self._q.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)
        self._raise()

    def close(self) -> None:
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join(120)
        self._raise()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory, fsync, then os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


LOCK_NAME = "collect.lock"


class CollectorLock:
    """One collector per store, i.e. per (data directory, model slug).

    Why: two `collect` runs on one store, started together, each saw the other's prompts as
    missing and sent every prompt twice; the store's primary key then hid the double spend.

    How: an exclusive ``flock`` on ``<slug>.store/collect.lock``, held for the whole run. The
    kernel drops it when the holder dies, however it dies (SIGKILL included), so a lock left by
    a killed run is never mistaken for a live one, and no PID check can be fooled by PID
    reuse. The file's content only names the holder for messages; a non-empty file found on
    acquiring means the previous holder died without releasing (reported as taken over). The
    file is never deleted (deleting a locked file lets a third process lock a new inode while
    the old one is still held). The descriptor is not inherited by child processes (a local
    llama.cpp server outliving a killed collector does not keep the lock).
    """

    def __init__(self, store_dir: Path) -> None:
        self.path = Path(store_dir) / LOCK_NAME
        self._fd: int | None = None
        self.stale_holder: dict[str, Any] | None = None

    def acquire(self) -> CollectorLock:
        """Take the lock or raise StoreLocked naming the running holder."""
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            who = (f"pid {holder.get('pid')} on {holder.get('host')}, started "
                   f"{holder.get('started_at')}") if holder else "another process"
            raise StoreLocked(
                f"another collect is already running on this store ({who}): one collector per "
                f"data directory and model, or both would send and pay for the same prompts. "
                f"Wait for it to finish, or stop it and rerun (lock: {self.path})") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {self.path}: {exc}") from exc
        previous = _read_holder(fd)
        self.stale_holder = previous or None
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        """Empty the file (a clean exit leaves no stale holder), then unlock."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)  # closing the descriptor drops the flock
        self._fd = None

    def __enter__(self) -> CollectorLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any]:
    """The holder recorded in a lock file ({} when empty or unreadable)."""
    try:
        raw = os.pread(fd, 4096, 0)
    except OSError:
        return {}
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"pid": "?", "host": "?", "started_at": "?"}
