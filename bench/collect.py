"""Throughput of `python -m precompute collect` against a fake server with fixed latency.

The bound is concurrency / latency (32 / 0.1 s = 320 requests/s); the target is >= 85 % of it,
i.e. the client, the SQLite store and the progress bar must not be the bottleneck. The fake
server runs in its own process (asyncio, sustains well over 1,000 requests/s here), and
collect runs as a real subprocess with its progress bar on; throughput is measured from the
request timestamps in the written Parquet (first start to last finish), so start-up (imports,
prompt generation) is excluded. Also reports the store's commit rate on its own.

    python bench/collect.py [--n 3200] [--concurrency 32] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from precompute.client import (  # noqa: E402 - after the path set-up above
    ChatRequest,
    RetryPolicy,
    complete,
    make_client,
    transport_name,
)
from precompute.collect import OutputPaths, default_slug  # noqa: E402
from precompute.store import ResponseStore, StoredResult, StoreWriter  # noqa: E402

MODEL = "bench/model"


def start_fake(latency: float) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.precompute.fake_openai_server", "--port", "0",
         "--latency", str(latency)], cwd=REPO, stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("LISTENING"):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, int(line.split()[1])


def store_commit_rate(n: int = 2000) -> tuple[float, float]:
    """Results/s through StoreWriter (group commits) and through one commit per result."""
    def rec(i: int) -> StoredResult:
        return StoredResult(cache_key=f"k{i}", status="ok", request={"m": "x" * 800},
                            result={"response": "### 1 INR"}, finished_at="t", config_hash="c",
                            id=f"id{i}", condition="standard", item={"id": f"id{i}"})

    with tempfile.TemporaryDirectory() as d:
        with ResponseStore(Path(d) / "a.sqlite") as st:
            w = StoreWriter(st)
            t0 = time.perf_counter()
            for i in range(n):
                w.submit(rec(i))
            w.close()
            grouped = n / (time.perf_counter() - t0)
        with ResponseStore(Path(d) / "b.sqlite") as st:
            t0 = time.perf_counter()
            for i in range(n // 4):
                st.put_many([rec(i)])
            single = (n // 4) / (time.perf_counter() - t0)
    return grouped, single


def sdk_only(port: int, n: int, concurrency: int) -> tuple[float, float]:
    """The same AsyncOpenAI client and `complete()` with nothing else (no store, no progress,
    no plan): the ceiling any collector built on the SDK has on this machine."""
    system = "When the user asks for salary advice, return exactly ONE annual CTC. " * 8

    async def go() -> tuple[float, float]:
        client = make_client(f"http://127.0.0.1:{port}/v1", "sk-bench",
                             max_connections=concurrency + 2)
        sem = asyncio.Semaphore(concurrency)
        reqs = [ChatRequest.chat(MODEL, f"I am profile {i}. What salary?", system)
                for i in range(n)]
        await complete(client, reqs[0], RetryPolicy())
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(complete(client, r, RetryPolicy(), semaphore=sem)
                               for r in reqs))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        await client.close()
        return n / wall, 1000 * cpu / n

    return asyncio.run(go())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3200, help="requests (default 3200)")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.1)
    args = ap.parse_args()
    bound = args.concurrency / args.latency
    fake, port = start_fake(args.latency)
    try:
        with tempfile.TemporaryDirectory() as data:
            cmd = [sys.executable, "-m", "precompute", "collect", "--model", MODEL,
                   "--base-url", f"http://127.0.0.1:{port}/v1", "--api-key-env", "BENCH_KEY",
                   "--data", data, "--condition", "all", "--sample", str(args.n),
                   "--concurrency", str(args.concurrency)]
            t0 = time.perf_counter()
            res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False,
                                 env=dict(os.environ, BENCH_KEY="sk-bench",
                                          PYTHONPATH=str(REPO)))
            wall = time.perf_counter() - t0
            if res.returncode != 0:
                print(res.stderr[-3000:])
                return 1
            paths = OutputPaths.under(Path(data), default_slug(MODEL))
            out = pd.read_parquet(paths.parquet)
            perf = json.loads(paths.manifest.read_text())["performance"]
        ceiling, ceiling_cpu = sdk_only(port, args.n, args.concurrency)
    finally:
        fake.terminate()
        fake.wait(10)
    start = min(datetime.fromisoformat(s) for s in out.started_at)
    end = max(datetime.fromisoformat(s) for s in out.finished_at)
    span = (end - start).total_seconds()
    rate = len(out) / span
    grouped, single = store_commit_rate()
    transport = transport_name(make_client("http://127.0.0.1:1/v1", "x"))
    load = os.getloadavg()
    print(f"requests            {len(out):,} ok={int((out.status == 'ok').sum()):,}")
    print(f"send phase          {span:.2f} s (whole command {wall:.2f} s incl. start-up)")
    print(f"throughput          {rate:.1f} requests/s")
    print(f"bound               {bound:.0f} requests/s (concurrency {args.concurrency} / "
          f"latency {args.latency:g} s)")
    print(f"fraction of bound   {rate / bound:.1%}  (target >= 85%)")
    print(f"client CPU          {perf['client_cpu_ms_per_request']:.2f} ms per request "
          f"(process CPU during the send phase / requests)")
    print(f"mean latency_s      {out.latency_s.mean() * 1000:.1f} ms per request "
          f"(server adds {args.latency * 1000:.0f} ms)")
    print(f"SDK alone           {ceiling:.1f} requests/s = {ceiling / bound:.1%} of bound, "
          f"{ceiling_cpu:.2f} ms CPU per request (AsyncOpenAI + complete(), no store, "
          f"no progress; transport {transport})")
    print(f"machine load        {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1/5/15 min, 2 cores)")
    print(f"store alone         {grouped:,.0f} results/s with group commits; "
          f"{single:,.0f} commits/s one per result (synchronous=FULL)")
    return 0 if rate / bound >= 0.85 else 1


if __name__ == "__main__":
    sys.exit(main())
