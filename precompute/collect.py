"""`python -m precompute collect`: send the selected prompts to an OpenAI-compatible endpoint.

Exactly once and resumable: every result is committed to the SQLite store (`store.py`) as it
arrives; a rerun of the same command sends only what has no successful result yet (errors are
retried, successes never re-sent). The store is also the cache, keyed on the endpoint, the full
request body and the sample index, so changing any request parameter means new requests and
never a stale answer. `responses/<slug>.parquet` is rewritten atomically from the store every
`--flush-every` results / `--flush-seconds` and at the end, with a manifest beside it.

Without `--base-url` the bundled SmolLM2-135M-Instruct is served locally (`serve_local.py`),
started only if something must be sent and stopped on exit, error or Ctrl-C.

The code, in small modules: `collect_cli` (flags -> one frozen `CollectJob`), `collect_plan`
(what is sent and hashed), `collect_send` (clients, runner, progress), `collect_report`
(`RunReport`, exit codes, the manifest built from a report) and this module: the responses
file, ``run(job) -> RunReport`` and ``main``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from precompute import estimate as est_mod
from precompute.client import utc_now_iso
from precompute.collect_cli import (
    REASONING_EFFORTS,
    SLUG_RE,
    CollectError,
    api_key,
    configure,
    default_slug,
    job_from_args,
    normalize_base_url,
    reasoning_style_for,
)
from precompute.collect_job import CollectJob, OutputPaths
from precompute.collect_plan import (
    PlanItem,
    RunConfig,
    build_plan,
    cache_key,
    subset,
    system_prompt_hashes,
)
from precompute.collect_report import (
    EXIT_BAD_INPUT,
    EXIT_ERRORS_LEFT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    RunReport,
    run_manifest,
)
from precompute.collect_send import Progress, send
from precompute.manifest import environment, sha256_file, write_manifest
from precompute.parquet_io import write_table
from precompute.selection import SelectionError, load_selection, prompts_sha256, send_order
from precompute.serve_local import LocalModelError, llama_server_version
from precompute.store import CollectorLock, ResponseStore, StoredResult, StoreError
from rupeebias_core import registry

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_ERRORS_LEFT", "EXIT_INTERRUPTED", "EXIT_OK", "REASONING_EFFORTS",
    "RESPONSES_SCHEMA", "SCHEMA", "SLUG_RE", "CollectError", "CollectJob", "OutputPaths",
    "PlanItem", "Publish", "RunConfig", "RunReport", "api_key", "build_plan", "cache_key",
    "configure", "default_slug", "export_parquet", "job_from_args", "main", "manifest_writer",
    "normalize_base_url", "reasoning_style_for", "run", "seed_store_from_parquet",
]

#: Parquet schema of `responses/<model>.parquet`: the registry's (docs/data-format.md).
RESPONSES_SCHEMA = registry.RESPONSES.schema
SCHEMA = RESPONSES_SCHEMA  # the short name existing callers use

#: Called with a report after every Parquet the run writes (mid-run and final), while the
#: collector lock is still held: `manifest_writer` writes the manifest that describes it.
Publish = Callable[[RunReport], None]
INTERRUPTED_MESSAGE = ("interrupted: finished results are in the store; rerun the same command "
                       "to resume")

# ---------------------------------------------------------------------------------------------
# the responses file

_RESULT_KEYS = ("response", "finish_reason", "error", "reasoning_content", "model_returned",
                "system_fingerprint", "tokens_prompt", "tokens_completion", "latency_s",
                "started_at", "finished_at", "attempts", "http_status", "response_id")


def _plain(value: Any) -> Any:
    """A Parquet cell as the plain JSON value the store holds (null for missing/NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def seed_store_from_parquet(store: ResponseStore, plan: list[PlanItem], cfg: RunConfig,
                            path: Path) -> int:
    """Load finished answers from an existing responses Parquet into an empty store.

    The store is a local, gitignored cache; the Parquet is what gets committed. Seeding lets a
    fresh checkout (a new machine, a later session) resume a long run from the committed file
    instead of re-sending everything. Only rows whose cache key matches this run's request
    exactly (same endpoint, body and sample index) and that finished (`ok`/`empty`) are taken.
    """
    if not path.exists():
        return 0
    by_key = {item.cache_key: item for item in plan}
    known = store.statuses(by_key)
    try:
        frame = pq.read_table(path).to_pandas()
    except Exception as exc:  # noqa: BLE001 - a corrupt file must not stop a run
        print(f"warning: cannot read {path} to resume from ({exc}); ignoring it", file=sys.stderr)
        return 0
    if "cache_key" not in frame or "status" not in frame:
        return 0
    frame = frame[frame["status"].isin(["ok", "empty"]) & frame["cache_key"].isin(by_key)]
    results = []
    for row in frame.to_dict("records"):
        item = by_key[row["cache_key"]]
        if known.get(item.cache_key) in ("ok", "empty"):
            continue
        result = {k: _plain(row.get(k)) for k in _RESULT_KEYS}
        results.append(StoredResult(
            cache_key=item.cache_key, status=str(row["status"]), request=item.request.body(),
            result=result, finished_at=str(row.get("finished_at") or ""),
            config_hash=cfg.config_hash, id=item.id, condition=item.condition,
            item=item.item_record(cfg)))
    if results:
        store.put_many(results)
    return len(results)


def export_parquet(store: ResponseStore, cfg: RunConfig, path: Path) -> int:
    """(Re)write the responses file atomically from the store: one row per (id, condition)."""
    rows = store.export_rows(cfg.config_hash)
    cols: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}
    for r in rows:
        for name in cols:
            cols[name].append(r.get(name))
    table = pa.Table.from_pydict(cols, schema=SCHEMA)
    write_table(table, path)
    return len(rows)


