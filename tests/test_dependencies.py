"""Issue 18, item 8: every import is declared, exact versions are locked, and CI and the Docker
image install the lock (before: unpinned requirements, and `httpx2` imported but undeclared)."""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("rupeebias_core", "precompute", "explorer", "pages", "scripts", "bench", "tests",
           "app.py", "serve.py")
LOCAL = {"rupeebias_core", "precompute", "explorer", "pages", "tests", "bench", "scripts", "app",
         "serve", "lock_requirements"}


def _lock_module():  # noqa: ANN202
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import lock_requirements
    finally:
        sys.path.pop(0)
    return lock_requirements


def _imports() -> dict[str, set[str]]:
    """Top-level third-party module -> files importing it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for src in SOURCES:
        base = REPO / src
        for path in ([base] if base.is_file() else sorted(base.rglob("*.py"))):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in LOCAL:
                        found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


def _declared() -> set[str]:
    lock = _lock_module()
    return {lock.canonical(r.name) for r in lock.read_requirements(REPO / "requirements-dev.txt")}


def test_every_imported_package_is_declared() -> None:
    lock = _lock_module()
    declared = _declared()
    dists = metadata.packages_distributions()
    undeclared = {}
    for module, files in _imports().items():
        owners = {lock.canonical(d) for d in dists.get(module, [module])}
        if not owners & declared:
            undeclared[module] = sorted(files)[:3]
    assert not undeclared, f"imported but not in requirements*.txt: {undeclared}"


def test_httpx2_is_a_runtime_requirement() -> None:
    lock = _lock_module()
    runtime = {lock.canonical(r.name) for r in lock.read_requirements(REPO / "requirements.txt")}
    assert "httpx2" in runtime  # precompute/client.py imports it; the live page needs it


def test_constraints_pin_every_requirement_exactly() -> None:
    lines = (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pins = dict(line.split("==", 1) for line in lines if line and not line.startswith("#"))
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.-]*", name) for name in pins), pins
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", v) for v in pins.values()), pins
    missing = _declared() - set(pins)
    assert not missing, f"declared but not locked: {sorted(missing)}"
    assert pins["llama-cpp-python"] == "0.3.36"


def test_constraints_match_the_tested_environment() -> None:
    """CI installs constraints.txt; this environment must be exactly that lock."""
    try:
        metadata.distribution("llama-cpp-python")
    except metadata.PackageNotFoundError:
        pytest.skip("dev requirements are not installed here")
    assert _lock_module().main(["--check"]) == 0


def test_ci_and_docker_install_the_lock() -> None:
    test_sh = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    # The portable build is defined once (scripts/lib/llama_portable.sh, issue 19) and test.sh
    # runs it before the dev requirements.
    lib = (REPO / "scripts" / "lib" / "llama_portable.sh").read_text(encoding="utf-8")
    assert "LLAMA_VERSION=0.3.36" in lib and '"llama-cpp-python[server]==$LLAMA_VERSION"' in lib
    assert "-DGGML_NATIVE=OFF" in lib and "tilezero" in lib
    llama = test_sh.index("\nensure_portable_llama\n")
    reqs = test_sh.index("pip install -q -c constraints.txt -r requirements-dev.txt")
    assert test_sh.index("source scripts/lib/llama_portable.sh") < llama < reqs
    docker = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert "COPY requirements.txt constraints.txt ./" in docker
    assert "pip install -c constraints.txt -r requirements.txt" in docker


def test_docker_image_is_public_with_no_endpoint_by_default() -> None:
    """The README's read-only `docker run` must not offer a typed endpoint (issue 18, 1)."""
    from explorer import live

    docker = (REPO / "Dockerfile").read_text(encoding="utf-8")
    env = dict(re.findall(r"(RUPEEBIAS_[A-Z_]+)=(\S+)", docker))
    assert env["RUPEEBIAS_PUBLIC_MODE"] == "1" and env["RUPEEBIAS_LIVE_LOCAL_MODEL"] == "0"
    cfg = live.load_config({}, {k: v.rstrip("\\") for k, v in env.items()})
    assert cfg.public_mode and not cfg.allow_custom and cfg.endpoints == ()
