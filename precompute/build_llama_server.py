"""`python -m precompute build-llama-server`: build llama.cpp's `llama-server` for the local model.

Why: llama-cpp-python's server decodes one request at a time, while llama.cpp's own server
batches requests across slots (continuous batching) — on 2 cores no faster for SmolLM2-135M,
which is compute-bound there (docs/collect.md, "Measured"), but the standard way to serve many
requests on bigger machines. PyPI ships no llama-server binary, but the llama-cpp-python
source distribution vendors the exact llama.cpp it wraps, so we build the server from that
pinned source: the same model code as the Python backend, no network beyond PyPI.

The binary is statically linked and installed outside the repository
(`serve_local.default_llama_server_path()`, i.e. ~/.cache/rupeebias/bin/llama-server), where
`collect` and `serve-local` find it. Needs cmake and a C++ compiler; takes ~15 min on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from importlib import metadata
from pathlib import Path

from precompute.serve_local import default_llama_server_path, llama_server_version

PACKAGE = "llama-cpp-python"
#: The portable CPU flags of scripts/lib/llama_portable.sh (read from there, one home): no
#: -march=native, AVX2/FMA/F16C on, AVX-512 and AMX off — some hosts advertise AMX but trap it,
#: and a native build dies there with SIGILL (docs/collect.md, "Portable llama.cpp build").
PORTABLE_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "lib" / "llama_portable.sh"


def portable_cpu_flags() -> tuple[str, ...]:
    """The ``LLAMA_CMAKE_ARGS`` of the shared build script, split."""
    import re
    import shlex

    text = PORTABLE_SCRIPT.read_text(encoding="utf-8")
    m = re.search(r'^LLAMA_CMAKE_ARGS="([^"]+)"', text, re.M)
    if m is None:
        raise BuildError(f"{PORTABLE_SCRIPT} defines no LLAMA_CMAKE_ARGS")
    return tuple(shlex.split(m.group(1)))


CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
)


class BuildError(RuntimeError):
    """The build cannot proceed (no source, no cmake, compiler failure)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", default=None,
                        help=f"{PACKAGE} version whose vendored llama.cpp is built (default: "
                             "the installed one)")
    parser.add_argument("--source", type=Path, default=None,
                        help=f"a {PACKAGE} sdist (.tar.gz) or a llama.cpp source folder "
                             "(default: download the sdist from PyPI)")
    parser.add_argument("--dest", type=Path, default=None,
                        help=f"where to install the binary (default {default_llama_server_path()})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="build jobs")
    parser.add_argument("--keep-build", type=Path, default=None,
                        help="build in this folder and keep it (default: a temporary folder)")


def installed_version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise BuildError(f"{PACKAGE} is not installed; pass --version or --source") from exc


def download_sdist(version: str, into: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", f"{PACKAGE}=={version}", "--no-deps",
           "--no-binary", ":all:", "--no-build-isolation", "-d", str(into)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    hits = sorted(into.glob("llama_cpp_python-*.tar.gz"))
    if not hits:
        raise BuildError(f"pip download of {PACKAGE}=={version} failed:\n"
                         f"{(proc.stdout + proc.stderr)[-2000:]}")
    return hits[0]


def llama_cpp_source(source: Path, workdir: Path) -> Path:
    """The llama.cpp source folder: `source` itself, or the one vendored in an sdist."""
    if source.is_dir():
        for cand in (source, source / "vendor" / "llama.cpp"):
            if (cand / "tools" / "server").is_dir() and (cand / "CMakeLists.txt").is_file():
                return cand
        raise BuildError(f"{source} holds no llama.cpp source (tools/server missing)")
    if not tarfile.is_tarfile(source):
        raise BuildError(f"{source} is neither a folder nor a tar archive")
    with tarfile.open(source) as tar:
        members = [m for m in tar.getmembers() if "/vendor/llama.cpp/" in m.name + "/"]
        if not members:
            raise BuildError(f"{source} vendors no llama.cpp")
        tar.extractall(workdir, members=members, filter="data")
    hits = sorted(workdir.glob("*/vendor/llama.cpp"))
    if not hits:
        raise BuildError(f"{source}: vendor/llama.cpp not found after extraction")
    return hits[0]


def build(src: Path, build_dir: Path, jobs: int) -> Path:
    cmake = shutil.which("cmake")
    if cmake is None:
        raise BuildError("cmake is not installed (`apt-get install cmake` or `pip install "
                         "cmake`)")
    steps = [[cmake, "-S", str(src), "-B", str(build_dir), *CMAKE_FLAGS,
              *portable_cpu_flags()],
             [cmake, "--build", str(build_dir), "--target", "llama-server", "-j", str(jobs)]]
    for step in steps:
        if subprocess.run(step, check=False).returncode != 0:
            raise BuildError(f"build step failed: {' '.join(step)}")
    binary = build_dir / "bin" / "llama-server"
    if not binary.is_file():
        raise BuildError(f"the build produced no {binary}")
    return binary


def install(binary: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.copy2(binary, tmp)
    tmp.chmod(0o755)
    os.replace(tmp, dest)  # atomic: a half-copied binary is never picked up
    return dest


def main(args: argparse.Namespace) -> int:
    dest = args.dest or default_llama_server_path()
    try:
        with tempfile.TemporaryDirectory(prefix="rupeebias-llama-") as tmp:
            work = Path(tmp)
            source = args.source
            if source is None:
                version = args.version or installed_version()
                print(f"downloading the {PACKAGE}=={version} source ...", file=sys.stderr)
                source = download_sdist(version, work)
            src = llama_cpp_source(source, work)
            build_dir = args.keep_build or (work / "build")
            print(f"building llama-server from {src} ({args.jobs} jobs) ...", file=sys.stderr)
            binary = build(src, build_dir, args.jobs)
            install(binary, dest)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    info = llama_server_version(dest)
    print(f"installed {dest} ({info.get('version', 'version unknown')})", file=sys.stderr)
    if dest != default_llama_server_path():
        print(f"set RUPEEBIAS_LLAMA_SERVER={dest} so that collect finds it", file=sys.stderr)
    return 0
