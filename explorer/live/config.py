"""Configuration of the *Try a prompt* page: endpoints, modes, limits, secrets, keys.

Streamlit-free (the page passes ``st.secrets`` and the environment in), so every rule is
unit-tested without a script runner.

* :func:`load_config` reads the ``[live]`` section of ``.streamlit/secrets.toml`` plus
  ``RUPEEBIAS_*`` environment variables. Public mode is on when *either* source turns it on.
  It fails closed: an unreadable secrets file or a mode value it does not recognise raises
  :class:`LiveConfigError` (the page stops) instead of falling back to a more permissive mode.
  Typed ("custom") endpoints are off unless the operator opts in, and never in public mode.
* API keys are never copied into a config object: :func:`endpoint_api_key` resolves them at
  send time through :func:`precompute.endpoint.lookup_api_key`.
* URL rules, redaction, the dummy key and the bundled model's lifecycle belong to the endpoint
  layer, :mod:`precompute.endpoint`, shared with `collect`; this module only adapts them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from precompute import endpoint as ep_layer
from rupeebias_core import benchmark as bm

# --------------------------------------------------------------------------------------------
# Endpoints and configuration
# --------------------------------------------------------------------------------------------

#: Name of the bundled SmolLM2 endpoint (llama.cpp, started on demand).
LOCAL_ENDPOINT = "local"
#: Name of the "type a base URL and key" endpoint (local mode only).
CUSTOM_ENDPOINT = "custom"
#: Model id used for the bundled model when `precompute.serve_local` does not say otherwise.
DEFAULT_LOCAL_MODEL = ep_layer.local_model_id()

EndpointKind = Literal["local", "configured", "custom"]

#: Environment variables read by :func:`load_config` (documented in docs/try-a-prompt.md).
ENV_PUBLIC_MODE = "RUPEEBIAS_PUBLIC_MODE"
ENV_ENDPOINTS = "RUPEEBIAS_LIVE_ENDPOINTS"  # JSON list, same keys as [[live.endpoints]]
ENV_LOCAL_MODEL = "RUPEEBIAS_LIVE_LOCAL_MODEL"  # 0/false hides the bundled model
#: Opt-in for the "type a base URL" endpoint (local mode only): the server then sends requests
#: to any host a visitor names, so it is for a machine only its owner can reach.
ENV_ALLOW_CUSTOM = "RUPEEBIAS_LIVE_ALLOW_CUSTOM_ENDPOINTS"
#: A header set by a reverse proxy you control that holds the visitor's address (rate limits).
ENV_CLIENT_IP_HEADER = "RUPEEBIAS_LIVE_CLIENT_IP_HEADER"
ENV_LIMITS: Mapping[str, str] = {
    "requests_per_minute": "RUPEEBIAS_LIVE_REQUESTS_PER_MINUTE",
    "global_requests_per_minute": "RUPEEBIAS_LIVE_GLOBAL_REQUESTS_PER_MINUTE",
    "max_repeats": "RUPEEBIAS_LIVE_MAX_REPEATS",
    "max_identifiers": "RUPEEBIAS_LIVE_MAX_IDENTIFIERS",
    "max_requests_per_run": "RUPEEBIAS_LIVE_MAX_REQUESTS_PER_RUN",
    "max_tokens": "RUPEEBIAS_LIVE_MAX_TOKENS",
    "concurrency": "RUPEEBIAS_LIVE_CONCURRENCY",
    "timeout_s": "RUPEEBIAS_LIVE_TIMEOUT_S",
    "max_question_chars": "RUPEEBIAS_LIVE_MAX_QUESTION_CHARS",
}

#: Hard ceilings no configuration can exceed (hostile or mistaken settings are clamped).
HARD_MAX_REPEATS = 20
HARD_MAX_IDENTIFIERS = max(len(bm.identifiers_for_axis(a)) for a in bm.AXES)  # 30 (Region)
HARD_MAX_REQUESTS_PER_RUN = 600
HARD_MAX_TOKENS = 2048
HARD_MAX_CONCURRENCY = 16
HARD_MAX_TIMEOUT_S = 300.0
#: Longest own question ("write your own" mode), per language.
HARD_MAX_QUESTION_CHARS = 4000
MAX_URL_LENGTH = ep_layer.MAX_URL_LENGTH
MAX_MODEL_ID_LENGTH = 200
MAX_ENDPOINTS = 32


@dataclass(frozen=True)
class Endpoint:
    """An endpoint a visitor may choose. Holds no API key (see :func:`endpoint_api_key`)."""

    name: str
    label: str
    kind: EndpointKind
    base_url: str | None = None  # None: the bundled model (URL known once started) or custom
    models: tuple[str, ...] = ()
    api_key_env: str | None = None
    has_inline_key: bool = False  # an ``api_key`` sits in secrets (never copied here)


@dataclass(frozen=True)
class Limits:
    """Caps of one mode. ``requests_per_minute`` None means no per-session rate limit."""

    max_repeats: int
    max_identifiers: int
    max_requests_per_run: int
    max_tokens: int
    requests_per_minute: int | None
    global_requests_per_minute: int | None
    concurrency: int
    timeout_s: float
    max_question_chars: int = HARD_MAX_QUESTION_CHARS


PUBLIC_DEFAULTS = Limits(
    max_repeats=3,
    max_identifiers=5,
    max_requests_per_run=15,
    max_tokens=64,
    requests_per_minute=20,
    global_requests_per_minute=120,
    concurrency=4,
    timeout_s=60.0,
    max_question_chars=500,
)
LOCAL_DEFAULTS = Limits(
    max_repeats=HARD_MAX_REPEATS,
    max_identifiers=HARD_MAX_IDENTIFIERS,
    max_requests_per_run=HARD_MAX_REQUESTS_PER_RUN,
    max_tokens=HARD_MAX_TOKENS,
    requests_per_minute=None,
    global_requests_per_minute=None,
    concurrency=4,
    timeout_s=120.0,
    max_question_chars=HARD_MAX_QUESTION_CHARS,
)


class LiveConfigError(ValueError):
    """The live configuration cannot be trusted (unreadable secrets, unknown mode value).

    Raised instead of guessing: every guess would be a mode, and a wrong guess towards the
    permissive side opens the server to its visitors. The page shows the message and stops."""


@dataclass(frozen=True)
class LiveConfig:
    public_mode: bool
    endpoints: tuple[Endpoint, ...]
    limits: Limits
    problems: tuple[str, ...] = ()  # operator-facing configuration warnings
    custom_opt_in: bool = False  # the operator turned typed endpoints on (local mode only)
    client_ip_header: str | None = None  # proxy header naming the visitor (rate limits)

    @property
    def allow_custom(self) -> bool:
        """Typing a base URL and key: only when opted in, and never in public mode."""
        return self.custom_opt_in and not self.public_mode

    def endpoint(self, name: str) -> Endpoint | None:
        for ep in self.endpoints:
            if ep.name == name:
                return ep
        return None

    @property
    def endpoint_names(self) -> tuple[str, ...]:
        return tuple(ep.name for ep in self.endpoints)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _flag(value: object, default: bool, where: str) -> bool:
    """A boolean setting, strictly: true/false, 1/0, yes/no, on/off (any case); absent or an
    empty environment variable gives `default`. Anything else ("enabled", "y", 2) raises
    LiveConfigError: a typo must not silently pick a mode."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise LiveConfigError(
        f"{where} has a value that is not recognised; use true or false (also 1/0, yes/no, "
        "on/off). The Try a prompt page is disabled until it is fixed."
    )


