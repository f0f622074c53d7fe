"""Deterministic, atomic Parquet writing shared by every pipeline stage.

Byte-identical output for identical input (no pandas index, no creation timestamps in the
metadata, fixed compression) makes reruns diffable and committed data reviewable; writing to a
temporary file and renaming means a killed process never leaves a half-written table behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.replace_schema_metadata(None)


def write_table(frame: pd.DataFrame | pa.Table, path: str | os.PathLike[str]) -> Path:
    """Write ``frame`` to ``path`` atomically with zstd compression and no volatile metadata."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    table = frame if isinstance(frame, pa.Table) else to_arrow(frame)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd", write_statistics=True,
                       store_schema=False)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; published data must be world-readable
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
