"""Prompts/s of the bundled SmolLM2-135M-Instruct under llama.cpp for several settings.

Why: the full 48,546-prompt run must fit in <= 3 h on 2 cores (>= 4.5 prompts/s). Settings
varied: backend (llama-cpp-python's server, one request at a time per process; llama.cpp's
llama-server, which decodes its slots' requests in one batch), server processes x threads per
process, slots, client concurrency, max_tokens, and prompt order (the first prompts in
collect's send order, so llama.cpp reuses the KV cache of the shared prefix as in a real run,
versus shuffled). Each setting answers the same real prompts. "usable" = the upstream
analysis parser extracts a number (rupeebias_core.parsing.upstream), the number the metrics
need.

    python bench/local_throughput.py [--n 40] [--quick] [--backend both|llama-server|...]

llama-server settings need the binary (`python -m precompute build-llama-server`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from precompute.client import ChatRequest, RetryPolicy, complete, make_client  # noqa: E402
from precompute.serve_local import (  # noqa: E402
    MODEL_ALIAS,
    LocalServer,
    find_gguf,
    find_llama_server,
)


@dataclass(frozen=True)
class Setting:
    processes: int
    threads: int
    concurrency: int
    max_tokens: int
    order: str = "grouped"
    backend: str = "llama-cpp-python"
    slots: int = 1


def prompts(n: int, send: str = "blocks") -> list[tuple[str, str, str]]:
    """The first n prompts as (task, system, user) in the order `collect --order <send>` sends
    them: the prefix reuse a local server gets depends on that order, so a random sample
    would misstate a real run's throughput."""
    from precompute.selection import Selection, load_selection, send_order

    frame = load_selection(Selection(condition="all"))
    position = send_order(frame, send, seed=42)
    frame = frame.assign(_pos=[position[(i, c)] for i, c in
                               zip(frame["id"], frame["condition"], strict=True)])
    first = frame.sort_values("_pos").head(n)
    return [(r.task, r.system_prompt, r.prompt) for r in first.itertuples()]


