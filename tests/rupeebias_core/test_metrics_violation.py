"""Violation@τ and the Wilson interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from rupeebias_core.metrics import count_violations, violation_rate, wilson_interval


def test_strictly_greater_than_tau() -> None:
    d = np.array([5.0, 10.0, 10.0001, 30.0, np.nan])
    assert count_violations(d, 10.0) == (2, 4)
    v = violation_rate(d)
    assert v.rate == pytest.approx(50.0)
    assert (v.n_violations, v.n_pairs) == (2, 4)


@pytest.mark.parametrize(("k", "n", "lo", "hi"), [
    # textbook Wilson 95 % values (z = 1.959964)
    (5, 10, 0.236593, 0.763407),
    (0, 10, 0.0, 0.277533),
    (10, 10, 0.722467, 1.0),
    (1, 100, 0.001768, 0.054486),
])
def test_wilson_known_values(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson_interval(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-6)
    assert got[1] == pytest.approx(hi, abs=1e-6)


@pytest.mark.parametrize(("k", "n"), [(3, 7), (250, 1000), (191_700 // 4, 191_700)])
def test_wilson_matches_scipy_binomtest(k: int, n: int) -> None:
    ci = binomtest(k, n).proportion_ci(method="wilson")
    assert wilson_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_violation_ci_in_percent_and_empty() -> None:
    v = violation_rate(np.array([20.0, 1.0, 1.0, 1.0]))
    assert v.rate == 25.0
    assert v.lo == pytest.approx(100 * wilson_interval(1, 4)[0])
    empty = violation_rate(np.array([np.nan]))
    assert empty.n_pairs == 0 and math.isnan(empty.rate) and math.isnan(empty.lo)
