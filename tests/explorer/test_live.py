"""explorer.live: configuration, public-mode caps, rate limits, URL checks, send → parse → Δ%."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer import live
from rupeebias_core import benchmark as bm
from rupeebias_core.prompts import render_prompt
from tests.explorer.test_live_fake_server import FakeChatServer

KEY = "sk-test-SECRET-0123456789abcdef"
MALE, FEMALE = "I am male.", "I am female."


def pair_spec(**kw: object) -> live.ProbeSpec:
    base = dict(task="salary_estimation", language="en", profile_id="P01",
                question_variant_id="Q1", axis="Gender", identifiers=("Male", "Female"),
                repeats=1, temperature=0.0, max_tokens=32)
    base.update(kw)
    return live.ProbeSpec(**base)  # type: ignore[arg-type]


def fast_policy():  # noqa: ANN201
    from precompute.client import RetryPolicy

    return RetryPolicy(max_attempts=1, base_delay_s=0.0, max_delay_s=0.0, timeout_s=5.0)


# ---------------------------------------------------------------------------- base URLs


@pytest.mark.parametrize("url,expected", [
    ("http://localhost:8000/v1", "http://localhost:8000/v1"),
    ("  https://api.example.com/v1/  ", "https://api.example.com/v1"),
    ("HTTP://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
    ("http://[::1]:8080", "http://[::1]:8080"),
])
def test_validate_base_url_accepts_http_and_normalises(url: str, expected: str) -> None:
    assert live.validate_base_url(url) == expected


@pytest.mark.parametrize("url,needle", [
    ("file:///etc/passwd", "Only http:// and https://"),
    ("javascript:alert(1)", "Only http:// and https://"),
    ("ftp://example.com/v1", "Only http:// and https://"),
    ("gopher://example.com", "Only http:// and https://"),
    ("localhost:8000/v1", "Only http:// and https://"),
    ("http://", "no host"),
    ("http://user:pw@example.com/v1", "credentials"),
    ("http://example.com/v1?key=1", "query string"),
    ("http://example.com/v1#x", "fragment"),
    ("http://example.com:99999/v1", "port"),
    ("http://exa mple.com", "spaces"),
    ("http://example.com/\x00", "control"),
    ("http://e.com/" + "a" * 3000, "longer than"),
    ("", "Enter the endpoint"),
    (None, "Enter the endpoint"),
])
def test_validate_base_url_rejects_hostile_urls_without_echoing_them(url: object,
                                                                    needle: str) -> None:
    with pytest.raises(ValueError) as err:
        live.validate_base_url(url)
    assert needle in str(err.value)
    if isinstance(url, str) and len(url) > 12:
        assert url.strip() not in str(err.value)
    assert "passwd" not in str(err.value) and "alert" not in str(err.value)


def test_validate_model_id() -> None:
    assert live.validate_model_id(" llama3.1:8b ") == "llama3.1:8b"
    for bad in ("", "a b", "x\ny", "m" * 500, None):
        with pytest.raises(ValueError):
            live.validate_model_id(bad)


# ---------------------------------------------------------------------------- configuration


def test_default_config_offers_no_typed_endpoint() -> None:
    """Issue 18, item 1: with no configuration at all nobody can make the server POST to a URL
    of their choosing (the audit's SSRF)."""
    cfg = live.load_config({}, {})
    assert not cfg.public_mode and not cfg.allow_custom
    assert cfg.endpoint_names == (live.LOCAL_ENDPOINT,)
    assert all(ep.kind != "custom" for ep in cfg.endpoints)
    assert cfg.endpoint(live.LOCAL_ENDPOINT).models  # the bundled model id
    assert cfg.limits == live.LOCAL_DEFAULTS
    assert cfg.limits.requests_per_minute is None
    assert cfg.problems == ()


@pytest.mark.parametrize("secrets,env", [
    ({"live": {"allow_custom_endpoints": True}}, {}),
    ({}, {"RUPEEBIAS_LIVE_ALLOW_CUSTOM_ENDPOINTS": "1"}),
])
def test_typed_endpoints_are_an_explicit_opt_in(secrets: dict, env: dict) -> None:
    cfg = live.load_config(secrets, env)
    assert cfg.allow_custom
    assert cfg.endpoint_names == (live.LOCAL_ENDPOINT, live.CUSTOM_ENDPOINT)


def test_public_mode_overrides_the_typed_endpoint_opt_in() -> None:
    cfg = live.load_config({"live": {"allow_custom_endpoints": True}},
                           {"RUPEEBIAS_PUBLIC_MODE": "true"})
    assert cfg.public_mode and not cfg.allow_custom
    assert live.CUSTOM_ENDPOINT not in cfg.endpoint_names
    assert any("ignored in public mode" in p for p in cfg.problems)


@pytest.mark.parametrize("secrets,env", [
    ({}, {"RUPEEBIAS_PUBLIC_MODE": "enabled"}),
    ({}, {"RUPEEBIAS_PUBLIC_MODE": "y"}),
    ({}, {"RUPEEBIAS_PUBLIC_MODE": "2"}),
    ({"live": {"public_mode": 2}}, {}),
    ({"live": {"public_mode": "enabled"}}, {}),
    ({"live": {"public_mode": [True]}}, {}),
    ({"live": {"allow_custom_endpoints": "sure"}}, {}),
    ({}, {"RUPEEBIAS_LIVE_ALLOW_CUSTOM_ENDPOINTS": "maybe"}),
    ({"live": {"local_model": "perhaps"}}, {}),
    ({"live": "public"}, {}),
])
def test_unrecognised_mode_values_fail_closed(secrets: dict, env: dict) -> None:
    """The audit: "enabled", "y" and "2" silently ran in local mode. Now they stop the page."""
    with pytest.raises(live.LiveConfigError) as err:
        live.load_config(secrets, env)
    assert "disabled until it is fixed" in str(err.value)


@pytest.mark.parametrize("secrets,env", [
    ({"live": {"public_mode": True}}, {}),
    ({"live": {"public_mode": "true"}}, {}),
    ({}, {"RUPEEBIAS_PUBLIC_MODE": "1"}),
    ({"live": {"public_mode": False}}, {"RUPEEBIAS_PUBLIC_MODE": "yes"}),  # either source wins
])
def test_public_mode_from_secrets_or_env(secrets: dict, env: dict) -> None:
    cfg = live.load_config(secrets, env)
    assert cfg.public_mode and not cfg.allow_custom
    assert live.CUSTOM_ENDPOINT not in cfg.endpoint_names
    assert cfg.limits.requests_per_minute == live.PUBLIC_DEFAULTS.requests_per_minute
    assert cfg.limits.max_repeats == 3 and cfg.limits.max_identifiers == 5


def test_endpoints_from_secrets_and_env_with_bad_ones_skipped() -> None:
    secrets = {"live": {"endpoints": [
        {"name": "router", "label": "Router", "base_url": "https://router.example/api/v1/",
         "api_key_env": "ROUTER_KEY", "models": ["a/model-1", "b/model-2", "a/model-1"]},
        {"name": "evil", "base_url": "file:///etc/passwd", "models": ["x"]},
        {"name": "nomodels", "base_url": "http://h/v1", "models": []},
        {"name": "custom", "base_url": "http://h/v1", "models": ["x"]},  # reserved name
        {"base_url": "http://h/v1", "models": ["x"]},  # no name
        "not a table",
    ]}}
    env = {"RUPEEBIAS_LIVE_ENDPOINTS": json.dumps([
        {"name": "ollama", "base_url": "http://localhost:11434/v1", "models": "llama3.1:8b"},
        {"name": "router", "base_url": "http://dup/v1", "models": ["x"]},  # duplicate
    ])}
    cfg = live.load_config(secrets, env)
    assert cfg.endpoint_names == ("local", "router", "ollama")
    router = cfg.endpoint("router")
    assert router.base_url == "https://router.example/api/v1"
    assert router.models == ("a/model-1", "b/model-2")
    assert router.label == "Router" and router.api_key_env == "ROUTER_KEY"
    assert cfg.endpoint("ollama").models == ("llama3.1:8b",)
    text = " | ".join(cfg.problems)
    for fragment in ("evil", "nomodels", "reserved", "missing name", "not a table"):
        assert fragment in text
    assert "passwd" not in text


def test_bad_env_endpoint_json_is_reported_not_fatal() -> None:
    cfg = live.load_config({}, {"RUPEEBIAS_LIVE_ENDPOINTS": "{not json"})
    assert any("RUPEEBIAS_LIVE_ENDPOINTS" in p for p in cfg.problems)


def test_limits_are_clamped_to_hard_ceilings_and_env_overrides_secrets() -> None:
    secrets = {"live": {"public_mode": True, "max_repeats": 1000, "max_identifiers": "lots",
                        "requests_per_minute": 50, "max_requests_per_run": 80,
                        "max_tokens": 10**9, "timeout_s": "nan"}}
    cfg = live.load_config(secrets, {"RUPEEBIAS_LIVE_MAX_IDENTIFIERS": "12"})
    lim = cfg.limits
    assert lim.max_repeats == live.HARD_MAX_REPEATS
    assert lim.max_identifiers == 12  # env wins over the (invalid) secrets value
    assert lim.max_tokens == live.HARD_MAX_TOKENS
    assert lim.max_requests_per_run == 50  # never above the bucket, or a run could never go
    assert lim.timeout_s == live.PUBLIC_DEFAULTS.timeout_s
    assert any("max_repeats" in p for p in cfg.problems)


def test_public_mode_always_rate_limits() -> None:
    cfg = live.load_config({"live": {"public_mode": True, "requests_per_minute": "off"}}, {})
    assert cfg.limits.requests_per_minute == live.PUBLIC_DEFAULTS.requests_per_minute


def test_public_mode_always_has_a_global_cap() -> None:
    cfg = live.load_config({"live": {"public_mode": True,
                                     "global_requests_per_minute": "off"}}, {})
    assert cfg.limits.global_requests_per_minute == (
        live.PUBLIC_DEFAULTS.global_requests_per_minute)
    assert any("cannot be off in public mode" in p for p in cfg.problems)


def test_bundled_model_can_be_hidden() -> None:
    assert live.LOCAL_ENDPOINT not in live.load_config(
        {"live": {"local_model": False}}, {}).endpoint_names
    assert live.LOCAL_ENDPOINT not in live.load_config(
        {}, {"RUPEEBIAS_LIVE_LOCAL_MODEL": "0"}).endpoint_names


def test_api_key_resolution_never_stores_the_key_in_config() -> None:
    secrets = {"live": {"endpoints": [
        {"name": "a", "base_url": "http://a/v1", "api_key_env": "A_KEY", "models": ["m"]},
        {"name": "b", "base_url": "http://b/v1", "api_key": KEY, "models": ["m"]},
        {"name": "c", "base_url": "http://c/v1", "models": ["m"]},
    ]}}
    env = {"A_KEY": "env-key-123456"}
    cfg = live.load_config(secrets, env)
    assert KEY not in repr(cfg) and "env-key" not in repr(cfg)
    assert live.endpoint_api_key(cfg.endpoint("a"), secrets, env) == "env-key-123456"
    assert live.endpoint_api_key(cfg.endpoint("b"), secrets, env) == KEY
    assert live.endpoint_api_key(cfg.endpoint("c"), secrets, env) == "not-needed"


# ---------------------------------------------------------------------------- rate limiting


def test_token_bucket_takes_refills_and_refuses_oversized_requests() -> None:
    b = live.TokenBucket.full(6, now=0.0)
    assert b.take(4, now=0.0) == 0.0
    wait = b.take(4, now=0.0)  # 2 left, need 2 more at 6/min = 0.1/s → 20 s
    assert wait == pytest.approx(20.0)
    assert b.available(now=0.0) == pytest.approx(2.0)  # a refused take costs nothing
    assert b.take(4, now=20.0) == 0.0
    assert math.isinf(b.take(7, now=1000.0))
    b.give_back(100)
    assert b.available(now=1000.0) == 6.0


def test_session_bucket_lives_in_the_state_mapping_and_follows_the_rate() -> None:
    state: dict = {}
    b1 = live.session_bucket(state, "k", 10, now=0.0)
    b1.take(10, now=0.0)
    assert live.session_bucket(state, "k", 10, now=1.0) is b1
    b2 = live.session_bucket(state, "k", 5, now=1.0)  # operator changed the rate
    assert b2 is not b1 and b2.available(now=1.0) == 5.0
    json.dumps(state, default=lambda o: o.__dict__)  # plain data, nothing secret


def test_shared_bucket_is_thread_safe_wrapper() -> None:
    shared = live.SharedBucket(3)
    assert shared.take(3) == 0.0
    assert shared.take(1) > 0
    shared.give_back(1)
    assert shared.take(1) == 0.0


# ---------------------------------------------------------------------------- spec checks


def test_check_spec_enforces_caps() -> None:
    pub = live.PUBLIC_DEFAULTS
    assert live.check_spec(pair_spec(repeats=3), pub) == []
    region = tuple(i.value for i in bm.identifiers_for_axis("Region"))
    errs = live.check_spec(pair_spec(axis="Region", identifiers=region), pub)
    assert any("exceed the cap of 5" in e for e in errs)
    gender = tuple(i.value for i in bm.identifiers_for_axis("Gender"))
    assert live.check_spec(pair_spec(identifiers=gender, repeats=3), pub) == []  # 15 requests
    assert any("Repeats" in e for e in live.check_spec(pair_spec(repeats=4), pub))
    assert any("Repeats" in e for e in live.check_spec(pair_spec(repeats=10**9),
                                                       live.LOCAL_DEFAULTS))
    assert any("different" in e for e in live.check_spec(
        pair_spec(identifiers=("Male", "Male")), pub))
    assert any("belong" in e for e in live.check_spec(
        pair_spec(identifiers=("Male", "Hindu")), pub))
    assert any("max_tokens" in e for e in live.check_spec(pair_spec(max_tokens=65), pub))
    assert any("Temperature" in e for e in live.check_spec(pair_spec(temperature=math.nan), pub))
    assert live.check_spec(pair_spec(task="nope"), pub) == ["Unknown use case."]
    big = pair_spec(axis="Region", identifiers=region, repeats=20)  # 600 requests
    assert live.check_spec(big, live.LOCAL_DEFAULTS) == []
    assert any("600 requests" in e for e in live.check_spec(
        pair_spec(axis="Region", identifiers=region, repeats=20),
        live.Limits(20, 30, 100, 64, None, None, 4, 10.0)))


@pytest.mark.parametrize("task", bm.TASKS)
@pytest.mark.parametrize("language", bm.LANGUAGES)
def test_plan_prompts_are_render_prompt_and_system_prompt(task: str, language: str) -> None:
    prof = bm.profiles(task)[-1]
    qv = bm.question_variants(task, language)[-1]
    spec = pair_spec(task=task, language=language, profile_id=prof.profile_id,
                     question_variant_id=qv.id, axis="Religion", identifiers=("Hindu", "Muslim"),
                     fairness=True, system_prompt_style="dedented")
    plans = live.plan_prompts(spec)
    assert [p.identifier_value for p in plans] == ["Hindu", "Muslim"]
    for p in plans:
        ident = bm.identifier("Religion", p.identifier_value)
        assert p.user == render_prompt(task, language, ident, prof, qv)
        assert p.system == bm.system_prompt(task, "dedented", fairness=True)


def test_metric_value_is_the_amount_for_every_task() -> None:
    assert live.metric_value(600000.0) == 600000.0  # a counter-offer too: not its markup
    assert live.metric_value(None) is None and live.metric_value(math.nan) is None


# ---------------------------------------------------------------------------- Δ% and CI


def test_relative_gap_matches_the_paper_definition() -> None:
    assert live.relative_gap(600000, 540000) == pytest.approx(10.526315789)
    assert round(live.relative_gap(540000, 600000), 2) == 10.53
    assert math.isnan(live.relative_gap(None, 1.0))
    assert math.isnan(live.relative_gap(0.0, 0.0))


def test_t_interval() -> None:
    one = live.t_interval([10.0])
    assert one.n == 1 and one.lo is None and one.hi is None
    same = live.t_interval([10.0, 10.0, 10.0])
    assert same.degenerate and same.lo == same.hi == 10.0
    vals = [9.0, 10.0, 14.0]
    ci = live.t_interval(vals)
    half = stats.t.ppf(0.975, 2) * np.std(vals, ddof=1) / math.sqrt(3)
    assert ci.lo == pytest.approx(max(0.0, 11.0 - half))
    assert ci.hi == pytest.approx(11.0 + half)
    assert ci.lo >= 0.0  # clipped: Δ% of positive answers cannot be negative
    assert live.t_interval([math.nan, None]).n == 0  # type: ignore[list-item]


def test_redaction_removes_full_and_partial_secrets() -> None:
    text = f"key {KEY} partial {KEY[:3]}...{KEY[10:22]}****"
    red = live.redact_secrets(text, (KEY,))
    assert KEY not in red and KEY[10:22] not in red
    assert live.redact_secrets(None, (KEY,)) is None
    assert live.redact_secrets("http://10.1.2.3:8000/v1 down", live.url_secrets(
        "http://10.1.2.3:8000/v1")) == "*** down"


# ---------------------------------------------------------------------------- full flow


def test_run_probe_send_parse_delta_ci_against_fake_server() -> None:
    answers = {MALE: ["### 600000 INR"], FEMALE: ["### 540000 INR"]}
    with FakeChatServer(answers=answers) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(repeats=3), "fake-model",
                             endpoint_name="custom", endpoint_label="Custom endpoint",
                             policy=fast_policy(), concurrency=4)
        seen = list(srv.seen)
    assert len(seen) == 6
    assert {s.authorization for s in seen} == {f"Bearer {KEY}"}
    body = seen[0].body
    assert body["model"] == "fake-model" and body["temperature"] == 0.0
    assert body["max_tokens"] == 32
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == bm.system_prompt("salary_estimation")

    r = res.responses
    assert list(r["identifier_value"]) == ["Male"] * 3 + ["Female"] * 3
    assert list(r["repeat"]) == [1, 2, 3, 1, 2, 3]
    assert set(r["status"]) == {"valid"}
    assert list(r["value"]) == [600000.0] * 3 + [540000.0] * 3
    p = res.pairs.iloc[0]
    assert (p["identifier_a"], p["identifier_b"]) == ("Male", "Female")
    assert round(p["delta"], 2) == 10.53
    assert p["n_repeats"] == 3 and p["identical_repeats"]
    assert p["delta_lo"] == pytest.approx(p["delta"]) == pytest.approx(p["delta_hi"])
    assert res.summary["n_parsed"] == 6 and res.summary["pairs_over_10"] == 1
    assert round(res.summary["mean_delta"], 2) == 10.53
    dump = res.to_json()
    assert KEY not in dump and srv.base_url not in dump
    assert json.loads(dump)["pairs"][0]["identifier_b"] == "Female"


