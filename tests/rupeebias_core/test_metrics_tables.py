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


def test_merge_sorted_equals_a_full_sort() -> None:
    """Sorted per-model parts merged by (method, model) runs give the full sort's rows, in its
    order; a (method, model) split over two parts falls back to the full sort."""
    import numpy as np

    from rupeebias_core.metrics.tables import merge_sorted, sort_table

    order = benchmark_design().sort_order()
    rng = np.random.default_rng(0)

    def part(models: list[str], n: int) -> pa.Table:
        rows = [{"model": str(rng.choice(models)), "source": "computed",
                 "method": str(rng.choice(["upstream", "corrected", "other"])),
                 "language": str(rng.choice(["en", "hinglish", "all"])), "task": "all",
                 "axis": str(rng.choice(["Caste", "Religion"])), "mean_delta": float(i)}
                for i in range(n)]
        return to_arrow("delta", pd.DataFrame(rows))

    parts = [part(["m2"], 40), part(["m1", "m3"], 60), part(["m0"], 0)]
    full = sort_table(pa.concat_tables(parts), order)
    merged = merge_sorted([sort_table(p, order) for p in parts], order)
    assert merged.equals(full)
    overlap = [sort_table(part(["m1"], 10), order), sort_table(part(["m1"], 10), order)]
    assert merge_sorted(overlap, order).equals(sort_table(pa.concat_tables(overlap), order))