def _as_dict(obj: object) -> dict[str, Any]:
    """A plain dict from st.secrets sections (AttrDict), dicts or None."""
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return {str(k): (_as_dict(v) if isinstance(v, Mapping) else v) for k, v in obj.items()}
    return {}


def read_secrets(load: Callable[[], Mapping[str, Any]]) -> dict[str, Any]:
    """The secrets mapping from ``load`` (``st.secrets.to_dict``): {} when no secrets file
    exists, :class:`LiveConfigError` when one exists but cannot be read.

    Why not {} for both: a ``secrets.toml`` with ``public_mode = true`` and one syntax error
    used to run the page in local mode. The message names no path and repeats no content."""
    try:
        return _as_dict(load())
    except Exception as exc:  # noqa: BLE001 - Streamlit's error class varies between versions
        if getattr(exc, "error_id", None) == "no-secrets-found" or str(exc).startswith(
                "No secrets found"):
            return {}
        raise LiveConfigError(
            "The secrets file (.streamlit/secrets.toml) exists but could not be read (a TOML "
            "syntax error?). The Try a prompt page is disabled until it is fixed; the other "
            "pages are unaffected."
        ) from None


def validate_base_url(url: object) -> str:
    """`precompute.endpoint.validate_base_url` (raises a ValueError that never repeats the
    URL)."""
    return ep_layer.validate_base_url(url)