def test_run_probe_ci_over_differing_repeats() -> None:
    answers = {MALE: ["### 600000 INR", "### 620000 INR", "### 580000 INR"],
               FEMALE: ["### 540000 INR"]}
    with FakeChatServer(answers=answers) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(repeats=3, temperature=0.7),
                             "fake-model", endpoint_name="x", endpoint_label="x",
                             policy=fast_policy(), concurrency=1)
    male = sorted(res.responses.loc[res.responses["identifier_value"] == "Male", "value"])
    assert male == [580000.0, 600000.0, 620000.0]
    deltas = sorted(res.pairs.iloc[0]["deltas"])
    expected = sorted(live.relative_gap(v, 540000.0) for v in male)
    assert deltas == pytest.approx(expected)
    ci = live.t_interval(expected)
    p = res.pairs.iloc[0]
    assert not p["identical_repeats"]
    assert p["delta"] == pytest.approx(np.mean(expected))
    assert (p["delta_lo"], p["delta_hi"]) == pytest.approx((ci.lo, ci.hi))
    assert p["delta_lo"] < p["delta"] < p["delta_hi"]


def test_run_probe_whole_axis_forms_all_pairs() -> None:
    gender = tuple(i.value for i in bm.identifiers_for_axis("Gender"))
    with FakeChatServer(answers={MALE: ["### 600000 INR"]}, default="### 540000 INR") as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(identifiers=gender), "m",
                             endpoint_name="x", endpoint_label="x", policy=fast_policy())
    assert len(res.pairs) == 10  # C(5, 2)
    assert len(srv.seen) == 5
    male_pairs = res.pairs[(res.pairs["identifier_a"] == "Male")]
    assert (male_pairs["delta"].round(2) == 10.53).all()
    others = res.pairs[(res.pairs["identifier_a"] != "Male")]
    assert (others["delta"] == 0).all()


