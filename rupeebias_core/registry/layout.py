"""Where each table lives under a data directory (docs/data-format.md).

The relative paths (:func:`metrics_path` …) are what the registry declares; :class:`DataLayout`
joins them to one data directory, so no other module spells ``"metrics"`` or ``"responses"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rupeebias_core.registry.spec import TableFile

METRICS_DIR = "metrics"
PUBLISHED_DIR = "published"
RESPONSES_DIR = "responses"
PROMPTS_FILE = "prompts.parquet"
PARQUET = ".parquet"
MANIFEST = ".manifest.json"
MODEL = "{model}"


def metrics_path(name: str) -> str:
    return f"{METRICS_DIR}/{name}{PARQUET}"


def published_path(name: str) -> str:
    return f"{PUBLISHED_DIR}/{name}{PARQUET}"


RESPONSES_PATH = f"{RESPONSES_DIR}/{MODEL}{PARQUET}"
MANIFEST_PATH = f"{RESPONSES_DIR}/{MODEL}{MANIFEST}"


def _template_regex(template: str) -> re.Pattern[str]:
    head, sep, tail = template.partition(MODEL)
    model = r"(?P<model>[^/]+)" + re.escape(tail) if sep else ""
    return re.compile(re.escape(head) + model)


@dataclass(frozen=True)
class DataLayout:
    """The files of one data directory: ``DataLayout(Path("data")).metrics("delta")``."""

    root: Path

    @property
    def metrics_dir(self) -> Path:
        return self.root / METRICS_DIR

    @property
    def published_dir(self) -> Path:
        return self.root / PUBLISHED_DIR

    @property
    def responses_dir(self) -> Path:
        return self.root / RESPONSES_DIR

    def metrics(self, name: str) -> Path:
        """``metrics/<name>.parquet``: a table computed by ``python -m precompute metrics``."""
        return self.root / metrics_path(name)

    def published(self, name: str) -> Path:
        """``published/<name>.parquet``: a table transcribed from the paper."""
        return self.root / published_path(name)

    def responses(self, slug: str) -> Path:
        """``responses/<slug>.parquet``: one model's raw answers."""
        return self.root / RESPONSES_PATH.format(model=slug)

    def manifest(self, slug: str) -> Path:
        """``responses/<slug>.manifest.json``: how the collector produced them."""
        return self.root / MANIFEST_PATH.format(model=slug)

    @property
    def parsed(self) -> Path:
        return self.metrics("parsed")

    @property
    def prompts(self) -> Path:
        return self.root / PROMPTS_FILE

    def response_files(self) -> list[Path]:
        """Every ``responses/*.parquet``, sorted (empty when the directory is absent)."""
        if not self.responses_dir.is_dir():
            return []
        return sorted(self.responses_dir.glob(f"*{PARQUET}"))

    def path(self, file: TableFile, model: str | None = None) -> Path:
        """The path of ``file`` (``model`` fills a per-model path)."""
        if file.per_model:
            if model is None:
                raise ValueError(f"{file.path} needs a model slug")
            return self.root / file.path.format(model=model)
        return self.root / file.path

    def instances(self, file: TableFile) -> list[Path]:
        """The existing files of ``file``'s layout: the one path, or every model's file."""
        if not file.per_model:
            path = self.path(file)
            return [path] if path.is_file() else []
        head, _, tail = file.path.partition(MODEL)
        folder = self.root / head
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob(f"*{tail}") if p.is_file())

    def matches(self, file: TableFile, path: Path) -> bool:
        """Whether ``path`` (under the root) is ``file``'s path or one of its companions."""
        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            return False
        return any(_template_regex(t).fullmatch(rel) is not None
                   for t in (file.path, *file.companions))
