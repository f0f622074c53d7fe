"""The table registry (``rupeebias_core.registry``): declarations, display metadata, and the
shipped ``data/`` directory against them."""

from __future__ import annotations

import typing
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rupeebias_core import registry
from rupeebias_core.metrics import tables as metric_tables
from rupeebias_core.metrics import to_arrow
from rupeebias_core.registry import DataLayout, Direction, headers
from rupeebias_core.registry.spec import ColumnInfo

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
SHIPPED = DataLayout(DATA)


# ---- declarations ------------------------------------------------------------------------------


def test_every_file_belongs_to_its_table_and_names_its_keys_and_required_columns() -> None:
    for name, table in registry.TABLES.items():
        assert table.name == name and table.files, name
        assert len({f.kind for f in table.files}) == len(table.files), name
        for spec in table.files:
            assert spec.table == name, spec.path
            assert len(set(spec.names)) == len(spec.names), spec.path
            missing = [c for c in (*table.keys, *table.required) if c not in spec.names]
            assert not missing, (spec.path, missing)


def test_a_required_column_has_one_type_in_every_file() -> None:
    for table in registry.TABLES.values():
        for col in table.required:
            types = {str(f.column(col).type) for f in table.files}
            assert len(types) == 1, (table.name, col, types)


def test_metric_schemas_are_the_registry_declarations() -> None:
    assert metric_tables.SCHEMAS is registry.computed.SPECS
    assert metric_tables.PREFIX is registry.computed.PREFIX
    assert metric_tables.TABLE_NAMES == tuple(registry.COMPUTED)
    for name, spec in registry.COMPUTED.items():
        assert spec.path == f"metrics/{name}.parquet"
        assert metric_tables.schema(name).equals(spec.schema, check_metadata=True)
        assert spec.schema.metadata is None  # what keeps the written files byte-identical
        assert to_arrow(name, pd.DataFrame()).schema.equals(spec.schema, check_metadata=True)


def test_published_schemas_carry_the_metadata_block_in_order() -> None:
    for name, spec in registry.PUBLISHED.items():
        assert spec.path == f"published/{name}.parquet"
        meta = spec.schema.metadata
        assert meta is not None
        assert list(meta) == [b"rupeebias.table", b"rupeebias.description",
                              b"rupeebias.generator"]
        assert meta[b"rupeebias.table"] == name.encode()
        assert meta[b"rupeebias.generator"] == b"python -m precompute published"


def test_every_column_has_display_metadata() -> None:
    allowed = set(typing.get_args(Direction))
    for spec in registry.files():
        for col in spec.columns:
            assert col.info.label.strip() and col.info.description.strip(), (spec.path, col.name)
            assert col.info.direction is None or col.info.direction in allowed
    for info in registry.DERIVED.values():
        assert info.label and info.description



def test_a_label_names_the_unit_its_column_is_stored_in() -> None:
    """A 0–1 share labelled "… %" reads 0.59 as 0.59 % (missingness' refusal rate did)."""
    for spec in registry.files():
        for col in spec.columns:
            if col.info.unit == "share (0–1)":
                assert "%" not in col.info.label, (spec.path, col.name, col.info.label)
    assert registry.column_info("missingness", "refusal_rate").unit == "share (0–1)"
    assert registry.column_info("parse_health", "refusal_rate").label == "Refusal rate %"
    assert registry.column_info("parse_health", "refusal_rate").unit == "%"

def test_interval_bounds_and_the_headline_columns_say_what_they_are() -> None:
    delta = registry.table("delta")
    assert delta.info("mean_delta").label == "Mean Δ%"
    assert delta.info("mean_delta").unit == "%"
    assert delta.info("mean_delta").direction == registry.LOWER_IS_FAIRER
    assert delta.info("mean_delta_lo").description == registry.INTERVAL
    assert registry.table("kendall_w").info("w").direction == \
        registry.HIGHER_IS_MORE_CONSISTENT
    assert registry.table("identity_effects").info("effect_pct").direction is None  # signed
    # one name, another meaning: the table's override wins
    assert registry.table("merit_sensitivity").info("mean_delta").label == "Merit Δ%"
    assert registry.column_info("language_shift", "rho").label != \
        registry.column_info("profile_rank_agreement", "rho").label


def test_a_header_has_one_meaning() -> None:
    assert registry.HEADER_HELP["Mean Δ%"] == registry.table("delta").info("mean_delta").description
    assert registry.HEADER_HELP["Mean W"] == registry.table("kendall_w").info("w").description
    assert registry.HEADER_HELP["Coverage"] == registry.DERIVED["coverage"].description
    clash = [("a", ColumnInfo("CI low", "one meaning")), ("b", ColumnInfo("CI low", "another"))]
    with pytest.raises(ValueError, match="two descriptions"):
        headers.header_help(clash)


