"""Issue 18 (security and reliability audit), the live page: each failure the audit found,
reproduced. Servers run on 127.0.0.1 only; every loop is bounded."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st

from explorer import live
from rupeebias_core.parsing import parse
from tests.explorer.test_live_fake_server import FakeChatServer
from tests.explorer.test_try_prompt import (
    KEY,
    PAGE,
    isolated,  # noqa: F401 - the autouse fixture: no operator settings leak in
    k,
    open_page,
    public_secrets,
    rendered_text,
)

MALE, FEMALE = "I am male.", "I am female."
ANSWERS = {MALE: ["### 600000 INR"], FEMALE: ["### 540000 INR"]}


def pair_spec(**kw: object) -> live.ProbeSpec:
    base = dict(task="salary_estimation", language="en", profile_id="P01",
                question_variant_id="Q1", axis="Gender", identifiers=("Male", "Female"),
                repeats=1, temperature=0.0, max_tokens=32)
    base.update(kw)
    return live.ProbeSpec(**base)  # type: ignore[arg-type]


def policy(attempts: int = 1):  # noqa: ANN201
    from precompute.client import RetryPolicy

    return RetryPolicy(max_attempts=attempts, base_delay_s=0.01, max_delay_s=0.02, timeout_s=5)


# ---------------------------------------------------------------------------- 1. secure default


def test_no_configuration_offers_no_typed_endpoint_even_when_a_link_asks() -> None:
    at = open_page(query={"endpoint": "custom"})
    assert at.selectbox(key=k("endpoint")).options == [
        live.load_config({}, {}).endpoint(live.LOCAL_ENDPOINT).label]
    assert not at.text_input  # no base URL field, no key field
    assert "`endpoint`" in " ".join(w.value for w in at.warning)


def test_remote_visitor_never_gets_typed_endpoints_even_with_the_opt_in(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(live.ENV_ALLOW_CUSTOM, "1")
    local = open_page()
    assert len(local.selectbox(key=k("endpoint")).options) == 2  # control: the opt-in works
    monkeypatch.setattr(type(st.context), "ip_address", property(lambda self: "203.0.113.9"))
    remote = open_page(query={"endpoint": "custom"})
    assert len(remote.selectbox(key=k("endpoint")).options) == 1
    assert not remote.text_input


@pytest.mark.parametrize("value", ["enabled", "y", "2"])
def test_unrecognised_public_mode_stops_the_page(monkeypatch: pytest.MonkeyPatch,
                                                 value: str) -> None:
    monkeypatch.setenv(live.ENV_PUBLIC_MODE, value)
    at = open_page()
    assert any("RUPEEBIAS_PUBLIC_MODE" in e.value and "disabled" in e.value for e in at.error)
    assert not at.selectbox and not at.button  # nothing can be chosen or sent


def test_unparseable_secrets_file_stops_the_page(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`public_mode = true` plus one TOML syntax error used to run in local mode."""
    from streamlit import config
    from streamlit.runtime.secrets import Secrets

    bad = tmp_path / "secrets.toml"
    bad.write_text("[live]\npublic_mode = true\nrequests_per_minute = = 5\n", encoding="utf-8")
    old = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(bad)])
    monkeypatch.setattr(st, "secrets", Secrets())
    try:
        from streamlit.testing.v1 import AppTest

        from tests.explorer.test_try_prompt import PAGE_FILE

        at = AppTest.from_file(str(PAGE_FILE), default_timeout=60)  # at.secrets left empty
        at.run()
    finally:
        config.set_option("secrets.files", old)
    assert not at.exception
    assert any("could not be read" in e.value for e in at.error)
    assert not at.selectbox and not at.button
    assert str(bad) not in rendered_text(at)


def test_read_secrets_tells_missing_from_broken() -> None:
    from streamlit.errors import StreamlitSecretNotFoundError

    def missing() -> dict[str, Any]:
        raise StreamlitSecretNotFoundError("No secrets found. Valid paths: {p}", p="x",
                                           error_id="no-secrets-found")

    def broken() -> dict[str, Any]:
        raise StreamlitSecretNotFoundError("Error parsing secrets file at {path}", path="/s",
                                           error_id="failed-parsing-secrets-file")

    assert live.read_secrets(missing) == {}
    with pytest.raises(live.LiveConfigError):
        live.read_secrets(broken)
    assert live.read_secrets(lambda: {"live": {"public_mode": True}}) == {
        "live": {"public_mode": True}}


