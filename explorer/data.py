"""The explorer's only door to the data: DuckDB views over the Parquet files in the data dir.

Why this shape (see docs/explorer.md):

* one in-memory DuckDB connection per data-dir version, cached with ``st.cache_resource``;
  every query runs on its own ``cursor()`` because a DuckDB connection is not thread-safe and
  each Streamlit session runs in its own thread;
* computed (``metrics/``) and published (``published/``) files with the same name become one
  view, so a page asks for "delta" and gets both, told apart by ``source`` / ``source_kind``;
* every value reaching SQL is a bound parameter; table and column names come only from the
  allow-lists below, never from a request;
* query results are cached with ``st.cache_data`` keyed by hashable filter tuples (no
  underscore-prefixed arguments: Streamlit would leave those out of the cache key);
* a missing, unreadable or malformed file raises :class:`DataUnavailable`, which pages catch and
  show next to the section that needed the file, so one bad file never takes down the app.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import duckdb
import pandas as pd
import streamlit as st

from explorer import vocab
from rupeebias_core.registry import TABLES, DataLayout

DATA_ENV = "RUPEEBIAS_DATA_DIR"
MEMORY_ENV = "RUPEEBIAS_DUCKDB_MEMORY"
APP_ROOT = Path(__file__).resolve().parents[1]

#: Tables decoded into memory (file stem → columns a file must have), from the table registry
#: (``rupeebias_core.registry``): the metric tables, whose ``metrics/`` and ``published/``
#: files become one table (``source``, ``method`` and ``source_kind`` always present), and the
#: small reference tables. Pages degrade to a note when a deployment lacks one.
METRIC_TABLES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {t.name: t.required for t in TABLES.values() if not t.raw})
#: Row-level tables (a view each, read with filters) and the columns the pair browser reads.
RAW_TABLES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {t.name: t.required for t in TABLES.values() if t.raw})
ALL_TABLES: frozenset[str] = frozenset(TABLES)
_NUMERIC_TYPE = re.compile(
    r"^(?:TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT"
    r"|FLOAT|DOUBLE|REAL|DECIMAL(?:\(\d+,\s*\d+\))?)$")


def numeric_columns(table: str, cols: Iterable[str]) -> tuple[str, ...]:
    """The columns of a file of ``table`` that must hold finite numbers: the required columns
    the registry stores as numbers, plus their ``_lo``/``_hi`` interval bounds when present."""
    cols = set(cols)
    values = list(TABLES[table].numeric) if table in TABLES else []
    out = [c for c in values if c in cols]
    out += [f"{c}{end}" for c in values for end in ("_lo", "_hi") if f"{c}{end}" in cols]
    return tuple(out)

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,80}$")
_COLUMN = re.compile(r"^[a-z_][a-z0-9_]{0,63}$")

#: What to tell a reader when a table is absent, by table.
_HINTS: Mapping[str, str] = {
    "parsed": "Raw responses are only available for models computed here. Collect responses "
              "(`python -m precompute collect …`) or import the authors' runs "
              "(`python -m precompute import-upstream PATH`), then run "
              "`python -m precompute metrics --data data`.",
    "responses": "No `data/responses/<model>.parquet` files were found.",
    "prompts": "Write the prompt set with `python -m precompute prompts`.",
}
_DEFAULT_HINT = ("Rebuild computed tables with `python -m precompute metrics --data data` and "
                 "published tables with `python -m precompute published`.")


class DataUnavailable(RuntimeError):
    """A table a view needs is missing, unreadable or lacks required columns."""

    def __init__(self, table: str, reason: str, hint: str | None = None,
                 missing: bool = False) -> None:
        self.table = table
        self.reason = reason
        self.hint = hint if hint is not None else _HINTS.get(table, _DEFAULT_HINT)
        self.missing = missing  # absent (not computed yet) rather than broken
        super().__init__(f"{table}: {reason}")


# ---------------------------------------------------------------------------------------------
# locating files


def data_dir() -> Path:
    """``$RUPEEBIAS_DATA_DIR`` if set (tests, deployments), else ``data/`` beside app.py."""
    env = os.environ.get(DATA_ENV, "").strip()
    return Path(env).expanduser().resolve() if env else APP_ROOT / "data"


def table_files(root: Path) -> dict[str, list[tuple[Path, str]]]:
    """(path, default source kind) per table, for the registry's files that exist under
    ``root`` (per-model files: every ``responses/<slug>.parquet`` with a valid slug)."""
    layout = DataLayout(root)
    found: dict[str, list[tuple[Path, str]]] = {}
    for table in TABLES.values():
        for spec in table.files:
            for path in layout.instances(spec):
                if not spec.per_model or _SLUG.match(path.stem):
                    found.setdefault(table.name, []).append((path, spec.kind))
    return found


def version(root: Path) -> str:
    """A fingerprint of every data file (path, size, mtime): new data → new connection/cache."""
    digest = hashlib.sha256()
    for table, files in sorted(table_files(root).items()):
        for path, _ in files:
            stat = path.stat()
            digest.update(f"{table}|{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# the connection


@dataclass
class Store:
    """A DuckDB connection with one view per readable table, plus what could not be read."""

    con: duckdb.DuckDBPyConnection
    root: Path
    columns: dict[str, frozenset[str]] = field(default_factory=dict)
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    file_columns: dict[str, frozenset[str]] = field(default_factory=dict)


def _literal(path: Path) -> str:
    """A SQL string literal for a file path found by listing our own data dir (not user input)."""
    return "'" + str(path).replace("'", "''") + "'"


def _file_select(con: duckdb.DuckDBPyConnection, table: str, path: Path, kind: str
                 ) -> tuple[str, frozenset[str]]:
    """SELECT over one file, adding provenance columns the file lacks; raises on a bad file.

    A file with the right column names but numbers stored as text, or holding ±inf, is as
    unusable as a missing column: charts and pandas aggregations fail on it far from here
    (the audit crashed four views with one such file). So it is refused here, once, and every
    section that needs it says so."""
    described = con.execute(
        f"DESCRIBE SELECT * FROM read_parquet({_literal(path)})").fetchall()
    types = {str(r[0]): str(r[1]) for r in described}
    cols = frozenset(types)
    required = TABLES[table].required
    missing = [c for c in required if c not in cols]
    if missing:
        raise ValueError(f"missing column(s) {', '.join(missing)}")
    _check_numbers(con, path, {c: types[c] for c in numeric_columns(table, cols)})
    if table == "responses":
        extra = "sample_index" if "sample_index" in cols else "NULL::BIGINT AS sample_index"
        return (f"SELECT id, condition, model, response, finish_reason, {extra} "
                f"FROM read_parquet({_literal(path)})", cols)
    adds = []
    if table in METRIC_TABLES:
        if "source" not in cols:
            adds.append(f"'{kind}' AS source")
        if "method" not in cols:
            adds.append("'upstream' AS method")
    extra = (", " + ", ".join(adds)) if adds else ""
    return f"SELECT *{extra} FROM read_parquet({_literal(path)})", cols


def _check_numbers(con: duckdb.DuckDBPyConnection, path: Path, numeric: Mapping[str, str]
                   ) -> None:
    """Raise ValueError when a value column is not numeric or holds an infinite value (NaN
    and NULL are allowed: they mean "no value" and every page handles them)."""
    wrong = [f"`{c}` is {t}" for c, t in numeric.items() if not _NUMERIC_TYPE.match(t)]
    if wrong:
        raise ValueError(f"numbers stored as another type: {', '.join(wrong)}")
    floats = [c for c, t in numeric.items() if t in ("FLOAT", "DOUBLE", "REAL")]
    if not floats:
        return
    counts = ", ".join(f'count(*) FILTER (WHERE isinf("{c}"))' for c in floats)
    got = con.execute(f"SELECT {counts} FROM read_parquet({_literal(path)})").fetchone() or ()
    bad = [f"`{c}` ({n:,} rows)" for c, n in zip(floats, got, strict=True) if n]
    if bad:
        raise ValueError(f"infinite values in {', '.join(bad)}")


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 2")
    con.execute(f"SET memory_limit = '{_memory_limit()}'")
    return con


def _memory_limit() -> str:
    value = os.environ.get(MEMORY_ENV, "1GB").strip()
    return value if re.fullmatch(r"\d{1,5}(MB|GB)", value) else "1GB"


def build_store(root: Path) -> Store:
    """Open a connection and create one view per table; bad files are recorded, not raised."""
    con = _connect()
    store = Store(con=con, root=root)
    for table, files in table_files(root).items():
        selects: list[str] = []
        cols: set[str] = set()
        try:
            for path, kind in files:
                try:
                    sql, file_cols = _file_select(con, table, path, kind)
                except (duckdb.Error, ValueError) as exc:
                    rel = path.relative_to(root) if path.is_relative_to(root) else path
                    raise ValueError(f"this file is unreadable: `{rel}` ({_short(exc)})") from exc
                selects.append(sql)
                cols |= file_cols
                store.file_columns[str(path)] = file_cols
            body = " UNION ALL BY NAME ".join(selects)
            if table in METRIC_TABLES:
                body = (f"SELECT *, CASE WHEN starts_with(source, 'published') THEN 'published' "
                        f"ELSE 'computed' END AS source_kind FROM ({body})")
                cols |= {"source", "method", "source_kind"}
                # The view is the definition; the metric tables are small (thousands of rows),
                # so they are decoded once into memory instead of on every query.
                con.execute(f'CREATE VIEW "v_{table}" AS {body}')
                con.execute(f'CREATE TABLE "{table}" AS SELECT * FROM "v_{table}"')
            else:  # parsed / prompts / responses stay views: large, read with filters
                con.execute(f'CREATE VIEW "{table}" AS {body}')
        except (duckdb.Error, ValueError) as exc:
            store.problems[table] = str(exc)
            continue
        store.columns[table] = frozenset(cols)
        store.files[table] = tuple(str(p.relative_to(root)) for p, _ in files)
    return store


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


@st.cache_resource(max_entries=4, show_spinner=False)
def _store(root: str, data_version: str) -> Store:
    """The shared connection for one version of one data dir (thread-safe use: cursor())."""
    return build_store(Path(root))


def current() -> tuple[str, str]:
    """(data dir, version) — the cache key every query function receives."""
    root = data_dir()
    return str(root), version(root)


def store() -> Store:
    return _store(*current())


# ---------------------------------------------------------------------------------------------
# running queries

Filters = tuple[tuple[str, tuple[str, ...]], ...]


def _check_table(st_: Store, table: str) -> None:
    if table not in ALL_TABLES:
        raise ValueError(f"unknown table {table!r}")
    if table in st_.problems:
        raise DataUnavailable(table, st_.problems[table])
    if table not in st_.columns:
        raise DataUnavailable(table, f"no `{table}` table in the data directory", missing=True)


def execute(st_: Store, tables: Iterable[str], sql: str,
            params: Sequence[object] | Mapping[str, object]) -> pd.DataFrame:
    """Run ``sql`` on a fresh cursor after checking every table it reads is available."""
    tables = tuple(tables)
    for table in tables:
        _check_table(st_, table)
    cur = st_.con.cursor()
    try:
        return cur.execute(sql, params).df()
    except duckdb.Error as exc:
        table = tables[0] if tables else "data"
        raise DataUnavailable(table, f"query failed ({_short(exc)})") from exc
    finally:
        cur.close()


def select_rows(st_: Store, table: str, filters: Filters) -> pd.DataFrame:
    """All columns of ``table`` where each filter column equals any of its values."""
    _check_table(st_, table)
    clauses, params = [], []
    for column, values in filters:
        if not _COLUMN.match(column):
            raise ValueError(f"bad column name {column!r}")
        if column not in st_.columns[table]:
            raise DataUnavailable(table, f"column `{column}` is missing")
        params.append(list(values))
        clauses.append(f'"{column}" = ANY(${len(params)})')
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    return execute(st_, (table,), f'SELECT * FROM "{table}"{where}', params)


@st.cache_data(max_entries=512, show_spinner=False)
def _rows_cached(root: str, data_version: str, table: str, filters: Filters) -> pd.DataFrame:
    return select_rows(_store(root, data_version), table, filters)


def _normalise(filters: Mapping[str, str | Sequence[str] | None]) -> Filters:
    out = []
    for column, values in sorted(filters.items()):
        if values is None:
            continue
        vals = (values,) if isinstance(values, str) else tuple(values)
        out.append((column, tuple(sorted({str(v) for v in vals}))))
    return tuple(out)


def rows(table: str, **filters: str | Sequence[str] | None) -> pd.DataFrame:
    """Rows of ``table`` where every given column matches one of the given values.

    ``rows("delta", model=("gpt-5.4",), task="all", source_kind=("published",))``. ``None``
    means "no filter on this column". Raises :class:`DataUnavailable`.
    """
    return _rows_cached(*current(), table, _normalise(filters))


def computed_file_has(table: str, column: str) -> bool:
    """Whether the computed file of ``table`` (``metrics/<table>.parquet``) has ``column``
    (True when there is no such file). Tells a null ``flag`` written by precompute from a file
    written before the column existed: the union with the published file fills both with
    nulls."""
    st_ = store()
    spec = TABLES[table].file("computed")
    if spec is None or spec.per_model:
        return True
    cols = st_.file_columns.get(str(DataLayout(st_.root).path(spec)))
    return cols is None or column in cols


def has_table(table: str) -> bool:
    st_ = store()
    return table in st_.columns


def present(table: str) -> bool:
    """True when ``table`` is readable, False when it is absent; raises DataUnavailable when
    its file is there but unreadable. For "use X if it exists, else Y" choices: a broken X
    must be reported, not silently replaced by Y."""
    st_ = store()
    if table in st_.problems:
        raise DataUnavailable(table, st_.problems[table])
    return table in st_.columns


def broken(table: str) -> str | None:
    """Why ``table``'s file is unreadable, or None when it is fine *or simply absent*."""
    return store().problems.get(table)


