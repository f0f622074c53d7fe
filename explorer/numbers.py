"""How the explorer writes a number: one home for every page, sentence, table label, chart
label and tooltip.

Why one home: the same value was written by five formatters (sentences, ui, the heat table,
the coverage text, Try a prompt). Some wrote a negative number with a hyphen ("-3.4"), others
with a true minus ("−3.4"), and the heat table's tooltips would have written a missing count
(pandas' NA) as "<NA>". A number a journalist copies from a sentence should read the same in
the table and in the tooltip beside it.

The rules: thousands separated (12,345.7), a true minus sign (−3.4), an explicit plus where a
sign is the point (+1.2 %), and :data:`MISSING` ("—") for a value that is missing, NaN or
infinite — never "nan" or "+nan%".
"""

from __future__ import annotations

import math
from typing import Final, SupportsFloat, TypeGuard

#: What a missing value reads as, in text and in tables.
MISSING: Final = "—"
#: The minus sign: U+2212, not the hyphen Python's formats write.
MINUS: Final = "\u2212"


def finite(value: object) -> TypeGuard[SupportsFloat]:
    """A finite number (not None, NaN, pd.NA, infinite or text)."""
    if isinstance(value, bool) or not isinstance(value, SupportsFloat):
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def num(value: object, digits: int = 1) -> str:
    """``12,345.7``, ``−3.4``; :data:`MISSING` for a missing value."""
    if not finite(value):
        return MISSING
    return f"{float(value):,.{digits}f}".replace("-", MINUS)


def signed(value: object, digits: int = 1, unit: str = "") -> str:
    """``+1.2%``, ``−3.4%`` (``unit`` follows the number as given); :data:`MISSING` for a
    missing value."""
    if not finite(value):
        return MISSING
    return f"{float(value):+,.{digits}f}".replace("-", MINUS) + unit


def count(value: object) -> str:
    """``1,234``: a whole number, thousands separated; :data:`MISSING` for a missing value."""
    return num(value, 0)


def interval(lo: object, hi: object, digits: int = 1, *, sign: bool = False) -> str:
    """``[11.9, 12.7]`` (``sign``: ``[−1.2, +0.4]``); :data:`MISSING` unless both ends are
    numbers."""
    if not (finite(lo) and finite(hi)):
        return MISSING
    each = signed if sign else num
    return f"[{each(lo, digits)}, {each(hi, digits)}]"


def with_ci(value: object, lo: object, hi: object, digits: int = 1) -> str:
    """``12.3 [11.9, 12.7]``; ``12.3 [CI not reported]`` when only the point exists."""
    if not finite(value):
        return MISSING
    if not (finite(lo) and finite(hi)):
        return f"{num(value, digits)} [CI not reported]"
    return f"{num(value, digits)} {interval(lo, hi, digits)}"


def cell(value: object, digits: int = 3) -> str:
    """A value of any kind, for a tooltip: whole numbers as counts (``1,234``), other
    numbers with ``digits`` decimals, text as it is, :data:`MISSING` for a missing value."""
    if isinstance(value, str):
        return value
    if not finite(value):
        return MISSING
    v = float(value)
    if isinstance(value, int) or (v.is_integer() and abs(v) >= 1):
        return count(v)
    return num(v, digits)


def natural(value: object, unit: str) -> str:
    """An amount in a task's own unit, always signed: rupees with Indian grouping
    (``−₹12,34,567 a year``; ``LPA``, lakh per annum, is ₹1,00,000 a year), else the number
    with two decimals and the unit (``+2.50 pp``)."""
    if not finite(value):
        return MISSING
    v = float(value)
    sign = MINUS if v < 0 else "+"
    if unit == "LPA":
        return f"{sign}₹{inr(abs(v) * 100000)} a year"
    if unit.startswith("INR"):
        per = {"INR/year": " a year", "INR": ""}.get(unit, unit.removeprefix("INR"))
        return f"{sign}₹{inr(abs(v))}{per}"
    return f"{sign}{abs(v):,.2f} {unit}"


def inr(value: float) -> str:
    """``12,34,567``: a non-negative rupee amount in Indian grouping (lakh, crore)."""
    s = str(int(round(value)))
    if len(s) <= 3:
        return s
    head, tail = s[:-3], s[-3:]
    groups: list[str] = []
    while len(head) > 2:
        groups.insert(0, head[-2:])
        head = head[:-2]
    if head:
        groups.insert(0, head)
    return ",".join(groups) + "," + tail
