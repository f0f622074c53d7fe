"""The one registry of the data directory's tables (docs/data-format.md).

For each table: its files (path, exact Arrow schema, writer), keys, the columns the explorer
requires, and per column the display metadata (label, description, unit, direction). Core,
precompute and explorer read it; :class:`DataLayout` owns the paths.

* :data:`TABLES` / :func:`table` — every table by name;
* :data:`COMPUTED` / :data:`PUBLISHED` — the ``metrics/`` and ``published/`` file layouts by
  table name; :data:`PROMPTS`, :data:`RESPONSES` — the raw files;
* :func:`column_info` — a column's display metadata; :data:`HEADER_HELP` — header -> tooltip.
"""

from rupeebias_core.registry import computed as _computed
from rupeebias_core.registry import published as _published
from rupeebias_core.registry.columns import (
    DERIVED,
    INTERVAL,
    PAIR_INTERVAL_COVERAGE,
    PROFILE_INTERVAL_COVERAGE,
)
from rupeebias_core.registry.columns import info as column_info
from rupeebias_core.registry.headers import HEADER_HELP
from rupeebias_core.registry.layout import DataLayout
from rupeebias_core.registry.raw import PROMPTS, RESPONSES
from rupeebias_core.registry.spec import (
    HIGHER_IS_MORE_CONSISTENT,
    HIGHER_IS_MORE_READABLE,
    LOWER_IS_FAIRER,
    Column,
    ColumnInfo,
    Direction,
    SourceKind,
    Table,
    TableFile,
)
from rupeebias_core.registry.tables import TABLES, files, table

COMPUTED = _computed.FILES
PUBLISHED = _published.FILES

__all__ = [
    "COMPUTED", "DERIVED", "HEADER_HELP", "HIGHER_IS_MORE_CONSISTENT", "HIGHER_IS_MORE_READABLE",
    "INTERVAL", "LOWER_IS_FAIRER", "PAIR_INTERVAL_COVERAGE", "PROFILE_INTERVAL_COVERAGE",
    "PROMPTS", "PUBLISHED", "RESPONSES", "TABLES", "Column",
    "ColumnInfo", "DataLayout", "Direction", "SourceKind", "Table", "TableFile", "column_info",
    "files", "table",
]
