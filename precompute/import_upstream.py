"""`python -m precompute import-upstream PATH`: the authors' released `runs/` into our format.

Layout read: ``runs/<model_slug>/<task>/<task>_<lang>[_fairness]_<slug>_0.0[_retried].jsonl``.
File choice follows the authors' loader (spec §3.3): per (task, language, condition) prefer the
``_retried`` file, skip names with ``smoke_test`` or ``_revalidated`` (and ``implicit``), and a
``_fairness_`` name is the fairness condition; among equals, the first in sorted order.

Rows are kept verbatim, *including* upstream's ``ERROR: ...`` / ``TIMEOUT: ...`` response
strings, because the published numbers parse them (spec §3.2 hazard); such rows also get
``error`` set and ``status = 'error'`` so a corrected analysis can drop them. The first row
per id in file order wins (files are in completion order); duplicates, rows without an id and
unreadable lines are counted and listed in the report and the manifest — never dropped silently.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from precompute.client import utc_now_iso
from precompute.manifest import environment, sha256_text, write_manifest
from precompute.parquet_io import write_table
from rupeebias_core import benchmark as bm
from rupeebias_core.registry import RESPONSES, DataLayout

TASKS = bm.TASKS
LANGS = bm.LANGUAGES
EXCLUDE = ("smoke_test", "_revalidated", "implicit")
ERROR_PREFIXES = ("ERROR:", "TIMEOUT:")
MAX_LISTED = 50


class UpstreamLayoutError(ValueError):
    """The PATH is not a runs/ folder we can read (reported, exit code 2)."""


def _schema() -> pa.Schema:
    """collect's responses schema plus where each row came from."""
    return pa.schema(list(RESPONSES.schema) + [
        pa.field("source_file", pa.string()), pa.field("source_line", pa.int64()),
    ])


@dataclass(frozen=True)
class ChosenFile:
    task: str
    language: str
    condition: str
    path: Path
    skipped: tuple[Path, ...]


def choose_files(model_dir: Path) -> list[ChosenFile]:
    """The file the authors' loader would read for each (task, language, condition)."""
    chosen: list[ChosenFile] = []
    for task in TASKS:
        tdir = model_dir / task
        if not tdir.is_dir():
            continue
        names = sorted(p for p in tdir.iterdir() if p.is_file() and p.suffix == ".jsonl")
        for lang in LANGS:
            for condition in ("standard", "fairness"):
                pool = [p for p in names if p.name.startswith(f"{task}_{lang}_")
                        and re.search(r"_0\.0(_retried)?\.jsonl$", p.name)
                        and not any(x in p.name for x in EXCLUDE)
                        and (("fairness" in p.name) == (condition == "fairness"))]
                if not pool:
                    continue
                retried = [p for p in pool if p.name.endswith("_0.0_retried.jsonl")]
                pick = (retried or pool)[0]
                others = tuple(p for p in names if p.name.startswith(f"{task}_{lang}_")
                               and p != pick
                               and (("fairness" in p.name) == (condition == "fairness")))
                chosen.append(ChosenFile(task, lang, condition, pick, others))
    return chosen


def _int(v: object) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v == v:
        return int(v)
    return None


def _float(v: object) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float) and v == v:
        return float(v)
    return None


def _str(v: object) -> str | None:
    return v if isinstance(v, str) else None


@dataclass
class FileReport:
    file: str
    sha256: str
    task: str
    language: str
    condition: str
    rows_read: int = 0
    rows_kept: int = 0
    duplicates: list[str] = field(default_factory=list)
    missing_id_lines: list[int] = field(default_factory=list)
    unreadable_lines: list[int] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "file": self.file, "sha256": self.sha256, "task": self.task,
            "language": self.language, "condition": self.condition,
            "rows_read": self.rows_read, "rows_kept": self.rows_kept,
            "n_duplicates": len(self.duplicates), "duplicates": self.duplicates[:MAX_LISTED],
            "n_missing_id": len(self.missing_id_lines),
            "missing_id_lines": self.missing_id_lines[:MAX_LISTED],
            "n_unreadable": len(self.unreadable_lines),
            "unreadable_lines": self.unreadable_lines[:MAX_LISTED],
            "skipped_files": self.skipped_files,
        }


def read_file(chosen: ChosenFile, slug: str, rel_to: Path
              ) -> tuple[list[dict[str, Any]], FileReport]:
    data = chosen.path.read_bytes()
    rel = chosen.path.relative_to(rel_to).as_posix()
    rep = FileReport(rel, hashlib.sha256(data).hexdigest(), chosen.task, chosen.language,
                     chosen.condition, skipped_files=[p.name for p in chosen.skipped])
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        rep.rows_read += 1
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict):
                raise ValueError("not an object")
        except ValueError:
            rep.unreadable_lines.append(lineno)
            continue
        rid = rec.get("id")
        if not isinstance(rid, str) or not rid.strip():
            rep.missing_id_lines.append(lineno)
            continue
        if rid in seen:
            rep.duplicates.append(rid)
            continue
        seen.add(rid)
        rows.append(_row(rec, chosen, slug, rel, lineno))
    rep.rows_kept = len(rows)
    return rows, rep