def problem(table: str) -> str | None:
    """Why ``table`` is unusable (missing or broken), or None when it is fine."""
    st_ = store()
    if table in st_.problems:
        return st_.problems[table]
    return None if table in st_.columns else "not present"


@st.cache_data(max_entries=128, show_spinner=False)
def _distinct_cached(root: str, data_version: str, table: str, column: str) -> tuple[str, ...]:
    st_ = _store(root, data_version)
    if table not in st_.columns or column not in st_.columns[table]:
        return ()
    if not _COLUMN.match(column):
        raise ValueError(f"bad column name {column!r}")
    got = execute(st_, (table,), f'SELECT DISTINCT "{column}" AS v FROM "{table}" '
                  f'WHERE "{column}" IS NOT NULL', [])
    return tuple(sorted(str(v) for v in got["v"]))


def distinct(table: str, column: str) -> tuple[str, ...]:
    """Distinct non-null values of one column (empty when the table or column is absent)."""
    if table not in ALL_TABLES:
        raise ValueError(f"unknown table {table!r}")
    return _distinct_cached(*current(), table, column)


# ---------------------------------------------------------------------------------------------
# models


@st.cache_data(max_entries=16, show_spinner=False)
def _models_cached(root: str, data_version: str) -> pd.DataFrame:
    return models_query(_store(root, data_version))


