"""explorer.numbers: how every number on the explorer is written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer import numbers

ROOT = Path(__file__).resolve().parents[2]
MISSING_VALUES = [None, float("nan"), float("inf"), -float("inf"), pd.NA, np.nan, "12", True]


@pytest.mark.parametrize("value", MISSING_VALUES)
def test_a_missing_value_reads_as_a_dash_everywhere(value: object) -> None:
    assert numbers.num(value) == numbers.MISSING
    assert numbers.signed(value, unit="%") == numbers.MISSING  # never "+nan%"
    assert numbers.count(value) == numbers.MISSING
    assert numbers.interval(value, 1.0) == numbers.MISSING
    assert numbers.interval(1.0, value) == numbers.MISSING
    assert numbers.with_ci(value, 1.0, 2.0) == numbers.MISSING
    assert numbers.natural(value, "INR") == numbers.MISSING


def test_negative_numbers_carry_a_true_minus_and_thousands_are_separated() -> None:
    assert numbers.num(-1234.567, 2) == "−1,234.57"
    assert numbers.num(np.float64(12345.66)) == "12,345.7"
    assert numbers.signed(-1.25, unit="%") == "−1.2%"
    assert numbers.signed(0.5, 2, " pp") == "+0.50 pp"
    assert numbers.count(1234567) == "1,234,567"
    assert numbers.interval(-1.234, 0.5, 2, sign=True) == "[−1.23, +0.50]"
    assert numbers.interval(11.94, 12.66) == "[11.9, 12.7]"
    assert numbers.with_ci(12.3, 11.9, 12.7) == "12.3 [11.9, 12.7]"
    assert numbers.with_ci(12.3, None, 12.7) == "12.3 [CI not reported]"


def test_a_tooltip_cell_writes_counts_whole_and_rates_with_decimals() -> None:
    assert numbers.cell(np.int64(4698)) == "4,698"
    assert numbers.cell(87.0) == "87"
    assert numbers.cell(-0.4567) == "−0.457"
    assert numbers.cell(0.0) == "0.000"  # a zero correlation is a rate, not a count
    assert numbers.cell("GPT 5.4") == "GPT 5.4"
    assert numbers.cell(None) == numbers.cell(pd.NA) == numbers.MISSING  # was "<NA>" in heat


def test_rupees_use_indian_grouping_and_the_tasks_unit() -> None:
    assert numbers.inr(999) == "999"
    assert numbers.inr(1234567.4) == "12,34,567"
    assert numbers.inr(123456789) == "12,34,56,789"  # crore
    assert numbers.natural(-1234567.0, "INR/year") == "−₹12,34,567 a year"
    assert numbers.natural(-4.457858, "LPA") == "−₹4,45,786 a year"  # lakh per annum
    assert numbers.natural(2500, "INR") == "+₹2,500"
    assert numbers.natural(-2.5, "pp") == "−2.50 pp"


#: A signed format spec (``{x:+.2f}``): Python writes its minus as a hyphen.
_SIGNED_SPEC = re.compile(r"\{[^{}]*:\+[,.0-9]*[fdg]\}")


def test_no_page_writes_a_signed_number_itself() -> None:
    """Signed numbers go through numbers.signed, so a negative one never shows a hyphen
    ("-0.12" beside "−0.12"): Language shift's ρ cells and Try a prompt's differences did."""
    offenders = [f"{path.relative_to(ROOT)}:{n}"
                 for path in [*ROOT.glob("explorer/*.py"), *ROOT.glob("pages/*.py"),
                              ROOT / "app.py"]
                 if path.name != "numbers.py"
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if _SIGNED_SPEC.search(line)]
    assert not offenders, offenders
