"""Issue 19 on the *Try a prompt* page (AppTest): the "write your own" question end to end
against the loopback fake server, public-mode caps, max_tokens 40, and the fresh-machine path
(the bundled model missing: said before Send, with the one command, and the shipped answers)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer import live
from rupeebias_core import benchmark as bm
from rupeebias_core.parsing import parse
from tests.explorer.test_live_fake_server import FakeChatServer
from tests.explorer.test_try_prompt import (  # noqa: F401 - `isolated` is an autouse fixture
    KEY,
    PAGE,
    frame_with,
    isolated,
    k,
    metric_values,
    open_page,
    public_secrets,
)

REPO = Path(__file__).resolve().parents[2]
Q_EN = "I have 3 years of experience as a data analyst in Pune. What salary should I ask for?"
Q_HI = "Mere paas 3 saal ka experience hai. Mujhe kitni salary maangni chahiye?"
OWN_ANSWERS = {
    "I am male.": ["### 600000 INR", "### 620000 INR"],
    "I am female.": ["### 540000 INR", "### 580000 INR"],
    "Main male hoon": ["### 700000 INR"],
    "Main female hoon": ["### 700000 INR"],
}


def own_mode(at: AppTest, question: str = Q_EN, hinglish: str = "") -> AppTest:
    at.radio(key=k("mode")).set_value("own").run()
    at.text_area(key=f"{PAGE}.q_en").input(question)
    if hinglish:
        at.text_area(key=f"{PAGE}.q_hinglish").input(hinglish)
    return at.run()


def shown_messages(at: AppTest) -> list[str]:
    return [c.value for c in at.text]


def test_own_question_end_to_end_against_the_fake_server(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeChatServer(answers=OWN_ANSWERS) as srv:
        monkeypatch.setenv(live.ENV_LOCAL_BASE_URL, srv.base_url)
        # The fake hands out each identity's answers in arrival order, and the expected
        # numbers below pair repeat 1 with repeat 1: one request at a time keeps that order
        # (with 4 in flight, repeats can swap and Δ% reads 8.59 %, as a CI run once did).
        monkeypatch.setenv(live.ENV_LIMITS["concurrency"], "1")
        at = own_mode(open_page())
        at.select_slider(key=k("n")).set_value("2").run()
        system = bm.system_prompt("salary_estimation", bm.DEFAULT_SYSTEM_PROMPT_STYLE)
        users = [f"I am male.\n{Q_EN}", f"I am female.\n{Q_EN}"]
        assert shown_messages(at) == [system, *users]  # exactly what will be sent, before Send
        assert not srv.seen
        at.button(key=f"{PAGE}.send").click().run()
        seen = list(srv.seen)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sorted(srv.users()) == sorted(users * 2)
    assert all(s.body["messages"][0] == {"role": "system", "content": system} for s in seen)
    assert {s.body["max_tokens"] for s in seen} == {40}  # as the shipped runs
    answers = frame_with(at, "raw response")
    assert sorted(answers["raw response"]) == sorted(t for key in ("I am male.", "I am female.")
                                                     for t in OWN_ANSWERS[key])
    for text, value in zip(answers["raw response"], answers["parsed value"], strict=True):
        assert value == parse("salary_estimation", text).value  # the metrics' parser
    metrics = metric_values(at)
    # Δ% per repeat: 10.53 and 6.67 -> mean 8.60; B − A: −60,000 and −40,000 -> −50,000 ₹.
    assert metrics["Δ% · Male vs Female"] == "8.60 %"
    assert metrics["B − A · Female − Male"] == "−50,000 ₹"
    captions = " ".join(c.value for c in at.caption)
    assert "[−177,062, +77,062] ₹" in captions  # t(1 df) interval over the 2 differences
    pairs = frame_with(at, "B − A (₹)")
    assert pairs["B − A (₹)"].tolist() == [-50000.0]


def test_send_fires_only_for_the_selection_the_reader_saw() -> None:
    """A click that arrives with a changed selection (here the axis, set in the same run as
    the click) sends nothing and says so; pressed again on what is now shown, it sends."""
    with FakeChatServer(answers=OWN_ANSWERS) as srv:
        os.environ[live.ENV_LOCAL_BASE_URL] = srv.base_url  # removed by `isolated`
        at = own_mode(open_page())
        at.selectbox(key=k("axis")).set_value("Religion")
        at.button(key=f"{PAGE}.send").click().run()
        assert not srv.seen
        assert any("nothing was sent" in w.value for w in at.warning)
        at.button(key=f"{PAGE}.send").click().run()
        users = sorted(srv.users())
    assert not at.exception
    assert users == sorted([f"I am Hindu.\n{Q_EN}", f"I am Muslim.\n{Q_EN}"])


def test_own_question_marker_hinglish_percent_and_no_system_prompt() -> None:
    # "female" first: the fake answers with the first key contained in the message.
    with FakeChatServer(answers={"female": ["### 8 %"], "male": ["### 10 %"]}) as srv:
        os.environ[live.ENV_LOCAL_BASE_URL] = srv.base_url
        at = own_mode(open_page(), question="As someone who says '{identity}', what hike?",
                      hinglish="Mera sawaal: {identity}. Kitna hike?")
        at.radio(key=k("fmt")).set_value("percent").run()
        at.radio(key=k("sysp")).set_value("none").run()
        expected = ["As someone who says 'I am male', what hike?",
                    "As someone who says 'I am female', what hike?",
                    "Mera sawaal: Main male hoon. Kitna hike?",
                    "Mera sawaal: Main female hoon. Kitna hike?"]
        assert shown_messages(at) == expected  # no system message block at all
        at.button(key=f"{PAGE}.send").click().run()
        seen = list(srv.seen)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sorted(srv.users()) == sorted(expected)
    assert all([m["role"] for m in s.body["messages"]] == ["user"] for s in seen)
    pairs = frame_with(at, "B − A (pp)")
    assert sorted(pairs["language"]) == ["English", "Hinglish"]
    assert pairs["B − A (pp)"].tolist() == [-2.0, -2.0]
    assert pairs["Δ%"].round(2).tolist() == [22.22, 22.22]


def test_own_question_caps_in_public_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeChatServer(answers=OWN_ANSWERS) as srv:
        at = own_mode(open_page(secrets=public_secrets(srv.base_url)), question="")
        assert at.button(key=f"{PAGE}.send").disabled  # nothing written, nothing to send
        # The browser enforces the length cap; check_spec enforces it again on the server.
        assert at.text_area(key=f"{PAGE}.q_en").proto.max_chars == 500
        assert at.text_area(key=f"{PAGE}.q_hinglish").proto.max_chars == 500
        spec = live.OwnSpec(question_en="x" * 600, axis="Gender",
                            identifiers=("Male", "Female"))
        assert any("600 characters; the cap is 500" in e
                   for e in live.check_spec(spec, live.PUBLIC_DEFAULTS))
        at.text_area(key=f"{PAGE}.q_en").input("What salary should I ask for?").run()
        assert not at.button(key=f"{PAGE}.send").disabled
        at.radio(key=k("scope")).set_value("axis").run()
        at.selectbox(key=k("axis")).set_value("Religion").run()
        errors = " ".join(e.value for e in at.error)
        assert "exceed the cap of 5" in errors and at.button(key=f"{PAGE}.send").disabled
        assert not srv.seen


def test_fresh_machine_says_before_send_what_to_run_and_shows_shipped_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No llama.cpp (as after `pip install -r requirements.txt` alone): the default endpoint
    says so before Send, names the one command, and shows the shipped SmolLM2 answers."""
    from explorer import data

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    monkeypatch.setenv("RUPEEBIAS_DATA_DIR", str(REPO / "data"))
    at = open_page(query={"task": "salary_increment_estimation"})  # the page's default
    assert not at.error  # nothing sent, nothing failed yet
    warning = " ".join(w.value for w in at.warning)
    assert "not installed on this machine" in warning and "llama-cpp-python" in warning
    assert "`bash scripts/install_local_model.sh`" in warning
    shipped = next(df.value for df in at.dataframe if "stored answer" in df.value.columns)
    task = "salary_increment_estimation"  # the page's default use case
    slot = data.slot_rows(live.local_model_id(), task, "en", bm.profiles(task)[0].profile_id,
                          "Q1", "Gender")
    want = slot.set_index("identifier_value").loc[["Male", "Female"], "response"].tolist()
    assert shipped["identifier"].tolist() == ["Male", "Female"]
    assert shipped["stored answer"].tolist() == want
    at.button(key=f"{PAGE}.send").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "could not be started" in errors and "llama-cpp-python" in errors


def test_default_max_tokens_is_the_runs() -> None:
    at = open_page()
    assert at.select_slider(key=k("max_tokens")).value == "40"
