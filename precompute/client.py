"""One chat-completion call with our own retry policy, shared by `collect` and the live page.

Why our own retries instead of the SDK's: we need full-jitter back-off that honours
``Retry-After`` (seconds, milliseconds or an HTTP date) with a cap, a bounded number of
attempts, timeouts and connection errors retried, and — crucially — a *result* instead of an
exception when everything failed, so that a batch records a terminal error row and goes on.
The semaphore (when given) is held only while a request is in flight, never while backing off.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import os
import random
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any, Literal

import httpx2  # the transport the openai SDK is built on
import openai

from precompute import endpoint

ReasoningStyle = Literal["openrouter", "sarvam", "omit"]


_RNG = random.Random()  # jitter only; seeding a new Random per call costs an urandom read


def utc_now_iso() -> str:
    """UTC timestamp in ISO 8601 with microseconds and an explicit offset."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class ChatRequest:
    """Exactly what is sent: `body()` is the JSON body on the wire (and what is hashed)."""

    model: str
    messages: tuple[tuple[str, str], ...]
    temperature: float = 0.0
    max_tokens: int = 40
    reasoning_effort: str | None = "none"
    reasoning_style: ReasoningStyle = "omit"

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("ChatRequest.model must be a non-empty model id")
        if not self.messages:
            raise ValueError("ChatRequest.messages must hold at least one message")
        for role, content in self.messages:
            if role not in ("system", "user", "assistant"):
                raise ValueError(f"unknown message role {role!r}")
            if not isinstance(content, str):
                raise ValueError(f"message content must be a string, got {type(content).__name__}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if not (0.0 <= self.temperature <= 2.0) or math.isnan(self.temperature):
            raise ValueError(f"temperature must be in [0, 2], got {self.temperature}")
        if self.reasoning_style not in ("openrouter", "sarvam", "omit"):
            raise ValueError(f"unknown reasoning_style {self.reasoning_style!r}")

    @classmethod
    def chat(cls, model: str, user: str, system: str | None = None, **kw: Any) -> ChatRequest:
        """Convenience constructor: optional system message, then the user message."""
        msgs: list[tuple[str, str]] = []
        if system:
            msgs.append(("system", system))
        msgs.append(("user", user))
        return cls(model=model, messages=tuple(msgs), **kw)

    def body(self) -> dict[str, Any]:
        """The JSON body sent to ``/chat/completions``.

        OpenRouter's switch is a ``reasoning`` object; Sarvam takes a top-level
        ``reasoning_effort`` (spec §5). Other hosts get neither: strict OpenAI-compatible
        servers may reject unknown fields.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": r, "content": c} for r, c in self.messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.reasoning_effort is not None:
            if self.reasoning_style == "openrouter":
                body["reasoning"] = {"effort": self.reasoning_effort, "exclude": False}
            elif self.reasoning_style == "sarvam":
                body["reasoning_effort"] = self.reasoning_effort
        return body

    @property
    def reasoning_sent(self) -> str | None:
        """The reasoning effort actually put on the wire (None when omitted)."""
        if self.reasoning_style == "omit":
            return None
        return self.reasoning_effort


@dataclass(frozen=True)
class RetryPolicy:
    """Retry and timeout settings. Defaults suit hosted APIs; tests shrink them."""

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    retry_after_cap_s: float = 120.0
    timeout_s: float = 120.0
    retry_statuses: frozenset[int] = frozenset({408, 409, 429})
    retry_5xx: bool = True
    retry_malformed: bool = True
    # An HTTP 200 with no text is usually a transient provider fault: retried, but at most this
    # many attempts in all (and never more than max_attempts). A length-cut empty answer is the
    # model's real output at this max_tokens and is final at once.
    empty_attempts: int = 2

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.empty_attempts < 1:
            raise ValueError("empty_attempts must be >= 1")
        if self.timeout_s <= 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("timeouts and delays must be positive")

    def is_retryable_status(self, status: int) -> bool:
        return status in self.retry_statuses or (self.retry_5xx and 500 <= status <= 599)

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Full jitter: U(0, min(cap, base * 2**(attempt-1))) for the wait after `attempt`."""
        return rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))