def models_query(st_: Store) -> pd.DataFrame:
    """Every model with data, from the model tables and the distinct models of each table.

    ``has_raw`` = a ``responses/<model>.parquet`` file exists and ``parsed`` is readable: known
    from the file listing, so the 500k-row ``parsed`` file is not scanned for this."""
    kinds: dict[str, set[str]] = {}
    tables = [t for t in METRIC_TABLES if t != "models" and "model" in TABLES[t].keys
              and t in st_.columns]
    if tables:
        sql = " UNION ".join(f'SELECT DISTINCT model, source_kind FROM "{t}"' for t in tables)
        for model, kind in execute(st_, tables, sql, []).itertuples(index=False):
            kinds.setdefault(str(model), set()).add(str(kind))
    raw: set[str] = set()
    if "parsed" in st_.columns:
        raw = {Path(f).stem for f in st_.files.get("responses", ())}
    labels: dict[str, str] = {}
    weights: dict[str, str] = {}
    notes: dict[str, set[str]] = {}
    if "models" in st_.columns:
        cols = st_.columns["models"]
        wanted = [c for c in ("model", "label", "weights", "note", "source_kind") if c in cols]
        info = execute(st_, ("models",), f"SELECT {', '.join(wanted)} FROM models", [])
        for rec in info.to_dict("records"):
            model = str(rec["model"])
            kinds.setdefault(model, set()).add(str(rec["source_kind"]))
            if _present(rec.get("label")):
                labels.setdefault(model, str(rec["label"]))
            if _present(rec.get("weights")):
                weights.setdefault(model, str(rec["weights"]))
            if _present(rec.get("note")):
                notes.setdefault(model, set()).add(str(rec["note"]))
    for model in raw:
        kinds.setdefault(model, set()).add("computed")
    kinds.pop(vocab.ALL, None)
    out = [{
        "model": model, "label": labels.get(model, model),
        "sources": " + ".join(k for k in vocab.SOURCE_KINDS if k in model_kinds),
        "published": "published" in model_kinds, "computed": "computed" in model_kinds,
        "weights": weights.get(model, "unknown"), "note": "; ".join(sorted(notes.get(model, ()))),
        "has_raw": model in raw,
    } for model, model_kinds in kinds.items()]
    frame = pd.DataFrame(out, columns=["model", "label", "sources", "published", "computed",
                                       "weights", "note", "has_raw"])
    frame["order"] = [model_order_key(m) for m in frame["model"]]
    return frame.sort_values("order").reset_index(drop=True)


