"""`python -m precompute metrics`: parse every response and write every metric table.

Reads ``DIR/prompts.parquet`` (built in memory when absent) and ``DIR/responses/<model>.parquet``,
writes ``DIR/metrics/<table>.parquet`` (docs/data-format.md). Models are processed in parallel
worker processes; each model's numbers depend only on its own responses and seeds derived from
cell names, so the output is byte-identical whatever ``--workers`` is. Rows of other models or
methods already in ``DIR/metrics`` are kept (so ``--method upstream`` then ``--method corrected``
gives tables holding both), and the cross-model Benjamini–Hochberg step is redone on the merged
tables.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from precompute import local_models
from precompute.parquet_io import write_table
from rupeebias_core.metrics import (
    METHODS,
    TABLE_NAMES,
    benchmark_design,
    compute_model,
    parse_rows,
    to_arrow,
)
from rupeebias_core.metrics.bootstrap import DEFAULT_RESAMPLES
from rupeebias_core.metrics.kendall_w import finalise_kendall
from rupeebias_core.metrics.parsed import PROMPT_COLUMNS
from rupeebias_core.metrics.pipeline import SOURCE
from rupeebias_core.metrics.tables import conform, merge_sorted, sort_keys, sort_table
from rupeebias_core.pair_semantics import Method, check_method
from rupeebias_core.registry import DataLayout
from rupeebias_core.registry.tables import COMPUTED_MODELS

_PROMPTS: pd.DataFrame | None = None  # set in the parent, inherited by forked workers


@dataclass(frozen=True)
class _Settings:
    """What every worker needs besides its model (set in the parent, inherited on fork)."""

    data: Path
    methods: tuple[Method, ...]
    resamples: int


@dataclass(frozen=True)
class ModelTables:
    """One model's tables: Kendall tables as DataFrames (the cross-model BH step needs them),
    every other table already in its Arrow schema (converted in the worker, unsorted)."""

    kendall: dict[str, pd.DataFrame]
    arrow: dict[str, pa.Table]


_SETTINGS: _Settings | None = None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=Path("data"),
                        help="data directory with prompts.parquet and responses/ (default: data)")
    parser.add_argument("--method", choices=[*METHODS, "both"], default="upstream",
                        help="upstream reproduces the published method (default); corrected "
                             "applies our fixes; both writes both")
    parser.add_argument("--models", default=None,
                        help="comma-separated model slugs (default: every responses/*.parquet)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes over models (default: min(2, CPUs, models))")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                        help="bootstrap replicates for Mean Δ%% style CIs (default: 2000)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output directory (default: DATA/metrics)")
    parser.add_argument("--fresh", action="store_true",
                        help="do not keep rows of other models/methods already in the tables")


def load_prompts(data: Path) -> pd.DataFrame:
    """The prompt columns the metrics need, as plain object columns."""
    path = DataLayout(data).prompts
    if path.exists():
        names = set(pq.read_schema(path).names)
        frame = pd.read_parquet(path, columns=[c for c in PROMPT_COLUMNS if c in names])
    else:
        from rupeebias_core.prompts import build_prompts

        frame = build_prompts(condition="all").loc[:, list(PROMPT_COLUMNS)]
    out = pd.DataFrame({c: frame[c].astype(object).where(frame[c].notna(), None)
                        for c in frame.columns if c != "offered_ctc_lpa"})
    if "offered_ctc_lpa" in frame.columns:
        out["offered_ctc_lpa"] = pd.to_numeric(frame["offered_ctc_lpa"]).astype(float)
    return out


def discover_models(data: Path, wanted: str | None) -> list[str]:
    slugs = [f.stem for f in DataLayout(data).response_files()]
    if wanted:
        asked = [s.strip() for s in wanted.split(",") if s.strip()]
        missing = [s for s in asked if s not in slugs]
        if missing:
            raise SystemExit(f"no responses/<model>.parquet for: {', '.join(missing)}")
        slugs = [s for s in slugs if s in asked]
    return slugs


def _read_responses(path: Path) -> pd.DataFrame:
    names = set(pq.read_schema(path).names)
    cols = [c for c in ("id", "condition", "response", "finish_reason", "reasoning_content")
            if c in names]
    frame = pd.read_parquet(path, columns=cols)
    return pd.DataFrame({c: frame[c].astype(object).where(frame[c].notna(), None)
                         for c in frame.columns})


KENDALL = ("kendall_w", "kendall_w_usecase")


#: One unit of work: a model and the methods to compute for it.
Job = tuple[str, tuple[Method, ...]]


def plan_jobs(slugs: Sequence[str], sizes: Sequence[int], methods: tuple[Method, ...],
              workers: int) -> list[Job]:
    """Jobs in the order workers take them: largest models first (a large job started last
    leaves the other workers idle), and, when the models do not divide evenly over the workers,
    the smallest ones split by method so that the last jobs are short. A split model parses its
    responses once per method (a few per cent of its time)."""
    order = sorted(range(len(slugs)), key=lambda n: (-sizes[n], n))
    tail = len(slugs) % workers if workers > 1 and len(methods) > 1 else 0
    whole = [(slugs[n], methods) for n in order[:len(order) - tail]]
    split = [(slugs[n], (m,)) for n in order[len(order) - tail:] for m in methods]
    return whole + split


def model_tables(slug: str | Job) -> ModelTables:
    """Every table of one model for every requested method, or for the job's methods (runs in
    a worker)."""
    settings, prompts = _SETTINGS, _PROMPTS
    if settings is None or prompts is None:
        raise RuntimeError("model_tables runs only inside `metrics` (settings not set)")
    slug, methods = (slug, settings.methods) if isinstance(slug, str) else slug
    started = time.perf_counter()
    responses = _read_responses(DataLayout(settings.data).responses(slug))
    rows = parse_rows(responses, prompts)
    dropped = len(responses) - len(rows)
    frames: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLE_NAMES}
    for method in methods:
        tables = compute_model(rows, slug, method, benchmark_design(), settings.resamples)
        for name, frame in tables.items():
            if len(frame):
                frames[name].append(frame.assign(method=method, source=SOURCE))
    out = ModelTables({}, {})
    order = benchmark_design().sort_order()
    for name, parts in frames.items():
        frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        if name in KENDALL:
            out.kendall[name] = frame
        else:
            out.arrow[name] = to_arrow(name, frame, order)  # sorted here, merged in main
    note = f", {dropped} rows with unknown ids ignored" if dropped else ""
    part = f" ({', '.join(methods)})" if methods != settings.methods else ""
    print(f"  {slug}{part}: {len(responses)} responses{note}, "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    return out


def merge_parts(parts: Sequence[ModelTables]) -> ModelTables:
    """One model's tables from the tables of its jobs (in method order)."""
    if len(parts) == 1:
        return parts[0]
    kendall = {}
    for name in KENDALL:
        frames = [p.kendall[name] for p in parts if len(p.kendall[name])]
        kendall[name] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return ModelTables(kendall, {name: pa.concat_tables([p.arrow[name] for p in parts])
                                 for name in parts[0].arrow})