def test_public_errors_name_no_internal_address(monkeypatch: pytest.MonkeyPatch) -> None:
    inner = "upstream vllm-gpu-7.corp.internal:8000 (10.20.30.40) refused the connection"
    with FakeChatServer(status=502, status_message=inner) as srv:
        at = open_page(secrets=public_secrets(srv.base_url))
        at.button(key=f"{PAGE}.send").click().run()
        url = srv.base_url
    text = rendered_text(at)
    assert "HTTP 502" in text  # the visitor learns what kind of failure it was
    for leak in ("vllm-gpu-7", "10.20.30.40", url, url.split("//")[1].split("/")[0]):
        assert leak not in text
    # an unreachable configured endpoint: no host or port in the error either
    dead = "http://127.0.0.1:9/v1"
    res = live.run_probe(dead, KEY, pair_spec(), "m", endpoint_name="x", endpoint_label="x",
                         policy=policy(), public=True)
    assert set(res.responses["error"]) == {"the endpoint could not be reached"}
    assert "127.0.0.1" not in res.to_json()


# ---------------------------------------------------------------------------- 3. rate limits


def test_fresh_sessions_share_the_clients_bucket(monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit: 40 fresh sessions got 126 requests against a limit of 20 per session."""
    with FakeChatServer(answers=ANSWERS) as srv:
        secrets = public_secrets(srv.base_url)  # 4 requests per minute, 2 per run
        sent_ok = 0
        for _ in range(4):  # four brand-new sessions of the same visitor
            at = open_page(secrets=secrets)
            at.button(key=f"{PAGE}.send").click().run()
            sent_ok += not any("Rate limit reached" in e.value for e in at.error)
        seen = len(srv.seen)
    assert seen == 4 and sent_ok == 2


def test_retries_count_against_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit: a failing upstream got ~540 requests/min against a 120/min global limit."""
    with FakeChatServer(status=503, status_message="overloaded") as srv:
        at = open_page(secrets=public_secrets(srv.base_url, requests_per_minute=2))
        at.button(key=f"{PAGE}.send").click().run()  # 2 requests; each would retry once
        seen = len(srv.seen)
    assert seen == 2  # the retries found no token and were not sent
    errors = " ".join(str(e) for e in at.dataframe[-1].value["error"])
    assert "not retried: rate limit reached" in errors


def test_global_cap_holds_for_retries_of_many_clients() -> None:
    clients = live.ClientBuckets(100)
    global_bucket = live.SharedBucket(5)
    with FakeChatServer(status=500, status_message="down") as srv:
        for ip in ("198.51.100.1", "198.51.100.2", "198.51.100.3"):
            key = live.client_key(ip)
            if clients.take(key, 1) or global_bucket.take(1):
                continue
            charge = live.RetryCharge(clients, key, global_bucket)
            live.run_probe(srv.base_url, KEY, pair_spec(identifiers=("Male", "Female")), "m",
                           endpoint_name="x", endpoint_label="x", policy=policy(4),
                           may_retry=charge, concurrency=1)
        seen = len(srv.seen)
    assert seen <= 5 + 3  # the global capacity, plus the refill of a few seconds at most


def test_client_buckets_are_per_client_and_bounded() -> None:
    b = live.ClientBuckets(4, max_clients=3)
    assert b.take("a", 4, now=0.0) == 0.0
    assert b.take("a", 1, now=0.0) > 0  # the same client in a new session: still empty
    assert b.take("b", 1, now=0.0) == 0.0  # another client has its own bucket
    assert b.take("c", 1, now=0.0) == 0.0
    # 15 s later b and c have refilled (equal to new buckets), a has not: a new client evicts
    # a full bucket, never the one that still limits somebody.
    assert b.take("d", 1, now=15.0) == 0.0
    assert len(b) == 3 and "a" in b._buckets and "b" not in b._buckets
    assert b.take("a", 2, now=15.0) > 0


def test_client_key_uses_the_proxy_header_only_when_named() -> None:
    assert live.client_key(None) == live.UNKNOWN_CLIENT
    assert live.client_key("203.0.113.9") == "203.0.113.9"
    assert live.client_key("::ffff:203.0.113.9") == "203.0.113.9"
    assert live.client_key("2001:db8::1") == live.client_key("2001:db8::2") == "2001:db8::/64"
    headers = {"X-Real-IP": "198.51.100.7"}
    assert live.client_key("10.0.0.2", headers) == "10.0.0.2"  # not trusted unless named
    assert live.client_key("10.0.0.2", headers, "x-real-ip") == "198.51.100.7"
    assert live.client_key("10.0.0.2", {"X-Forwarded-For": "6.6.6.6, 198.51.100.8"},
                           "X-Forwarded-For") == "198.51.100.8"  # the value our proxy added
    assert live.client_key("not an ip") == live.UNKNOWN_CLIENT


# ---------------------------------------------------------------------------- 4. echoed keys


def test_key_echoed_into_any_field_never_reaches_the_download() -> None:
    with FakeChatServer(answers=ANSWERS, echo_auth_fields=True) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="x",
                             endpoint_label="x", policy=policy())
    dump = res.to_json()
    assert "fp_fake" in dump  # the fields are there…
    assert KEY not in dump  # …without the key
    assert all(KEY[i:i + 8] not in dump for i in range(len(KEY) - 7))
    assert set(res.responses["status"]) == {"valid"}  # the scrubbed finish_reason is harmless


