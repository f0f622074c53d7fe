"""Copy a running (or finished) collect's answers into the repository's data/ and refresh
everything derived from them: metrics, and the run-status paragraph of docs/methodology.md.

Why: the shipped SmolLM2 run takes many hours, so it runs with its own data folder outside the
repository (never touching files a commit is reading) and progress is committed from snapshots.
collect rewrites its Parquet and then a manifest describing exactly that Parquet at every
flush; this script copies the pair only when they agree, so a snapshot is always consistent.

    python scripts/snapshot_run.py --run /work/run [--slug SLUG]  (default: the bundled model)
    git add data/responses data/metrics docs/methodology.md && git commit -m "..."
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from precompute import local_models  # noqa: E402
from rupeebias_core.registry import DataLayout  # noqa: E402


def consistent_copy(run: Path, slug: str, dest: Path, attempts: int = 20) -> int:
    """Copy <slug>.parquet and its manifest from the run's data dir into the data dir ``dest``
    when they agree."""
    src, out = DataLayout(run), DataLayout(dest)
    for _ in range(attempts):
        with tempfile.TemporaryDirectory() as tmp:
            parquet, manifest = Path(tmp) / "p", Path(tmp) / "m"
            shutil.copyfile(src.manifest(slug), manifest)
            shutil.copyfile(src.responses(slug), parquet)
            claimed = json.loads(manifest.read_text())["counts"]["rows_in_parquet"]
            rows = pq.ParquetFile(parquet).metadata.num_rows
            if claimed == rows:
                out.responses_dir.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(parquet, out.responses(slug))
                shutil.copyfile(manifest, out.manifest(slug))
                return rows
        time.sleep(1.0)  # caught between the Parquet and the manifest write: try again
    raise SystemExit(f"error: {src.responses_dir} never held a matching Parquet and manifest")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True, help="the running collect's --data")
    ap.add_argument("--slug", default=local_models.DEFAULT.slug)
    args = ap.parse_args()
    data = REPO / "data"
    rows = consistent_copy(args.run, args.slug, data)
    print(f"copied {rows:,} rows", file=sys.stderr)
    py = sys.executable
    for cmd in (["metrics", "--data", str(data), "--method", "both"],
                ["status", "--data", str(data), "--slug", args.slug,
                 "--write-doc", str(REPO / "docs" / "methodology.md")]):
        subprocess.run([py, "-m", "precompute", *cmd], cwd=REPO, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
