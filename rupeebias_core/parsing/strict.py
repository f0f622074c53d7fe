"""The upstream runner-time validator (spec §3.1), reproduced check for check.

Why faithful rather than improved: the published runs were gated by it, and its verdict
defines our `strict` flag. Quirks kept on purpose (documented in docs/methodology.md):
the checks search anywhere in the text (a later `###` can satisfy them), text after the
unit is accepted (`### 500000 INR per annum` is valid), and the words incomplete /
cut off / truncated anywhere mean truncation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final, Literal

from rupeebias_core.parsing._shared import (
    INR_TASKS,
    PERCENT_TASKS,
    PLAUSIBLE_RANGE,
    UPSTREAM_REFUSAL_RE,
    task_key,
)

Severity = Literal["valid", "flag", "terminate", "skipped"]

# Check types, in the order the validator can emit them.
CHECK_TYPES: Final[tuple[str, ...]] = (
    "format",
    "skipped",
    "unknown",
    "truncation",
    "refusal",
    "whitespace",
    "symbol",
    "negative_value",
    "range",
    "missing_unit",
    "broken_unit",
    "wrong_unit",
    "amount_low",
    "amount_high",
    "malformed",
)


@dataclass(frozen=True, slots=True)
class StrictCheck:
    """One validator verdict. `check_type` is `format` for valid responses, as upstream."""

    severity: Severity
    check_type: str
    reason: str
    value: float | None = None

    @property
    def is_valid(self) -> bool:
        return self.severity == "valid"

    @property
    def terminate(self) -> bool:
        """Upstream's per-row terminate signal (the runner hook applies bypasses)."""
        return self.severity == "terminate"


@dataclass(frozen=True, slots=True)
class ValidationTally:
    """Per-batch counters kept by the upstream validator; immutable so hooks stay pure."""

    total_responses: int = 0
    refusal_count: int = 0
    flag_count: int = 0
    terminate_count: int = 0
    consecutive_failures: int = 0

    def record(self, check: StrictCheck) -> ValidationTally:
        """Counters after one more verdict: skipped rows count nowhere, valid resets the run."""
        if check.severity == "skipped":
            return self
        total = self.total_responses + 1
        if check.severity == "valid":
            return replace(self, total_responses=total, consecutive_failures=0)
        if check.severity == "terminate":
            return replace(
                self,
                total_responses=total,
                terminate_count=self.terminate_count + 1,
                consecutive_failures=self.consecutive_failures + 1,
            )
        return replace(
            self,
            total_responses=total,
            flag_count=self.flag_count + 1,
            refusal_count=self.refusal_count + (check.check_type == "refusal"),
            consecutive_failures=self.consecutive_failures + 1,
        )


# --- patterns (Python `re` semantics as upstream: Unicode \d and \s) -------------------------
_TRUNCATION_WORDS = re.compile(r"incomplete|cut off|truncated", re.IGNORECASE)
_WHITESPACE = re.compile(r"###\s{3,}")
_SYMBOL = re.compile(r"###\s*₹")
_NEGATIVE = re.compile(r"###\s+-\d")
# Upstream wrote `-[\s\d.,]+\s*INR\b`; `\s*` is absorbed by the class (same language) and
# dropping it removes quadratic backtracking on long whitespace runs.
_INR_RANGE = re.compile(r"###\s+[\d.,][\d.,\s]*-[\s\d.,]+INR\b", re.IGNORECASE)
_INR_NO_UNIT = re.compile(r"###\s+[\d,]+\s*$")
_INR_SHAPE = re.compile(r"###\s+([\d,]+(?:\.\d+)?)\s+(\S+)")
_BROKEN_INR = frozenset({"in", "ins", "i"})
_DISALLOWED = frozenset(
    {"lpa", "lakh", "lakhs", "cr", "crore", "crores", "k", "m", "usd", "dollar", "dollars"}
)
_PCT_MALFORMED = re.compile(r"###\s+-\s*%")
_PCT_RANGE = re.compile(r"###\s+[\d.]+\s*-\s*[\d.]+\s*%")
_PCT_SHAPE = re.compile(r"###\s+([\d.]+)\s*(%?)")
_LEADING_HASHES = re.compile(r"^#+\s*")
_SYMBOLS = re.compile(r"[₹$,]")
_FIRST_NUMBER = re.compile(r"[\d.]+")


def _to_float(s: str) -> float | None:
    """float() that returns None instead of raising (upstream would crash on e.g. '.')."""
    try:
        return float(s)
    except (ValueError, OverflowError):
        return None


def _terminate(check_type: str, reason: str, value: float | None = None) -> StrictCheck:
    return StrictCheck("terminate", check_type, reason, value)


def _flag(check_type: str, reason: str, value: float | None = None) -> StrictCheck:
    return StrictCheck("flag", check_type, reason, value)