def test_hostile_server_cannot_make_the_key_or_url_reappear() -> None:
    with FakeChatServer(echo_auth=True, answers={MALE: ["### 600000 INR"]}) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="custom",
                             endpoint_label="Custom endpoint", policy=fast_policy(),
                             scrub=live.url_secrets(srv.base_url))
    assert KEY not in res.to_json()
    assert all("***" in t for t in res.responses["response"])
    with FakeChatServer(status=401) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="custom",
                             endpoint_label="Custom endpoint", policy=fast_policy(),
                             scrub=live.url_secrets(srv.base_url))
        url = srv.base_url
    assert set(res.responses["status"]) == {"request_error"}
    assert all("HTTP 401" in e for e in res.responses["error"])
    dump = res.to_json()
    assert KEY not in dump and KEY[8:20] not in dump and url not in dump
    assert math.isnan(res.pairs.iloc[0]["delta"]) and res.summary["n_errors"] == 2


def test_unreachable_endpoint_gives_error_rows_not_an_exception() -> None:
    res = live.run_probe("http://127.0.0.1:9/v1", KEY, pair_spec(), "m", endpoint_name="x",
                         endpoint_label="x", policy=fast_policy(),
                         scrub=live.url_secrets("http://127.0.0.1:9/v1"))
    assert set(res.responses["status"]) == {"request_error"}
    assert "127.0.0.1:9" not in res.to_json()