def run_jobs(slugs: Sequence[str], data: Path, methods: tuple[Method, ...], workers: int
             ) -> list[ModelTables]:
    """Every model's tables, in ``slugs`` order whatever order the jobs ran in."""
    if workers <= 1 or "fork" not in mp.get_all_start_methods():
        return [model_tables(s) for s in slugs]
    layout = DataLayout(data)
    sizes = [pq.read_metadata(layout.responses(s)).num_rows for s in slugs]
    jobs = plan_jobs(slugs, sizes, methods, workers)
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        done = list(pool.map(model_tables, jobs))
    by_slug: dict[str, list[tuple[int, ModelTables]]] = {}
    for (slug, job_methods), tables in zip(jobs, done, strict=True):
        by_slug.setdefault(slug, []).append((methods.index(job_methods[0]), tables))
    return [merge_parts([t for _, t in sorted(by_slug[s], key=lambda x: x[0])]) for s in slugs]


def _keep_old(path: Path, models: Sequence[str], methods: Sequence[str], fresh: bool
              ) -> pa.Table | None:
    """Rows of an existing table that this run does not replace (other models or methods)."""
    if fresh or not path.exists():
        return None
    old = pq.read_table(path)
    if old.num_rows == 0 or "model" not in old.column_names or "method" not in old.column_names:
        return None
    replaced = pc.and_(pc.is_in(old["model"], value_set=pa.array(list(models))),
                       pc.is_in(old["method"], value_set=pa.array(list(methods))))
    return old.filter(pc.invert(pc.fill_null(replaced, False)))


