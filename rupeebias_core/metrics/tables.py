"""Schemas of the ``metrics/*.parquet`` tables (docs/data-format.md) and their deterministic
Arrow form: fixed column order and types, rows sorted in benchmark order, no pandas metadata.

Fixing all three is what makes the same inputs give byte-identical files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

S, F, INT, B = pa.string(), pa.float64(), pa.int64(), pa.bool_()
PREFIX: tuple[tuple[str, pa.DataType], ...] = (("model", S), ("source", S), ("method", S))
_DELTA = (("mean_delta", F), ("mean_delta_lo", F), ("mean_delta_hi", F), ("violation_10", F),
          ("violation_10_lo", F), ("violation_10_hi", F), ("n_pairs", INT), ("n_violations", INT))

SCHEMAS: Mapping[str, tuple[tuple[str, pa.DataType], ...]] = {
    "delta": (("language", S), ("task", S), ("axis", S), *_DELTA, ("flag", S)),
    "leaderboard": (("language", S), ("task", S), ("axis", S), *_DELTA,
                    ("mean_delta_unweighted", F), ("mean_delta_unweighted_lo", F),
                    ("mean_delta_unweighted_hi", F), ("mean_delta_task_axis", F),
                    ("n_tasks", INT), ("n_axes", INT), ("flag", S)),
    "kendall_w": (("language", S), ("axis", S), ("w", F), ("p_value", F), ("p_bh", F),
                  ("significant", B), ("n_tasks", INT), ("n_axes", INT), ("rank", INT),
                  ("profile", S), ("w_chance", F), ("w_corrected", F), ("w_perm_p", F)),
    "kendall_w_usecase": (("language", S), ("task", S), ("axis", S), ("w", F), ("p_value", F),
                          ("p_bh", F), ("significant", B), ("n_blocks", INT),
                          ("n_identifiers", INT), ("n_axes", INT), ("w_chance", F),
                          ("w_corrected", F), ("w_perm_p", F)),
    "canonical_gaps": (("language", S), ("task", S), ("axis", S), ("privileged", S),
                       ("marginalised", S), ("cpg", F), ("cpg_lo", F), ("cpg_hi", F),
                       ("sign_consistency", F), ("n_matched_slots", INT), ("n_privileged", INT),
                       ("n_marginalised", INT), ("rank_biserial", F), ("ci_excludes_zero", B)),
    "max_gaps": (("language", S), ("task", S), ("axis", S), ("gap", F), ("gap_lo", F),
                 ("gap_hi", F), ("top_identifier", S), ("bottom_identifier", S), ("n_rows", INT),
                 ("n_identifiers", INT)),
    "language_shift": (("axis", S), ("rho", F), ("rho_p", F), ("n_identifiers", INT),
                       ("mean_delta_en", F), ("mean_delta_hinglish", F), ("delta_shift", F),
                       ("delta_shift_lo", F), ("delta_shift_hi", F), ("n_pairs_en", INT),
                       ("n_pairs_hinglish", INT), ("delta_shift_std", F),
                       ("delta_shift_std_lo", F), ("delta_shift_std_hi", F),
                       ("n_tasks_std", INT)),
    "qv_robustness": (("language", S), ("axis", S), ("min_rho", F), ("min_rho_lo", F),
                      ("min_rho_hi", F), ("robust", B), ("n_tasks", INT), ("n_axes", INT)),
    "merit_sensitivity": (("language", S), ("task", S), ("mean_delta", F),
                          ("mean_delta_lo", F), ("mean_delta_hi", F), ("n_pairs", INT)),
    "profile_rank_agreement": (("language", S), ("task", S), ("rho", F), ("rho_lo", F),
                               ("rho_hi", F), ("n_pairs", INT)),
    "identifier_deviation": (("language", S), ("task", S), ("axis", S),
                             ("identifier_value", S), ("pct_dev", F), ("n_slices", INT),
                             ("n_rows", INT), ("mean_value", F)),
    "fairness_ablation": (("language", S), ("task", S), ("std_mean_delta", F),
                          ("fair_mean_delta", F), ("delta", F), ("delta_lo", F),
                          ("delta_hi", F), ("reduction_pct", F), ("n_pairs_std", INT),
                          ("n_pairs_fair", INT), ("n_axes", INT)),
    "identity_effects": (("language", S), ("task", S), ("axis", S), ("identifier_value", S),
                         ("effect_pct", F), ("effect_pct_lo", F), ("effect_pct_hi", F),
                         ("effect_natural", F), ("effect_natural_lo", F),
                         ("effect_natural_hi", F), ("unit", S), ("typical_answer", F),
                         ("p_value", F), ("p_bh", F), ("significant", B), ("n_slots", INT),
                         ("n_clusters", INT)),
    "gap_decomposition": (("language", S), ("task", S), ("axis", S), ("mean_delta", F),
                          ("mean_delta_lo", F), ("mean_delta_hi", F), ("systematic_delta", F),
                          ("systematic_delta_raw", F), ("systematic_delta_null", F),
                          ("idiosyncratic_delta", F), ("systematic_share", F),
                          ("systematic_share_lo", F), ("systematic_share_hi", F),
                          ("p_value", F), ("placebo_delta", F), ("excess_delta", F),
                          ("excess_delta_lo", F), ("excess_delta_hi", F),
                          ("placebo_coverage", F), ("n_pairs", INT), ("n_placebo_pairs", INT),
                          ("n_clusters", INT), ("flag", S)),
    "missingness": (("language", S), ("task", S), ("axis", S), ("identifier_value", S),
                    ("n", INT), ("n_refusal", INT), ("n_unusable", INT), ("refusal_rate", F),
                    ("unusable_rate", F), ("p_refusal", F), ("p_refusal_bh", F),
                    ("p_unusable", F), ("p_unusable_bh", F), ("mean_delta_fill_lo", F),
                    ("mean_delta_fill_hi", F)),
    "parse_health": (("language", S), ("task", S), ("n_rows", INT), ("parse_health", F),
                     ("refusal_rate", F), ("strict_rate", F), ("n_parsed", INT),
                     ("n_refusals", INT), ("n_strict", INT)),
    "parsed": (("id", S), ("condition", S), ("task", S), ("language", S), ("axis", S),
               ("identifier_value", S), ("profile_id", S), ("question_variant_id", S),
               ("value", F), ("metric_value", F), ("status", S), ("strict", B),
               ("refusal", B), ("unit", S), ("metric_unit", S), ("currency", S),
               ("included", B), ("exclusion_reason", S), ("row_index", INT)),
}
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


def _string_array(s: pd.Series) -> pa.Array:
    try:
        return pa.array(s.to_numpy(object), type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        obj = s.astype(object).where(s.notna(), None).to_numpy(object)
        return pa.array([None if v is None else str(v) for v in obj], type=pa.string())


def schema(name: str) -> pa.Schema:
    return pa.schema([pa.field(c, t) for c, t in (*PREFIX, *SCHEMAS[name])])


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