def _row(rec: dict[str, Any], chosen: ChosenFile, slug: str, rel: str, lineno: int
         ) -> dict[str, Any]:
    response = _str(rec.get("response"))
    finish = _str(rec.get("finish_reason"))
    is_error = finish == "error" or (response or "").lstrip().startswith(ERROR_PREFIXES)
    empty = response is None or not response.strip()
    system = _str(rec.get("system_prompt"))
    prompt = _str(rec.get("prompt"))
    return {
        "id": rec["id"], "condition": chosen.condition, "model": slug,
        "response": response, "finish_reason": finish,
        "error": response if is_error else ("empty response" if empty else None),
        "reasoning_content": _str(rec.get("reasoning_content")),
        "model_returned": None,
        "system_fingerprint": None,
        "temperature": _float(rec.get("temperature")),
        "max_tokens": None,
        "system_prompt_sha256": sha256_text(system) if system is not None else None,
        "tokens_prompt": _int(rec.get("tokens_prompt")),
        "tokens_completion": _int(rec.get("tokens_completion")),
        "latency_s": _float(rec.get("request_duration")),
        "started_at": None,
        "finished_at": _str(rec.get("created_at")),
        "sample_index": 0,
        "task": _str(rec.get("task")) or chosen.task,
        "language": _str(rec.get("language")) or chosen.language,
        "status": "error" if is_error else ("empty" if empty else "ok"),
        "model_requested": _str(rec.get("model")),
        "reasoning_effort": _str(rec.get("reasoning_effort")),
        "prompt_sha256": sha256_text(prompt) if prompt is not None else None,
        "attempts": None, "n_sends": None, "http_status": None, "response_id": None,
        "cache_key": None, "source_file": rel, "source_line": lineno,
    }


def import_model(model_dir: Path, runs_root: Path, out_dir: Path) -> dict[str, Any]:
    """Import one model folder; returns its manifest (also written beside the Parquet)."""
    slug = model_dir.name
    chosen = choose_files(model_dir)
    if not chosen:
        raise UpstreamLayoutError(f"{model_dir} holds no run files in the released layout "
                           "(<task>/<task>_<lang>[_fairness]_<slug>_0.0[_retried].jsonl)")
    rows: list[dict[str, Any]] = []
    reports: list[FileReport] = []
    for c in chosen:
        file_rows, rep = read_file(c, slug, runs_root)
        rows.extend(file_rows)
        reports.append(rep)
    # The same (id, condition) from two files would be a layout error: keep the first, report.
    unique: dict[tuple[str, str], dict[str, Any]] = {}
    cross_dups: list[str] = []
    for r in rows:
        key = (r["id"], r["condition"])
        if key in unique:
            cross_dups.append(f"{r['id']} ({r['condition']}) in {r['source_file']}")
            continue
        unique[key] = r
    ordered = [unique[k] for k in sorted(unique)]
    schema = _schema()
    table = pa.Table.from_pydict({f.name: [r.get(f.name) for r in ordered] for f in schema},
                                 schema=schema)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_table(table, out_dir / f"{slug}.parquet")
    statuses: dict[str, int] = {}
    for r in ordered:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    manifest = {
        "kind": "rupeebias-import-upstream",
        "model": slug,
        "source_folder": model_dir.name,
        "imported_at": utc_now_iso(),
        "files": [r.summary() for r in reports],
        "counts": {
            "rows_read": sum(r.rows_read for r in reports),
            "rows_in_parquet": len(ordered),
            "duplicates_within_files": sum(len(r.duplicates) for r in reports),
            "rows_missing_id": sum(len(r.missing_id_lines) for r in reports),
            "unreadable_lines": sum(len(r.unreadable_lines) for r in reports),
            "duplicates_across_files": len(cross_dups),
            "by_status": dict(sorted(statuses.items())),
        },
        "duplicates_across_files": cross_dups[:MAX_LISTED],
        "environment": environment(),
    }
    write_manifest(out_dir / f"{slug}.manifest.json", manifest)
    return manifest


def find_model_dirs(root: Path, models: Iterable[str] | None) -> list[Path]:
    if not root.is_dir():
        raise UpstreamLayoutError(f"runs folder not found: {root}")
    dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if models:
        wanted = list(dict.fromkeys(models))
        missing = [m for m in wanted if not (root / m).is_dir()]
        if missing:
            raise UpstreamLayoutError(f"no model folder(s) {missing} under {root}; found "
                               f"{[d.name for d in dirs]}")
        dirs = [root / m for m in wanted]
    dirs = [d for d in dirs if any((d / t).is_dir() for t in TASKS)]
    if not dirs:
        raise UpstreamLayoutError(f"{root} has no <model_slug>/<task>/ folders (is it the runs/ "
                           "folder of the authors' release?)")
    return dirs


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="the authors' runs/ folder")
    parser.add_argument("--data", type=Path, default=Path("data"),
                        help="data directory; writes DATA/responses/<slug>.parquet")
    parser.add_argument("--models", nargs="+", default=None, metavar="SLUG",
                        help="only these model folders (default: all)")


def main(args: argparse.Namespace) -> int:
    try:
        models = None
        if args.models:
            models = [m.strip() for v in args.models for m in v.split(",") if m.strip()]
        dirs = find_model_dirs(args.path, models)
        out_dir = DataLayout(Path(args.data)).responses_dir
        for d in dirs:
            m = import_model(d, args.path, out_dir)
            c = m["counts"]
            print(f"{m['model']}: {c['rows_in_parquet']:,} rows from {len(m['files'])} files "
                  f"({c['by_status']}); duplicates {c['duplicates_within_files']:,}, "
                  f"rows without id {c['rows_missing_id']:,}, unreadable lines "
                  f"{c['unreadable_lines']:,}", file=sys.stderr)
            for f in m["files"]:
                if f["n_missing_id"] or f["n_unreadable"]:
                    print(f"  {f['file']}: rows without id at lines {f['missing_id_lines']}, "
                          f"unreadable lines {f['unreadable_lines']}", file=sys.stderr)
    except (UpstreamLayoutError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
