"""The llama-server backend: discovery, command line, collect wiring and the build command.

The real binary takes ~15 min to build, so these tests drive a stand-in
(`fake_llama_server.py`) that takes the same command line and speaks the same API; the real
server is exercised by the shipped SmolLM2 run (its manifest records the build).
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from precompute import build_llama_server as bls
from precompute import serve_local
from tests.precompute.conftest import REPO

FAKE = REPO / "tests" / "precompute" / "fake_llama_server.py"


@pytest.fixture
def no_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A machine with no llama-server anywhere."""
    monkeypatch.delenv(serve_local.LLAMA_SERVER_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


@pytest.fixture
def fake_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An executable `llama-server` that runs the stand-in, found through the env variable."""
    exe = tmp_path / "bin" / "llama-server"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(serve_local.LLAMA_SERVER_ENV, str(exe))
    argv_dir = tmp_path / "argv"
    argv_dir.mkdir()
    monkeypatch.setenv("FAKE_LLAMA_ARGV_DIR", str(argv_dir))
    return exe


@pytest.fixture
def dummy_gguf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    gguf = tmp_path / "SmolLM2-test.gguf"
    gguf.write_bytes(b"GGUF not really a model")
    monkeypatch.setenv(serve_local.GGUF_ENV, str(gguf))
    return gguf


# ---- discovery --------------------------------------------------------------------------------

def test_auto_falls_back_to_llama_cpp_python_without_a_binary(no_binary: None) -> None:
    assert serve_local.find_llama_server() is None
    assert serve_local.resolve_backend("auto") == "llama-cpp-python"
    with pytest.raises(serve_local.LocalModelError, match="build-llama-server"):
        serve_local.resolve_backend("llama-server")


def test_auto_prefers_a_built_binary(no_binary: None, tmp_path: Path) -> None:
    built = serve_local.default_llama_server_path()
    assert built.is_relative_to(tmp_path / "cache")
    built.parent.mkdir(parents=True)
    built.write_text("#!/bin/sh\n")
    assert serve_local.resolve_backend("auto") == "llama-cpp-python"  # not executable yet
    built.chmod(0o755)
    assert serve_local.find_llama_server() == built
    assert serve_local.resolve_backend("auto") == "llama-server"


def test_env_override_must_be_executable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(serve_local.LLAMA_SERVER_ENV, str(tmp_path / "nope"))
    with pytest.raises(serve_local.LocalModelError, match="not an executable"):
        serve_local.find_llama_server()


def test_unknown_backend_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown local backend"):
        serve_local.resolve_backend("vllm")
    with pytest.raises(ValueError, match="unknown local backend"):
        serve_local.LocalServer(backend="vllm")


def test_slots_need_the_batching_backend() -> None:
    with pytest.raises(ValueError, match="slots must be 1"):
        serve_local.LocalServer(backend="llama-cpp-python", slots=4)
    with pytest.raises(ValueError, match="slots must be >= 1"):
        serve_local.LocalServer(backend="llama-server", slots=0)


def test_endpoint_keys_separate_backends_and_keep_the_old_key(dummy_gguf: Path) -> None:
    py = serve_local.endpoint_key(dummy_gguf)
    assert py == serve_local.endpoint_key(dummy_gguf, "llama-cpp-python")
    assert py.startswith("local-llama-cpp:SmolLM2-test.gguf:")  # unchanged: old caches stay
    srv = serve_local.endpoint_key(dummy_gguf, "llama-server")
    assert srv.startswith("local-llama-server:") and srv.split(":")[2] == py.split(":")[2]


def test_command_line_batches_across_slots(tmp_path: Path, dummy_gguf: Path) -> None:
    server = serve_local.LocalServer(backend="llama-server", slots=6, threads=2, ctx_size=1024,
                                     server_binary=tmp_path / "llama-server",
                                     model_path=dummy_gguf)
    cmd = server.command(8123)
    opts = dict(zip(cmd[1::2], cmd[2::2], strict=False))
    assert cmd[0] == str(tmp_path / "llama-server")
    assert opts["--parallel"] == "6" and opts["--ctx-size"] == str(6 * 1024)
    assert opts["--threads"] == "2" and opts["--alias"] == serve_local.MODEL_ALIAS
    assert opts["--host"] == "127.0.0.1" and opts["--port"] == "8123"
    assert "--cont-batching" in cmd and "--no-webui" in cmd


# ---- running it -------------------------------------------------------------------------------

def test_local_server_starts_and_stops_the_binary(fake_binary: Path, dummy_gguf: Path,
                                                  tmp_path: Path) -> None:
    with serve_local.LocalServer(backend="llama-server", slots=3, processes=2) as srv:
        procs = list(srv._procs)
        assert len(srv.base_urls) == 2 and srv.alive()
    assert all(p.poll() is not None for p in procs)
    argvs = [json.loads(p.read_text()) for p in (tmp_path / "argv").iterdir()]
    assert len(argvs) == 2 and all(a[a.index("--parallel") + 1] == "3" for a in argvs)


def test_a_failing_binary_reports_its_log(fake_binary: Path, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    with pytest.raises(serve_local.LocalModelError, match="failed to load model"):
        serve_local.LocalServer(backend="llama-server", model_path=tmp_path / "gone.gguf",
                                startup_timeout_s=30).start()


def test_version_is_read_from_the_binary(fake_binary: Path) -> None:
    info = serve_local.llama_server_version()
    assert info == {"version": "9999 (fakefake)",
                    "built_with": "fake-cc for x86_64-linux-gnu"}


def test_collect_uses_the_binary_with_one_request_per_slot(fake_binary: Path, dummy_gguf: Path,
                                                           tmp_path: Path,
                                                           small_prompts: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    from precompute.__main__ import main

    data = tmp_path / "data"
    rc = main(["collect", "--data", str(data), "--prompts", str(small_prompts),
               "--condition", "all", "--no-progress", "--tokenizer", "chars4",
               "--local-backend", "llama-server", "--local-slots", "5"])
    assert rc == 0
    out = pd.read_parquet(data / "responses" / "smollm2-135m-instruct.parquet")
    n = len(pd.read_parquet(small_prompts))
    assert len(out) == n and (out.status == "ok").all()
    assert out.cache_key.nunique() == n
    man = json.loads((data / "responses" / "smollm2-135m-instruct.manifest.json").read_text())
    local = man["endpoint"]["local_model"]
    assert local["backend"] == "llama-server" and local["slots_per_process"] == 5
    assert local["server_processes"] == 1 and local["key"].startswith("local-llama-server:")
    assert local["llama_server"]["version"] == "9999 (fakefake)"
    assert man["parameters"]["concurrency"] == 5
    # The same prompts through the other backend are a different endpoint: nothing is reused.
    capsys.readouterr()
    rc = main(["collect", "--data", str(data), "--prompts", str(small_prompts),
               "--condition", "all", "--dry-run", "--tokenizer", "chars4",
               "--local-backend", "llama-cpp-python"])
    assert rc == 0 and f"{n} selected, 0 already answered" in capsys.readouterr().err


def test_collect_rejects_slots_without_the_batching_backend(no_binary: None, dummy_gguf: Path,
                                                           tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    from precompute.__main__ import main

    rc = main(["collect", "--smoke", "--data", str(tmp_path), "--no-progress",
               "--local-slots", "4", "--local-backend", "auto"])
    assert rc == 2 and "--local-slots needs the llama-server backend" in capsys.readouterr().err


def test_collect_defaults_to_the_shipped_runs_backend(fake_binary: Path, dummy_gguf: Path,
                                                     tmp_path: Path, small_prompts: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A built llama-server must not silently switch a resumed run to another cache key."""
    from precompute.__main__ import main

    rc = main(["collect", "--data", str(tmp_path), "--prompts", str(small_prompts),
               "--condition", "all", "--dry-run", "--tokenizer", "chars4"])
    assert rc == 0 and "local llama-cpp-python" in capsys.readouterr().err


# ---- build-llama-server -----------------------------------------------------------------------

def _sdist(path: Path, vendored: bool = True) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        files = {"llama_cpp_python-9.9.9/pyproject.toml": b"[project]\n"}
        if vendored:
            files["llama_cpp_python-9.9.9/vendor/llama.cpp/CMakeLists.txt"] = b"project(x)\n"
            files["llama_cpp_python-9.9.9/vendor/llama.cpp/tools/server/server.cpp"] = b"//\n"
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_build_finds_the_vendored_source_in_an_sdist(tmp_path: Path) -> None:
    src = bls.llama_cpp_source(_sdist(tmp_path / "s.tar.gz"), tmp_path / "work")
    assert src.name == "llama.cpp" and (src / "tools" / "server" / "server.cpp").is_file()
    assert bls.llama_cpp_source(src.parent.parent, tmp_path) == src  # an unpacked sdist


def test_build_rejects_sources_without_llama_cpp(tmp_path: Path) -> None:
    with pytest.raises(bls.BuildError, match="vendors no llama.cpp"):
        bls.llama_cpp_source(_sdist(tmp_path / "s.tar.gz", vendored=False), tmp_path / "w")
    (tmp_path / "junk.txt").write_text("hello")
    with pytest.raises(bls.BuildError, match="neither a folder nor a tar"):
        bls.llama_cpp_source(tmp_path / "junk.txt", tmp_path / "w")
    with pytest.raises(bls.BuildError, match="no llama.cpp source"):
        bls.llama_cpp_source(tmp_path, tmp_path / "w")


def test_build_refuses_path_traversal_in_the_archive(tmp_path: Path) -> None:
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("x/vendor/llama.cpp/../../../../escaped.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"!"))
    with pytest.raises(tarfile.TarError):
        bls.llama_cpp_source(path, tmp_path / "work")
    assert not (tmp_path / "escaped.txt").exists()


def test_install_is_atomic_and_executable(tmp_path: Path) -> None:
    built = tmp_path / "llama-server"
    built.write_bytes(b"\x7fELF fake")
    dest = bls.install(built, tmp_path / "cache" / "bin" / "llama-server")
    assert dest.read_bytes() == b"\x7fELF fake" and os.access(dest, os.X_OK)
    assert not dest.with_name("llama-server.tmp").exists()


def test_build_command_reports_a_bad_source(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from precompute.__main__ import main

    rc = main(["build-llama-server", "--source", str(tmp_path), "--dest", str(tmp_path / "b")])
    assert rc == 2 and "no llama.cpp source" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_llama_server_builds_with_the_portable_flags() -> None:
    """The batching server is built with the same portable CPU flags as llama-cpp-python (no
    -march=native: AMX-advertising hosts trap it)."""
    flags = bls.portable_cpu_flags()
    assert "-DGGML_NATIVE=OFF" in flags and "-DGGML_AMX_TILE=OFF" in flags
    assert not any(f.startswith("-DGGML_NATIVE=ON") for f in bls.CMAKE_FLAGS)