def _present(value: object) -> bool:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return False
    return str(value) != ""


def model_order_key(model: str) -> tuple[int, str]:
    """Paper models in the paper's order, then everything else alphabetically."""
    if model in vocab.PAPER_MODELS:
        return (vocab.PAPER_MODELS.index(model), "")
    return (len(vocab.PAPER_MODELS), model)


def available_models() -> pd.DataFrame:
    """Every model with any data: model, label, sources, published, computed, weights, note,
    has_raw (raw responses available for the pair browser), in the app's model order."""
    return _models_cached(*current())


def model_labels() -> dict[str, str]:
    frame = available_models()
    return dict(zip(frame["model"], frame["label"], strict=True))


# ---------------------------------------------------------------------------------------------
# the pair browser

SLOT_COLUMNS: tuple[str, ...] = ("identifier_value", "value", "metric_value", "status", "strict",
                                 "response", "prompt", "system_prompt", "finish_reason", "unit",
                                 "metric_unit")


def slot_query(st_: Store, model: str, task: str, language: str, profile_id: str,
               question_variant_id: str, axis: str, condition: str, method: str = "upstream"
               ) -> pd.DataFrame:
    """Every identifier of one slot with its parsed value (under ``method``: the value a
    metric of that method uses), raw response and exact prompt.

    Three small bound queries instead of one join: the slot's prompts first (so identifiers
    without an answer still show), then ``parsed`` for the same slot, then the model's own
    responses file for just those ids. The file path comes from the data-dir listing (an
    allow-list) and is bound as a parameter. First sample only when several were drawn.
    """
    slot = {"task": task, "language": language, "profile": profile_id,
            "qv": question_variant_id, "axis": axis, "condition": condition}
    frame = slot_prompts(st_, slot).assign(value=float("nan"), metric_value=float("nan"),
                                           status=None, strict=None, response=None,
                                           finish_reason=None, unit=None, metric_unit=None)
    ids = [str(i) for i in frame["id"]]
    if ids and "parsed" in st_.columns:
        frame = frame.drop(columns=["value", "metric_value", "status", "strict", "unit",
                                    "metric_unit"]).merge(
            slot_parsed(st_, model, slot, method), on="id", how="left")
    if ids and _responses_file(st_, model) is not None:
        frame = frame.drop(columns=["response", "finish_reason"]).merge(
            slot_responses(st_, model, condition, ids), on="id", how="left")
    order = {v: i for i, v in enumerate(vocab.identifiers_of(axis))}
    frame = frame.assign(_order=frame["identifier_value"].map(order)).sort_values(
        "_order").drop(columns="_order").reset_index(drop=True)
    return frame[[*SLOT_COLUMNS, "id"]]


