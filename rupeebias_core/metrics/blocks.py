"""Dense value blocks: one (condition, language, task, axis) cell as a profile × QV × identifier
array.

Every metric is a reduction of these arrays (pairs across identifiers inside a slot, Friedman
over profiles, Spearman over QVs or profiles), so building them once per model and working with
numpy instead of repeated pandas self-joins is what makes the metrics fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: (condition, language, task, axis)
BlockKey = tuple[str, str, str, str]

VALUE_COLUMNS: tuple[str, ...] = (
    "condition",
    "language",
    "task",
    "axis",
    "identifier_value",
    "profile_id",
    "question_variant_id",
    "value",
)


@dataclass(frozen=True, eq=False)
class ValueBlock:
    """Values of one cell; ``values[p, q, i]`` is NaN when that response is missing."""

    condition: str
    language: str
    task: str
    axis: str
    profiles: tuple[str, ...]
    qvs: tuple[str, ...]
    identifiers: tuple[str, ...]
    values: np.ndarray = field(repr=False)

    @property
    def key(self) -> BlockKey:
        return (self.condition, self.language, self.task, self.axis)

    @property
    def n_rows(self) -> int:
        """Number of non-missing responses in the block."""
        return int(np.isfinite(self.values).sum())

    def identifier_column(self, value: str) -> np.ndarray:
        """The (profile, QV) array of one identifier (all NaN if absent)."""
        if value not in self.identifiers:
            return np.full(self.values.shape[:2], np.nan)
        return self.values[:, :, self.identifiers.index(value)]


def _ordered(present: Iterable[str], order: Sequence[str] | None) -> tuple[str, ...]:
    present = set(present)
    known = [v for v in (order or ()) if v in present]
    rest = sorted(present - set(known))
    return tuple(known + rest)


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def build_blocks(
    frame: pd.DataFrame,
    identifier_order: Mapping[str, Sequence[str]] | None = None,
) -> dict[BlockKey, ValueBlock]:
    """Pivot a long frame of values into blocks.

    ``frame`` needs ``language, task, axis, identifier_value, profile_id, question_variant_id,
    value`` (``condition`` defaults to ``standard``). Rows with a missing value are ignored;
    duplicate cells keep the first row (callers deduplicate first, this is only a guard).
    Identifiers, profiles and QVs are those present in the cell, identifiers in
    ``identifier_order[axis]`` order when given (else string order).
    """
    n = len(frame)
    cond = (frame["condition"].to_numpy(object) if "condition" in frame.columns
            else np.full(n, "standard", dtype=object))
    vals = pd.to_numeric(frame["value"], errors="coerce").to_numpy(float)
    ok = np.isfinite(vals)
    cols = [cond] + [frame[c].to_numpy(object) for c in VALUE_COLUMNS[1:7]]
    cols = [c[ok] for c in cols]
    vals = vals[ok]
    coded = [_codes(c) for c in cols]
    group = np.zeros(len(vals), dtype=np.int64)
    for codes, uniq in coded[:4]:
        group = group * len(uniq) + codes
    ident_c, ident_u = coded[4]
    prof_c, prof_u = coded[5]
    qv_c, qv_u = coded[6]
    cell = ((group * len(ident_u) + ident_c) * len(prof_u) + prof_c) * len(qv_u) + qv_c
    _, first = np.unique(cell, return_index=True)  # first row of every cell, file order kept
    keep = np.zeros(len(vals), dtype=bool)
    keep[first] = True
    out: dict[BlockKey, ValueBlock] = {}
    order = np.argsort(group, kind="stable")
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    for rows in np.split(order, bounds) if len(order) else []:
        rows = rows[keep[rows]]
        cond, lang, task, axis = (str(coded[j][1][coded[j][0][rows[0]]]) for j in range(4))
        key: BlockKey = (cond, lang, task, axis)
        idents = _ordered({str(v) for v in ident_u[np.unique(ident_c[rows])]},
                          (identifier_order or {}).get(axis))
        profs = tuple(sorted(str(v) for v in prof_u[np.unique(prof_c[rows])]))
        qvs = tuple(sorted(str(v) for v in qv_u[np.unique(qv_c[rows])]))
        values = np.full((len(profs), len(qvs), len(idents)), np.nan)
        values[_local(prof_c[rows], prof_u, profs), _local(qv_c[rows], qv_u, qvs),
               _local(ident_c[rows], ident_u, idents)] = vals[rows]
        values.setflags(write=False)
        out[key] = ValueBlock(cond, lang, task, axis, profs, qvs, idents, values)
    return dict(sorted(out.items()))


def _local(codes: np.ndarray, uniques: np.ndarray, labels: tuple[str, ...]) -> np.ndarray:
    """Positions in ``labels`` of rows given by global ``codes`` into ``uniques``."""
    pos = {v: i for i, v in enumerate(labels)}
    lut = np.array([pos.get(str(u), -1) for u in uniques], dtype=np.int64)
    return lut[codes]


def stack_languages(blocks: Sequence[ValueBlock]) -> ValueBlock:
    """Pool several blocks of one task and axis (e.g. EN and HI) into one block whose QV
    dimension is (language, QV): slots stay language-specific, as upstream's pooled keys."""
    if not blocks:
        raise ValueError("no blocks to stack")
    first = blocks[0]
    idents = _ordered({i for b in blocks for i in b.identifiers}, first.identifiers)
    profs = tuple(sorted({p for b in blocks for p in b.profiles}))
    qvs = tuple(f"{b.language}:{q}" for b in blocks for q in b.qvs)
    values = np.full((len(profs), len(qvs), len(idents)), np.nan)
    ppos = {p: i for i, p in enumerate(profs)}
    ipos = {v: i for i, v in enumerate(idents)}
    col = 0
    for b in blocks:
        pi = np.array([ppos[p] for p in b.profiles], dtype=np.int64)
        ii = np.array([ipos[v] for v in b.identifiers], dtype=np.int64)
        values[np.ix_(pi, np.arange(col, col + len(b.qvs)), ii)] = b.values
        col += len(b.qvs)
    values.setflags(write=False)
    return ValueBlock(first.condition, "all", first.task, first.axis, profs, qvs, idents, values)