@dataclass(frozen=True)
class ChatResult:
    """Outcome of one request after retries.

    `error` is set when the request finally failed (`status == "error"`) and also when the
    provider answered with no text (`status == "empty"`, ``error_kind="empty_content"``), so an
    empty answer is never mistaken for a parseable one.
    """

    content: str | None
    finish_reason: str | None
    reasoning_content: str | None = None
    model_returned: str | None = None
    system_fingerprint: str | None = None
    response_id: str | None = None
    tokens_prompt: int | None = None
    tokens_completion: int | None = None
    latency_s: float | None = None
    started_at: str = ""
    finished_at: str = ""
    attempts: int = 0
    retry_waits_s: tuple[float, ...] = ()
    error: str | None = None
    error_kind: str | None = None
    http_status: int | None = None

    @property
    def status(self) -> Literal["ok", "empty", "error"]:
        """`error`: the request failed; `empty`: answered without text; `ok`: text returned."""
        if self.error_kind is not None and self.error_kind != "empty_content":
            return "error"
        if self.content is None or not self.content.strip():
            return "empty"
        return "ok"


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
            if math.isfinite(value):
                return max(0.0, value)
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
        return max(0.0, value) if math.isfinite(value) else None
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    now_ts = time.time() if now is None else now
    return max(0.0, parsed.timestamp() - now_ts)


#: Redaction lives in the endpoint layer (one rule for collect and the explorer).
redact = endpoint.redact
REDACT_WINDOW = endpoint.REDACT_WINDOW
REDACT_WINDOW_MIN_LEN = endpoint.REDACT_WINDOW_MIN_LEN


def redact_result(result: ChatResult, secrets: tuple[str, ...]) -> ChatResult:
    """`result` with every text field redacted, not only the content: a hostile or leaky
    upstream can echo the Authorization header into ``system_fingerprint``, ``finish_reason``,
    ``model``, ``id`` or the reasoning trace, and each of those reaches a file or a page."""
    secrets = tuple(s for s in secrets if s and len(s) >= 4)
    if not secrets:
        return result
    changes: dict[str, Any] = {}
    for f in fields(result):
        value = getattr(result, f.name)
        if isinstance(value, str):
            clean = redact(value, secrets)
            if clean != value:
                changes[f.name] = clean
    return replace(result, **changes) if changes else result


#: Keys sent to key-less local servers (`endpoint.DUMMY_KEY`): not secrets, and scrubbing them
#: (or their 8-character windows) could only damage answers.
PLACEHOLDER_KEYS = endpoint.PLACEHOLDER_KEYS


def _secrets_of(client: openai.AsyncOpenAI) -> tuple[str, ...]:
    key = getattr(client, "api_key", None)
    return (key,) if isinstance(key, str) and key not in PLACEHOLDER_KEYS else ()


@dataclass
class _Attempt:
    """Mutable per-attempt outcome, folded into the frozen ChatResult at the end."""

    retryable: bool
    error: str | None = None
    kind: str | None = None
    status: int | None = None
    retry_after: float | None = None
    payload: dict[str, Any] | None = None
    latency: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _result_from_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Pull the fields we record out of a chat.completion JSON object."""
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices[0]")
    choice = choices[0]
    message = choice.get("message") or {}
    if not isinstance(message, dict):
        raise ValueError("choices[0].message is not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")  # OpenRouter's name for the trace
    if reasoning is not None and not isinstance(reasoning, str):
        reasoning = json.dumps(reasoning, ensure_ascii=False)
    raw_usage = payload.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}

    def _int(value: object) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return int(value)

    return {
        "content": content,
        "finish_reason": choice.get("finish_reason"),
        "reasoning_content": reasoning,
        "model_returned": payload.get("model") if isinstance(payload.get("model"), str) else None,
        "system_fingerprint": payload.get("system_fingerprint")
        if isinstance(payload.get("system_fingerprint"), str) else None,
        "response_id": payload.get("id") if isinstance(payload.get("id"), str) else None,
        "tokens_prompt": _int(usage.get("prompt_tokens")),
        "tokens_completion": _int(usage.get("completion_tokens")),
    }


def _classify_transport_error(exc: BaseException) -> tuple[str, str]:
    """`timeout` or `connection`, from the whole cause chain: the aiohttp transport reports a
    refused or reset connection as a *ConnectTimeout*, so the SDK's class alone misleads."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in chain and len(chain) < 10:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    innermost = chain[-1]
    detail = f"{type(innermost).__name__}: {innermost}"
    for e in chain:
        if isinstance(e, ConnectionError) or (isinstance(e, OSError)
                                              and not isinstance(e, TimeoutError)):
            return "connection", detail
        name = type(e).__name__
        if name in ("ServerDisconnectedError", "ClientConnectorError", "ClientOSError",
                    "RemoteProtocolError", "ConnectError", "ReadError", "WriteError"):
            return "connection", detail
    return "timeout", detail