def slot_prompts(st_: Store, slot: Mapping[str, str]) -> pd.DataFrame:
    """The prompts of one slot (``slot``: task, language, profile, qv, axis, condition)."""
    return execute(
        st_, ("prompts",),
        "SELECT identifier_value, prompt, system_prompt, id, condition FROM prompts "
        "WHERE task = $task AND language = $language AND profile_id = $profile "
        "AND question_variant_id = $qv AND axis = $axis AND condition = $condition", dict(slot))


def slot_parsed(st_: Store, model: str, slot: Mapping[str, str], method: str = "upstream"
                ) -> pd.DataFrame:
    """One model's parsed values for one slot under ``method`` (the two methods read the same
    answer differently: the authors' extractor in LPA or markup %, ours in rupees), the row
    the metrics use when an id has several."""
    return execute(
        st_, ("parsed",),
        "SELECT id, value, metric_value, status, strict, unit, metric_unit FROM parsed "
        "WHERE model = $model AND method = $method "
        "AND task = $task AND language = $language AND profile_id = $profile "
        "AND question_variant_id = $qv AND axis = $axis AND condition = $condition "
        "QUALIFY row_number() OVER (PARTITION BY id ORDER BY included DESC, row_index) = 1",
        {**slot, "model": model, "method": method})


