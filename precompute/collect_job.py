"""A `collect` run as one frozen, typed value: what to send, where, and how.

Why: the command line used to travel through the run as an argparse ``Namespace`` (mutated on
the way), so every helper took half a dozen loose parameters and the manifest took sixteen.
`collect_cli.job_from_args` now resolves the flags once (defaults, the local backend, the cache
key's endpoint identity, the API key) into a `CollectJob`; `collect.run(job)` needs nothing
else, so a bench or a test can build a job without a command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from precompute.client import RetryPolicy
from precompute.collect_plan import RunConfig
from precompute.endpoint import Target
from precompute.selection import Selection
from rupeebias_core.registry import DataLayout


@dataclass(frozen=True)
class OutputPaths:
    """Where a run writes, all under ``DATA/responses/`` (paths from the registry's
    :class:`~rupeebias_core.registry.DataLayout`): one collector per (data, slug)."""

    data: Path
    slug: str

    @classmethod
    def under(cls, data: Path, slug: str) -> OutputPaths:
        return cls(Path(data), slug)

    @property
    def responses_dir(self) -> Path:
        return DataLayout(self.data).responses_dir

    @property
    def parquet(self) -> Path:
        return DataLayout(self.data).responses(self.slug)

    @property
    def manifest(self) -> Path:
        return DataLayout(self.data).manifest(self.slug)

    @property
    def store_dir(self) -> Path:
        """The gitignored store directory; it also holds the collector lock."""
        return self.responses_dir / f"{self.slug}.store"

    @property
    def store_db(self) -> Path:
        return self.store_dir / "responses.sqlite"


@dataclass(frozen=True)
class FlushPolicy:
    """When the Parquet and its manifest are rewritten from the store during a run."""

    every: int = 5000
    seconds: float = 60.0


@dataclass(frozen=True)
class LocalServerSettings:
    """The bundled model's llama.cpp servers, resolved: no ``None`` left but `threads`
    (None = cores / processes, decided by `serve_local.LocalServer`)."""

    model_path: Path
    backend: str
    processes: int
    slots: int
    threads: int | None
    ctx_size: int
    #: The model came from the catalogue (not from $RUPEEBIAS_LOCAL_GGUF): the manifest then
    #: names it, its licence and its packages.
    from_catalogue: bool


@dataclass(frozen=True)
class EstimateSettings:
    """The estimate printed before sending (`precompute.estimate`)."""

    latency_s: float | None = None
    preset: str | None = None
    price_in: float | None = None
    price_out: float | None = None
    tokenizer: str = "auto"
    expected_output_tokens: int | None = None


@dataclass(frozen=True)
class CollectJob:
    """Everything one run needs; built by `collect_cli.job_from_args`."""

    config: RunConfig
    target: Target
    api_key: str = field(repr=False)  # never printed
    selection: Selection
    order: str
    retry: RetryPolicy
    flush: FlushPolicy
    concurrency: int
    paths: OutputPaths
    local_server: LocalServerSettings | None = None
    estimate: EstimateSettings = EstimateSettings()
    dry_run: bool = False
    show_progress: bool = True

    @property
    def local(self) -> bool:
        return self.local_server is not None

    @property
    def servers(self) -> int:
        """Server processes (1 for a remote endpoint)."""
        return self.local_server.processes if self.local_server is not None else 1

    @property
    def effective_concurrency(self) -> int:
        """Requests really in flight: a local server decodes at most its slots at once."""
        if self.local_server is None:
            return self.concurrency
        return min(self.concurrency, self.local_server.processes * self.local_server.slots)

    @property
    def where(self) -> str:
        """The endpoint as a log line names it."""
        s = self.local_server
        if s is None:
            return self.target.host
        return (f"local {s.backend} ({s.model_path.name}; {s.processes} process(es) x "
                f"{s.slots} slot(s))")
