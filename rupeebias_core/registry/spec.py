"""The registry's vocabulary: a column, one file layout of a table, and a table.

A *table* is what the explorer queries by name (``delta``); it may be stored in several *files*
(``metrics/delta.parquet`` computed here, ``published/delta.parquet`` transcribed from the
paper), each with its own exact Arrow schema. Display metadata belongs to the column, so a
header, its tooltip, its unit and which way is "better" are declared once, next to the type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

#: Who produced a file's numbers (the explorer's provenance lanes).
SourceKind = Literal["computed", "published"]
SOURCE_KINDS: tuple[SourceKind, ...] = ("computed", "published")

#: Which way a value is "better", for the columns where that is defined. Signed quantities
#: (a gap that may favour either identity) and counts have no direction.
Direction = Literal["lower is fairer", "higher is more consistent", "higher is more readable"]
LOWER_IS_FAIRER: Direction = "lower is fairer"
HIGHER_IS_MORE_CONSISTENT: Direction = "higher is more consistent"
HIGHER_IS_MORE_READABLE: Direction = "higher is more readable"


@dataclass(frozen=True)
class ColumnInfo:
    """How a column is shown: its header, a plain-language description (the header's tooltip),
    its unit and direction.

    ``aliases`` are further headers under which the explorer shows exactly this column's values
    (``Mean W`` for the W of the ``Mean`` axis row)."""

    label: str
    description: str
    unit: str | None = None
    direction: Direction | None = None
    aliases: tuple[str, ...] = ()

    @property
    def headers(self) -> tuple[str, ...]:
        return (self.label, *self.aliases)


@dataclass(frozen=True)
class Column:
    """One stored column: name, Arrow type, nullability and display metadata."""

    name: str
    type: pa.DataType
    info: ColumnInfo
    nullable: bool = True

    @property
    def field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)

    @property
    def is_number(self) -> bool:
        return bool(pa.types.is_integer(self.type) or pa.types.is_floating(self.type))


@dataclass(frozen=True)
class TableFile:
    """One file layout of a table.

    ``path`` is relative to the data directory; ``{model}`` stands for a model slug in per-model
    files (``responses/{model}.parquet``). ``writer`` is the command that writes the file, or
    None when no stage of this repository does (the file is read when someone provides it).
    ``companions`` are non-Parquet files that travel with it (``{model}`` as in ``path``).
    ``metadata`` is the schema's key/value block, in order (empty: no metadata)."""

    table: str
    kind: SourceKind
    path: str
    columns: tuple[Column, ...]
    writer: str | None
    metadata: tuple[tuple[str, str], ...] = ()
    companions: tuple[str, ...] = ()

    @property
    def schema(self) -> pa.Schema:
        meta = dict(self.metadata) if self.metadata else None
        return pa.schema([c.field for c in self.columns], metadata=meta)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def per_model(self) -> bool:
        return "{model}" in self.path

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"{self.path}: no column {name!r}")


@dataclass(frozen=True)
class Table:
    """A table as the explorer and the docs know it.

    ``keys`` identify a row across all of the table's files (``source`` tells a published row
    from a computed one, ``method`` the two computed methods). ``required`` are the columns
    every file must have for the explorer to use it; those stored as numbers must hold finite
    numbers. ``raw`` tables hold one row per prompt or response: the explorer reads them through
    a filtered view instead of decoding them into memory."""

    name: str
    description: str
    keys: tuple[str, ...]
    required: tuple[str, ...]
    files: tuple[TableFile, ...]
    raw: bool = False

    def file(self, kind: SourceKind) -> TableFile | None:
        return next((f for f in self.files if f.kind == kind), None)

    @property
    def kinds(self) -> tuple[SourceKind, ...]:
        return tuple(f.kind for f in self.files)

    @property
    def column_names(self) -> tuple[str, ...]:
        """Every column of any of the table's files, first file first."""
        return tuple(dict.fromkeys(n for f in self.files for n in f.names))

    def column(self, name: str) -> Column:
        """The column as declared by the first file that has it."""
        for f in self.files:
            if name in f.names:
                return f.column(name)
        raise KeyError(f"{self.name}: no column {name!r}")

    def info(self, name: str) -> ColumnInfo:
        return self.column(name).info

    @property
    def numeric(self) -> tuple[str, ...]:
        """The required columns stored as numbers (the explorer checks they are finite)."""
        return tuple(c for c in self.required if self.column(c).is_number)
