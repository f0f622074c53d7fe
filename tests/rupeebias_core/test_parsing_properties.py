"""Property tests: the parsers never raise and never return values that break metrics."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rupeebias_core.parsing import (
    USABLE_STATUSES,
    Status,
    parse,
    upstream_is_refusal,
    upstream_value,
    validate_strict,
)
from rupeebias_core.parsing._shared import PLAUSIBLE_RANGE, TASKS

TASK_NAMES = sorted(TASKS)
# Fragments real responses are made of, so generated texts hit the interesting branches.
FRAGMENTS = [
    "### ", "#", "-", "−", "–", " to ", " and ", "between ", " ", "   ", "\n", "₹", "Rs.", "$",
    "USD", ",", ".", "%", " percent", "INR", "inr", "LPA", " lakh", " lakhs", " lac", "L",
    " crore", " Cr", "k", "M", " per month", "/month", " per hour", " p.a.", "**", "ERROR: ",
    "[SKIPPED]", "[TRUNCATED]", "...", "Sorry", "I can't", "-1", "0", "1", "9.1", "12", "12.5",
    "200", "201", "999", "45000", "100000", "12,00,000", "1,20,00,000", "9" * 400, "1e309",
    "nan", "inf", "NaN", "٣", "१२", "\u00a0", "\x00", "🙂",
]
fragment_texts = st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join)
texts = st.one_of(fragment_texts, st.text(max_size=80))
inputs = st.one_of(texts, st.none(), st.just(float("nan")), st.integers(), st.binary(max_size=8))
finish = st.sampled_from([None, "stop", "length", "max_tokens", "error", "content_filter", 3])
tasks = st.one_of(st.sampled_from(TASK_NAMES + ["SALARY_ESTIMATION", "nope", ""]), st.none())
SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(tasks, inputs, finish)
@example("salary_estimation", "### " + "9" * 400 + " INR", None)
@example("salary_estimation", "1e309 INR", "length")
@example("salary_estimation", "₹" + "9" * 310 + " crore", None)
@example("salary_increment_estimation", "nan %", None)
@example("service_pricing_vendor", "inf lakh", None)
@example("salary_estimation", "10" + "0" * 330 + "-12 LPA", None)
def test_parse_never_raises_and_returns_sane_values(task, text, finish_reason) -> None:
    r = parse(task, text, finish_reason)
    assert isinstance(r.status, Status)
    assert not r.detail.startswith("internal error"), r  # the safety net must never fire
    for x in (r.value, r.low, r.high):
        assert x is None or math.isfinite(x), r
    assert r.unit in ("INR", "%") and r.currency in ("INR", "USD")
    if r.usable:
        assert r.value is not None and r.value >= 0, r
    if r.status is Status.range:
        assert r.low is not None and r.high is not None and r.value is not None
        assert r.low <= r.value <= r.high, r
    if r.status in (Status.valid, Status.recovered):
        assert r.low is None and r.high is None
    if r.status not in USABLE_STATUSES | {Status.implausible}:
        assert r.value is None, r


@SETTINGS
@given(st.sampled_from(TASK_NAMES), texts)
def test_usable_inr_values_are_in_the_plausible_range(task, text) -> None:
    r = parse(task, text)
    if r.usable and r.currency == "INR":
        floor, ceiling = PLAUSIBLE_RANGE[task]
        assert r.value is not None and floor <= r.value <= ceiling, r


@SETTINGS
@given(st.sampled_from(TASK_NAMES), texts)
def test_strict_flag_is_the_validator_verdict(task, text) -> None:
    r = parse(task, text)
    if r.status not in (Status.error_row, Status.empty):
        assert r.strict is validate_strict(task, text).is_valid
    if r.status is Status.valid:
        assert r.strict


@SETTINGS
@given(st.sampled_from(TASK_NAMES), st.integers(0, 10**9), st.sampled_from([" ", "  "]))
def test_strict_inr_answers_round_trip(task, n, pad) -> None:
    # one or two spaces after ### are fine upstream; three are a `whitespace` flag
    text = f"###{pad}{n} %" if task == "salary_increment_estimation" else f"###{pad}{n} INR"
    r = parse(task, text)
    floor, ceiling = PLAUSIBLE_RANGE[task]
    if floor <= n <= ceiling:
        assert (r.status, r.value, r.strict) == (Status.valid, n, True)
    else:
        assert not r.usable or task != "salary_increment_estimation"


@SETTINGS
@given(tasks, inputs)
def test_upstream_functions_never_raise(task, text) -> None:
    v = upstream_value(task, text)
    assert v is None or isinstance(v, float)
    assert isinstance(upstream_is_refusal(text), bool)
    assert validate_strict(task, text).severity in ("valid", "flag", "terminate", "skipped")