def test_run_deadline_marks_unfinished_requests() -> None:
    with FakeChatServer(delay_s=2.0) as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="x",
                             endpoint_label="x", policy=fast_policy(), deadline_s=0.3)
    assert set(res.responses["status"]) == {"request_error"}
    assert all("deadline" in e for e in res.responses["error"])


def test_refusals_and_unparseable_answers_form_no_pair() -> None:
    with FakeChatServer(answers={MALE: ["I cannot answer that."]},
                        default="### 540000 INR") as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="x",
                             endpoint_label="x", policy=fast_policy())
    male = res.responses.iloc[0]
    assert male["status"] == "refusal" and male["value"] is None or pd.isna(male["value"])
    assert math.isnan(res.pairs.iloc[0]["delta"]) and res.pairs.iloc[0]["n_repeats"] == 0


# ---------------------------------------------------------------------------- comparison


def test_compare_with_precomputed_slot() -> None:
    with FakeChatServer(answers={MALE: ["### 600000 INR"]}, default="### 540000 INR") as srv:
        res = live.run_probe(srv.base_url, KEY, pair_spec(), "m", endpoint_name="x",
                             endpoint_label="x", policy=fast_policy())
    slot = pd.DataFrame({
        "identifier_value": ["Male", "Female", "Transgender"],
        "value": [700000.0, 700000.0, 1.0],
        "metric_value": [700000.0, 630000.0, 1.0],
        "status": ["valid"] * 3,
        "response": ["### 700000 INR", "### 630000 INR", "x"],
    })
    comp = live.compare_with_precomputed(res, slot)
    row = comp.iloc[0]
    assert row["precomputed_value_a"] == 700000.0 and row["precomputed_value_b"] == 630000.0
    assert row["precomputed_delta"] == pytest.approx(live.relative_gap(700000.0, 630000.0))
    assert round(row["live_delta"], 2) == 10.53
    assert row["precomputed_response_b"] == "### 630000 INR"
    assert live.compare_with_precomputed(res, None).empty
    missing = live.compare_with_precomputed(res, slot[slot["identifier_value"] != "Female"])
    assert math.isnan(missing.iloc[0]["precomputed_delta"])


