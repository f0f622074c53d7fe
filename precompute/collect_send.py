"""The send phase of `collect`: clients, the asyncio runner, live counters and the bar.

Why apart from the run: this is the hot path (bench/collect.py measures it), and it needs only
the job, the items to send, the store writer and a checkpoint callback. It never reads the
command line and never writes the manifest itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai
from tqdm import tqdm

from precompute import endpoint
from precompute.client import ChatResult, RetryPolicy, complete, make_client
from precompute.collect_job import CollectJob, FlushPolicy
from precompute.collect_plan import PlanItem, RunConfig
from precompute.store import ResponseStore, StoredResult, StoreWriter
from rupeebias_core.parsing.strict import validate_strict

#: Connections per client pool (see `make_clients`).
POOL_SIZE = 1


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


def strict_format_ok(task: str, text: str) -> bool:
    """The upstream runner's verdict: would it have kept this answer (valid or flagged)?"""
    return validate_strict(task, text).severity in ("valid", "flag")


class ProgressBar(Protocol):
    """What `Progress` needs of a tqdm bar."""

    def update(self, n: float = 1) -> bool | None: ...

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True,
                    **kwargs: Any) -> None: ...


@dataclass(frozen=True)
class SendTally:
    """What this run's requests returned: a frozen snapshot of `Progress`."""

    by_status: dict[str, int] = field(default_factory=dict)
    by_finish_reason: dict[str, int] = field(default_factory=dict)
    retried: int = 0
    strict_format_failures: int = 0
    tokens_prompt: int = 0
    tokens_completion: int = 0
    send_wall_s: float = 0.0
    send_cpu_s: float = 0.0

    @property
    def finished(self) -> int:
        return sum(self.by_status.values())


@dataclass
class Progress:
    """Live counters for the progress bar, snapshotted into every report (`tally`)."""

    total: int
    bar: ProgressBar | None = None
    statuses: Counter[str] = field(default_factory=Counter)
    finish: Counter[str] = field(default_factory=Counter)
    retried: int = 0
    strict_fail: int = 0
    tokens_prompt: int = 0
    tokens_completion: int = 0
    validator: Callable[[str, str], bool] | None = strict_format_ok
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
            # runner_rejects: answers the authors' runner would have rejected (wrong format
            # *or* an implausible value, e.g. "### 15000 INR" for a yearly salary)
            self.bar.set_postfix(ok=self.statuses["ok"], empty=self.statuses["empty"],
                                 err=self.statuses["error"], retried=self.retried,
                                 runner_rejects=self.strict_fail, refresh=refresh)

    def tally(self) -> SendTally:
        return SendTally(by_status=dict(self.statuses), by_finish_reason=dict(self.finish),
                         retried=self.retried, strict_format_failures=self.strict_fail,
                         tokens_prompt=self.tokens_prompt,
                         tokens_completion=self.tokens_completion,
                         send_wall_s=self.send_wall_s, send_cpu_s=self.send_cpu_s)


@dataclass
class Runner:
    """Sends a plan over one or more clients, committing each result as it arrives."""

    plan: list[PlanItem]
    cfg: RunConfig
    clients: list[openai.AsyncOpenAI]
    policy: RetryPolicy
    concurrency: int
    writer: StoreWriter
    progress: Progress
    checkpoint: Callable[[], None]
    flush: FlushPolicy = FlushPolicy()
    _inflight: list[int] = field(default_factory=list)
    _since_flush: int = 0
    _last_flush: float = field(default_factory=time.monotonic)
    _flushing: asyncio.Task[None] | None = None

    def _pick(self) -> int:
        """The endpoint with the fewest requests outstanding (several local servers)."""
        return min(range(len(self.clients)), key=lambda i: self._inflight[i])

    async def _maybe_flush(self) -> None:
        due = (self._since_flush >= self.flush.every
               or time.monotonic() - self._last_flush >= self.flush.seconds)
        if due and (self._flushing is None or self._flushing.done()):
            self._since_flush = 0
            self._last_flush = time.monotonic()

            async def run() -> None:
                await asyncio.to_thread(self.writer.flush)
                await asyncio.to_thread(self.checkpoint)

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
            if not t.cancelled():
                exc = t.exception()
                if exc is not None:
                    failures.append(exc)

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


def make_clients(base_urls: list[str], api_key: str, concurrency: int,
                 timeout_s: float) -> list[openai.AsyncOpenAI]:
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


def send(job: CollectJob, to_send: list[PlanItem], store: ResponseStore,
         checkpoint: Callable[[], None], progress: Progress) -> None:
    """Start the local servers if the job needs them, send `to_send` in order, and commit
    every result; `checkpoint` runs after each periodic flush. Ctrl-C / SIGTERM propagate
    (KeyboardInterrupt) after the writer has committed what finished and servers stopped."""
    cfg = job.config
    with contextlib.ExitStack() as stack:
        local = job.local_server
        if local is not None:
            server = stack.enter_context(endpoint.local_server(
                processes=local.processes, threads=local.threads, ctx_size=local.ctx_size,
                backend=local.backend, slots=local.slots, model_path=local.model_path,
                alias=cfg.model))
            base_urls: list[str] = list(server.base_urls)
        else:
            assert job.target.base_url is not None  # a remote target always has one
            base_urls = [job.target.base_url]
        writer = StoreWriter(store)
        stack.callback(writer.close)
        bar = tqdm(total=len(to_send), unit="req", desc=cfg.slug, disable=not job.show_progress,
                   dynamic_ncols=True, smoothing=0.05, file=sys.stderr)
        stack.callback(bar.close)
        stack.callback(progress.show_counts)  # runs first: exact final counts on the bar
        progress.bar = bar
        clients = make_clients(base_urls, job.api_key, job.concurrency, job.retry.timeout_s)
        runner = Runner(plan=to_send, cfg=cfg, clients=clients, policy=job.retry,
                        concurrency=job.concurrency, writer=writer, progress=progress,
                        checkpoint=checkpoint, flush=job.flush)

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