# ---------------------------------------------------------------------------------------------
# the run

def run(job: CollectJob, publish: Publish | None = None) -> RunReport:
    """Plan, resume, send and export one job; `publish` sees every report a Parquet was
    written for (`manifest_writer(job)` for the manifests `main` writes).

    One collector per (data directory, slug): the lock is taken before the store is read,
    so a second run refuses before it has planned anything; a dry run sends nothing and needs
    no lock. Ctrl-C / SIGTERM during the send ends in an ``interrupted`` report after the
    final export; elsewhere they propagate as KeyboardInterrupt.
    """
    frame = load_selection(job.selection)
    plan = build_plan(frame, job.config)
    lock = None if job.dry_run else CollectorLock(job.paths.store_dir).acquire()
    if lock is not None and lock.stale_holder:
        held = lock.stale_holder
        print(f"lock: took over a stale lock of pid {held.get('pid')} on {held.get('host')} "
              f"(started {held.get('started_at')}), which is no longer running", file=sys.stderr)
    try:
        store = ResponseStore(job.paths.store_db)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    try:
        return _run_on(store, job, frame, plan, publish or (lambda report: None))
    finally:
        store.close()
        if lock is not None:
            lock.release()


def _run_on(store: ResponseStore, job: CollectJob, frame: pd.DataFrame, plan: list[PlanItem],
            publish: Publish) -> RunReport:
    cfg, paths = job.config, job.paths
    started_at = utc_now_iso()
    store.register_config(cfg.config_hash, asdict(cfg), started_at)
    seeded = seed_store_from_parquet(store, plan, cfg, paths.parquet)
    if seeded:
        print(f"resume: loaded {seeded:,} finished answers from {paths.parquet}",
              file=sys.stderr)
    known = store.statuses(p.cache_key for p in plan)
    cached = [p for p in plan if known.get(p.cache_key) in ("ok", "empty")]
    # Cache hits become rows of this configuration without a request.
    store.link_cached((cfg.config_hash, p.id, p.condition, p.cache_key, p.item_record(cfg))
                      for p in cached)
    to_send = [p for p in plan if known.get(p.cache_key) not in ("ok", "empty")]
    n_retry = sum(1 for p in to_send if known.get(p.cache_key) == "error")
    position = send_order(frame, job.order, job.selection.seed)
    to_send.sort(key=lambda p: position[(p.id, p.condition)])
    _announce(job, frame, plan, len(cached), to_send, n_retry)
    base = RunReport(started_at=started_at, ended_at=started_at, selected=len(plan),
                     cached=len(cached), to_send=len(to_send), earlier_errors=n_retry)
    if job.dry_run:
        return replace(base, ended_at=utc_now_iso(), dry_run=True)

    sel = job.selection
    local = job.local_server
    base = replace(
        base, parquet=paths.parquet,
        prompts_sha256=prompts_sha256(frame),  # once: ~0.7 s for the full prompt set
        prompts_file_sha256=sha256_file(sel.prompts_path) if sel.prompts_path else None,
        system_prompt_sha256=system_prompt_hashes(plan),
        environment=environment(),  # the code and packages this run started with
        llama_server=(llama_server_version()
                      if local is not None and local.backend == "llama-server" else None))
    progress = Progress(total=len(to_send))

    def snapshot(n_rows: int, *, interrupted: bool = False,
                 in_progress: bool = False) -> RunReport:
        return replace(base, ended_at=utc_now_iso(), this_run=progress.tally(),
                       by_status=store.counts(cfg.config_hash), rows_in_parquet=n_rows,
                       interrupted=interrupted, in_progress=in_progress)

    def checkpoint() -> None:
        """Parquet, then a report that describes exactly it (``in_progress``): a copy taken
        mid-run is a consistent snapshot to commit."""
        publish(snapshot(export_parquet(store, cfg, paths.parquet), in_progress=True))

    interrupted = False
    try:
        if to_send:
            send(job, to_send, store, checkpoint, progress)
    except KeyboardInterrupt:
        interrupted = True
    report = snapshot(export_parquet(store, cfg, paths.parquet), interrupted=interrupted)
    publish(report)
    return report


