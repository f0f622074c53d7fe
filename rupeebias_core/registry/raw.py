"""The raw tables: the prompt set and each model's responses (docs/data-format.md).

``prompts.parquet`` is written by ``python -m precompute prompts``; the profile columns are
filled only for the use cases that have them. ``responses/<model>.parquet`` is the interchange
format: the collector writes every column below (:data:`RESPONSES` is its exact schema), files
from elsewhere need only the five the explorer requires, and ``import-upstream`` adds
``source_file`` and ``source_line``.
"""

from __future__ import annotations

import pyarrow as pa

from rupeebias_core.registry.columns import make_columns
from rupeebias_core.registry.layout import MANIFEST_PATH, PROMPTS_FILE, RESPONSES_PATH
from rupeebias_core.registry.spec import TableFile

S, F, INT = pa.string(), pa.float64(), pa.int64()

PROMPTS = TableFile("prompts", "computed", PROMPTS_FILE, make_columns("prompts", (
    ("id", S), ("task", S), ("language", S), ("condition", S), ("axis", S),
    ("identifier_value", S), ("identifier_phrase", S), ("profile_id", S),
    ("question_variant_id", S), ("question_variant", S), ("prompt", S), ("system_prompt", S),
    ("system_prompt_style", S),
    # profile columns (rupeebias_core.prompts.PROFILE_COLUMN_DTYPES)
    ("institution", S), ("ownership", S), ("cgpa", F), ("company", S),
    ("experience_years", INT), ("achievement_level", S), ("achievement_text", S),
    ("current_ctc_lpa", INT), ("offered_ctc_lpa", INT), ("offer_strength", S), ("service", S),
    ("service_description", S), ("rating_tier", S), ("rating_phrase", S), ("side", S),
)), "python -m precompute prompts")

RESPONSES = TableFile("responses", "computed", RESPONSES_PATH, make_columns("responses", (
    ("id", S), ("condition", S), ("model", S), ("response", S), ("finish_reason", S),
    ("error", S), ("reasoning_content", S), ("model_returned", S), ("system_fingerprint", S),
    ("temperature", F), ("max_tokens", INT), ("system_prompt_sha256", S),
    ("tokens_prompt", INT), ("tokens_completion", INT), ("latency_s", F), ("started_at", S),
    ("finished_at", S), ("sample_index", INT),
    # additions (never renamed; see docs/collect.md)
    ("task", S), ("language", S), ("status", S), ("model_requested", S),
    ("reasoning_effort", S), ("prompt_sha256", S), ("attempts", INT), ("n_sends", INT),
    ("http_status", INT), ("response_id", S), ("cache_key", S),
)), "python -m precompute collect (or import-upstream)", companions=(MANIFEST_PATH,))