async def run_setting(urls: tuple[str, ...], items: list[tuple[str, str, str]],
                      s: Setting) -> dict[str, float]:
    from rupeebias_core.parsing.upstream import upstream_value

    clients = [make_client(u, "sk-local", max_connections=s.concurrency + 2) for u in urls]
    order = items if s.order == "grouped" else \
        random.Random(5).sample(items, len(items))
    sem = asyncio.Semaphore(s.concurrency)
    load = [0] * len(clients)
    policy = RetryPolicy(timeout_s=300, max_attempts=2)

    async def one(task: str, system: str, user: str) -> tuple[str, object]:
        i = min(range(len(clients)), key=lambda k: load[k])
        load[i] += 1
        try:
            req = ChatRequest.chat(MODEL_ALIAS, user, system, max_tokens=s.max_tokens)
            return task, await complete(clients[i], req, policy, semaphore=sem)
        finally:
            load[i] -= 1

    t0 = time.perf_counter()
    results = await asyncio.gather(*(one(*t) for t in order))
    wall = time.perf_counter() - t0
    for c in clients:
        await c.close()
    ok = [(t, r) for t, r in results if r.status == "ok"]  # type: ignore[attr-defined]
    usable = sum(upstream_value(t, r.content) is not None for t, r in ok)  # type: ignore
    lengths = [r.tokens_completion or 0 for _, r in ok]  # type: ignore[attr-defined]
    cut = sum(r.finish_reason == "length" for _, r in ok)  # type: ignore[attr-defined]
    rate = len(items) / wall
    return {"rate": rate, "usable_frac": usable / len(items), "usable_per_h": rate * 3600 *
            usable / len(items), "mean_out": statistics.fmean(lengths) if lengths else 0.0,
            "cut": cut / len(items), "errors": len(items) - len(ok)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=40, help="prompts per setting (default 40)")
    ap.add_argument("--quick", action="store_true", help="only three settings")
    ap.add_argument("--processes-threads", action="store_true",
                    help="only 1x2 against 2x1 processes x threads (llama-cpp-python, "
                         "max_tokens 40): the choice for a bigger model; point "
                         "$RUPEEBIAS_LOCAL_GGUF at its file")
    ap.add_argument("--backend", choices=("both", "llama-cpp-python", "llama-server"),
                    default="both")
    ap.add_argument("--send-order", choices=("blocks", "id"), default="blocks",
                    help="which of collect's send orders the prompts follow (default blocks)")
    args = ap.parse_args()
    items = prompts(args.n, args.send_order)
    py = "llama-cpp-python"
    srv = "llama-server"
    grid = [
        Setting(1, 1, 1, 48), Setting(1, 2, 1, 48), Setting(1, 2, 2, 48),
        Setting(2, 1, 2, 48), Setting(2, 1, 4, 48), Setting(2, 1, 2, 48, "shuffled"),
        Setting(3, 1, 3, 48),
        Setting(2, 1, 2, 16), Setting(2, 1, 2, 24), Setting(2, 1, 2, 96),
        Setting(1, 2, 1, 24),
        Setting(1, 2, 1, 40, backend=srv, slots=1), Setting(1, 2, 4, 40, backend=srv, slots=4),
        Setting(1, 2, 8, 40, backend=srv, slots=8),
        Setting(1, 2, 16, 40, backend=srv, slots=16),
        Setting(1, 2, 32, 40, backend=srv, slots=32),
        Setting(2, 1, 16, 40, backend=srv, slots=8),
        Setting(1, 2, 16, 40, "shuffled", backend=srv, slots=16),
        Setting(1, 2, 16, 24, backend=srv, slots=16), Setting(1, 2, 16, 64, backend=srv, slots=16),
    ]
    if args.quick:  # the candidates for the full run
        grid = [Setting(2, 1, 2, 40), Setting(1, 2, 8, 40, backend=srv, slots=8),
                Setting(1, 2, 16, 40, backend=srv, slots=16)]
    if args.processes_threads:
        grid = [Setting(1, 2, 1, 40), Setting(2, 1, 2, 40), Setting(2, 1, 4, 40)]
    if args.backend != "both":
        grid = [g for g in grid if g.backend == args.backend]
    if any(g.backend == srv for g in grid) and find_llama_server() is None:
        print("no llama-server binary: skipping its settings (python -m precompute "
              "build-llama-server)", file=sys.stderr)
        grid = [g for g in grid if g.backend == py]
    load = os.getloadavg()
    print(f"{len(items)} prompts per setting; 2 cores (load {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}); {find_gguf().name}\n")
    head = (f"{'backend':>16} {'procs':>5} {'thr':>3} {'slots':>5} {'conc':>4} {'max_tok':>7} "
            f"{'order':>8} | "
            f"{'prompts/s':>9} {'mean out':>8} {'cut':>5} {'usable':>6} {'usable/h':>9} "
            f"{'48,546 in':>9}")
    print(head)
    print("-" * len(head))
    best: tuple[float, Setting] | None = None
    by_server: dict[tuple[str, int, int, int], list[Setting]] = {}
    for s in grid:
        by_server.setdefault((s.backend, s.processes, s.threads, s.slots), []).append(s)
    for (backend, procs, threads, slots), settings in by_server.items():
        with LocalServer(processes=procs, threads=threads, backend=backend,
                         slots=slots) as server:
            asyncio.run(run_setting(server.base_urls, items[:2 * procs],
                                    Setting(procs, threads, procs, 8)))  # warm-up
            for s in settings:
                m = asyncio.run(run_setting(server.base_urls, items, s))
                hours = 48_546 / m["rate"] / 3600
                print(f"{s.backend:>16} {s.processes:>5} {s.threads:>3} {s.slots:>5} "
                      f"{s.concurrency:>4} {s.max_tokens:>7} "
                      f"{s.order:>8} | {m['rate']:>9.2f} {m['mean_out']:>8.1f} "
                      f"{m['cut']:>5.0%} {m['usable_frac']:>6.0%} {m['usable_per_h']:>9,.0f} "
                      f"{hours:>8.2f}h" + (f"  errors={m['errors']}" if m["errors"] else ""),
                      flush=True)
                if best is None or m["usable_per_h"] > best[0]:
                    best = (m["usable_per_h"], s)
    if best:
        print(f"\nbest usable-responses/hour: {best[0]:,.0f} with {best[1]}")
    load = os.getloadavg()
    print(f"load at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