# ---------------------------------------------------------------------------- 7. smaller items


def test_a_dollar_answer_is_not_compared_with_a_rupee_answer() -> None:
    with FakeChatServer(answers={MALE: ["$5"], FEMALE: ["### 600000 INR"]}) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="x",
                             endpoint_label="x", policy=policy())
    male = res.responses.iloc[0]
    assert male["excluded"] == "foreign_currency" and pd.isna(male["value"])
    assert math.isnan(res.pairs.iloc[0]["delta"])  # was 199.997


def test_live_page_and_metrics_share_the_foreign_currency_rule() -> None:
    from rupeebias_core.metrics.parsed import apply_method, parse_rows
    from rupeebias_core.parsing import metric_exclusion

    texts = ["$5", "### 600000 INR", "USD 80,000 per year", "₹12 LPA", "I cannot help",
             "### 6000 USD", "12 lakh", "", "### -1 INR"]
    prompts = pd.DataFrame({
        "id": [f"p{i}" for i in range(len(texts))], "condition": "standard",
        "task": "salary_estimation", "language": "en", "axis": "Gender",
        "identifier_value": [f"v{i}" for i in range(len(texts))], "profile_id": "P01",
        "question_variant_id": "Q1", "offered_ctc_lpa": math.nan})
    responses = pd.DataFrame({"id": prompts["id"], "condition": "standard", "response": texts,
                              "finish_reason": "stop"})
    metrics = apply_method(parse_rows(responses, prompts), "m", "corrected")
    for text, included in zip(texts, metrics["included"], strict=True):
        live_value = live._parse("salary_estimation", text, "stop")["value"]
        assert (live_value is not None) == bool(included), text
        assert (metric_exclusion(parse("salary_estimation", text, "stop")) is None) == included


def test_empty_200_answers_get_a_bounded_retry_on_the_live_page() -> None:
    with FakeChatServer(answers={MALE: ["", "### 600000 INR"], FEMALE: [""]}) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="x",
                             endpoint_label="x", policy=live.live_retry_policy(5.0))
        seen = len(srv.seen)
    male, female = res.responses.iloc[0], res.responses.iloc[1]
    assert male["value"] == 600000.0
    assert pd.isna(female["value"]) and female["status"] == "empty"
    assert seen == 4  # two attempts each, never more


def test_download_is_valid_json_with_the_exclusion_column() -> None:
    with FakeChatServer(answers=ANSWERS) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="x",
                             endpoint_label="x", policy=policy())
    rows = json.loads(res.to_json())["responses"]
    assert [r["excluded"] for r in rows] == [None, None]
