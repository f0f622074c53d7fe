"""Header -> description: the tooltip of every header the registry declares.

Built from every column's label and aliases (and the explorer's derived columns). A header names
one meaning: two columns may share a header only with the same description, else building the
map fails (so a conflicting entry cannot ship).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from rupeebias_core.registry.columns import DERIVED
from rupeebias_core.registry.spec import ColumnInfo
from rupeebias_core.registry.tables import files


def _infos() -> Iterable[tuple[str, ColumnInfo]]:
    for f in files():
        for col in f.columns:
            yield f"{f.path}:{col.name}", col.info
    for name, info in DERIVED.items():
        yield f"derived:{name}", info


def header_help(infos: Iterable[tuple[str, ColumnInfo]] | None = None) -> dict[str, str]:
    """Every header with its description; ValueError when one header has two meanings."""
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    for origin, info in infos if infos is not None else _infos():
        for header in info.headers:
            if header in out and out[header] != info.description:
                raise ValueError(f"header {header!r} has two descriptions: {where[header]} and "
                                 f"{origin}")
            out.setdefault(header, info.description)
            where.setdefault(header, origin)
    return out


HEADER_HELP: Mapping[str, str] = MappingProxyType(header_help())
