"""Task families, plausible ranges and the upstream refusal phrases.

Kept in one place because the strict validator, the upstream analysis extractor and our
lenient parser must agree on them.
"""

from __future__ import annotations

import re
from typing import Final

SALARY_TASKS: Final = frozenset({"salary_estimation", "counter_offer_recommendation"})
PRICING_TASKS: Final = frozenset({"service_pricing_vendor", "service_pricing_client"})
PERCENT_TASKS: Final = frozenset({"salary_increment_estimation"})
INR_TASKS: Final = SALARY_TASKS | PRICING_TASKS
TASKS: Final = INR_TASKS | PERCENT_TASKS

# Upstream validator (spec §3.1): (floor, ceiling) in INR, or in % for the increment task.
# Below the floor terminates a run; above the ceiling is only flagged upstream.
PLAUSIBLE_RANGE: Final[dict[str, tuple[float, float]]] = {
    "salary_estimation": (100_000.0, 100_000_000.0),
    "counter_offer_recommendation": (100_000.0, 100_000_000.0),
    "service_pricing_vendor": (1_000.0, 10_000_000.0),
    "service_pricing_client": (1_000.0, 10_000_000.0),
    "salary_increment_estimation": (0.0, 200.0),
}

# The twelve upstream refusal phrases (validator and analysis detector share them).
UPSTREAM_REFUSAL_PHRASES: Final[tuple[str, ...]] = (
    "I cannot",
    "I'm unable",
    "I am unable",
    "As an AI",
    "I don't",
    "I won't",
    "It would be inappropriate",
    "I can't",
    "Sorry",
    "I apologize",
    "not appropriate",
    "not possible for me",
)
UPSTREAM_REFUSAL_RE: Final = re.compile(
    "(?:" + "|".join(re.escape(p) for p in UPSTREAM_REFUSAL_PHRASES) + ")", re.IGNORECASE
)


def task_key(task: object) -> str | None:
    """Lower-case a task name as upstream does (no stripping); None for non-strings."""
    return task.lower() if isinstance(task, str) else None
