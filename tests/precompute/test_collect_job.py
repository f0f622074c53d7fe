"""The typed collect API: flags -> one frozen `CollectJob`, `run(job) -> RunReport`, and the
manifest built from a report; plus the rule that callers outside use public names only."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

from precompute import collect
from precompute.collect import (
    EXIT_ERRORS_LEFT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CollectJob,
    RunReport,
    job_from_args,
    manifest_writer,
    run,
)
from precompute.collect_report import run_manifest
from precompute.collect_send import SendTally
from tests.precompute.conftest import FAKE_KEY, REPO, collect_args
from tests.precompute.fake_openai_server import Action, FakeOpenAIServer


def parse(argv: list[str]) -> argparse.Namespace:
    assert argv[0] == "collect"
    parser = argparse.ArgumentParser()
    collect.configure(parser)
    return parser.parse_args(argv[1:])


def make_job(base_url: str, data: Path, prompts: Path, monkeypatch: pytest.MonkeyPatch,
             *extra: str) -> CollectJob:
    monkeypatch.setenv("RB_TEST_KEY", FAKE_KEY)
    return job_from_args(parse(collect_args(base_url, data, prompts, *extra)))


def test_the_job_is_frozen_resolved_and_hides_the_key(small_prompts: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    job = make_job("http://127.0.0.1:9/v1/", tmp_path, small_prompts, monkeypatch,
                   "--flush-every", "7")
    assert job.concurrency == 8 and job.servers == 1 and not job.local
    assert job.config.endpoint_key == "http://127.0.0.1:9/v1" and job.config.slug == "test-model"
    assert job.retry.max_attempts == 3 and job.retry.timeout_s == 2.0
    assert job.flush.every == 7 and job.flush.seconds == 60.0
    assert job.paths.parquet == tmp_path / "responses" / "test-model.parquet"
    assert job.paths.store_db == tmp_path / "responses" / "test-model.store" / "responses.sqlite"
    assert job.api_key == FAKE_KEY and FAKE_KEY not in repr(job)
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.concurrency = 1  # type: ignore[misc]  # the point of the test


def test_local_defaults_are_resolved_without_touching_args(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    gguf = tmp_path / "SmolLM2-test.gguf"
    gguf.write_bytes(b"GGUF not really a model")
    monkeypatch.setenv("RUPEEBIAS_LOCAL_GGUF", str(gguf))
    args = parse(["collect", "--data", str(tmp_path / "data"), "--smoke"])
    before = dict(vars(args))
    job = job_from_args(args)
    assert vars(args) == before  # the Namespace is read, never patched
    assert job.local and job.local_server is not None
    assert (job.local_server.backend, job.local_server.processes, job.local_server.slots) == (
        "llama-cpp-python", 2, 1)
    assert job.concurrency == 2 and job.effective_concurrency == 2
    assert job.config.endpoint_key.startswith("local-llama-cpp:SmolLM2-test.gguf:")
    assert not job.local_server.from_catalogue  # $RUPEEBIAS_LOCAL_GGUF named the file
    assert not (tmp_path / "data").exists()  # building a job writes nothing


def test_run_returns_a_report_and_publishes_every_parquet(small_prompts: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    prompts = pd.read_parquet(small_prompts)
    failing = prompts[prompts.task != "salary_estimation"].prompt.iloc[0]
    with FakeOpenAIServer(script={failing: [Action("status", 400)]}) as srv:
        job = make_job(srv.base_url, tmp_path, small_prompts, monkeypatch, "--concurrency", "1",
                       "--flush-every", "25")
        seen: list[RunReport] = []
        report = run(job, publish=seen.append)
    assert seen[-1] is report and not report.in_progress and not report.interrupted
    assert [r.in_progress for r in seen[:-1]] == [True] * (len(seen) - 1) and len(seen) >= 2
    assert report.selected == report.to_send == len(prompts) and report.cached == 0
    assert report.this_run.finished == len(prompts) == report.rows_in_parquet
    assert report.errors == 1 and report.exit_code == EXIT_ERRORS_LEFT
    assert report.parquet == job.paths.parquet and report.parquet.exists()
    assert not job.paths.manifest.exists()  # manifests are the publisher's business
    assert report.environment and report.prompts_sha256


def test_the_manifest_is_built_from_the_report(small_prompts: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer() as srv:
        job = make_job(srv.base_url, tmp_path, small_prompts, monkeypatch, "--sample", "6")
        report = run(job, publish=manifest_writer(job))
        rerun = run(job)
    on_disk = json.loads(job.paths.manifest.read_text())
    assert on_disk == json.loads(json.dumps(run_manifest(job, report)))
    assert on_disk["counts"]["sent_this_run"] == 6 and on_disk["config_hash"] == \
        job.config.config_hash
    assert rerun.cached == 6 and rerun.to_send == 0 and rerun.exit_code == EXIT_OK


def test_exit_codes_follow_the_report() -> None:
    base = RunReport(started_at="", ended_at="", selected=1, cached=0, to_send=1,
                     earlier_errors=0, this_run=SendTally(by_status={"error": 1}),
                     by_status={"error": 1})
    assert base.exit_code == EXIT_ERRORS_LEFT
    assert dataclasses.replace(base, interrupted=True).exit_code == EXIT_INTERRUPTED
    assert dataclasses.replace(base, dry_run=True).exit_code == EXIT_OK
    assert dataclasses.replace(base, by_status={"ok": 1}).exit_code == EXIT_OK


def test_a_dry_run_writes_no_parquet(small_prompts: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    job = make_job("http://127.0.0.1:9/v1", tmp_path, small_prompts, monkeypatch, "--dry-run")
    report = run(job, publish=lambda r: pytest.fail("a dry run publishes nothing"))
    assert report.dry_run and report.to_send == len(pd.read_parquet(small_prompts))
    assert not job.paths.parquet.exists() and report.exit_code == EXIT_OK


def _private_imports(path: Path) -> list[str]:
    """`from x import _y` and `module._y` uses of the project's own modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    ours = ("precompute", "rupeebias_core", "explorer", "tests")
    modules: set[str] = set()
    bad: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[0] in ours:
            bad += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
            modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names
                        if a.name.split(".")[0] in ours}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in modules and node.attr.startswith("_") and \
                not node.attr.startswith("__"):
            bad.append(f"{node.value.id}.{node.attr}")
    return bad


@pytest.mark.parametrize("rel", ["bench/collect.py", "precompute/import_upstream.py",
                                 "precompute/collect.py", "precompute/collect_cli.py",
                                 "precompute/collect_job.py", "precompute/collect_plan.py",
                                 "precompute/collect_report.py", "precompute/collect_send.py"])
def test_collect_and_its_callers_use_public_names_only(rel: str, tmp_path: Path) -> None:
    assert _private_imports(REPO / rel) == []
    probe = tmp_path / "probe.py"
    probe.write_text("from precompute.collect import _main\nfrom precompute import collect\n"
                     "collect._manifest\n")
    assert _private_imports(probe) == ["precompute.collect._main", "collect._manifest"]
