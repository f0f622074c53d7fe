"""Deterministic Arrow form of the metric tables: schema order, types, benchmark row order."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa

from rupeebias_core.metrics import SCHEMAS, benchmark_design, columns, to_arrow


def test_columns_follow_schema_and_missing_become_null() -> None:
    df = pd.DataFrame({"model": ["m"], "source": ["computed"], "method": ["upstream"],
                       "language": ["en"], "task": ["all"], "axis": ["all"],
                       "mean_delta": [1.5], "n_pairs": [3], "extra": ["dropped"]})
    t = to_arrow("delta", df, benchmark_design().sort_order())
    assert t.column_names == columns("delta")
    assert t.schema.field("n_pairs").type == pa.int64()
    assert t.column("mean_delta_lo").null_count == 1
    assert t.schema.metadata is None


def test_rows_sorted_in_benchmark_order_with_all_last() -> None:
    order = benchmark_design().sort_order()
    rows = []
    for method in ("corrected", "upstream"):
        for lang in ("all", "hinglish", "en"):
            for axis in ("all", "Caste", "Religion"):
                rows.append({"model": "m", "source": "computed", "method": method,
                             "language": lang, "task": "all", "axis": axis,
                             "mean_delta": math.nan})
    t = to_arrow("delta", pd.DataFrame(rows), order).to_pandas()
    assert t["method"].tolist()[:9] == ["upstream"] * 9
    assert t["language"].tolist()[:9] == ["en"] * 3 + ["hinglish"] * 3 + ["all"] * 3
    assert t["axis"].tolist()[:3] == ["Religion", "Caste", "all"]
    assert t["mean_delta"].isna().all()  # NaN stored as null


def test_every_table_has_model_source_method_and_a_count() -> None:
    for name in SCHEMAS:
        cols = columns(name)
        assert cols[:3] == ["model", "source", "method"]
        assert any(c.startswith("n_") for c in cols) or name == "parsed"