def models_table(layout: DataLayout) -> pa.Table:
    """``metrics/models.parquet``: one row per model with responses in the data directory —
    its label and weights from the local-model catalogue, the model id it was asked for from
    its run manifest — so the explorer names computed models from data, as it does the
    paper's."""
    rows = []
    for path in layout.response_files():
        slug = path.name.removesuffix(".parquet")
        entry = local_models.MODELS.get(slug)
        requested = None
        manifest = layout.manifest(slug)
        if manifest.is_file():
            try:
                value = json.loads(manifest.read_text(encoding="utf-8")).get("model_requested")
                requested = value if isinstance(value, str) else None
            except (OSError, ValueError, AttributeError):
                requested = None
        rows.append({"model": slug, "label": entry.label if entry else slug,
                     "provider_id": requested, "weights": "open" if entry else None,
                     "price_in_usd_per_m": None, "price_out_usd_per_m": None,
                     "source": SOURCE, "method": None, "note": None})
    return pa.Table.from_pylist(rows, schema=COMPUTED_MODELS.schema)


def main(args: argparse.Namespace) -> int:
    global _PROMPTS, _SETTINGS
    data: Path = args.data
    layout = DataLayout(data)
    if not layout.responses_dir.is_dir():
        print(f"error: {layout.responses_dir} does not exist", file=sys.stderr)
        return 1
    slugs = discover_models(data, args.models)
    if not slugs:
        print(f"error: no responses/*.parquet in {data}", file=sys.stderr)
        return 1
    methods: tuple[Method, ...] = (METHODS if args.method == "both"
                                   else (check_method(args.method),))
    out_dir: Path = args.out or layout.metrics_dir
    started = time.perf_counter()
    _PROMPTS = load_prompts(data)
    _SETTINGS = _Settings(data, methods, int(args.resamples))
    workers = args.workers or min(2, os.cpu_count() or 1, len(slugs))
    print(f"metrics: {len(slugs)} model(s), method {args.method}, {workers} worker(s)",
          file=sys.stderr)
    results = run_jobs(slugs, data, methods, workers)
    order = benchmark_design().sort_order()
    out_dir.mkdir(parents=True, exist_ok=True)
    kendall: dict[str, pd.DataFrame] = {}
    for name in KENDALL:
        parts = [r.kendall[name] for r in results if len(r.kendall[name])]
        old = _keep_old(out_dir / f"{name}.parquet", slugs, methods, args.fresh)
        if old is not None and old.num_rows:
            parts.append(old.to_pandas())
        kendall[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if len(kendall["kendall_w"]) and len(kendall["kendall_w_usecase"]):
        kendall["kendall_w"], kendall["kendall_w_usecase"] = finalise_kendall(
            kendall["kendall_w"], kendall["kendall_w_usecase"])
    for name in TABLE_NAMES:
        if name in KENDALL:
            table = to_arrow(name, kendall[name], order)
        else:
            tables = [r.arrow[name] for r in results]
            old = _keep_old(out_dir / f"{name}.parquet", slugs, methods, args.fresh)
            if old is not None:
                tables.append(sort_table(conform(name, old), order, sort_keys(name)))
            table = merge_sorted(tables, order, sort_keys(name))
        write_table(table, out_dir / f"{name}.parquet")
    write_table(models_table(layout), out_dir / Path(COMPUTED_MODELS.path).name)
    print(f"metrics: wrote {len(TABLE_NAMES) + 1} tables to {out_dir} in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0
