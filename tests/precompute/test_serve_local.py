"""`precompute.serve_local` and `collect` without --base-url, with the real bundled model."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from precompute import serve_local
from precompute.client import ChatRequest, RetryPolicy, complete, make_client
from tests.precompute.conftest import FAKE_KEY, REPO, committed_rows, subprocess_env

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
_skip_without_llama = pytest.mark.skipif(
    not HAVE_LLAMA, reason="llama_cpp is not importable: bash scripts/install_local_model.sh "
                           "(CI installs it) to run the real-model tests")


def needs_model(test):  # noqa: ANN001, ANN201 - a decorator
    """A real-model test: skipped without llama.cpp, and `slow` (the quick loop,
    ``pytest -m "not slow"``, leaves it out)."""
    return pytest.mark.slow(_skip_without_llama(test))


def test_missing_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    monkeypatch.setenv(serve_local.GGUF_ENV, str(tmp_path / "missing.gguf"))
    with pytest.raises(serve_local.LocalModelError, match="not a file"):
        serve_local.find_gguf()


def test_missing_llama_cpp_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(serve_local.LocalModelError, match="pip install 'llama-cpp-python"):
        serve_local.check_llama_cpp()


def test_collect_without_server_support_fails_cleanly(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from precompute.__main__ import main

    monkeypatch.setenv(serve_local.GGUF_ENV, str(tmp_path / "missing.gguf"))
    rc = main(["collect", "--smoke", "--tasks", "salary_estimation", "--data", str(tmp_path),
               "--no-progress"])
    assert rc == 2 and "RUPEEBIAS_LOCAL_GGUF" in capsys.readouterr().err


def test_local_server_only_binds_loopback() -> None:
    with pytest.raises(ValueError, match="loopback"):
        serve_local.LocalServer(host="0.0.0.0")


@needs_model
def test_local_server_answers_and_stops() -> None:
    with serve_local.LocalServer(processes=1, threads=2) as srv:
        url = srv.base_url
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/models", timeout=10) as resp:
            assert serve_local.MODEL_ALIAS in resp.read().decode()

        async def ask() -> object:
            client = make_client(url, "sk-local")
            try:
                req = ChatRequest.chat(serve_local.MODEL_ALIAS,
                                       "What salary should a fresher expect?",
                                       "Answer with one number in INR.", max_tokens=24)
                return await complete(client, req, RetryPolicy(timeout_s=60))
            finally:
                await client.close()

        res = asyncio.run(ask())
        assert res.status == "ok", res.error  # type: ignore[attr-defined]
        assert res.tokens_completion and res.tokens_completion <= 24  # type: ignore[attr-defined]
        assert res.finish_reason in ("stop", "length")  # type: ignore[attr-defined]
        procs = list(srv._procs)
    assert all(p.poll() is not None for p in procs)  # stopped on exit


@needs_model
def test_exact_token_count_matches_the_server() -> None:
    from rupeebias_core.prompts import build_prompts

    row = build_prompts(tasks=("salary_estimation",), languages=("hinglish",)).iloc[0]
    tok = serve_local.SmolTokenizer.load()
    with serve_local.LocalServer() as srv:
        async def ask() -> object:
            client = make_client(srv.base_url, "sk-local")
            try:
                req = ChatRequest.chat(serve_local.MODEL_ALIAS, row.prompt, row.system_prompt,
                                       max_tokens=4)
                return await complete(client, req, RetryPolicy(timeout_s=60))
            finally:
                await client.close()

        res = asyncio.run(ask())
    assert res.tokens_prompt == tok.count_chat(row.system_prompt, row.prompt)  # type: ignore


@needs_model
def test_collect_end_to_end_with_the_bundled_model(tmp_path: Path) -> None:
    """No --base-url: collect starts SmolLM2, answers real prompts, stops the server."""
    argv = [sys.executable, "-m", "precompute", "collect", "--smoke", "--tasks",
            "salary_estimation", "--languages", "en", "--data", str(tmp_path),
            "--max-tokens", "24", "--local-servers", "1", "--no-progress",
            "--local-backend", "llama-cpp-python"]
    proc = subprocess.Popen(argv, cwd=REPO, env=subprocess_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    started: set[int] = set()
    while proc.poll() is None:
        started |= _servers_of(proc.pid)
        time.sleep(0.05)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert started, "collect should have started a llama.cpp server"
    assert not any(_alive(p) for p in started)  # and stopped it
    out = pd.read_parquet(tmp_path / "responses" / "smollm2-135m-instruct.parquet")
    assert len(out) == 5 and (out.status == "ok").all()
    assert out.response.str.len().gt(0).all() and out.tokens_prompt.gt(100).all()
    assert set(out.model_returned) <= {serve_local.MODEL_ALIAS, str(serve_local.find_gguf())}
    assert set(out.finish_reason) <= {"stop", "length"}
    man = json.loads((tmp_path / "responses" / "smollm2-135m-instruct.manifest.json")
                     .read_text())
    assert man["endpoint"]["local"] is True
    assert man["endpoint"]["local_model"]["file"].endswith(".gguf")
    # second run: served from the store, no server needed
    res2 = subprocess.run(argv, cwd=REPO, env=subprocess_env(), capture_output=True, text=True,
                          timeout=600, check=False)
    assert res2.returncode == 0 and "5 already answered" in res2.stderr
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert FAKE_KEY.encode() not in p.read_bytes()


@needs_model
def test_sigint_stops_the_local_server(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "precompute", "collect", "--sample", "400", "--tasks",
            "salary_estimation", "--data", str(tmp_path), "--max-tokens", "48",
            "--local-servers", "1", "--no-progress", "--local-backend", "llama-cpp-python"]
    proc = subprocess.Popen(argv, cwd=REPO, env=subprocess_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    db = tmp_path / "responses" / "smollm2-135m-instruct.store" / "responses.sqlite"
    started: set[int] = set()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and committed_rows(db) < 3:
        started |= _servers_of(proc.pid)
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert started and not any(_alive(p) for p in started)
    out = pd.read_parquet(tmp_path / "responses" / "smollm2-135m-instruct.parquet")
    assert 0 < len(out) < 400


def _servers_of(ppid: int) -> set[int]:
    """PIDs of llama_cpp.server processes whose parent is `ppid`."""
    pids = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            stat = (d / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == ppid and b"llama_cpp.server" in cmd:
            pids.add(int(d.name))
    return pids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