def slot_responses(st_: Store, model: str, condition: str, ids: Sequence[str]) -> pd.DataFrame:
    """One model's raw answers for the given prompt ids, from its own responses file."""
    path = _responses_file(st_, model)
    if path is None:
        raise DataUnavailable("responses", f"no responses file for `{model}`")
    order = ("ORDER BY sample_index NULLS FIRST"
             if "sample_index" in st_.file_columns.get(path, ()) else "")
    return execute(
        st_, ("responses",),
        "SELECT id, response, finish_reason FROM read_parquet($path) "
        "WHERE condition = $condition AND id = ANY($ids) "
        f"QUALIFY row_number() OVER (PARTITION BY id {order}) = 1",
        {"path": path, "condition": condition, "ids": list(ids)})


def _responses_file(st_: Store, model: str) -> str | None:
    """``responses/<model>.parquet`` if the listing has it (and the view could read it)."""
    if "responses" not in st_.columns:
        return None
    for rel in st_.files.get("responses", ()):
        if Path(rel).stem == model:
            return str(st_.root / rel)
    return None


@st.cache_data(max_entries=256, show_spinner=False)
def _slot_cached(root: str, data_version: str, model: str, task: str, language: str,
                 profile_id: str, question_variant_id: str, axis: str, condition: str,
                 method: str) -> pd.DataFrame:
    return slot_query(_store(root, data_version), model, task, language, profile_id,
                      question_variant_id, axis, condition, method)


def slot_rows(model: str, task: str, language: str, profile_id: str, question_variant_id: str,
              axis: str, condition: str = "standard", method: str = "upstream"
              ) -> pd.DataFrame:
    """One counterfactual slot: identifier_value, value, metric_value, status, strict, response,
    prompt, system_prompt, finish_reason, unit, metric_unit (+ id), one row per identifier of
    ``axis``; values as ``method`` reads them.

    Shared with the Try-a-prompt page, which compares a live answer with the stored one.
    Arguments are validated against the benchmark vocabulary; a bad one raises ValueError.
    """
    _validate_slot(model, task, language, profile_id, question_variant_id, axis, condition)
    if method not in vocab.METHODS:
        raise ValueError("invalid slot argument(s): method")
    return _slot_cached(*current(), model, task, language, profile_id, question_variant_id,
                        axis, condition, method)


