"""Carry a long collect run across sessions without bloating the repository.

Why: a full responses Parquet is ~6 MB and every committed snapshot of it stays in git history
for ever (SmolLM2's 20 snapshots cost 63 MB). Between the few full snapshots that `data/`
ships (`scripts/snapshot_run.py`), a run's progress is committed as **increments**: each
`save` writes only the answers not yet in an earlier increment, so the whole run costs about
one Parquet in history however many sessions it spans. `seed` turns the increments back into
the Parquet that `collect` seeds its store from.

    python scripts/run_progress.py save --run ../run-qwen --slug qwen2.5-coder-1.5b-instruct
    python scripts/run_progress.py seed --run ../run-qwen --slug qwen2.5-coder-1.5b-instruct
    python scripts/run_progress.py status --slug qwen2.5-coder-1.5b-instruct

Increments live in `progress/<slug>/NNNN.parquet` (rows finished ok/empty only, keyed by
(id, condition, cache_key)), each with the manifest it was cut from.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rupeebias_core.registry import DataLayout  # noqa: E402
from scripts.snapshot_run import consistent_copy  # noqa: E402

KEY = ("id", "condition", "cache_key")
FINISHED = ("ok", "empty")


def progress_dir(slug: str, root: Path = REPO / "progress") -> Path:
    return root / slug


def _parts(folder: Path) -> list[Path]:
    return sorted(folder.glob("[0-9][0-9][0-9][0-9].parquet"))


def _keys(table: pa.Table) -> set[tuple[str, str, str]]:
    cols = [table.column(c).to_pylist() for c in KEY]
    return set(zip(*cols, strict=True))


def load_parts(folder: Path) -> pa.Table | None:
    """Every increment, concatenated in order (None when there are none)."""
    parts = [pq.read_table(p) for p in _parts(folder)]
    if not parts:
        return None
    return pa.concat_tables(parts, promote_options="default")


def save(run: Path, slug: str, folder: Path) -> int:
    """Write the run's finished answers that no earlier increment holds; returns their count."""
    with tempfile.TemporaryDirectory() as tmp:
        consistent_copy(run, slug, Path(tmp))
        copied = DataLayout(Path(tmp))
        table = pq.read_table(copied.responses(slug))
        manifest = json.loads(copied.manifest(slug).read_text("utf-8"))
    table = table.filter(pc.is_in(table.column("status"), value_set=pa.array(FINISHED)))
    have = load_parts(folder)
    if have is not None:
        seen = _keys(have)
        mask = [k not in seen for k in zip(*(table.column(c).to_pylist() for c in KEY),
                                            strict=True)]
        table = table.filter(pa.array(mask, type=pa.bool_()))
    if table.num_rows == 0:
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    n = len(_parts(folder)) + 1
    target = folder / f"{n:04d}.parquet"
    pq.write_table(table, target.with_suffix(".tmp"), compression="zstd")
    target.with_suffix(".tmp").replace(target)
    (folder / f"{n:04d}.manifest.json").write_text(json.dumps(manifest, indent=1) + "\n",
                                                    encoding="utf-8")
    return table.num_rows


def seed(run: Path, slug: str, folder: Path) -> int:
    """Write the increments as `run/responses/<slug>.parquet`, for collect to seed from."""
    table = load_parts(folder)
    if table is None:
        raise SystemExit(f"error: no increments in {folder}")
    out = DataLayout(run).responses(slug)
    if out.exists():
        raise SystemExit(f"error: {out} exists; the run folder already holds its answers")
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out, compression="zstd")
    return table.num_rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("save", "seed", "status"))
    ap.add_argument("--run", type=Path, help="the collect run's --data folder")
    ap.add_argument("--slug", required=True)
    ap.add_argument("--progress", type=Path, default=REPO / "progress",
                    help="where increments live (default: progress/ in the repository)")
    args = ap.parse_args()
    folder = progress_dir(args.slug, args.progress)
    if args.action == "status":
        table = load_parts(folder)
        print(f"{args.slug}: {0 if table is None else table.num_rows:,} answers in "
              f"{len(_parts(folder))} increment(s)")
        return 0
    if args.run is None:
        ap.error("--run is required for save and seed")
    n = save(args.run, args.slug, folder) if args.action == "save" else \
        seed(args.run, args.slug, folder)
    print(f"{args.action}: {n:,} answers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