async def _attempt(
    client: openai.AsyncOpenAI, request: ChatRequest, policy: RetryPolicy
) -> _Attempt:
    body = request.body()
    t0 = time.perf_counter()
    try:
        # AsyncOpenAI.post sends `body` byte for byte (the hashed body is the body sent) and
        # skips the SDK's per-call TypedDict transform, which costs ~3 ms of CPU per request.
        # A hard ceiling in case a server trickles bytes past the transport's read timeout
        # (asyncio.timeout, unlike wait_for, needs no extra task per attempt).
        async with asyncio.timeout(policy.timeout_s + 5.0):
            resp = await client.post("/chat/completions", body=body, cast_to=httpx2.Response,
                                     options={"timeout": policy.timeout_s})
        text = resp.text
    except openai.APIStatusError as exc:
        status = exc.status_code
        headers = dict(exc.response.headers) if exc.response is not None else {}
        return _Attempt(
            retryable=policy.is_retryable_status(status),
            error=f"HTTP {status}: {exc.message}",
            kind="http_status",
            status=status,
            retry_after=parse_retry_after(headers),
        )
    except TimeoutError:
        return _Attempt(retryable=True, error=f"timeout after {policy.timeout_s:g} s",
                        kind="timeout")
    except openai.APIConnectionError as exc:  # includes APITimeoutError
        kind, detail = _classify_transport_error(exc)
        text = f"timeout after {policy.timeout_s:g} s" if kind == "timeout" else \
            f"connection error: {detail}"
        return _Attempt(retryable=True, error=text, kind=kind)
    except openai.APIResponseValidationError as exc:
        return _Attempt(retryable=policy.retry_malformed, error=f"malformed response: {exc}",
                        kind="malformed")
    latency = time.perf_counter() - t0
    try:
        payload = json.loads(text)
        if not isinstance(payload, dict):
            raise ValueError("top-level JSON is not an object")
        fields = _result_from_payload(payload)
    except (ValueError, TypeError) as exc:
        snippet = text[:200].replace("\n", " ")
        return _Attempt(retryable=policy.retry_malformed,
                        error=f"malformed response ({exc}): {snippet!r}", kind="malformed",
                        status=resp.status_code, latency=latency)
    return _Attempt(retryable=False, payload=payload, latency=latency, extra=fields,
                    status=resp.status_code)


async def complete(
    client: openai.AsyncOpenAI,
    request: ChatRequest,
    policy: RetryPolicy | None = None,
    *,
    semaphore: asyncio.Semaphore | None = None,
    rng: random.Random | None = None,
    may_retry: Callable[[], bool] | None = None,
    scrub: tuple[str, ...] = (),
) -> ChatResult:
    """Send `request`, retrying per `policy`. Never raises for API/transport errors.

    The client must be built with ``max_retries=0`` (see `make_client`) so that the SDK does not
    retry underneath us. Every text field of the result is scrubbed of the client's API key and
    of the strings in `scrub`. `may_retry` is asked before every retry (attempts 2, 3, ...):
    a rate limiter charges the retry there, and False ends the request with its last outcome,
    so a limit counts every request that reaches the upstream.
    """
    secrets = (*_secrets_of(client), *scrub)
    result = await _complete(client, request, policy or RetryPolicy(), semaphore, rng or _RNG,
                             may_retry)
    return redact_result(result, secrets)


def _retry_allowed(may_retry: Callable[[], bool] | None) -> bool:
    return may_retry is None or bool(may_retry())