def _validate_slot(model: str, task: str, language: str, profile_id: str | None,
                   question_variant_id: str | None, axis: str, condition: str) -> None:
    """Raise ValueError naming every argument outside the benchmark vocabulary (None = a
    profile or question variant that is not part of the query)."""
    checks = {
        "model": _SLUG.match(model) is not None,
        "task": task in vocab.TASKS,
        "language": language in vocab.LANGUAGES,
        "profile_id": profile_id is None
        or (task in vocab.TASKS and profile_id in vocab.profile_ids(task)),
        "question_variant_id": question_variant_id is None
        or (task in vocab.TASKS and question_variant_id in vocab.question_variant_ids(task)),
        "axis": axis in vocab.AXES,
        "condition": condition in vocab.CONDITIONS,
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise ValueError(f"invalid slot argument(s): {', '.join(bad)}")


@st.cache_data(max_entries=128, show_spinner=False)
def _prompts_cached(root: str, data_version: str, task: str, language: str, profile_id: str,
                    question_variant_id: str, axis: str, condition: str) -> pd.DataFrame:
    st_ = _store(root, data_version)
    return execute(
        st_, ("prompts",),
        "SELECT identifier_value, prompt, system_prompt, id FROM prompts WHERE task = $task "
        "AND language = $language AND profile_id = $profile AND question_variant_id = $qv "
        "AND axis = $axis AND condition = $condition ORDER BY id",
        {"task": task, "language": language, "profile": profile_id, "qv": question_variant_id,
         "axis": axis, "condition": condition})


def prompt_rows(task: str, language: str, profile_id: str, question_variant_id: str, axis: str,
                condition: str = "standard") -> pd.DataFrame:
    """The prompts of one slot without any model (identifier_value, prompt, system_prompt, id)."""
    _validate_slot("prompts-only", task, language, profile_id, question_variant_id, axis,
                   condition)
    return _prompts_cached(*current(), task, language, profile_id, question_variant_id, axis,
                           condition)


@st.cache_data(max_entries=64, show_spinner=False)
def _slot_coverage_cached(root: str, data_version: str, model: str) -> pd.DataFrame:
    st_ = _store(root, data_version)
    return execute(
        st_, ("parsed",),
        "SELECT task, language, condition, count(*) AS n_rows, count(value) AS n_parsed "
        "FROM parsed WHERE model = $1 GROUP BY ALL ORDER BY ALL", [model])


@st.cache_data(max_entries=64, show_spinner=False)
def _answered_slots_cached(root: str, data_version: str, model: str, task: str, language: str,
                           axis: str, condition: str) -> pd.DataFrame:
    return execute(
        _store(root, data_version), ("parsed",),
        "SELECT profile_id, question_variant_id, count(DISTINCT id) AS n_answers, "
        "count(DISTINCT CASE WHEN value IS NOT NULL THEN id END) AS n_readable FROM parsed "
        "WHERE model = $model AND task = $task AND language = $language AND axis = $axis "
        "AND condition = $condition GROUP BY ALL ORDER BY profile_id, question_variant_id",
        {"model": model, "task": task, "language": language, "axis": axis,
         "condition": condition})


def answered_slots(model: str, task: str, language: str, axis: str,
                   condition: str = "standard") -> pd.DataFrame:
    """The slots (profile_id, question_variant_id) of one model, use case, language, axis and
    condition that hold answers, with n_answers and n_readable: where a partial run can be
    browsed. Arguments are validated like :func:`slot_rows`'s."""
    _validate_slot(model, task, language, None, None, axis, condition)
    return _answered_slots_cached(*current(), model, task, language, axis, condition)


def raw_coverage(model: str) -> pd.DataFrame:
    """Responses per (task, language, condition) for one model: what the pair browser can show."""
    return _slot_coverage_cached(*current(), model)


# ---------------------------------------------------------------------------------------------
# status


def status() -> pd.DataFrame:
    """One row per known table: files behind it and any problem (for the Methodology page)."""
    st_ = store()
    out = []
    for table in sorted(ALL_TABLES):
        out.append({"table": table,
                    "files": ", ".join(st_.files.get(table, ())),
                    "status": "ok" if table in st_.columns else
                    ("unreadable" if table in st_.problems else "absent"),
                    "detail": st_.problems.get(table, "")})
    return pd.DataFrame(out)