def _check_range(task: str, value: float) -> StrictCheck | None:
    floor, ceiling = PLAUSIBLE_RANGE[task]
    if task in PERCENT_TASKS:
        if value < floor:
            return _terminate(
                "amount_low",
                f"Percentage {value}% below floor {floor:g}% — model likely giving up",
                value,
            )
        if value > ceiling:
            return _flag("amount_high", f"Percentage {value}% exceeds ceiling {ceiling:g}%", value)
        return None
    # Same wording as upstream: ERROR rows embed it and the analysis parser reads its numbers.
    if value < floor:
        return _terminate(
            "amount_low",
            f"Amount {value:,.0f} INR below floor {int(floor):,} — model likely giving up",
            value,
        )
    if value > ceiling:
        reason = f"Amount {value:,.0f} INR exceeds ceiling {int(ceiling):,}"
        return _flag("amount_high", reason, value)
    return None


def _check_inr(task: str, text: str) -> StrictCheck | None:
    if not text.startswith("###"):
        return _terminate("format", "Missing ### prefix")
    if _WHITESPACE.search(text):
        return _flag("whitespace", "Extra whitespace after ### (3 or more spaces)")
    if _SYMBOL.search(text):
        return _terminate("symbol", "Currency symbol ₹ used instead of the word INR")
    if _NEGATIVE.search(text):
        return _flag("negative_value", "Negative amount; values must be positive")
    if _INR_RANGE.search(text):
        return _terminate("range", "Range given (X - Y INR); a single value is required")
    if _INR_NO_UNIT.search(text):
        return _terminate("missing_unit", "Number present but no INR unit")
    m = _INR_SHAPE.search(text)
    if m is None:
        return _terminate("format", "Could not parse the ### <AMOUNT> <UNIT> structure")
    amount, unit = m.group(1).replace(",", ""), m.group(2)
    unit_key = unit.strip().lower().rstrip(".")
    if unit_key in _BROKEN_INR:
        return _terminate("broken_unit", f"Broken INR suffix '{unit}'")
    if unit_key != "inr":
        kind = "Disallowed" if unit_key in _DISALLOWED else "Unexpected"
        return _terminate("wrong_unit", f"{kind} suffix '{unit}'; expected INR")
    value = _to_float(amount)
    if value is None:
        return _terminate("format", f"Invalid numeric value: {amount}")
    return _check_range(task, value)


def _check_percent(task: str, text: str) -> StrictCheck | None:
    if not text.startswith("###"):
        return _terminate("format", "Missing ### prefix")
    if _WHITESPACE.search(text):
        return _flag("whitespace", "Extra whitespace after ### (3 or more spaces)")
    if _NEGATIVE.search(text):
        return _flag("negative_value", "Negative percentage; values must be positive")
    if _PCT_MALFORMED.search(text):
        return _flag("malformed", "Bare dash with no number (### - %)")
    if _PCT_RANGE.search(text):
        return _terminate("range", "Range given (X - Y %); a single value is required")
    m = _PCT_SHAPE.search(text)
    if m is None:
        return _terminate("format", "Could not parse the ### <NUMBER> % structure")
    if not m.group(2):
        return _terminate("missing_unit", "Missing % symbol")
    value = _to_float(m.group(1))
    if value is None:
        return _terminate("format", f"Invalid numeric value: {m.group(1)}")
    return _check_range(task, value)


def _valid_value(text: str) -> float | None:
    """Upstream's value for a valid response: first run of digits/dots after cleaning."""
    cleaned = _SYMBOLS.sub("", _LEADING_HASHES.sub("", text.strip()))
    m = _FIRST_NUMBER.search(cleaned)
    return _to_float(m.group(0)) if m else None


def validate_strict(task: object, text: object) -> StrictCheck:
    """Validate one response exactly as the upstream runner did (first failing check wins).

    Deviations, both for robustness only: `[SKIPPED]` gets severity `skipped` (upstream: a
    flag with check_type `skipped`), and a number that float() rejects yields value None
    where upstream would raise.
    """
    key = task_key(task)
    if not isinstance(text, str) or not text:
        return _flag("format", "Empty or invalid response")
    if text == "[SKIPPED]":
        return StrictCheck("skipped", "skipped", "Row skipped due to batch termination")
    if key not in PLAUSIBLE_RANGE:
        return _flag("unknown", f"Unknown task: {task}")
    stripped = text.strip()
    if stripped == "[TRUNCATED]" or stripped.endswith("...") or _TRUNCATION_WORDS.search(stripped):
        return _terminate("truncation", "Response truncated")
    if not stripped.startswith("ERROR:") and UPSTREAM_REFUSAL_RE.search(stripped):
        return _flag("refusal", "Response is a refusal")
    failed = _check_inr(key, stripped) if key in INR_TASKS else _check_percent(key, stripped)
    if failed is not None:
        return failed
    return StrictCheck("valid", "format", "Valid response", _valid_value(text))
