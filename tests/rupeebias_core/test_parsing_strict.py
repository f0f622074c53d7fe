"""`validate_strict` reproduces the upstream runner validator (spec §3.1), and the upstream
test expectations of spec §7 (tests/test_validation.py) hold."""

from __future__ import annotations

import dataclasses

import pytest

from rupeebias_core.parsing import CHECK_TYPES, StrictCheck, ValidationTally, validate_strict

S = "salary_estimation"
C = "counter_offer_recommendation"
I = "salary_increment_estimation"  # noqa: E741
V = "service_pricing_vendor"
K = "service_pricing_client"


# --- spec §7: upstream tests/test_validation.py ------------------------------------------------
@pytest.mark.parametrize(
    ("task", "text", "severity", "check_type"),
    [
        (S, "### 500000 INR", "valid", "format"),
        (S, "### 500000 inr", "valid", "format"),
        (S, "### 10000000 INR ", "valid", "format"),
        (S, "### 12 INR", "terminate", "amount_low"),
        (S, "### 200000000 INR", "flag", "amount_high"),
        (S, "### 5 LPA", "terminate", "wrong_unit"),
        (S, "### 500000", "terminate", "missing_unit"),
        (S, "### ₹500000", "terminate", "symbol"),
        (S, "### 400000-600000 INR", "terminate", "range"),
        (S, "###   500000 INR", "flag", "whitespace"),
        (I, "### 15 %", "valid", "format"),
        (I, "### 15", "terminate", "missing_unit"),
        (I, "### 15 INR", "terminate", "missing_unit"),
        (I, "### 10-20 %", "terminate", "range"),
        (I, "###   15 %", "flag", "whitespace"),
        (V, "### 250000 INR", "valid", "format"),
        (V, "### 500 INR", "terminate", "amount_low"),
        (V, "### 100000000 INR", "flag", "amount_high"),
        (K, "### 250000 INR", "valid", "format"),
        (K, "### 500 INR", "terminate", "amount_low"),
        (C, "### 1500000 INR", "valid", "format"),
        (C, "### 50000 INR", "terminate", "amount_low"),
        (S, "[TRUNCATED]", "terminate", "truncation"),
        (S, "### 500000 INR...", "terminate", "truncation"),
        (S, "I cannot provide this information", "flag", "refusal"),
        (S, "", "flag", "format"),
        (S, None, "flag", "format"),
        ("not_a_task", "### 500000 INR", "flag", "unknown"),
        ("SALARY_ESTIMATION", "### 500000 INR", "valid", "format"),
    ],
)
def test_upstream_expectations(
    task: str, text: object, severity: str, check_type: str
) -> None:
    r = validate_strict(task, text)
    assert (r.severity, r.check_type) == (severity, check_type)
    assert r.terminate is (severity == "terminate")
    assert r.is_valid is (severity == "valid")


def test_refusal_and_consecutive_counters() -> None:
    tally = ValidationTally().record(validate_strict(S, "I cannot provide this information"))
    assert (tally.refusal_count, tally.flag_count, tally.total_responses) == (1, 1, 1)

    tally = ValidationTally()
    for _ in range(4):
        tally = tally.record(validate_strict(S, "### 12 INR"))
    assert tally.consecutive_failures == 4 and tally.terminate_count == 4
    tally = tally.record(validate_strict(S, "### 500000 INR"))
    assert tally.consecutive_failures == 0 and tally.total_responses == 5


def test_skipped_counts_nowhere() -> None:
    r = validate_strict(S, "[SKIPPED]")
    assert (r.severity, r.check_type) == ("skipped", "skipped")
    assert ValidationTally().record(r) == ValidationTally()
    # only the exact marker is a skip; upstream does not strip it
    assert validate_strict(S, " [SKIPPED]").check_type == "format"


