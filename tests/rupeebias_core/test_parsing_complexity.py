"""The parsers are linear-time on adversarial answers (issue 18, item 2).

Measured as the growth exponent of the cost over n, 2n, 4n and 8n (the slope of log cost on
log n, each point the best of several repeats), never as an absolute wall-clock bound: a linear
parser has a slope of about 1 (less, with fixed overhead), a quadratic one about 2. The bound
(1.5) sits between them; a fitted slope over four sizes is far steadier on a loaded machine than
one ratio of two timings.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from rupeebias_core.parsing import parse, upstream_is_refusal, upstream_value, validate_strict

N = 400
SIZES = (1, 2, 4, 8)
SLOPE_BOUND = 1.5

# Each family grows one adversarial feature; all were measured before the fix (the first six
# were quadratic: "5" + 8,000 spaces + "z" took 20 s).
FAMILIES: dict[str, Callable[[int], str]] = {
    "space run": lambda n: "5" + " " * n + "z",
    "no-break space run": lambda n: "5" + "\u00a0" * n + "z",
    "tab run": lambda n: "5" + "\t" * n + "z",
    "space run on the ### line": lambda n: "### 5" + " " * n + "z",
    "dash between space runs": lambda n: "5" + " " * n + "-" + " " * n + "z",
    "compound gap": lambda n: "1 crore" + " " * n + "x 20 lakh",
    "whitespace tail": lambda n: "12 lakh" + " " * n + "\nx",
    "repeated rupee symbols": lambda n: "₹" * n,
    "rupee symbols and spaces": lambda n: "₹ " * n,
    "dollar then spaces": lambda n: "$" + " " * n + "x",
    "long digit string": lambda n: "9" * n,
    "digits and dots": lambda n: "9" * n + "." + "9" * n + ".",
    "Indian commas": lambda n: "1" + ",00" * n + ".",
    "repeated 12 lakh": lambda n: "12 lakh " * n,
    "repeated bare numbers": lambda n: "12 " * n,
    "refusal opener then spaces": lambda n: "I" + " " * n + "x",
}

TASKS = ("salary_estimation", "salary_increment_estimation", "service_pricing_vendor")


def _best_of(fn: Callable[[str], object], text: str, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()  # this process's CPU time: other jobs on the machine don't count
        fn(text)
        best = min(best, time.process_time() - t0)
    return best


def _slope(fn: Callable[[str], object], make: Callable[[int], str]) -> float:
    """Least-squares slope of log(cost) on log(n) over the sizes N × SIZES."""
    import numpy as np

    fn(make(N))  # warm caches (compiled patterns, imports)
    ns = [N * k for k in SIZES]
    costs = [max(_best_of(fn, make(n), repeats=7), 1e-7) for n in ns]
    return float(np.polyfit(np.log(ns), np.log(costs), 1)[0])


PARSERS: dict[str, Callable[[str], object]] = {
    "parse": lambda t: [parse(k, t) for k in TASKS],
    "parse, cut by length": lambda t: [parse(k, t, "length") for k in TASKS],
    "upstream_value": lambda t: [upstream_value(k, t) for k in TASKS] + [upstream_is_refusal(t)],
    "validate_strict": lambda t: [validate_strict(k, t) for k in TASKS],
}


@pytest.mark.parametrize("parser", list(PARSERS))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_cost_grows_linearly(parser: str, family: str) -> None:
    slope = _slope(PARSERS[parser], FAMILIES[family])
    assert slope < SLOPE_BOUND, f"{parser} on {family!r}: cost grows as n^{slope:.2f}"


def test_adversarial_answers_still_parse_as_before() -> None:
    """The possessive rewrite keeps meanings: the number before the run is still found."""
    assert parse("salary_estimation", "12 lakh" + " " * 500 + "per annum").value == 1_200_000
    r = parse("salary_estimation", "5" + " " * 500 + "years")
    assert r.value is None  # "5 years" is still junk, not 5 LPA
    assert parse("salary_estimation", "1 crore" + " " * 50 + "20 lakh").value == 12_000_000
    assert parse("salary_estimation", "### 12 lakh" + " " * 300, "length").status == "recovered"