def _announce(job: CollectJob, frame: pd.DataFrame, plan: list[PlanItem], n_cached: int,
              to_send: list[PlanItem], n_retry: int) -> None:
    """What is about to happen: endpoint and parameters, resume status, the estimate."""
    cfg, est = job.config, job.estimate
    latency = est.latency_s if est.latency_s is not None else \
        est_mod.default_latency(job.local, cfg.max_tokens)
    estimate = est_mod.make_estimate(
        subset(frame, to_send), max_tokens=cfg.max_tokens,
        concurrency=job.effective_concurrency, latency_s=latency,
        model=cfg.model if not job.local else None, preset=est.preset,
        price_in=est.price_in, price_out=est.price_out,
        token_method=est_mod.resolve_token_method(
            est.tokenizer, job.local,
            job.local_server.model_path if job.local_server is not None else None),
        expected_output=est.expected_output_tokens)
    print(f"collect {cfg.slug}: model {cfg.model} at {job.where}; reasoning "
          f"{cfg.reasoning_style}({cfg.reasoning_effort}); temperature {cfg.temperature:g}; "
          f"max_tokens {cfg.max_tokens}", file=sys.stderr)
    print(f"resume: {len(plan):,} selected, {n_cached:,} already answered (cached), "
          f"{n_retry:,} earlier errors to retry, {len(to_send) - n_retry:,} new "
          f"-> sending {len(to_send):,}", file=sys.stderr)
    print(est_mod.format_estimate(estimate), file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# CLI

def manifest_writer(job: CollectJob) -> Publish:
    """Write `responses/<slug>.manifest.json` for every report a run publishes."""
    def publish(report: RunReport) -> None:
        write_manifest(job.paths.manifest, run_manifest(job, report))

    return publish


def conclude(job: CollectJob, report: RunReport) -> int:
    """The closing lines of a run and its exit code."""
    if report.dry_run:
        return report.exit_code
    counts = report.by_status
    print(f"wrote {report.parquet} ({report.rows_in_parquet:,} rows: {counts.get('ok', 0):,} "
          f"ok, {counts.get('empty', 0):,} empty, {report.errors:,} errors) and "
          f"{job.paths.manifest.name}", file=sys.stderr)
    if report.interrupted:
        print(INTERRUPTED_MESSAGE, file=sys.stderr)
    elif report.errors:
        print(f"{report.errors:,} request(s) ended in an error; rerun the same command to "
              "retry them", file=sys.stderr)
    return report.exit_code


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM behaves like Ctrl-C so that cleanup (stop the local server, export) runs."""
    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(args: argparse.Namespace) -> int:
    """Build the job from the flags, run it with its manifests, return the exit code."""
    try:
        with _sigterm_as_interrupt():
            job = job_from_args(args)
            report = run(job, publish=manifest_writer(job))
            return conclude(job, report)
    except (CollectError, SelectionError, StoreError, LocalModelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(INTERRUPTED_MESSAGE, file=sys.stderr)
        return EXIT_INTERRUPTED