def paired_rows(values: pd.DataFrame, column: str, first: str, second: str,
                slot_columns: Sequence[str], answered: pd.DataFrame | None = None
                ) -> pd.DataFrame | None:
    """The rows of ``values`` with ``column`` = ``first`` or ``second`` whose slot
    (``slot_columns``) was answered under both, or None when that is every such row.

    ``answered`` lists the collected responses (at least ``column`` and ``slot_columns``);
    default: ``values`` itself. Why: the paired comparisons (Hinglish − English, with − without
    the fairness instruction) must compare the same slots. A complete run answered every slot
    under both (None: nothing changes, unreadable answers included); a partial run or a partial
    import may not, and comparing different slots would mix the effect with the slots' own
    differences.
    """
    ref = values if answered is None else answered
    if column not in values.columns or column not in ref.columns:
        return None
    a = values[values[column] == first]
    b = values[values[column] == second]
    if a.empty or b.empty:
        return None

    ref_a, ref_b, key_a, key_b = slot_keys(
        [ref[ref[column] == first], ref[ref[column] == second], a, b], slot_columns)
    both = np.intersect1d(ref_a, ref_b)
    keep_a, keep_b = np.isin(key_a, both), np.isin(key_b, both)
    if keep_a.all() and keep_b.all():
        return None
    return pd.concat([a[keep_a], b[keep_b]], ignore_index=True)


def slot_keys(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> list[np.ndarray]:
    """One integer per row of each frame naming its ``columns`` tuple, compared as text (so
    ``1`` and ``"1"`` are the same slot), equal across the frames for equal tuples. Why: a
    pandas MultiIndex of the text columns, merged and searched, took 6 % of a model's metrics
    time; integer keys take about a third less."""
    sizes = [len(f) for f in frames]
    key = np.zeros(sum(sizes), dtype=np.int64)
    for col in columns:
        raw = np.concatenate([f[col].to_numpy(object) for f in frames])
        codes, uniques = pd.factorize(raw, use_na_sentinel=False)
        # values whose text is the same are the same slot (few distinct values: cheap)
        same_text, uniques = pd.factorize(np.array([str(u) for u in uniques], dtype=object))
        codes = same_text[codes]
        # re-coded after every column, so the key stays below rows × values (no overflow)
        key = pd.factorize(key * len(uniques) + codes)[0].astype(np.int64)
    return np.split(key, np.cumsum(sizes)[:-1])
