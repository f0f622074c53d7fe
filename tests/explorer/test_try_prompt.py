"""AppTest of the *Try a prompt* page: widgets, exact prompts, public/local mode, the live flow
against a fake OpenAI-compatible server, URL state, and that secrets never leak."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from explorer import live
from rupeebias_core import benchmark as bm
from rupeebias_core.prompts import render_prompt
from tests.explorer.test_live_fake_server import FakeChatServer

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
PAGE_FILE = REPO / "pages" / "try_prompt.py"
PAGE = "try_prompt"
KEY = "sk-test-SECRET-0123456789abcdef"
ANSWERS = {"I am male.": ["### 600000 INR"], "I am female.": ["### 540000 INR"]}
TIMEOUT = 60


def k(name: str) -> str:
    return f"{PAGE}.{name}"


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No operator settings leak in; an empty data dir; fresh Streamlit caches."""
    import os

    for name in list(os.environ):
        if name.startswith("RUPEEBIAS_") or name == "FAKE_KEY":
            monkeypatch.delenv(name, raising=False)
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("RUPEEBIAS_DATA_DIR", str(tmp_path / "data"))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def typed_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's explicit opt-in to the custom (typed URL) endpoint (issue 18, item 1)."""
    monkeypatch.setenv(live.ENV_ALLOW_CUSTOM, "1")


def _uses_navigation() -> bool:
    return APP.is_file() and "try_prompt" in APP.read_text(encoding="utf-8")


def open_page(secrets: dict[str, Any] | None = None,
              query: dict[str, Any] | None = None) -> AppTest:
    """The page as a visitor reaches it: via app.py's navigation when it exists. On the
    salary-estimation slot (the fake servers answer "### N INR") unless ``query`` names one."""
    query = {"task": "salary_estimation", **(query or {})}
    if _uses_navigation():
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        at.secrets = dict(secrets or {"_test": True})
        at.run()
        at.switch_page("pages/try_prompt.py")
    else:
        at = AppTest.from_file(str(PAGE_FILE), default_timeout=TIMEOUT)
        at.secrets = dict(secrets or {"_test": True})  # never read a developer's secrets.toml
    if query:
        at.query_params.clear()
        at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def rendered_text(at: AppTest) -> str:
    """Everything the page sends to the browser (every element's proto, including widget
    values, plus dataframe contents), as one string."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    walk(at.sidebar)
    for df in at.dataframe:
        parts.append(df.value.to_csv())
    return "\n".join(parts)


def session_dump(at: AppTest) -> str:
    return json.dumps({key: repr(at.session_state[key]) for key in at.session_state})


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The (only) dataframe on the page that has ``column``."""
    found = [df.value for df in at.dataframe if column in df.value.columns]
    assert len(found) == 1, [list(df.value.columns) for df in at.dataframe]
    return found[0]


def is_password(widget: Any) -> bool:
    from streamlit.proto.TextInput_pb2 import TextInput as TextInputProto

    return widget.proto.type == TextInputProto.PASSWORD


