"""`precompute.client`: request bodies, retry policy and fault handling against a fake server."""

from __future__ import annotations

import asyncio
import email.utils
import importlib.util
import random
import time

import pytest

from precompute.client import (
    TRANSPORT_ENV,
    ChatRequest,
    ChatResult,
    RetryPolicy,
    complete,
    make_client,
    parse_retry_after,
    redact,
)
from tests.precompute.conftest import FAKE_KEY
from tests.precompute.fake_openai_server import Action, FakeOpenAIServer


@pytest.fixture(autouse=True, params=["aiohttp", "httpx"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on both HTTP transports make_client can choose."""
    if request.param == "aiohttp" and importlib.util.find_spec("aiohttp") is None:
        pytest.skip("openai[aiohttp] not installed")
    monkeypatch.setenv(TRANSPORT_ENV, request.param)
    return str(request.param)


FAST = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.05, timeout_s=0.5)


def run(srv: FakeOpenAIServer, user: str, policy: RetryPolicy = FAST,
        **kw: object) -> tuple[ChatResult, float]:
    async def go() -> ChatResult:
        client = make_client(srv.base_url, FAKE_KEY, timeout_s=policy.timeout_s)
        try:
            # The outer bound proves "never a hang": every path must end well before it.
            return await asyncio.wait_for(
                complete(client, ChatRequest.chat("m", user, "sys", **kw), policy), 30)
        finally:
            await client.close()

    t0 = time.monotonic()
    res = asyncio.run(go())
    return res, time.monotonic() - t0


def test_body_reasoning_styles() -> None:
    base = ChatRequest.chat("m", "u", "s")
    assert base.body() == {"model": "m", "temperature": 0.0, "max_tokens": 40,
                           "messages": [{"role": "system", "content": "s"},
                                        {"role": "user", "content": "u"}]}
    assert base.reasoning_sent is None
    orr = ChatRequest.chat("m", "u", reasoning_style="openrouter")
    assert orr.body()["reasoning"] == {"effort": "none", "exclude": False}
    assert "reasoning_effort" not in orr.body()
    sv = ChatRequest.chat("sarvam-105b", "u", reasoning_style="sarvam", reasoning_effort="low")
    assert sv.body()["reasoning_effort"] == "low" and "reasoning" not in sv.body()
    assert ChatRequest.chat("m", "u").body()["messages"] == [{"role": "user", "content": "u"}]


@pytest.mark.parametrize("kw", [{"max_tokens": 0}, {"temperature": -1.0},
                                {"temperature": float("nan")}, {"reasoning_style": "bogus"}])
def test_request_rejects_bad_values(kw: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ChatRequest.chat("m", "u", **kw)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ChatRequest(model="", messages=(("user", "x"),))


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(30, abs=1)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_is_full_jitter_and_capped() -> None:
    pol = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(1)
    waits = [pol.backoff(a, rng) for a in range(1, 10) for _ in range(50)]
    assert min(waits) >= 0.0 and max(waits) <= 8.0
    assert max(pol.backoff(1, rng) for _ in range(200)) <= 1.0
    assert max(pol.backoff(6, rng) for _ in range(200)) > 4.0  # cap reached, not exceeded


def test_ok_records_fields(fake_server: FakeOpenAIServer) -> None:
    fake_server.reasoning_content = "thinking..."
    res, _ = run(fake_server, "hello")
    assert res.status == "ok" and res.error is None and res.attempts == 1
    assert res.content and res.content.startswith("### ")
    assert res.finish_reason == "stop" and res.model_returned == "m"
    assert res.system_fingerprint == "fp_fake_0001" and res.reasoning_content == "thinking..."
    assert res.tokens_prompt and res.tokens_completion and res.latency_s is not None
    assert res.started_at.endswith("+00:00") and res.finished_at >= res.started_at
    assert fake_server.count() == 1


def test_429_retry_after_is_honoured(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"rl": [Action("status", 429, retry_after="1"), Action("ok")]}
    res, _ = run(fake_server, "rl")
    assert res.status == "ok" and res.attempts == 2
    assert res.retry_waits_s[0] >= 1.0
    t = fake_server.times("rl")
    assert len(t) == 2 and t[1] - t[0] >= 0.95


def test_retry_after_http_date_and_cap(fake_server: FakeOpenAIServer) -> None:
    date = email.utils.formatdate(time.time() + 2, usegmt=True)
    fake_server.script = {"d": [Action("status", 503, retry_after=date), Action("ok")],
                          "cap": [Action("status", 429, retry_after="3600"), Action("ok")]}
    res, _ = run(fake_server, "d")
    assert res.status == "ok" and 0.5 <= res.retry_waits_s[0] <= 2.5
    capped = RetryPolicy(max_attempts=2, base_delay_s=0.01, timeout_s=1, retry_after_cap_s=0.2)
    res, took = run(fake_server, "cap", capped)
    assert res.status == "ok" and res.retry_waits_s[0] == pytest.approx(0.2, abs=0.05)
    assert took < 5


def test_5xx_retried_then_ok(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"x": [Action("status", 500), Action("status", 503), Action("ok")]}
    res, _ = run(fake_server, "x")
    assert res.status == "ok" and res.attempts == 3 and fake_server.count("x") == 3


def test_5xx_exhausted_is_terminal_error(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"x": [Action("status", 502)]}
    res, _ = run(fake_server, "x")
    assert res.status == "error" and res.finish_reason == "error" and res.content is None
    assert res.http_status == 502 and res.attempts == 3 and fake_server.count("x") == 3
    assert "gave up after 3 attempts" in (res.error or "")


def test_400_not_retried(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"bad": [Action("status", 400)]}
    res, _ = run(fake_server, "bad")
    assert res.status == "error" and res.attempts == 1 and fake_server.count("bad") == 1


def test_timeout_is_retried_and_never_hangs(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"slow": [Action("timeout", delay_s=5)]}
    res, took = run(fake_server, "slow")
    assert res.status == "error" and res.error_kind == "timeout" and res.attempts == 3
    assert took < 3 * 0.5 + 1.5  # three 0.5 s timeouts plus tiny back-offs


def test_timeout_then_ok(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"s": [Action("timeout", delay_s=3), Action("ok")]}
    res, _ = run(fake_server, "s")
    assert res.status == "ok" and res.attempts == 2


def test_connection_reset_retried(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"r": [Action("reset"), Action("reset"), Action("ok")]}
    res, _ = run(fake_server, "r")
    assert res.status == "ok" and res.attempts == 3
    fake_server.script = {"r2": [Action("reset")]}
    res, _ = run(fake_server, "r2")
    assert res.status == "error" and res.error_kind == "connection"


def test_connection_refused_is_error_not_exception() -> None:
    with FakeOpenAIServer() as srv:
        url = srv.base_url
    async def go() -> ChatResult:
        client = make_client(url, FAKE_KEY)
        return await complete(client, ChatRequest.chat("m", "u"), FAST)
    res = asyncio.run(go())
    assert res.status == "error" and res.error_kind == "connection" and res.attempts == 3


def test_malformed_json_recorded(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"m": [Action("malformed")]}
    res, _ = run(fake_server, "m")
    assert res.status == "error" and res.error_kind == "malformed"
    assert '{"id": "x"' in (res.error or "")


def test_empty_content_and_length(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {"e": [Action("empty")], "l": [Action("length", content="### 12")]}
    res, _ = run(fake_server, "e")
    assert res.status == "empty" and res.content is None and res.finish_reason == "length"
    assert res.error == "empty content (finish_reason=length)" and res.attempts == 1
    res, _ = run(fake_server, "l")
    assert res.status == "ok" and res.content == "### 12" and res.finish_reason == "length"


def test_error_text_never_contains_the_key(fake_server: FakeOpenAIServer) -> None:
    # A provider echoing the key in its error body must not leak it into our record.
    fake_server.script = {"k": [Action("status", 401, echo_auth=True)]}

    async def go() -> ChatResult:
        client = make_client(fake_server.base_url, FAKE_KEY)
        return await complete(client, ChatRequest.chat("m", "k"), FAST)

    res = asyncio.run(go())
    assert res.status == "error" and res.attempts == 1
    assert "Bearer ***" in (res.error or "") and FAKE_KEY not in (res.error or "")
    assert redact(f"bad key {FAKE_KEY}!", (FAKE_KEY,)) == "bad key ***!"


def test_semaphore_released_while_backing_off(fake_server: FakeOpenAIServer) -> None:
    """With one slot, a request waiting out Retry-After must not block another one."""
    fake_server.script = {"wait": [Action("status", 429, retry_after="1"), Action("ok")]}

    async def go() -> tuple[ChatResult, ChatResult, float, float]:
        client = make_client(fake_server.base_url, FAKE_KEY)
        sem = asyncio.Semaphore(1)
        t0 = time.monotonic()

        async def timed(user: str) -> tuple[ChatResult, float]:
            r = await complete(client, ChatRequest.chat("m", user), FAST, semaphore=sem)
            return r, time.monotonic() - t0

        first = asyncio.create_task(timed("wait"))
        await asyncio.sleep(0.2)
        (a, ta), (b, tb) = await asyncio.gather(first, timed("free"))
        return a, b, ta, tb

    a, b, ta, tb = asyncio.run(go())
    assert a.status == b.status == "ok"
    assert tb < 0.9 < ta  # "free" finished during "wait"'s back-off


# ---- issue 18: every text field redacted, empty answers retried, retries charged ------------


def test_key_echoed_into_any_field_is_redacted(fake_server: FakeOpenAIServer) -> None:
    """An upstream that echoes the Authorization header into system_fingerprint, finish_reason,
    model, id and the reasoning trace: none of those may carry the key (nor 8-char pieces)."""
    fake_server.script = {"echo": [Action("ok", echo_auth=True)]}
    res, _ = run(fake_server, "echo")
    assert res.status == "ok"
    texts = {f: getattr(res, f) for f in ("content", "finish_reason", "system_fingerprint",
                                          "model_returned", "response_id", "reasoning_content")}
    assert all(isinstance(v, str) and "***" in v for v in texts.values()), texts
    for value in texts.values():
        assert FAKE_KEY not in value and FAKE_KEY[5:13] not in value


def test_placeholder_keys_are_not_scrubbed_from_answers(fake_server: FakeOpenAIServer) -> None:
    from precompute.endpoint import DUMMY_KEY

    fake_server.script = {"p": [Action("ok", content=f"### 500000 INR {DUMMY_KEY}")]}

    async def go() -> ChatResult:
        client = make_client(fake_server.base_url, DUMMY_KEY, timeout_s=1)
        try:
            return await complete(client, ChatRequest.chat("m", "p"), FAST)
        finally:
            await client.close()

    assert asyncio.run(go()).content == f"### 500000 INR {DUMMY_KEY}"


def test_empty_200_gets_a_bounded_retry(fake_server: FakeOpenAIServer) -> None:
    fake_server.script = {
        "once": [Action("empty", finish_reason="stop"), Action("ok", content="### 7 INR")],
        "always": [Action("empty", finish_reason="stop")],
    }
    res, _ = run(fake_server, "once")
    assert res.status == "ok" and res.content == "### 7 INR" and res.attempts == 2
    res, _ = run(fake_server, "always", RetryPolicy(max_attempts=6, base_delay_s=0.01,
                                                    max_delay_s=0.05, timeout_s=0.5))
    assert res.status == "empty" and res.attempts == 2  # bounded by empty_attempts, not 6
    assert fake_server.count("always") == 2
    assert res.error == "empty content (finish_reason=stop) after 2 attempts"


def test_may_retry_is_charged_before_every_retry(fake_server: FakeOpenAIServer) -> None:
    """A limiter that allows one retry: exactly two requests reach the failing upstream."""
    fake_server.script = {"fail": [Action("status", status=503)]}
    asked: list[int] = []

    def may_retry() -> bool:
        asked.append(1)
        return len(asked) <= 1

    async def go() -> ChatResult:
        client = make_client(fake_server.base_url, FAKE_KEY, timeout_s=1)
        try:
            return await complete(client, ChatRequest.chat("m", "fail"),
                                  RetryPolicy(max_attempts=5, base_delay_s=0.01,
                                              max_delay_s=0.02, timeout_s=1),
                                  may_retry=may_retry)
        finally:
            await client.close()

    res = asyncio.run(go())
    assert fake_server.count("fail") == 2 and len(asked) == 2
    assert res.status == "error" and res.attempts == 2
    assert "not retried: rate limit reached" in (res.error or "")