async def _complete(
    client: openai.AsyncOpenAI,
    request: ChatRequest,
    policy: RetryPolicy,
    semaphore: asyncio.Semaphore | None,
    rng: random.Random,
    may_retry: Callable[[], bool] | None,
) -> ChatResult:
    started = utc_now_iso()
    waits: list[float] = []
    refused = False  # a retry was due but the limiter said no
    last = _Attempt(retryable=False, error="no attempt made", kind="internal")
    for attempt in range(1, policy.max_attempts + 1):
        if semaphore is not None:
            async with semaphore:
                last = await _attempt(client, request, policy)
        else:
            last = await _attempt(client, request, policy)
        if last.payload is not None:
            f = last.extra
            content = f["content"]
            empty = content is None or not str(content).strip()
            cut = str(f["finish_reason"] or "").strip().lower() in ("length", "max_tokens")
            retry_empty = (empty and not cut
                           and attempt < min(policy.empty_attempts, policy.max_attempts))
            if retry_empty and _retry_allowed(may_retry):
                wait = policy.backoff(attempt, rng)
                waits.append(wait)
                await asyncio.sleep(wait)
                continue
            note = f" after {attempt} attempts" if empty and attempt > 1 else ""
            return ChatResult(
                content=content,
                finish_reason=f["finish_reason"],
                reasoning_content=f["reasoning_content"],
                model_returned=f["model_returned"],
                system_fingerprint=f["system_fingerprint"],
                response_id=f["response_id"],
                tokens_prompt=f["tokens_prompt"],
                tokens_completion=f["tokens_completion"],
                latency_s=last.latency,
                started_at=started,
                finished_at=utc_now_iso(),
                attempts=attempt,
                retry_waits_s=tuple(waits),
                error=(f"empty content (finish_reason={f['finish_reason']}){note}"
                       if empty else None),
                error_kind="empty_content" if empty else None,
                http_status=last.status,
            )
        if not last.retryable or attempt == policy.max_attempts:
            break
        if not _retry_allowed(may_retry):
            refused = True
            break
        wait = policy.backoff(attempt, rng)
        if last.retry_after is not None:
            wait = max(wait, min(last.retry_after, policy.retry_after_cap_s))
        waits.append(wait)
        await asyncio.sleep(wait)
    error = last.error or "unknown error"
    if refused:
        error = f"{error} (not retried: rate limit reached)"
    elif last.retryable:
        error = f"{error} (gave up after {policy.max_attempts} attempts)"
    return ChatResult(
        content=None,
        finish_reason="error",
        started_at=started,
        finished_at=utc_now_iso(),
        attempts=len(waits) + 1,
        retry_waits_s=tuple(waits),
        error=error,
        error_kind=last.kind,
        http_status=last.status,
    )


TRANSPORT_ENV = "RUPEEBIAS_HTTP_TRANSPORT"


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    return httpx2.create_ssl_context()


def make_client(base_url: str, api_key: str, *, timeout_s: float = 120.0,
                max_connections: int = 64, transport: str | None = None) -> openai.AsyncOpenAI:
    """An AsyncOpenAI client with SDK retries off and a connection pool sized for `collect`.

    The HTTP transport is aiohttp when the SDK's `openai[aiohttp]` extra is installed (the
    SDK's documented choice for high concurrency; it halves client CPU per request here, see
    bench/collect.py), else the SDK's default httpx2 transport. `transport` or
    $RUPEEBIAS_HTTP_TRANSPORT ("aiohttp" / "httpx") forces one. Create the client inside the
    event loop that uses it and `await client.close()` when done.
    """
    want = transport or os.environ.get(TRANSPORT_ENV) or "auto"
    if want not in ("auto", "aiohttp", "httpx"):
        raise ValueError(f"unknown HTTP transport {want!r}: use aiohttp or httpx")
    limits = httpx2.Limits(max_connections=max_connections,
                           max_keepalive_connections=max_connections)
    # One TLS context for all clients: building one loads the CA bundle (~0.5 s of CPU here).
    kw: dict[str, Any] = {"limits": limits, "timeout": timeout_s, "verify": _ssl_context()}
    http_client: httpx2.AsyncClient | None = None
    if want in ("auto", "aiohttp"):
        try:
            http_client = openai.DefaultAioHttpClient(**kw)
        except RuntimeError:  # the aiohttp extra is not installed
            if want == "aiohttp":
                raise
    if http_client is None:
        http_client = openai.DefaultAsyncHttpxClient(**kw)
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0,
                              timeout=timeout_s, http_client=http_client)


def transport_name(client: openai.AsyncOpenAI) -> str:
    """`aiohttp` or `httpx`: which HTTP transport a client made by `make_client` uses."""
    inner = getattr(client, "_client", None)
    names = [cls.__name__ for cls in type(inner).__mro__]
    return "aiohttp" if any("Aiohttp" in n for n in names) else "httpx"