def test_compare_with_precomputed_counter_offer_uses_amounts_on_both_sides() -> None:
    """The stored counter-offer amounts (corrected reading, ₹ a year) are compared as the live
    answers are, as amounts, so the two Δ% compare."""
    spec = pair_spec(task="counter_offer_recommendation", profile_id="N01")  # offer ₹5 LPA
    with FakeChatServer(answers={MALE: ["### 600000 INR"]}, default="### 540000 INR") as srv:
        res = live.run_probe(srv.base_url, KEY, spec, "m", endpoint_name="x",
                             endpoint_label="x", policy=fast_policy())
    slot = pd.DataFrame({"identifier_value": ["Male", "Female"],
                         "value": [600000.0, 540000.0], "metric_value": [600000.0, 540000.0],
                         "status": ["valid"] * 2, "response": ["a", "b"]})
    row = live.compare_with_precomputed(res, slot).iloc[0]
    assert row["precomputed_value_a"] == 600000.0 and row["precomputed_value_b"] == 540000.0
    assert row["precomputed_delta"] == pytest.approx(row["live_delta"])  # same answers
    assert row["live_delta"] == pytest.approx(60000 / 570000 * 100)  # not 12 / 14 (markups)


def test_counter_offer_delta_is_on_the_amount_not_the_markup() -> None:
    # N01: TCS, offer ₹5 LPA. ₹6 LPA vs ₹5.4 LPA: Δ = 0.6 / 5.7 × 100 (as markups, +20 % and
    # +8 %, it would be 12 / 14 × 100: a gap between markups, not between answers).
    spec = pair_spec(task="counter_offer_recommendation", profile_id="N01")
    with FakeChatServer(answers={MALE: ["### 600000 INR"]}, default="### 540000 INR") as srv:
        res = live.run_probe(srv.base_url, KEY, spec, "m", endpoint_name="x",
                             endpoint_label="x", policy=fast_policy())
    assert list(res.responses["metric_value"].round(6)) == [600000.0, 540000.0]
    assert res.pairs.iloc[0]["delta"] == pytest.approx(0.6 / 5.7 * 100)
