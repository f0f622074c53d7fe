"""`python -m precompute collect` end to end against the fake OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from precompute.client import ChatRequest
from precompute.collect import (
    cache_key,
    default_slug,
    normalize_base_url,
    reasoning_style_for,
)
from tests.precompute.conftest import (
    FAKE_KEY,
    REPO,
    collect_args,
    committed_rows,
    run_collect,
    run_collect_subprocess,
    subprocess_env,
)
from tests.precompute.fake_openai_server import Action, FakeOpenAIServer

REQUIRED = ["id", "condition", "model", "response", "finish_reason"]


def read_out(data: Path, slug: str = "test-model") -> pd.DataFrame:
    return pd.read_parquet(data / "responses" / f"{slug}.parquet")


def test_collect_writes_interchange_format(fake_server: FakeOpenAIServer, small_prompts: Path,
                                          tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = pd.read_parquet(small_prompts)
    rc = run_collect(collect_args(fake_server.base_url, tmp_path, small_prompts), monkeypatch)
    assert rc == 0
    out = read_out(tmp_path)
    assert list(out.columns[:5]) == REQUIRED
    assert len(out) == len(prompts) == fake_server.count()
    assert not out.duplicated(["id", "condition"]).any()
    assert list(zip(out.id, out.condition, strict=True)) == sorted(
        zip(prompts.id, prompts.condition, strict=True))
    assert set(out.model) == {"test-model"} and set(out.model_requested) == {"acme/test-model"}
    assert (out.status == "ok").all() and out.error.isna().all()
    assert out.response.str.match(r"^### \d+ INR$").all()
    assert (out.temperature == 0.0).all() and (out.max_tokens == 40).all()
    assert out.system_fingerprint.eq("fp_fake_0001").all()
    assert out.started_at.str.endswith("+00:00").all()
    merged = out.merge(prompts, on=["id", "condition"])
    want = merged.system_prompt.map(lambda s: hashlib.sha256(s.encode()).hexdigest())
    assert (merged.system_prompt_sha256 == want).all()
    # fairness rows really carried the fairness instruction
    fair_bodies = [r.body for r in fake_server.received
                   if "fair and unbiased" in r.body["messages"][0]["content"]]
    assert len(fair_bodies) == (prompts.condition == "fairness").sum() > 0
    # what was sent: temperature 0, max_tokens 40, no reasoning fields for a plain host
    body = fake_server.received[0].body
    assert body["temperature"] == 0.0 and body["max_tokens"] == 40
    assert "reasoning" not in body and "reasoning_effort" not in body
    man = json.loads((tmp_path / "responses" / "test-model.manifest.json").read_text())
    assert man["endpoint"]["host"] == "127.0.0.1"
    assert man["counts"]["by_status"] == {"ok": len(prompts)}
    assert man["parameters"]["temperature"] == 0.0 and man["git"] if "git" in man else True
    assert {"commit", "dirty"} <= set(man["environment"]["git"])
    assert man["environment"]["packages"]["openai"]
    assert len(man["system_prompt_sha256"]) == prompts[["task", "condition"]].drop_duplicates(
    ).shape[0]
    assert man["started_at"] <= man["ended_at"]


def test_rerun_sends_nothing_and_retries_only_errors(
        fake_server: FakeOpenAIServer, small_prompts: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = pd.read_parquet(small_prompts)
    single = prompts[prompts.task != "salary_estimation"].prompt  # no fairness twin
    failing, empty = single.iloc[3], single.iloc[7]
    # the failing prompt fails for all 3 attempts of run 1, then answers in run 2
    fake_server.script = {failing: [Action("status", 500)] * 3 + [Action("ok")],
                          empty: [Action("empty")]}
    argv = collect_args(fake_server.base_url, tmp_path, small_prompts)
    assert run_collect(argv, monkeypatch) == 3  # errors left
    out = read_out(tmp_path)
    n_fail = (prompts.prompt == failing).sum()
    err = out[out.status == "error"]
    assert len(err) == n_fail and err.response.isna().all()
    assert (err.finish_reason == "error").all() and err.error.str.contains("HTTP 500").all()
    emp = out[out.status == "empty"]
    assert len(emp) == (prompts.prompt == empty).sum()
    assert emp.response.isna().all() and (emp.finish_reason == "length").all()
    first = fake_server.count()
    assert run_collect(argv, monkeypatch) == 0
    assert fake_server.count() - first == n_fail  # only the error rows were re-sent
    out2 = read_out(tmp_path)
    assert len(out2) == len(prompts) and (out2.status != "error").all()
    assert out2.loc[out2.status == "ok", "n_sends"].max() == 2
    before = fake_server.count()
    assert run_collect(argv, monkeypatch) == 0
    assert fake_server.count() == before  # nothing left to send: the store is the cache


def test_changed_parameters_are_a_cache_miss(fake_server: FakeOpenAIServer,
                                             small_prompts: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    n = len(pd.read_parquet(small_prompts))
    argv = collect_args(fake_server.base_url, tmp_path, small_prompts)
    assert run_collect(argv, monkeypatch) == 0
    assert run_collect([*argv, "--max-tokens", "24"], monkeypatch) == 0
    assert fake_server.count() == 2 * n
    out = read_out(tmp_path)
    assert len(out) == n and (out.max_tokens == 24).all()
    # going back to the first parameters is served entirely from the store
    assert run_collect(argv, monkeypatch) == 0
    assert fake_server.count() == 2 * n and (read_out(tmp_path).max_tokens == 40).all()


def test_subset_runs_accumulate_in_one_file(fake_server: FakeOpenAIServer, small_prompts: Path,
                                           tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    argv = collect_args(fake_server.base_url, tmp_path, small_prompts)
    assert run_collect([*argv, "--tasks", "salary_estimation"], monkeypatch) == 0
    assert run_collect([*argv, "--tasks", "service_pricing_vendor"], monkeypatch) == 0
    out = read_out(tmp_path)
    assert set(out.task) == {"salary_estimation", "service_pricing_vendor"}
    assert not out.duplicated(["id", "condition"]).any()


def test_reasoning_switch_per_host_and_sarvam(fake_server: FakeOpenAIServer,
                                              small_prompts: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    base = collect_args(fake_server.base_url, tmp_path, small_prompts, "--sample", "2")
    assert run_collect([*base, "--reasoning-style", "openrouter"], monkeypatch) == 0
    assert fake_server.received[-1].body["reasoning"] == {"effort": "none", "exclude": False}
    sarvam = [*base, "--model", "sarvam-105b", "--reasoning-effort", "low"]
    assert run_collect(sarvam, monkeypatch) == 0
    body = fake_server.received[-1].body
    assert body["reasoning_effort"] == "low" and "reasoning" not in body
    assert set(read_out(tmp_path, "sarvam-105b").reasoning_effort) == {"low"}
    assert reasoning_style_for("https://openrouter.ai/api/v1", "openai/gpt-5.4") == "openrouter"
    assert reasoning_style_for("https://api.sarvam.ai/v1", "sarvam-105b") == "sarvam"
    assert reasoning_style_for("http://127.0.0.1:8080/v1", "x") == "omit"
    assert reasoning_style_for(None, "smollm2") == "omit"


def test_cache_key_covers_endpoint_params_messages_and_sample() -> None:
    r = ChatRequest.chat("m", "u", "s")
    k = cache_key("http://a/v1", r, 0)
    assert k != cache_key("http://b/v1", r, 0)
    assert k != cache_key("http://a/v1", r, 1)
    assert k != cache_key("http://a/v1", ChatRequest.chat("m", "u", "s", max_tokens=41), 0)
    assert k != cache_key("http://a/v1", ChatRequest.chat("m", "u", "s2"), 0)
    assert k == cache_key("http://a/v1", ChatRequest.chat("m", "u", "s"), 0)
    assert normalize_base_url("https://user:pw@API.Example.com:8443/v1/?k=1") == \
        "https://api.example.com:8443/v1"
    assert default_slug("moonshotai/kimi-k2.5:free") == "kimi-k2.5-free"


@pytest.mark.parametrize("extra, message", [
    (["--tasks", "no_such_task"], "no prompts for task"),
    (["--max-tokens", "0"], "--max-tokens"),
    (["--concurrency", "0"], "--concurrency"),
    (["--slug", "../evil"], "not a safe file name"),
    (["--sample", "0"], "--sample"),
])
def test_bad_input_is_a_clear_error(fake_server: FakeOpenAIServer, small_prompts: Path,
                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str], extra: list[str],
                                    message: str) -> None:
    rc = run_collect([*collect_args(fake_server.base_url, tmp_path, small_prompts), *extra],
                     monkeypatch)
    assert rc == 2 and message in capsys.readouterr().err
    assert fake_server.count() == 0


def test_missing_key_and_bad_prompts_file(fake_server: FakeOpenAIServer, small_prompts: Path,
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from precompute.__main__ import main

    argv = collect_args("https://api.example.com/v1", tmp_path, small_prompts)
    monkeypatch.delenv("RB_TEST_KEY", raising=False)
    assert main(argv) == 2 and "RB_TEST_KEY is not set" in capsys.readouterr().err
    dup = tmp_path / "dup.parquet"
    frame = pd.read_parquet(small_prompts)
    pd.concat([frame, frame.head(1)]).to_parquet(dup)
    assert run_collect(collect_args(fake_server.base_url, tmp_path, dup), monkeypatch) == 2
    assert "not unique" in capsys.readouterr().err
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    assert run_collect(collect_args(fake_server.base_url, tmp_path, junk), monkeypatch) == 2
    assert "cannot read prompts file" in capsys.readouterr().err
    assert fake_server.count() == 0


def _committed_messages(db: Path) -> list[str]:
    """The messages of every committed request, as canonical JSON."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT request_json FROM responses WHERE status='ok'").fetchall()
    finally:
        con.close()
    return [json.dumps(json.loads(r[0])["messages"], sort_keys=True) for r in rows]


