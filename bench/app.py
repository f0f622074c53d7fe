"""Benchmark the explorer on a SYNTHETIC data dir with 10+ models: query and page-render times.

    python -m bench.app [--models 12] [--raw-models 12] [--repeat 20] [--keep DIR]

The data are simulated by ``tests/explorer/synthetic.py`` (labelled SYNTHETIC everywhere) in
a temporary directory — never in ``data/``. Reported:

* **queries** — each page's DuckDB queries run directly on a fresh cursor (no Streamlit
  cache), p50/p95 per query and per page (sum of that page's queries). Target: p50 ≤ 50 ms.
* **renders** — AppTest runs of each page through ``app.py``: the first render in the process
  (imports, connection, empty caches), then p50/p95 of *uncached* renders (query cache cleared
  before every run: what a reader pays for a new filter) and of *cached* renders (same view
  again). Target: each page ≤ 1 s.

Results go to stdout (markdown) and ``bench/out/app.json``. Timings depend on the machine and
its load; the JSON records ``os.getloadavg()`` next to them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from explorer import data, vocab  # noqa: E402
from rupeebias_core.registry import DataLayout  # noqa: E402
from tests.explorer import synthetic  # noqa: E402

PAGES = {
    "overview": "pages/overview.py", "who_gets_less": "pages/who_gets_less.py",
    "axes_use_cases": "pages/axes_use_cases.py",
    "language_shift": "pages/language_shift.py", "identifiers": "pages/identifiers.py",
    "consistency": "pages/consistency.py", "pair_browser": "pages/pair_browser.py",
    "methodology": "pages/methodology.py",
}
Query = Callable[[data.Store], pd.DataFrame]
SLOT = {"task": "salary_increment_estimation", "language": "hinglish", "profile": "R14",
        "qv": "Q2", "axis": "Region", "condition": "standard"}  # a 30-identifier slot
SLOT_IDS: list[str] = []


def page_queries(models: tuple[str, ...], raw_model: str) -> dict[str, dict[str, Query]]:
    """The queries each page issues on its default view (mirrors the page code)."""
    sel = (("model", models), ("method", ("upstream",)),
           ("source_kind", ("published", "computed")))

    def q(table: str, *extra: tuple[str, tuple[str, ...]]) -> Query:
        filters = tuple(sorted((*sel, *extra)))
        return lambda st_: data.select_rows(st_, table, filters)

    langs = ("en", "hinglish")
    return {
        "overview": {
            "models": data.models_query,
            "headline": lambda st_: data.select_rows(st_, "leaderboard", (
                ("language", ("all",)), ("method", ("upstream",)),
                ("source_kind", ("published",)))),
            "leaderboard": q("leaderboard"),
        },
        "who_gets_less": {
            "identity_effects": lambda st_: data.select_rows(st_, "identity_effects", (
                ("axis", ("Caste",)), ("language", ("en",)), ("method", ("upstream",)),
                ("model", (raw_model,)), ("task", ("salary_estimation",)))),
            "missingness": lambda st_: data.select_rows(st_, "missingness", (
                ("axis", ("Caste",)), ("language", ("en",)), ("method", ("upstream",)),
                ("model", (raw_model,)), ("task", ("salary_estimation",)))),
            "gap_decomposition": lambda st_: data.select_rows(st_, "gap_decomposition", (
                ("axis", ("Caste", "all")), ("language", ("en",)), ("method", ("upstream",)),
                ("model", (raw_model,)), ("task", ("salary_estimation",))))},
        "axes_use_cases": {"delta cells": q("delta", ("language", ("en",)),
                                            ("task", (*vocab.TASKS, "all")),
                                            ("axis", vocab.AXES))},
        "language_shift": {"language_shift": q("language_shift"),
                           "tables 3/4": q("delta", ("task", ("all",)), ("axis", vocab.AXES),
                                           ("language", langs))},
        "identifiers": {"deviation": q("identifier_deviation", ("axis", vocab.AXES),
                                       ("language", ("all",)), ("task", ("all",))),
                        "canonical gaps": q("canonical_gaps", ("axis", vocab.AXES),
                                            ("task", vocab.TASKS)),
                        "max gaps": q("max_gaps", ("axis", vocab.AXES), ("task", vocab.TASKS))},
        "consistency": {"kendall_w": q("kendall_w", ("language", langs)),
                        "kendall_w_usecase": q("kendall_w_usecase", ("language", langs),
                                               ("axis", ("Mean",))),
                        "quadrant cells": q("delta", ("language", langs), ("axis", vocab.AXES)),
                        "qv": q("qv_robustness", ("language", langs)),
                        "merit": q("merit_sensitivity", ("language", langs)),
                        "rank agreement": q("profile_rank_agreement", ("language", langs)),
                        "fairness": q("fairness_ablation", ("language", langs)),
                        "parse health": q("parse_health")},
        "pair_browser": {"models": data.models_query,
                         "slot prompts": lambda st_: data.slot_prompts(st_, SLOT),
                         "slot parsed": lambda st_: data.slot_parsed(st_, raw_model, SLOT),
                         "slot responses": lambda st_: data.slot_responses(
                             st_, raw_model, "standard", SLOT_IDS)},
        "methodology": {"models": data.models_query,
                        "dataset composition": lambda st_: data.select_rows(
                            st_, "dataset_composition", ())},
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def time_queries(root: Path, models: tuple[str, ...], raw_model: str, repeat: int) -> dict:
    st_ = data.build_store(root)
    SLOT_IDS[:] = list(data.slot_prompts(st_, SLOT)["id"])
    out: dict[str, dict] = {}
    for page, queries in page_queries(models, raw_model).items():
        per_query = {name: [] for name in queries}
        totals = []
        for _ in range(repeat):
            total = 0.0
            for name, fn in queries.items():
                t0 = time.perf_counter()
                rows = len(fn(st_))
                dt = time.perf_counter() - t0
                per_query[name].append(dt)
                total += dt
            totals.append(total)
        out[page] = {"queries": {n: {"p50_ms": 1e3 * pct(v, .5), "p95_ms": 1e3 * pct(v, .95)}
                                 for n, v in per_query.items()},
                     "page_p50_ms": 1e3 * pct(totals, .5), "page_p95_ms": 1e3 * pct(totals, .95),
                     "rows_last": rows}
    return out


def time_renders(root: Path, repeat: int) -> dict:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ[data.DATA_ENV] = str(root)
    out: dict[str, dict] = {}
    first_in_process = True
    for page, path in PAGES.items():
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
        if page != "overview":
            at.switch_page(path)
        t0 = time.perf_counter()
        at.run()
        first = time.perf_counter() - t0
        if at.exception:
            raise SystemExit(f"{page}: {at.exception}")
        uncached, cached, cpu = [], [], []
        for _ in range(repeat):
            st.cache_data.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            at.run()
            uncached.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        for _ in range(repeat):
            t0 = time.perf_counter()
            at.run()
            cached.append(time.perf_counter() - t0)
        out[page] = {"first_s": first, "first_in_process": first_in_process,
                     "uncached_p50_s": pct(uncached, .5), "uncached_p95_s": pct(uncached, .95),
                     "uncached_cpu_p50_s": pct(cpu, .5),
                     "cached_p50_s": pct(cached, .5), "cached_p95_s": pct(cached, .95)}
        first_in_process = False
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--raw-models", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="build the data dir here and keep it")
    args = parser.parse_args(argv)

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="rupeebias-bench-")
    root = args.keep or Path(tmp.name)  # type: ignore[union-attr]
    t0 = time.perf_counter()
    info = synthetic.build(root, n_models=args.models, raw_models=args.raw_models,
                           raw_tasks=vocab.TASKS)
    build_s = time.perf_counter() - t0
    models = tuple(data.models_query(data.build_store(root))["model"])
    parsed_rows = len(pd.read_parquet(DataLayout(root).parsed, columns=["id"]))
    print(f"SYNTHETIC data dir {root}: {len(models)} models ({args.models} synthetic computed, "
          f"{len(models) - args.models} published), {parsed_rows:,} parsed rows; "
          f"published tables: {info['published']}; built in {build_s:.1f} s")

    queries = time_queries(root, models, info["raw_models"][0], args.repeat)
    renders = time_renders(root, max(3, args.repeat // 4))

    print("\n| page | queries p50 / p95 (ms) | slowest query p50 (ms) | first render (s) | "
          "uncached render p50 / p95 (s) | uncached CPU p50 (s) | cached render p50 / p95 (s) |")
    print("|---|---|---|---|---|---|---|")
    for page in PAGES:
        qd, rd = queries[page], renders[page]
        slow = max(qd["queries"].items(), key=lambda kv: kv[1]["p50_ms"])
        print(f"| {page} | {qd['page_p50_ms']:.1f} / {qd['page_p95_ms']:.1f} | "
              f"{slow[0]}: {slow[1]['p50_ms']:.1f} | {rd['first_s']:.2f}"
              f"{' (incl. imports)' if rd['first_in_process'] else ''} | "
              f"{rd['uncached_p50_s']:.2f} / {rd['uncached_p95_s']:.2f} | "
              f"{rd['uncached_cpu_p50_s']:.2f} | "
              f"{rd['cached_p50_s']:.2f} / {rd['cached_p95_s']:.2f} |")
    worst_q = max(v["p50_ms"] for p in queries.values() for v in p["queries"].values())
    worst_r = max(r["uncached_p50_s"] for r in renders.values())
    print(f"\nTargets: every query p50 ≤ 50 ms → worst {worst_q:.1f} ms "
          f"({'met' if worst_q <= 50 else 'NOT met'}); every page ≤ 1 s → worst uncached p50 "
          f"{worst_r:.2f} s ({'met' if worst_r <= 1 else 'NOT met'}). "
          f"Load average during the run: {os.getloadavg()}")
    out_dir = REPO / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "app.json").write_text(json.dumps({
        "data": "SYNTHETIC (tests/explorer/synthetic.py)", "models": len(models),
        "synthetic_models": args.models, "parsed_rows": parsed_rows, "queries": queries,
        "renders": renders, "loadavg": os.getloadavg(), "cpus": os.cpu_count(),
        "repeat": args.repeat}, indent=2))
    if tmp is not None:
        tmp.cleanup()
    return 0 if worst_q <= 50 and worst_r <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