def metric_values(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def custom_endpoint(at: AppTest, url: str, key: str = KEY, model: str = "fake-model") -> None:
    at.selectbox(key=k("endpoint")).set_value(live.CUSTOM_ENDPOINT).run()
    at.text_input(key=f"{PAGE}.secret_base_url").input(url)
    at.text_input(key=f"{PAGE}.secret_api_key").input(key)
    at.text_input(key=k("model")).input(model)


def public_secrets(base_url: str, **extra: Any) -> dict[str, Any]:
    return {"live": {"public_mode": True, "local_model": False, "requests_per_minute": 4,
                     "endpoints": [{"name": "fake", "label": "Fake hosted API",
                                    "base_url": base_url, "api_key_env": "FAKE_KEY",
                                    "models": ["fake-model", "fake-model-2"]}],
                     **extra}}


# ---------------------------------------------------------------------------- widgets/prompts


def test_default_page_shows_all_widgets_and_local_mode_inputs() -> None:
    at = open_page()
    labels = {w.label for w in at.selectbox}
    assert {"Use case", "Profile", "Axis", "Question variant", "Identifier A", "Identifier B",
            "Endpoint", "Model", "Compare with the precomputed result of"} <= labels
    assert {r.label for r in at.radio} >= {"Language", "Compare", "System prompt form",
                                          "Fairness instruction"}
    assert {s.label for s in at.select_slider} >= {"Repeats per prompt", "Temperature",
                                                  "max_tokens"}
    endpoints = at.selectbox(key=k("endpoint"))
    assert endpoints.value == live.LOCAL_ENDPOINT  # the bundled model is the default
    assert len(endpoints.options) == 1  # no typed endpoint without the operator's opt-in
    assert at.select_slider(key=k("n")).options[-1] == str(live.HARD_MAX_REPEATS)
    assert (at.selectbox(key=k("a")).value, at.selectbox(key=k("b")).value) == ("Male", "Female")
    assert not at.text_input  # URL/key inputs appear only for the custom endpoint
    assert at.button(key=f"{PAGE}.send").label == "Send 2 requests"


def test_prompts_shown_for_a_slot_equal_render_prompt() -> None:
    query = {"task": "counter_offer_recommendation", "lang": "hinglish", "profile": "N05",
             "qv": "Q2", "axis": "Religion", "a": "Hindu", "b": "Muslim", "style": "dedented",
             "fair": "on"}
    at = open_page(query=query)
    assert at.selectbox(key=k("task")).value == "counter_offer_recommendation"
    assert at.radio(key=k("lang")).value == "hinglish"
    assert at.selectbox(key=k("profile")).value == "N05"
    task, lang = "counter_offer_recommendation", "hinglish"
    prof = bm.profile(task, "N05")
    qv = next(q for q in bm.question_variants(task, lang) if q.id == "Q2")
    expected = [bm.system_prompt(task, "dedented", fairness=True)] + [
        render_prompt(task, lang, bm.identifier("Religion", v), prof, qv)
        for v in ("Hindu", "Muslim")
    ]
    assert [c.value for c in at.text] == expected
    # the state is in the URL: non-default values are written, and the link reproduces the view
    assert {key: at.query_params[key] for key in ("task", "lang", "profile", "qv", "axis",
                                                   "style", "fair")} == {
        key: query[key] for key in ("task", "lang", "profile", "qv", "axis", "style", "fair")}
    again = open_page(query=dict(at.query_params))
    assert [c.value for c in again.text] == expected


def test_changing_widgets_updates_prompts_and_url() -> None:
    at = open_page()
    at.selectbox(key=k("task")).set_value("service_pricing_client").run()
    at.selectbox(key=k("axis")).set_value("Caste").run()
    assert (at.selectbox(key=k("a")).value, at.selectbox(key=k("b")).value) == (
        "Brahmin", "Dalit")  # the axis' canonical pair is the default
    at.selectbox(key=k("b")).set_value("OBC").run()
    assert not at.exception
    prof = bm.profiles("service_pricing_client")[0]
    qv = bm.question_variants("service_pricing_client", "en")[0]
    users = [c.value for c in at.text][1:]
    assert users == [render_prompt("service_pricing_client", "en",
                                   bm.identifier("Caste", v), prof, qv)
                     for v in ("Brahmin", "OBC")]
    assert at.query_params["task"] == "service_pricing_client"
    assert at.query_params["axis"] == "Caste" and at.query_params["b"] == "OBC"
    assert "a" not in at.query_params  # defaults stay implicit
    at.radio(key=k("scope")).set_value("axis").run()
    assert len(at.text) == 1 + len(bm.identifiers_for_axis("Caste"))
    assert at.button(key=f"{PAGE}.send").label == "Send 24 requests"


def test_malformed_url_params_are_rejected_with_a_clear_message() -> None:
    query = {"task": "<script>alert(1)</script>", "n": "100000", "a": "Nobody",
             "temp": "nan", "endpoint": "file:///etc/passwd", "zzz": "1", "profile": "P99",
             "max_tokens": "-5"}
    at = open_page(query=query)
    warning = " ".join(w.value for w in at.warning)
    assert warning.startswith("Ignored link parameter(s):")
    for name in ("task", "n", "a", "temp", "endpoint", "zzz", "profile", "max_tokens"):
        assert f"`{name}`" in warning
    assert "repeats must be 1–20" in warning
    text = rendered_text(at)
    assert "<script>" not in text and "passwd" not in text
    assert at.selectbox(key=k("task")).value == "salary_increment_estimation"  # the default
    assert at.select_slider(key=k("n")).value == "1"
    assert not at.button(key=f"{PAGE}.send").disabled
    assert "n" not in at.query_params and "zzz" not in at.query_params  # URL cleaned
    at.run()  # the warning is shown once per link, not on every rerun
    assert not at.warning


# ---------------------------------------------------------------------------- local mode flow


def test_local_mode_custom_endpoint_full_flow_and_no_secret_leaks(typed_endpoints: None) -> None:
    with FakeChatServer(answers=ANSWERS) as srv:
        at = open_page()
        custom_endpoint(at, srv.base_url)
        at.select_slider(key=k("n")).set_value("3").run()
        assert is_password(at.text_input(key=f"{PAGE}.secret_api_key"))
        # Issue 19: the base URL is a normal text field (readable while typing); only the key
        # is masked. It is still cleared after the send and kept out of the link.
        assert not is_password(at.text_input(key=f"{PAGE}.secret_base_url"))
        assert KEY in session_dump(at)  # control: the dump does see the live widget value
        assert KEY not in json.dumps(dict(at.query_params))
        at.button(key=f"{PAGE}.send").click().run()
        seen = list(srv.seen)
        url = srv.base_url
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(seen) == 6 and {s.authorization for s in seen} == {f"Bearer {KEY}"}
    assert {s.body["model"] for s in seen} == {"fake-model"}

    metrics = metric_values(at)
    assert metrics["Δ% · Male vs Female"] == "10.53 %"
    assert metrics["Answers parsed"] == "6 / 6"
    pairs = frame_with(at, "95% CI")
    assert round(float(pairs["Δ%"].iloc[0]), 2) == 10.53
    assert pairs["95% CI"].iloc[0] == "[10.53, 10.53]"
    assert int(pairs["n repeats"].iloc[0]) == 3
    answers = frame_with(at, "raw response")
    assert list(answers["raw response"]) == ["### 600000 INR"] * 3 + ["### 540000 INR"] * 3
    assert list(answers["parsed value"]) == [600000.0] * 3 + [540000.0] * 3
    text = rendered_text(at)
    assert "### 600000 INR" in text and "I am female." in text  # the dump covers the page
    captions = " ".join(c.value for c in at.caption)
    assert "zero width" in captions and "deterministic" in captions  # temperature-0 caveat

    # The typed URL and key were cleared after use and appear nowhere.
    assert at.text_input(key=f"{PAGE}.secret_api_key").value == ""
    assert at.text_input(key=f"{PAGE}.secret_base_url").value == ""
    for blob in (session_dump(at), json.dumps(dict(at.query_params)), rendered_text(at)):
        assert KEY not in blob
        assert url not in blob
    assert at.query_params["endpoint"] == "custom" and at.query_params["model"] == "fake-model"
    download = at.get("download_button")
    assert download  # the run can be downloaded (and holds no secret: see test_live)


def test_repeats_with_sampling_show_a_t_interval(typed_endpoints: None) -> None:
    answers = {"I am male.": ["### 600000 INR", "### 620000 INR", "### 580000 INR"],
               "I am female.": ["### 540000 INR"]}
    with FakeChatServer(answers=answers) as srv:
        at = open_page()
        custom_endpoint(at, srv.base_url)
        at.select_slider(key=k("n")).set_value("3")
        at.select_slider(key=k("temp")).set_value("0.7").run()
        at.button(key=f"{PAGE}.send").click().run()
    assert not at.exception and not at.error
    pairs = frame_with(at, "95% CI")
    lo, hi = (float(x) for x in re.findall(r"[\d.]+", pairs["95% CI"].iloc[0]))
    assert lo < float(pairs["Δ%"].iloc[0]) < hi
    assert any("Student-t" in c.value for c in at.caption)


def test_leaving_the_custom_endpoint_drops_typed_secrets(typed_endpoints: None) -> None:
    at = open_page()
    custom_endpoint(at, "http://127.0.0.1:9/v1")
    at.run()
    assert KEY in session_dump(at)  # control
    at.selectbox(key=k("endpoint")).set_value(live.LOCAL_ENDPOINT).run()
    assert KEY not in session_dump(at) and "127.0.0.1:9" not in session_dump(at)
    at.selectbox(key=k("endpoint")).set_value(live.CUSTOM_ENDPOINT).run()
    assert at.text_input(key=f"{PAGE}.secret_api_key").value == ""


def test_hostile_base_urls_are_rejected_and_cleared(typed_endpoints: None) -> None:
    at = open_page()
    custom_endpoint(at, "file:///etc/passwd")
    at.button(key=f"{PAGE}.send").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "Only http:// and https://" in errors
    assert "passwd" not in rendered_text(at)
    assert at.text_input(key=f"{PAGE}.secret_base_url").value == ""
    assert at.text_input(key=f"{PAGE}.secret_api_key").value == ""
    assert KEY not in session_dump(at)


def test_server_errors_echoing_the_key_are_redacted_on_the_page(typed_endpoints: None) -> None:
    with FakeChatServer(status=401) as srv:
        at = open_page()
        custom_endpoint(at, srv.base_url)
        at.button(key=f"{PAGE}.send").click().run()
        url = srv.base_url
    assert not at.exception
    answers = frame_with(at, "raw response")
    assert all("HTTP 401" in e for e in answers["error"])
    text = rendered_text(at)
    assert KEY not in text and KEY[8:20] not in text and url not in text
    assert any("failed" in w.value for w in at.warning)


def test_bundled_model_endpoint_uses_the_local_server() -> None:
    with FakeChatServer(answers=ANSWERS) as srv:
        import os

        os.environ[live.ENV_LOCAL_BASE_URL] = srv.base_url  # removed by the fixture
        at = open_page()
        at.button(key=f"{PAGE}.send").click().run()
        seen = list(srv.seen)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {s.body["model"] for s in seen} == {live.local_model_id()} == {
        "smollm2-135m-instruct"}
    assert metric_values(at)["Δ% · Male vs Female"] == "10.53 %"
    assert any("135-million-parameter" in c.value for c in at.caption)


def test_missing_llama_cpp_gives_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "precompute.serve_local", None)  # import fails
    at = open_page()
    at.button(key=f"{PAGE}.send").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "llama-cpp-python[server]" in errors