def _sent_messages(srv: FakeOpenAIServer) -> list[str]:
    return [json.dumps(r.body["messages"], sort_keys=True) for r in srv.received]


def test_sigkill_mid_run_then_resume_exactly_once(small_prompts: Path, tmp_path: Path) -> None:
    prompts = pd.read_parquet(small_prompts)
    conc = 3
    with FakeOpenAIServer(latency_s=0.05) as srv:
        argv = collect_args(srv.base_url, tmp_path, small_prompts, "--concurrency", str(conc))
        db = tmp_path / "responses" / "test-model.store" / "responses.sqlite"
        proc = subprocess.Popen([sys.executable, "-m", "precompute", *argv], cwd=REPO,
                                env=subprocess_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while committed_rows(db) < 15 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        done_before = _committed_messages(db)
        assert 15 <= len(done_before) < len(prompts), "kill must land mid-run"
        sent_before = srv.count()
        res = run_collect_subprocess(argv)
        assert res.returncode == 0, res.stderr
        assert f"{len(done_before):,} already answered" in res.stderr
        out = read_out(tmp_path)
        assert len(out) == len(prompts) and not out.duplicated(["id", "condition"]).any()
        assert (out.status == "ok").all()
        # finished work was never re-sent; only what was in flight at the kill went twice
        sent = _sent_messages(srv)
        for messages in done_before:
            assert sent.count(messages) == 1
        resent = srv.count() - len(prompts)
        assert 0 <= resent <= 2 * conc
        assert srv.count() - sent_before == len(prompts) - len(done_before)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupt_exports_what_is_done(small_prompts: Path, tmp_path: Path, sig: int) -> None:
    with FakeOpenAIServer(latency_s=0.1) as srv:
        argv = collect_args(srv.base_url, tmp_path, small_prompts, "--concurrency", "2")
        db = tmp_path / "responses" / "test-model.store" / "responses.sqlite"
        proc = subprocess.Popen([sys.executable, "-m", "precompute", *argv], cwd=REPO,
                                env=subprocess_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while committed_rows(db) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "rerun the same command to resume" in err
        out = read_out(tmp_path)
        assert 5 <= len(out) < 60 and (out.status == "ok").all()
        man = json.loads((tmp_path / "responses" / "test-model.manifest.json").read_text())
        assert man["interrupted"] is True


def test_api_key_never_written_anywhere(small_prompts: Path, tmp_path: Path) -> None:
    """Run with a fake key, failures that echo it, and grep every output."""
    prompts = pd.read_parquet(small_prompts)
    single = prompts[prompts.task != "salary_estimation"].prompt
    script = {single.iloc[0]: [Action("status", 401, echo_auth=True)],
              single.iloc[1]: [Action("status", 500, echo_auth=True)],
              # a 200 that echoes the key into every text field (issue 18, item 4)
              single.iloc[2]: [Action("ok", echo_auth=True)]}
    with FakeOpenAIServer(script=script) as srv:
        data = tmp_path / "data"
        argv = collect_args(srv.base_url, data, small_prompts)
        res = run_collect_subprocess(argv)
        assert res.returncode == 3, res.stderr  # the two failing prompts
        dry = run_collect_subprocess([*argv, "--dry-run"])
        assert any(FAKE_KEY in r.authorization for r in srv.received)  # it was really used
    files = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in files) and len(files) >= 3
    for p in files:
        assert FAKE_KEY.encode() not in p.read_bytes(), p
    for text in (res.stdout, res.stderr, dry.stdout, dry.stderr):
        assert FAKE_KEY not in text
    out = read_out(data)
    assert out.error.str.contains("Bearer \\*\\*\\*", regex=True).sum() >= 2
    echoed = out[out.system_fingerprint.str.contains("Bearer", na=False)]
    assert len(echoed) == 1
    for col in ("response", "finish_reason", "system_fingerprint", "model_returned",
                "response_id", "reasoning_content"):
        assert "Bearer ***" in echoed[col].iloc[0], col
    for p in files:
        assert FAKE_KEY[5:13].encode() not in p.read_bytes(), p  # no 8-character piece either


def test_parquet_schema_types(fake_server: FakeOpenAIServer, small_prompts: Path,
                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_server.script = {pd.read_parquet(small_prompts).prompt.iloc[0]: [Action("status", 400)]}
    run_collect(collect_args(fake_server.base_url, tmp_path, small_prompts), monkeypatch)
    schema = pq.read_schema(tmp_path / "responses" / "test-model.parquet")
    types = {f.name: str(f.type) for f in schema}
    assert types["response"] == "string" and types["error"] == "string"
    assert types["tokens_prompt"] == "int64" and types["latency_s"] == "double"
    assert types["temperature"] == "double" and types["sample_index"] == "int64"


def test_parquet_is_rewritten_periodically_during_a_run(small_prompts: Path,
                                                        tmp_path: Path) -> None:
    with FakeOpenAIServer(latency_s=0.05) as srv:
        argv = collect_args(srv.base_url, tmp_path, small_prompts, "--concurrency", "1",
                            "--flush-every", "10")
        out_path = tmp_path / "responses" / "test-model.parquet"
        proc = subprocess.Popen([sys.executable, "-m", "precompute", *argv], cwd=REPO,
                                env=subprocess_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        seen: list[int] = []
        while proc.poll() is None:
            if out_path.exists():
                # One open file handle: pyarrow re-opens a *path* several times, which can mix
                # two generations of the file; a single handle sees exactly one of them.
                try:
                    with open(out_path, "rb") as fh:
                        seen.append(len(pd.read_parquet(fh)))
                except Exception:  # only a torn file would land here
                    seen.append(-1)
            time.sleep(0.05)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert -1 not in seen  # os.replace: a reader never sees a half-written file
    partial = sorted({n for n in seen if 0 < n < 80})
    assert len(partial) >= 3 and all(n >= 10 for n in partial)
    assert len(pd.read_parquet(out_path)) == 80


def test_each_periodic_flush_writes_a_manifest_that_matches_the_parquet(
        small_prompts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mid-run, the Parquet and manifest on disk describe the same rows, so a long run can be
    copied and committed without stopping it."""
    import precompute.collect as collect_mod

    real = collect_mod.write_manifest
    seen: list[tuple[bool, int, int]] = []
    envs: list[dict] = []
    calls = iter(range(1, 1000))

    def spy(path: Path, manifest: dict) -> Path:
        rows = len(pd.read_parquet(path.parent / "test-model.parquet"))
        seen.append((manifest["in_progress"], manifest["counts"]["rows_in_parquet"], rows))
        envs.append(manifest["environment"])
        return real(path, manifest)

    monkeypatch.setattr(collect_mod, "write_manifest", spy)
    # the environment is read once, at the start: a long run records the code it started with
    monkeypatch.setattr(collect_mod, "environment", lambda: {"snapshot": next(calls)})
    with FakeOpenAIServer(latency_s=0.02) as srv:
        rc = run_collect(collect_args(srv.base_url, tmp_path, small_prompts, "--concurrency",
                                      "1", "--flush-every", "10"), monkeypatch)
    assert rc == 0
    assert all(claimed == on_disk for _, claimed, on_disk in seen)
    mid = [n for in_progress, n, _ in seen if in_progress]
    assert len(mid) >= 3 and all(0 < n <= 80 for n in mid) and min(mid) < 80
    assert seen[-1] == (False, 80, 80)
    assert envs and all(e == {"snapshot": 1} for e in envs)
    final = json.loads((tmp_path / "responses" / "test-model.manifest.json").read_text())
    assert final["in_progress"] is False and final["interrupted"] is False


@pytest.mark.parametrize("order", ["blocks", "id"])
def test_collect_sends_in_the_chosen_order(fake_server: FakeOpenAIServer, small_prompts: Path,
                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           order: str) -> None:
    from precompute.selection import send_order

    prompts = pd.read_parquet(small_prompts)
    argv = collect_args(fake_server.base_url, tmp_path, small_prompts,
                        "--concurrency", "1", "--order", order)
    assert run_collect(argv, monkeypatch) == 0
    pos = send_order(prompts, order, seed=42)
    want = [(r.system_prompt, r.prompt) for r in
            sorted(prompts.itertuples(), key=lambda r: pos[(r.id, r.condition)])]
    got = [(r.body["messages"][0]["content"], r.body["messages"][-1]["content"])
           for r in fake_server.received]
    assert got == want
    man = json.loads((tmp_path / "responses" / "test-model.manifest.json").read_text())
    assert man["parameters"]["send_order"] == order
