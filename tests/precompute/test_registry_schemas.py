"""precompute writes exactly the schemas the table registry declares."""

from __future__ import annotations

from precompute import collect, published
from rupeebias_core import registry


def test_collect_schema_is_the_registry_responses_schema() -> None:
    assert collect.SCHEMA.equals(registry.RESPONSES.schema, check_metadata=True)


def test_published_schemas_come_from_the_registry() -> None:
    assert set(published.SCHEMAS) == set(registry.PUBLISHED)
    for name, schema in published.SCHEMAS.items():
        assert schema.equals(registry.PUBLISHED[name].schema, check_metadata=True), name


def test_every_built_published_table_has_its_registry_schema() -> None:
    built = published.build_tables()
    assert set(built) == set(registry.PUBLISHED)
    for name, table in built.items():
        assert table.schema.equals(registry.PUBLISHED[name].schema, check_metadata=True), name


def test_published_default_output_is_the_layout_published_dir() -> None:
    assert published.DEFAULT_OUT == registry.DataLayout(published.DEFAULT_OUT.parent).published_dir
