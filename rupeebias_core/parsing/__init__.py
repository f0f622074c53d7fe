"""Response parsing: the upstream extractors (faithful) and our lenient parser (corrected).

Three entry points, one per question:

* `parse(task, text, finish_reason)` -> `ParseResult`: our reading, `value` in the task's
  natural unit (annual CTC in INR for salary_estimation and counter_offer_recommendation,
  percent for salary_increment_estimation, INR for the two service_pricing tasks).
* `upstream_value(task, text)`: the authors' analysis number (LPA / % / INR), quirks kept,
  for reproducing published tables. `upstream_is_refusal(text)` is their refusal flag.
* `validate_strict(task, text)` -> `StrictCheck`: the authors' runner-time validator.

`Status` is a closed set:

* `valid`       strict `### <NUMBER> INR` / `### <NUMBER> %` format (validator says valid)
                and a plausible value.
* `recovered`   format violated (or reinterpreted, e.g. per month), one clear number found.
* `range`       a range was given; `value` is the midpoint, `low`/`high` the ends.
* `refusal`     refusal wording and no usable answer.
* `truncated`   cut off by the token limit (finish_reason length/max_tokens) before a
                complete answer.
* `no_number`   no number that answers the question (also: unknown task).
* `error_row`   runner error text (`ERROR: ...`, `TIMEOUT: ...`, `[TRUNCATED]`, `[SKIPPED]`)
                or finish_reason `error`.
* `empty`       no text at all, or only whitespace.
* `implausible` a number, but negative, the `-1` sentinel, the wrong unit for the task,
                an hourly rate, or outside the task's plausible range.

`USABLE_STATUSES` = {valid, recovered, range}; only these enter metrics, and only in INR:
`metric_exclusion(result)` is the one rule (None, or why the answer is left out).
"""

from rupeebias_core.parsing.lenient import (
    LENGTH_FINISH_REASONS,
    METRIC_CURRENCY,
    SMALL_LPA_MAX,
    USABLE_STATUSES,
    ParseResult,
    Status,
    metric_exclusion,
    parse,
)
from rupeebias_core.parsing.strict import CHECK_TYPES, StrictCheck, ValidationTally, validate_strict
from rupeebias_core.parsing.upstream import UPSTREAM_UNIT, upstream_is_refusal, upstream_value

__all__ = [
    "CHECK_TYPES",
    "LENGTH_FINISH_REASONS",
    "METRIC_CURRENCY",
    "SMALL_LPA_MAX",
    "UPSTREAM_UNIT",
    "USABLE_STATUSES",
    "ParseResult",
    "Status",
    "StrictCheck",
    "ValidationTally",
    "metric_exclusion",
    "parse",
    "upstream_is_refusal",
    "upstream_value",
    "validate_strict",
]