def test_launcher_errors_are_shown_and_one_server_serves_all_sessions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from precompute import serve_local

    def broken() -> str:
        raise serve_local.LocalModelError(
            "llama-cpp-python is not installed: `pip install 'llama-cpp-python[server]'`\nlog…")

    monkeypatch.setattr(serve_local, "ensure_local_server", broken)
    at = open_page()
    at.button(key=f"{PAGE}.send").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "could not be started" in errors and "llama-cpp-python[server]" in errors
    assert "log…" not in errors  # first line only, no server log dump

    starts: list[str] = []
    with FakeChatServer(answers=ANSWERS) as srv:
        def fake_start() -> str:
            starts.append(srv.base_url)
            return srv.base_url

        monkeypatch.setattr(serve_local, "ensure_local_server", fake_start)
        for _ in range(2):  # two visitors, one app process
            visitor = open_page()
            visitor.button(key=f"{PAGE}.send").click().run()
            assert metric_values(visitor)["Δ% · Male vs Female"] == "10.53 %"
    assert len(starts) == 1  # st.cache_resource: started once per process


# ---------------------------------------------------------------------------- public mode


def test_public_mode_hides_url_and_key_inputs_and_caps_runs(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    at = open_page(secrets=public_secrets("http://127.0.0.1:9/v1"))
    assert any("Public demo mode" in i.value for i in at.info)
    endpoints = at.selectbox(key=k("endpoint"))
    assert endpoints.options == ["Fake hosted API"]  # configured endpoints only
    assert at.selectbox(key=k("model")).options == ["fake-model", "fake-model-2"]
    assert not at.text_input  # no base URL, no key
    assert at.select_slider(key=k("n")).options == ["1", "2", "3"]
    # a whole axis only within the identifier cap
    at.radio(key=k("scope")).set_value("axis").run()
    at.selectbox(key=k("axis")).set_value("Religion").run()
    assert at.button(key=f"{PAGE}.send").disabled
    assert any("exceed the cap of 5" in e.value for e in at.error)
    at.selectbox(key=k("axis")).set_value("Gender").run()  # 5 identifiers: within the cap…
    assert not any("exceed the cap" in e.value for e in at.error)
    # …but 5 requests > requests_per_minute (4), which caps a run at 4 requests
    assert any("cap is 4 per run" in e.value for e in at.error)
    assert at.button(key=f"{PAGE}.send").disabled
    at.radio(key=k("scope")).set_value("pair").run()
    assert not at.error and not at.button(key=f"{PAGE}.send").disabled
    # a custom endpoint named in the URL is refused
    at2 = open_page(secrets=public_secrets("http://127.0.0.1:9/v1"),
                    query={"endpoint": "custom", "n": "20"})
    assert at2.selectbox(key=k("endpoint")).value == "fake"
    warning = " ".join(w.value for w in at2.warning)
    assert "`endpoint`" in warning and "`n`" in warning
    assert not at2.text_input


def test_public_mode_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUPEEBIAS_PUBLIC_MODE", "1")
    at = open_page()
    assert not at.text_input
    assert live.CUSTOM_ENDPOINT not in at.selectbox(key=k("endpoint")).options
    assert at.select_slider(key=k("n")).options[-1] == "3"


def test_public_mode_rate_limit_per_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeChatServer(answers=ANSWERS) as srv:
        at = open_page(secrets=public_secrets(srv.base_url))
        at.select_slider(key=k("n")).set_value("2").run()  # 2 identifiers × 2 = 4 requests
        at.button(key=f"{PAGE}.send").click().run()
        assert not at.error, [e.value for e in at.error]
        assert metric_values(at)["Δ% · Male vs Female"] == "10.53 %"
        assert len(srv.seen) == 4
        assert {s.authorization for s in srv.seen} == {f"Bearer {KEY}"}  # from api_key_env
        at.button(key=f"{PAGE}.send").click().run()  # bucket empty
        assert len(srv.seen) == 4
    errors = " ".join(e.value for e in at.error)
    assert "Rate limit reached" in errors and "4 requests per minute" in errors
    assert KEY not in rendered_text(at) and KEY not in session_dump(at)


def test_public_mode_global_rate_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeChatServer(answers=ANSWERS) as srv:
        secrets = public_secrets(srv.base_url, global_requests_per_minute=2)
        at = open_page(secrets=secrets)
        at.button(key=f"{PAGE}.send").click().run()  # 2 requests: fine
        other = open_page(secrets=secrets)  # another visitor, same process
        other.button(key=f"{PAGE}.send").click().run()
    assert not at.error
    assert any("app-wide rate limit" in e.value for e in other.error)


# ---------------------------------------------------------------------------- comparison


def test_comparison_with_precomputed_result(monkeypatch: pytest.MonkeyPatch,
                                           typed_endpoints: None) -> None:
    from explorer import data

    calls: list[tuple] = []

    def fake_models() -> pd.DataFrame:
        return pd.DataFrame({"model": ["fake-model", "other"], "has_raw": [True, False],
                             "label": ["Fake Model (local)", "Other"]})

    def fake_slot(*args: Any, **kwargs: Any) -> pd.DataFrame:
        calls.append((*args, kwargs))
        return pd.DataFrame({
            "identifier_value": ["Male", "Female"], "value": [700000.0, 630000.0],
            "metric_value": [700000.0, 630000.0], "status": ["valid", "valid"],
            "response": ["### 700000 INR", "### 630000 INR"],
            "system_prompt": [bm.system_prompt("salary_estimation")] * 2,
        })

    monkeypatch.setattr(data, "available_models", fake_models)
    monkeypatch.setattr(data, "slot_rows", fake_slot)
    with FakeChatServer(answers=ANSWERS) as srv:
        plain = open_page()
        # the model by the label every page gives it, not its file slug
        assert plain.selectbox(key=k("cmp")).options == ["— none —", "Fake Model (local)"]
        assert plain.selectbox(key=k("cmp")).value == ""  # the bundled model: no stored run
        # a link naming a model with stored responses compares with it by default
        at = open_page(query={"endpoint": "custom", "model": "fake-model"})
        assert at.selectbox(key=k("cmp")).value == "fake-model"
        custom_endpoint(at, srv.base_url)
        at.button(key=f"{PAGE}.send").click().run()
    assert not at.exception and not at.error
    # the stored answers as the live run reads them (our parser: the corrected reading)
    assert calls[-1] == ("fake-model", "salary_estimation", "en", "P01", "Q1", "Gender",
                         "standard", {"method": "corrected"})
    comp = frame_with(at, "precomputed Δ%")
    assert any("precomputed responses of Fake Model (local)" in m.value for m in at.markdown)
    assert round(float(comp["live Δ%"].iloc[0]), 2) == 10.53
    assert float(comp["precomputed Δ%"].iloc[0]) == pytest.approx(
        live.relative_gap(700000.0, 630000.0))
    assert comp["stored answer B"].iloc[0] == "### 630000 INR"
    at.selectbox(key=k("cmp")).set_value("").run()  # explicitly none: kept in the URL
    assert at.query_params["cmp"] == ""
    assert not [df for df in at.dataframe if "precomputed Δ%" in df.value.columns]


def test_public_mode_without_endpoints_explains_what_to_configure() -> None:
    at = open_page(secrets={"live": {"public_mode": True, "local_model": False}})
    assert not at.exception
    assert any("No live endpoint is configured" in e.value for e in at.error)
    assert at.button(key=f"{PAGE}.send").disabled
    assert len(at.text) == 3  # the prompts are still shown


def test_whole_axis_in_local_mode() -> None:
    at = open_page(query={"axis": "Region", "scope": "axis"})
    assert len(at.text) == 1 + 30
    assert at.button(key=f"{PAGE}.send").label == "Send 30 requests"
    assert not at.button(key=f"{PAGE}.send").disabled