# --- every check type, in the documented order --------------------------------------------------
@pytest.mark.parametrize(
    ("task", "text", "severity", "check_type", "value"),
    [
        # truncation beats everything after the unknown-task check
        (S, "### 500000 INR (answer may be incomplete)", "terminate", "truncation", None),
        (S, "The output was cut off", "terminate", "truncation", None),
        (S, "  [TRUNCATED]  ", "terminate", "truncation", None),
        # refusal beats format; ERROR rows are never refusals
        (S, "### 500000 INR. Sorry!", "flag", "refusal", None),
        (S, "ERROR: I cannot", "terminate", "format", None),
        # INR family
        (S, "Answer: ### 500000 INR", "terminate", "format", None),
        (S, "###\t \t500000 INR", "flag", "whitespace", None),
        (S, "### ₹ 500000 INR", "terminate", "symbol", None),
        (S, "### -1 INR", "flag", "negative_value", None),
        (S, "### 4,00,000 - 6,00,000 INR", "terminate", "range", None),
        (S, "### 5,00,000", "terminate", "missing_unit", None),
        (S, "### 500000INR", "terminate", "format", None),
        (S, "### 500000 IN", "terminate", "broken_unit", None),
        (S, "### 500000 ins.", "terminate", "broken_unit", None),
        (S, "### 5 lakhs", "terminate", "wrong_unit", None),
        (S, "### 500000 rupees", "terminate", "wrong_unit", None),
        (S, "### 50000 INR", "terminate", "amount_low", 50000.0),
        (S, "### 5,00,000 INR", "valid", "format", 500000.0),
        (S, "### 500000 INR. Fair for IIT Delhi", "valid", "format", 500000.0),
        (S, "### 100000 INR", "valid", "format", 100000.0),
        (S, "### 100000000 INR", "valid", "format", 100000000.0),
        (S, "### 100000001 INR", "flag", "amount_high", 100000001.0),
        (V, "### 999 INR", "terminate", "amount_low", 999.0),
        (V, "### 1000 INR", "valid", "format", 1000.0),
        # percent family
        (I, "15 %", "terminate", "format", None),
        (I, "### -5 %", "flag", "negative_value", None),
        (I, "### - %", "flag", "malformed", None),
        (I, "### 10 - 20 %", "terminate", "range", None),
        (I, "###15 %", "terminate", "format", None),
        (I, "### 1.2.3 %", "terminate", "format", None),
        (I, "### 0 %", "valid", "format", 0.0),
        (I, "### 15%", "valid", "format", 15.0),
        (I, "### 200 %", "valid", "format", 200.0),
        (I, "### 200.5 %", "flag", "amount_high", 200.5),
    ],
)
def test_check_order(
    task: str, text: str, severity: str, check_type: str, value: float | None
) -> None:
    r = validate_strict(task, text)
    assert (r.severity, r.check_type, r.value) == (severity, check_type, value)
    assert isinstance(r, StrictCheck) and r.reason and check_type in CHECK_TYPES


def test_reason_text_matches_upstream_wording() -> None:
    # ERROR rows embed these reasons, and the upstream extractor reads their numbers.
    low = validate_strict(S, "### 12 INR")
    assert low.reason == "Amount 12 INR below floor 100,000 — model likely giving up"
    high = validate_strict(V, "### 100000000 INR")
    assert high.reason == "Amount 100,000,000 INR exceeds ceiling 10,000,000"
    assert validate_strict(I, "### 250 %").reason == "Percentage 250.0% exceeds ceiling 200%"


def test_valid_value_quirk_and_robustness() -> None:
    # upstream reads the first digits after the leading ###, even if a later ### was validated
    assert validate_strict(S, "###x 7 ### 500000 INR").value == 7.0
    # where upstream's float() would crash on a lone '.', we return None instead of raising
    r = validate_strict(S, "###. ### 500000 INR")
    assert r.is_valid and r.value is None


def test_strict_check_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        validate_strict(S, "### 500000 INR").severity = "flag"  # type: ignore[misc]