def test_numeric_required_columns() -> None:
    assert registry.table("delta").numeric == ("mean_delta",)
    assert registry.table("parsed").numeric == ("value", "metric_value")
    assert registry.table("human_validation").numeric == ("n", "pct", "pabak")
    assert registry.table("prompts").numeric == ()


# ---- the data layout ---------------------------------------------------------------------------


def test_layout_paths(tmp_path: Path) -> None:
    lay = DataLayout(tmp_path)
    assert lay.metrics("delta") == tmp_path / "metrics" / "delta.parquet"
    assert lay.published("models") == tmp_path / "published" / "models.parquet"
    assert lay.responses("m-1") == tmp_path / "responses" / "m-1.parquet"
    assert lay.manifest("m-1") == tmp_path / "responses" / "m-1.manifest.json"
    assert lay.parsed == tmp_path / "metrics" / "parsed.parquet"
    assert lay.prompts == tmp_path / "prompts.parquet"
    for name, spec in registry.COMPUTED.items():
        assert lay.path(spec) == lay.metrics(name)
    for name, spec in registry.PUBLISHED.items():
        assert lay.path(spec) == lay.published(name)
    assert lay.path(registry.RESPONSES, "m-1") == lay.responses("m-1")
    with pytest.raises(ValueError):
        lay.path(registry.RESPONSES)
    assert lay.response_files() == [] and lay.instances(registry.RESPONSES) == []
    lay.responses_dir.mkdir()
    for path in (lay.responses("b"), lay.responses("a"), lay.manifest("a")):
        path.write_bytes(b"")
    assert lay.instances(registry.RESPONSES) == [lay.responses("a"), lay.responses("b")]
    assert lay.matches(registry.RESPONSES, lay.manifest("a"))
    assert not lay.matches(registry.RESPONSES, tmp_path / "models.parquet")


# ---- the shipped data directory ----------------------------------------------------------------

needs_data = pytest.mark.skipif(not (DATA / "metrics").is_dir(), reason="no shipped data/")


@needs_data
def test_every_file_under_data_belongs_to_a_registry_table() -> None:
    specs = registry.files()
    stray = [p.relative_to(DATA).as_posix() for p in sorted(DATA.rglob("*")) if p.is_file()
             and not any(SHIPPED.matches(s, p) for s in specs)]
    assert not stray, f"files no registry table declares: {stray}"


@needs_data
def test_every_table_is_shipped_and_every_written_file_exists() -> None:
    for table in registry.TABLES.values():
        assert any(SHIPPED.instances(f) for f in table.files), table.name
        for spec in table.files:
            if spec.writer is not None:
                assert SHIPPED.instances(spec), spec.path
    # every file has a stage that writes it (no table the explorer looks for but nothing writes)
    assert [f.path for f in registry.files() if f.writer is None] == []


@needs_data
def test_shipped_files_have_exactly_the_registry_schemas() -> None:
    for spec in registry.files():
        for path in SHIPPED.instances(spec):
            got = pq.read_schema(path)
            assert got.equals(spec.schema, check_metadata=True), path


@needs_data
def test_shipped_keys_are_unique() -> None:
    for table in registry.TABLES.values():
        for spec in table.files:
            for path in SHIPPED.instances(spec):
                keys = pd.read_parquet(path, columns=list(table.keys))
                assert not keys.duplicated().any(), (path, table.keys)


def test_responses_schema_types() -> None:
    schema = registry.RESPONSES.schema
    assert schema.names[:5] == ["id", "condition", "model", "response", "finish_reason"]
    assert schema.field("sample_index").type == pa.int64()


def test_interval_coverage_quoted_is_the_simulation_table_of_methodology_4_11() -> None:
    """The coverage the pages quote (tooltips, caveats, run status) is the range measured by
    bench/validity.py and printed in methodology §4.11, not a figure typed elsewhere."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "methodology.md").read_text()
    section = doc[doc.index("### 4.11"):doc.index("## 5.")]
    rows = [line for line in section.splitlines()
            if line.startswith(("null,", "planted")) and line.count("|") == 2]
    assert len(rows) >= 9
    cover = [[float(x.rstrip("%")) for x in line.split("|")[1].split()] for line in rows]

    def span(col: int) -> str:
        values = [round(c[col]) for c in cover]
        return f"{min(values)}–{max(values)} %"

    assert registry.PROFILE_INTERVAL_COVERAGE == span(0)
    assert registry.PAIR_INTERVAL_COVERAGE == span(2)
    assert registry.PAIR_INTERVAL_COVERAGE in registry.INTERVAL
