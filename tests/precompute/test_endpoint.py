"""The endpoint layer (`precompute.endpoint`): URL rules, redaction, keys, local vs remote,
the bundled model's status and lifecycle — shared by `collect` and Try a prompt."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from precompute import collect, endpoint, manifest
from precompute.client import PLACEHOLDER_KEYS, ChatRequest


def test_one_dummy_key_everywhere() -> None:
    from explorer import live

    assert endpoint.DUMMY_KEY == "not-needed"
    assert PLACEHOLDER_KEYS == frozenset({endpoint.DUMMY_KEY})
    assert live.DUMMY_KEY == endpoint.DUMMY_KEY
    assert collect.api_key("NOPE_NOT_SET", None, local=True) == endpoint.DUMMY_KEY


def test_normalize_keeps_the_cache_key_form() -> None:
    # The form stored in every remote run's endpoint_key: it must never change.
    assert endpoint.normalize_base_url("https://user:pw@API.Example.com:8443/v1/?k=1") == \
        "https://api.example.com:8443/v1"
    assert collect.normalize_base_url(" http://LOCALHOST:8080/v1/ ") == "http://localhost:8080/v1"
    with pytest.raises(collect.CollectError, match="http"):
        collect.normalize_base_url("ftp://user:secret@host/x")
    with pytest.raises(endpoint.EndpointError) as err:
        endpoint.normalize_base_url("ftp://user:secret@host/x")
    assert "secret" not in str(err.value)


def test_cache_key_does_not_depend_on_the_key() -> None:
    # The dummy key changed from "sk-local-no-key" to "not-needed" (issue 19): safe only
    # because no key enters a cache key.
    req = ChatRequest.chat("m", "u", "s", temperature=0.0, max_tokens=40)
    assert collect.cache_key("local-llama-cpp:x.gguf:0123", req, 0) == collect.cache_key(
        "local-llama-cpp:x.gguf:0123", ChatRequest.chat("m", "u", "s", max_tokens=40), 0)
    assert "not-needed" not in str(req.body()) and "sk-local" not in str(req.body())


@pytest.mark.parametrize("url,expected", [
    ("http://localhost:8000/v1", "http://localhost:8000/v1"),
    ("  https://api.example.com/v1/  ", "https://api.example.com/v1"),
    ("HTTP://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
])
def test_validate_base_url(url: str, expected: str) -> None:
    assert endpoint.validate_base_url(url) == expected


@pytest.mark.parametrize("url", ["file:///etc/passwd", "http://u:p@h/v1", "http://h/v1?k=s3cr3t",
                                 "http://h:99999/v1", "http://h /v1", ""])
def test_validate_base_url_rejects_without_echo(url: str) -> None:
    with pytest.raises(endpoint.EndpointError) as err:
        endpoint.validate_base_url(url)
    assert isinstance(err.value, ValueError)
    assert "passwd" not in str(err.value) and "s3cr3t" not in str(err.value)


def test_redaction_and_hosts() -> None:
    key = "sk-test-0123456789abcdefXYZ"
    text = f"bad key {key} and {key[:4]}…{key[5:13]} at http://10.0.0.5:8000/v1"
    out = endpoint.redact(text, (key, *endpoint.url_secrets("http://10.0.0.5:8000/v1")))
    assert key not in out and key[5:13] not in out and "10.0.0.5" not in out
    assert endpoint.redact(f"x {endpoint.DUMMY_KEY}", (endpoint.DUMMY_KEY,)).endswith(
        endpoint.DUMMY_KEY)
    assert endpoint.redact_url("https://u:p@h.example:8443/v1?key=1") == \
        "https://h.example:8443/v1"
    assert endpoint.endpoint_host("https://u:p@h.example:8443/v1") == "h.example"
    assert manifest.endpoint_host is endpoint.endpoint_host
    assert endpoint.is_loopback("http://127.0.0.2:1/v1") and endpoint.is_loopback(
        "http://localhost/v1") and not endpoint.is_loopback("http://10.0.0.1/v1")


def test_key_lookup_order_and_required_keys() -> None:
    env = {"K": "from-env"}
    assert endpoint.lookup_api_key("K", env, inline="inline") == "from-env"
    assert endpoint.lookup_api_key("MISSING", env, inline="inline") == "inline"
    assert endpoint.lookup_api_key("MISSING", env) == endpoint.DUMMY_KEY
    assert endpoint.lookup_api_key("MISSING", env, base_url="http://127.0.0.1:8/v1",
                                   required=True) == endpoint.DUMMY_KEY
    with pytest.raises(endpoint.EndpointError, match="MISSING is not set.*api.example.com"):
        endpoint.lookup_api_key("MISSING", env, base_url="https://api.example.com/v1",
                                required=True)


def test_local_or_remote() -> None:
    t = endpoint.choose(None, None)
    assert t.local and t.model == "smollm2-135m-instruct" == endpoint.local_model_id()
    assert t.host == "127.0.0.1 (bundled local model)"
    r = endpoint.choose("https://u:p@openrouter.ai/api/v1", "openai/gpt-5.4")
    assert not r.local and r.host == "openrouter.ai"
    with pytest.raises(endpoint.EndpointError):
        endpoint.choose("https://openrouter.ai/api/v1", None)
    with pytest.raises(endpoint.EndpointError):
        endpoint.choose("file:///x", "m")


def test_local_model_status_names_the_one_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    status = endpoint.local_model_status({})
    assert not status.available and status.fix == "bash scripts/install_local_model.sh"
    assert "llama-cpp-python" in status.problem and "not installed" in status.problem
    # A running server named in the environment needs nothing installed.
    assert endpoint.local_model_status(
        {endpoint.ENV_LOCAL_BASE_URL: "http://127.0.0.1:9/v1"}).available
    assert not endpoint.local_model_status({endpoint.ENV_LOCAL_BASE_URL: "file:///x"}).available


def test_missing_launcher_is_unavailable_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "precompute.serve_local", None)
    assert "launcher" in endpoint.local_model_status({}).problem
    with pytest.raises(endpoint.LocalModelUnavailable, match="install_local_model.sh"):
        endpoint.shared_local_server({})


def test_local_server_context_manager_wraps_serve_local(monkeypatch: pytest.MonkeyPatch) -> None:
    from precompute import serve_local

    events: list[str] = []

    class Fake:
        def __init__(self, **kw: object) -> None:
            events.append(f"init {sorted(kw)}")

        def __enter__(self) -> Fake:
            events.append("start")
            return self

        def __exit__(self, *exc: object) -> None:
            events.append("stop")

    monkeypatch.setattr(serve_local, "LocalServer", Fake)
    with pytest.raises(RuntimeError), endpoint.local_server(processes=2) as srv:
        assert isinstance(srv, Fake)
        raise RuntimeError("boom")
    assert events == ["init ['processes']", "start", "stop"]


def test_client_names_are_reexported() -> None:
    from precompute import client

    for name in endpoint.CLIENT_EXPORTS:
        assert getattr(endpoint, name) is getattr(client, name)
    with pytest.raises(AttributeError):
        endpoint.no_such_name  # noqa: B018