def validate_model_id(model: object) -> str:
    """A model id as typed by the user: non-empty, printable, no whitespace, bounded length."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError("Enter a model id.")
    model = model.strip()
    if len(model) > MAX_MODEL_ID_LENGTH:
        raise ValueError(f"The model id is longer than {MAX_MODEL_ID_LENGTH} characters.")
    if any(ch.isspace() or not ch.isprintable() for ch in model):
        raise ValueError("The model id must not contain spaces or control characters.")
    return model


def _int_setting(raw: object, default: int | None, lo: int, hi: int, name: str,
                 problems: list[str], *, allow_none: bool = False) -> int | None:
    if raw is None or raw == "":
        return default
    if allow_none and str(raw).strip().lower() in ("none", "off", "0", "unlimited"):
        return None
    try:
        value = int(str(raw).strip()) if not isinstance(raw, int | float) else int(raw)
    except (TypeError, ValueError):
        problems.append(f"live.{name}: not an integer; using the default")
        return default
    if value < lo or value > hi:
        clamped = min(max(value, lo), hi)
        problems.append(f"live.{name}: {value} is outside [{lo}, {hi}]; using {clamped}")
        return clamped
    return value


def _limits(section: Mapping[str, Any], env: Mapping[str, str], public: bool,
            problems: list[str]) -> Limits:
    base = PUBLIC_DEFAULTS if public else LOCAL_DEFAULTS
    merged: dict[str, Any] = {}
    for name, env_name in ENV_LIMITS.items():
        merged[name] = env.get(env_name) if env.get(env_name) not in (None, "") else section.get(
            name
        )
    max_repeats = _int_setting(merged["max_repeats"], base.max_repeats, 1, HARD_MAX_REPEATS,
                               "max_repeats", problems)
    max_ids = _int_setting(merged["max_identifiers"], base.max_identifiers, 2,
                           HARD_MAX_IDENTIFIERS, "max_identifiers", problems)
    max_run = _int_setting(merged["max_requests_per_run"], base.max_requests_per_run, 2,
                           HARD_MAX_REQUESTS_PER_RUN, "max_requests_per_run", problems)
    max_tokens = _int_setting(merged["max_tokens"], base.max_tokens, 1, HARD_MAX_TOKENS,
                              "max_tokens", problems)
    rpm = _int_setting(merged["requests_per_minute"], base.requests_per_minute, 1, 100_000,
                       "requests_per_minute", problems, allow_none=not public)
    grpm = _int_setting(merged["global_requests_per_minute"], base.global_requests_per_minute,
                        1, 1_000_000, "global_requests_per_minute", problems, allow_none=True)
    conc = _int_setting(merged["concurrency"], base.concurrency, 1, HARD_MAX_CONCURRENCY,
                        "concurrency", problems)
    qchars = _int_setting(merged["max_question_chars"], base.max_question_chars, 20,
                          HARD_MAX_QUESTION_CHARS, "max_question_chars", problems)
    try:
        timeout = float(merged["timeout_s"]) if merged["timeout_s"] not in (None, "") else None
    except (TypeError, ValueError):
        problems.append("live.timeout_s: not a number; using the default")
        timeout = None
    if timeout is None or not math.isfinite(timeout):
        timeout = base.timeout_s
    timeout = min(max(timeout, 1.0), HARD_MAX_TIMEOUT_S)
    assert max_repeats is not None and max_ids is not None and max_run is not None
    assert max_tokens is not None and conc is not None and qchars is not None
    if public and rpm is None:  # public mode always rate-limits
        rpm = PUBLIC_DEFAULTS.requests_per_minute
    if public and grpm is None:  # …and always caps the whole process (many clients at once)
        problems.append("live.global_requests_per_minute cannot be off in public mode; using "
                        f"{PUBLIC_DEFAULTS.global_requests_per_minute}")
        grpm = PUBLIC_DEFAULTS.global_requests_per_minute
    if rpm is not None and max_run > rpm:
        # A run that can never fit in the bucket would be refused forever: cap it.
        problems.append(
            f"live.max_requests_per_run ({max_run}) exceeds requests_per_minute ({rpm}); "
            f"capping runs at {rpm} requests"
        )
        max_run = rpm
    return Limits(max_repeats, max_ids, max_run, max_tokens, rpm, grpm, conc, timeout, qchars)


def _endpoint_from(raw: Mapping[str, Any], index: int, problems: list[str],
                   taken: set[str]) -> Endpoint | None:
    name = str(raw.get("name") or "").strip()
    where = f"live.endpoints[{index}]"
    if not name:
        problems.append(f"{where}: missing name; skipped")
        return None
    if name in (LOCAL_ENDPOINT, CUSTOM_ENDPOINT) or name in taken or len(name) > 80:
        problems.append(f"{where}: name {name[:80]!r} is reserved, duplicated or too long; skipped")
        return None
    try:
        base_url = validate_base_url(raw.get("base_url"))
    except ValueError as exc:
        problems.append(f"{where} ({name}): {exc} Skipped.")
        return None
    models_raw = raw.get("models") or []
    if isinstance(models_raw, str):
        models_raw = [models_raw]
    models: list[str] = []
    for m in models_raw if isinstance(models_raw, list | tuple) else []:
        try:
            model = validate_model_id(m)
        except ValueError:
            problems.append(f"{where} ({name}): a model id is invalid; skipped that model")
            continue
        if model not in models:
            models.append(model)
    if not models:
        problems.append(f"{where} ({name}): no valid models listed; skipped")
        return None
    key_env = raw.get("api_key_env")
    key_env = str(key_env).strip() if key_env else None
    label = str(raw.get("label") or name)[:120]
    taken.add(name)
    return Endpoint(
        name=name,
        label=label,
        kind="configured",
        base_url=base_url,
        models=tuple(models),
        api_key_env=key_env,
        has_inline_key=bool(raw.get("api_key")),
    )


def local_model_id() -> str:
    """The model id the bundled server answers to (the local-model catalogue's slug)."""
    return ep_layer.local_model_id()


def load_config(secrets: Mapping[str, Any] | None, env: Mapping[str, str]) -> LiveConfig:
    """Build the live configuration from the secrets mapping (whole ``st.secrets``) and env.

    Secrets schema (all optional)::

        [live]
        public_mode = false
        allow_custom_endpoints = false    # typed base URLs (local mode, owner-only machines)
        local_model = true
        requests_per_minute = 20          # per client (token bucket shared by its sessions)
        global_requests_per_minute = 120  # whole app process
        client_ip_header = "X-Real-IP"    # optional: set by a reverse proxy you control
        max_repeats = 3
        max_identifiers = 5
        max_requests_per_run = 15
        max_tokens = 64
        max_question_chars = 500          # "write your own" questions, per language
        concurrency = 4
        timeout_s = 60

        [[live.endpoints]]
        name = "openrouter"
        label = "OpenRouter"              # optional display name
        base_url = "https://openrouter.ai/api/v1"
        api_key_env = "OPENROUTER_API_KEY"  # or api_key = "..." inline in secrets.toml
        models = ["openai/gpt-4o-mini"]

    Environment: ``RUPEEBIAS_PUBLIC_MODE=1`` turns public mode on (either source suffices),
    ``RUPEEBIAS_LIVE_ALLOW_CUSTOM_ENDPOINTS=1`` opts in to typed endpoints,
    ``RUPEEBIAS_LIVE_ENDPOINTS`` holds a JSON list of endpoint tables (appended after the
    secrets ones), ``RUPEEBIAS_LIVE_LOCAL_MODEL=0`` hides the bundled model,
    ``RUPEEBIAS_LIVE_CLIENT_IP_HEADER`` names the proxy header and
    ``RUPEEBIAS_LIVE_<SETTING>`` overrides each numeric setting above.

    Raises :class:`LiveConfigError` for a boolean it does not recognise or a ``live`` value
    that is not a table.
    """
    problems: list[str] = []
    raw_live = (secrets or {}).get("live") if isinstance(secrets, Mapping) else None
    if raw_live is not None and not isinstance(raw_live, Mapping):
        raise LiveConfigError("[live] in .streamlit/secrets.toml must be a table. The Try a "
                              "prompt page is disabled until it is fixed.")
    section = _as_dict(raw_live)
    # Either source turns public mode on; a value neither recognises stops the page.
    public_secret = _flag(section.get("public_mode"), False, "live.public_mode")
    public_env = _flag(env.get(ENV_PUBLIC_MODE), False, ENV_PUBLIC_MODE)
    public = public_secret or public_env
    custom_opt_in = _flag(section.get("allow_custom_endpoints"), False,
                          "live.allow_custom_endpoints")
    if env.get(ENV_ALLOW_CUSTOM) not in (None, ""):
        custom_opt_in = _flag(env.get(ENV_ALLOW_CUSTOM), False, ENV_ALLOW_CUSTOM)
    if public and custom_opt_in:
        problems.append("allow_custom_endpoints is ignored in public mode")
    limits = _limits(section, env, public, problems)
    header = env.get(ENV_CLIENT_IP_HEADER) or section.get("client_ip_header")
    client_ip_header = str(header).strip()[:80] if header else None

    endpoints: list[Endpoint] = []
    local_on = _flag(section.get("local_model"), True, "live.local_model")
    if env.get(ENV_LOCAL_MODEL) not in (None, ""):
        local_on = _flag(env.get(ENV_LOCAL_MODEL), True, ENV_LOCAL_MODEL)
    if local_on:
        endpoints.append(
            Endpoint(
                name=LOCAL_ENDPOINT,
                label="Bundled SmolLM2-135M-Instruct (llama.cpp, this machine)",
                kind="local",
                models=(local_model_id(),),
            )
        )
    raw_eps: list[Any] = []
    sec_eps = (secrets or {}).get("live", {}) if isinstance(secrets, Mapping) else {}
    sec_eps = sec_eps.get("endpoints") if isinstance(sec_eps, Mapping) else None
    if isinstance(sec_eps, list | tuple):
        raw_eps.extend(sec_eps)
    elif sec_eps is not None:
        problems.append("live.endpoints must be an array of tables ([[live.endpoints]])")
    env_eps = env.get(ENV_ENDPOINTS)
    if env_eps:
        try:
            parsed = json.loads(env_eps)
            if not isinstance(parsed, list):
                raise ValueError("not a list")
            raw_eps.extend(parsed)
        except ValueError:
            problems.append(f"{ENV_ENDPOINTS} is not a JSON list of endpoint objects; ignored")
    taken: set[str] = set()
    for i, raw in enumerate(raw_eps[:MAX_ENDPOINTS]):
        if not isinstance(raw, Mapping):
            problems.append(f"live.endpoints[{i}] is not a table; skipped")
            continue
        ep = _endpoint_from(_as_dict(raw), i, problems, taken)
        if ep is not None:
            endpoints.append(ep)
    if len(raw_eps) > MAX_ENDPOINTS:
        problems.append(f"only the first {MAX_ENDPOINTS} endpoints are used")
    cfg = LiveConfig(public, tuple(endpoints), limits, tuple(problems), custom_opt_in,
                     client_ip_header)
    if cfg.allow_custom:
        cfg = replace(cfg, endpoints=(*cfg.endpoints, Endpoint(
            name=CUSTOM_ENDPOINT, label="Custom endpoint (type a base URL and key)",
            kind="custom")))
    return cfg


def endpoint_api_key(
    endpoint: Endpoint, secrets: Mapping[str, Any] | None, env: Mapping[str, str]
) -> str:
    """The key of a configured endpoint, resolved at send time (never stored or displayed).

    Order: ``api_key_env`` names an environment variable; else an inline ``api_key`` in the
    secrets table; else the endpoint layer's dummy key (local servers such as llama.cpp or
    Ollama ignore it, but the SDK refuses an empty key)."""
    inline = None
    if endpoint.has_inline_key and isinstance(secrets, Mapping):
        live = secrets.get("live")
        eps = live.get("endpoints") if isinstance(live, Mapping) else None
        for raw in eps if isinstance(eps, list | tuple) else []:
            if isinstance(raw, Mapping) and str(raw.get("name") or "").strip() == endpoint.name:
                inline = raw.get("api_key") or None
                break
    return ep_layer.lookup_api_key(endpoint.api_key_env, env, inline=inline)


# --------------------------------------------------------------------------------------------
# Secrets hygiene (the rules are the endpoint layer's)
# --------------------------------------------------------------------------------------------


def redact_secrets(text: str | None, secrets: Sequence[str | None]) -> str | None:
    """Replace every secret, and every 8-character window of a long secret (providers often
    echo a key partially: ``sk-proj-abcd****wxyz``), with ``***``."""
    return None if text is None else ep_layer.redact(text, secrets)


url_secrets = ep_layer.url_secrets


# --------------------------------------------------------------------------------------------
# The bundled local model (lifecycle: `precompute.endpoint`)
# --------------------------------------------------------------------------------------------

ENV_LOCAL_BASE_URL = ep_layer.ENV_LOCAL_BASE_URL
LocalModelUnavailable = ep_layer.LocalModelUnavailable
LocalStatus = ep_layer.LocalStatus
local_server_alive = ep_layer.local_server_alive
local_model_status = ep_layer.local_model_status


def start_local_server(env: Mapping[str, str]) -> str:
    """Base URL of the bundled SmolLM2 server, starting it if needed (blocking, can take a
    while the first time). Call through ``st.cache_resource`` so a process runs one server."""
    return ep_layer.shared_local_server(env)

