"""Live probing for the *Try a prompt* page, Streamlit-free so every rule is unit-tested.

* :mod:`explorer.live.config` — endpoints, public/local mode, limits, secrets, keys;
* :mod:`explorer.live.ratelimit` — token buckets per client and per process, retry charges;
* :mod:`explorer.live.probe` — the benchmark slot or the reader's own question: exact
  messages, sending, parsing, Δ% and signed differences with intervals over repeats.

Where requests go (URL rules, redaction, the dummy key, the bundled model's lifecycle) is the
endpoint layer's, :mod:`precompute.endpoint`, shared with `collect`: this package reaches
`precompute` only through it. The names below are what the page and the tests use.
"""

from __future__ import annotations

from explorer.live.config import (
    CUSTOM_ENDPOINT,
    DEFAULT_LOCAL_MODEL,
    ENV_ALLOW_CUSTOM,
    ENV_CLIENT_IP_HEADER,
    ENV_ENDPOINTS,
    ENV_LIMITS,
    ENV_LOCAL_BASE_URL,
    ENV_LOCAL_MODEL,
    ENV_PUBLIC_MODE,
    HARD_MAX_CONCURRENCY,
    HARD_MAX_IDENTIFIERS,
    HARD_MAX_QUESTION_CHARS,
    HARD_MAX_REPEATS,
    HARD_MAX_REQUESTS_PER_RUN,
    HARD_MAX_TIMEOUT_S,
    HARD_MAX_TOKENS,
    LOCAL_DEFAULTS,
    LOCAL_ENDPOINT,
    MAX_ENDPOINTS,
    MAX_MODEL_ID_LENGTH,
    MAX_URL_LENGTH,
    PUBLIC_DEFAULTS,
    Endpoint,
    EndpointKind,
    Limits,
    LiveConfig,
    LiveConfigError,
    LocalModelUnavailable,
    LocalStatus,
    endpoint_api_key,
    load_config,
    local_model_id,
    local_model_status,
    local_server_alive,
    read_secrets,
    redact_secrets,
    start_local_server,
    url_secrets,
    validate_base_url,
    validate_model_id,
)
from explorer.live.probe import (
    ANSWER_LABELS,
    ANSWER_TASKS,
    DEFAULT_MAX_TOKENS,
    IDENTITY_MARKER,
    PAIR_COLUMNS,
    RESPONSE_COLUMNS,
    AnySpec,
    OwnSpec,
    PlannedPrompt,
    ProbeResult,
    ProbeSpec,
    RepeatCI,
    _parse,
    assemble_responses,
    check_spec,
    compare_with_precomputed,
    live_retry_policy,
    metric_value,
    own_user_message,
    pair_table,
    plan_prompts,
    public_error,
    run_probe,
    summarise,
    t_interval,
)
from explorer.live.ratelimit import (
    MAX_CLIENTS,
    UNKNOWN_CLIENT,
    ClientBuckets,
    RetryCharge,
    SharedBucket,
    TokenBucket,
    client_key,
    session_bucket,
)
from precompute.endpoint import DUMMY_KEY, LOCAL_MODEL_FIX
from rupeebias_core.pair_semantics import difference_unit, value_unit_label
from rupeebias_core.pair_semantics import pair_gap as relative_gap

__all__ = [
    "ANSWER_LABELS", "ANSWER_TASKS", "CUSTOM_ENDPOINT", "DEFAULT_LOCAL_MODEL",
    "DEFAULT_MAX_TOKENS", "DUMMY_KEY", "ENV_ALLOW_CUSTOM", "ENV_CLIENT_IP_HEADER",
    "ENV_ENDPOINTS", "ENV_LIMITS", "ENV_LOCAL_BASE_URL", "ENV_LOCAL_MODEL", "ENV_PUBLIC_MODE",
    "HARD_MAX_CONCURRENCY", "HARD_MAX_IDENTIFIERS", "HARD_MAX_QUESTION_CHARS",
    "HARD_MAX_REPEATS", "HARD_MAX_REQUESTS_PER_RUN", "HARD_MAX_TIMEOUT_S", "HARD_MAX_TOKENS",
    "IDENTITY_MARKER", "LOCAL_DEFAULTS", "LOCAL_ENDPOINT", "LOCAL_MODEL_FIX", "MAX_CLIENTS",
    "MAX_ENDPOINTS", "MAX_MODEL_ID_LENGTH", "MAX_URL_LENGTH", "PAIR_COLUMNS",
    "PUBLIC_DEFAULTS", "RESPONSE_COLUMNS", "UNKNOWN_CLIENT", "AnySpec", "ClientBuckets",
    "Endpoint", "EndpointKind", "Limits", "LiveConfig", "LiveConfigError",
    "LocalModelUnavailable", "LocalStatus", "OwnSpec", "PlannedPrompt", "ProbeResult",
    "ProbeSpec", "RepeatCI", "RetryCharge", "SharedBucket", "TokenBucket", "_parse",
    "assemble_responses", "check_spec", "client_key", "compare_with_precomputed",
    "difference_unit", "endpoint_api_key", "live_retry_policy", "load_config",
    "local_model_id", "local_model_status", "local_server_alive", "metric_value",
    "own_user_message", "pair_table", "plan_prompts", "public_error", "read_secrets",
    "redact_secrets", "relative_gap", "run_probe", "session_bucket", "start_local_server",
    "summarise", "t_interval", "url_secrets", "validate_base_url", "validate_model_id",
    "value_unit_label",
]
