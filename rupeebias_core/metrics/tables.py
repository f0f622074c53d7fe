"""The deterministic Arrow form of the ``metrics/*.parquet`` tables (docs/data-format.md): the
registry's column order and types (``rupeebias_core.registry.computed``), rows sorted in
benchmark order, no pandas metadata.

Fixing all three is what makes the same inputs give byte-identical files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rupeebias_core.registry import computed

#: The ``model, source, method`` columns every metric table starts with, and each table's own
#: columns after them: declared once, in the table registry.
PREFIX: tuple[tuple[str, pa.DataType], ...] = computed.PREFIX
SCHEMAS: Mapping[str, tuple[tuple[str, pa.DataType], ...]] = computed.SPECS
TABLE_NAMES: tuple[str, ...] = tuple(SCHEMAS)

#: Row order: these columns first (when present), then every other key in schema order.
SORT_KEYS: tuple[str, ...] = ("method", "model", "condition", "language", "task", "axis",
                              "identifier_value", "id", "row_index")
#: ``parsed`` rows: the id already fixes task, language, axis and identifier.
PARSED_SORT_KEYS: tuple[str, ...] = ("method", "model", "condition", "id", "row_index")
_LAST = ("all", "Mean")


def columns(name: str) -> list[str]:
    return [c for c, _ in (*PREFIX, *SCHEMAS[name])]


def _rank_column(column: pa.ChunkedArray, order: Sequence[str], col: str) -> pa.Array:
    """Benchmark rank of each value (unknown values after all known ones)."""
    seq = [*order, *_LAST] if col in ("language", "task", "axis") else list(order)
    seq = list(dict.fromkeys(seq))
    idx = pc.index_in(column, value_set=pa.array(seq, type=column.type))
    return pc.fill_null(idx, len(seq))


def sort_table(table: pa.Table, order: Mapping[str, Sequence[str]],
               keys: Sequence[str] | None = None) -> pa.Table:
    """Rows sorted by ``keys`` (default :data:`SORT_KEYS`, ``parsed``-style tables may pass
    fewer): benchmark order via ``order`` (``all``/``Mean`` last), then plain string order.
    Arrow's sort is stable, so the result is fully determined by the rows."""
    if table.num_rows == 0:
        return table
    cols: list[pa.Array | pa.ChunkedArray] = []
    names: list[str] = []
    for col in (k for k in (keys or SORT_KEYS) if k in table.column_names):
        if col in order:
            cols.append(_rank_column(table.column(col), order[col], col))
            names.append(f"_rank_{col}")
        cols.append(table.column(col))
        names.append(col)
    if not cols:
        return table
    key_table = pa.Table.from_arrays(cols, names=names)
    idx = pc.sort_indices(key_table, sort_keys=[(n, "ascending") for n in names])
    return table.take(idx)


def merge_sorted(parts: Sequence[pa.Table], order: Mapping[str, Sequence[str]],
                 keys: Sequence[str] | None = None) -> pa.Table:
    """``sort_table(pa.concat_tables(parts), order, keys)`` for parts already sorted by
    :func:`sort_table`: their (method, model) runs put in order instead of sorting every row
    again (the ``parsed`` table of nine models, 850k rows, takes ~1 s to sort). The same rows in
    the same order, since the sort is stable and a run's rows all come from one part; a full
    sort when a (method, model) is in several parts or one is null."""
    keys = tuple(keys or SORT_KEYS)
    tables = [p for p in parts if p.num_rows]
    if not tables or keys[:2] != ("method", "model") or any(
            p.column("method").null_count or p.column("model").null_count for p in tables):
        return sort_table(pa.concat_tables(parts), order, keys)
    ranks = {col: {v: n for n, v in enumerate(dict.fromkeys(order.get(col, ())))}
             for col in ("method", "model")}  # as sort_table ranks them (unknown: last)

    def run_key(method: str, model: str) -> tuple[int, str, int, str]:
        return (ranks["method"].get(method, len(ranks["method"])), method,
                ranks["model"].get(model, len(ranks["model"])), model)

    runs: dict[tuple[int, str, int, str], pa.Table] = {}
    for part in tables:
        n = part.num_rows
        method, model = part.column("method"), part.column("model")
        changed = pc.or_(pc.not_equal(method.slice(1), method.slice(0, n - 1)),
                         pc.not_equal(model.slice(1), model.slice(0, n - 1)))
        starts = [0, *(pc.indices_nonzero(changed).to_numpy() + 1).tolist()]
        for start, stop in zip(starts, [*starts[1:], n], strict=True):
            key = run_key(method[start].as_py(), model[start].as_py())
            if key in runs:
                return sort_table(pa.concat_tables(parts), order, keys)
            runs[key] = part.slice(start, stop - start)
    return pa.concat_tables([runs[k] for k in sorted(runs)])


def _string_array(s: pd.Series) -> pa.Array:
    try:
        return pa.array(s.to_numpy(object), type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        obj = s.astype(object).where(s.notna(), None).to_numpy(object)
        return pa.array([None if v is None else str(v) for v in obj], type=pa.string())


def schema(name: str) -> pa.Schema:
    """The file's exact Arrow schema, as the registry declares it."""
    return computed.FILES[name].schema


def to_arrow(name: str, frame: pd.DataFrame, order: Mapping[str, Sequence[str]] | None = None
             ) -> pa.Table:
    """The table in schema column order and types (missing columns null, NaN stored as null),
    sorted when ``order`` is given."""
    fields = (*PREFIX, *SCHEMAS[name])
    df = frame
    arrays = []
    for col, typ in fields:
        if col not in df.columns:
            arrays.append(pa.nulls(len(df), typ))
            continue
        s = df[col]
        if pa.types.is_string(typ):
            arrays.append(_string_array(s))
        elif pa.types.is_floating(typ):
            vals = pd.to_numeric(s, errors="coerce").to_numpy(float)
            arrays.append(pa.array(vals, type=typ, from_pandas=True))
        elif pa.types.is_integer(typ):
            arrays.append(pa.array(pd.to_numeric(s, errors="coerce").astype("Int64"), type=typ))
        else:
            arrays.append(pa.array(s.astype("boolean"), type=typ))
    table = pa.Table.from_arrays(arrays, schema=schema(name))
    return sort_table(table, order, sort_keys(name)) if order is not None else table


def sort_keys(name: str) -> tuple[str, ...]:
    return PARSED_SORT_KEYS if name == "parsed" else SORT_KEYS


def conform(name: str, table: pa.Table) -> pa.Table:
    """An existing table cast to the current schema (absent columns become null)."""
    target = schema(name)
    cols = [table.column(f.name).cast(f.type) if f.name in table.column_names
            else pa.nulls(table.num_rows, f.type) for f in target]
    return pa.Table.from_arrays(cols, schema=target)
