"""`--condition placebo` through prompts, selection, estimate, collect and status."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pandas as pd
import pytest

from precompute import run_status as rs
from precompute.selection import Selection, SelectionError, load_selection
from rupeebias_core import benchmark as b
from rupeebias_core.placebo import PLACEBO_STATEMENTS
from rupeebias_core.prompts import build_prompts
from tests.precompute.conftest import collect_args, run_collect
from tests.precompute.fake_openai_server import FakeOpenAIServer

N = len(PLACEBO_STATEMENTS)


@pytest.fixture(scope="module")
def mixed_prompts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prompts.parquet holding benchmark and placebo rows: 6 per task x language x condition."""
    frame = build_prompts("all", tasks=("salary_estimation", "service_pricing_client"))
    parts = [g.head(6) for _, g in frame.groupby(["task", "language", "condition"], sort=True)]
    out = tmp_path_factory.mktemp("mixed") / "prompts.parquet"
    pd.concat(parts).reset_index(drop=True).to_parquet(out)
    return out


def test_prompts_command_writes_only_placebo(tmp_path: Path) -> None:
    from precompute.__main__ import main

    out = tmp_path / "p.parquet"
    assert main(["prompts", "--out", str(out), "--condition", "placebo"]) == 0
    frame = pd.read_parquet(out)
    assert len(frame) == b.PLACEBO_PROMPT_COUNT == 450 * N
    assert set(frame.condition) == {"placebo"} and frame.id.is_unique


def test_selection_by_condition() -> None:
    plc = load_selection(Selection(condition="placebo"))
    assert len(plc) == b.PLACEBO_PROMPT_COUNT and set(plc.condition) == {"placebo"}
    vendor = load_selection(Selection(condition="placebo", tasks=("service_pricing_vendor",),
                                      languages=("hinglish",)))
    assert len(vendor) == b.expected_prompts("service_pricing_vendor", "hinglish", "placebo")
    assert len(load_selection(Selection(condition="benchmark"))) == 48_546
    assert len(load_selection(Selection(condition="all"))) == 48_546 + b.PLACEBO_PROMPT_COUNT
    smoke = load_selection(Selection(condition="placebo", smoke=True))
    assert (smoke.groupby(["task", "language"]).size() == 5).all() and len(smoke) == 50
    # a sample takes whole placebo slots: every statement of a slot, or (the last) a part
    sample = load_selection(Selection(condition="placebo", sample=10 * N))
    sizes = sample.groupby(["task", "language", "profile_id", "question_variant_id"]).size()
    assert len(sample) == 10 * N and (sizes == N).all()
    with pytest.raises(SelectionError, match="unknown condition"):
        load_selection(Selection(condition="plaecbo"))


def test_prompts_file_with_placebo_rows(mixed_prompts: Path) -> None:
    frame = pd.read_parquet(mixed_prompts)
    got = load_selection(Selection(prompts_path=mixed_prompts, condition="placebo"))
    assert len(got) == (frame.condition == "placebo").sum() == 4 * 6
    std = load_selection(Selection(prompts_path=mixed_prompts))  # default: standard only
    assert set(std.condition) == {"standard"}
    assert len(load_selection(Selection(prompts_path=mixed_prompts, condition="all"))) == \
        len(frame)


def test_estimate_placebo(capsys: pytest.CaptureFixture[str]) -> None:
    from precompute.__main__ import main

    rc = main(["estimate", "--condition", "placebo", "--tasks", "service_pricing_vendor",
               "--preset", "gpt-5.4", "--tokenizer", "chars4"])
    assert rc == 0
    want = b.PLACEBO_TASK_PROMPT_COUNTS["service_pricing_vendor"]
    assert re.search(rf"requests\s+{want}\b", capsys.readouterr().out)


def test_collect_placebo_then_all(fake_server: FakeOpenAIServer, mixed_prompts: Path,
                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = pd.read_parquet(mixed_prompts)
    plc = prompts[prompts.condition == "placebo"]
    argv = collect_args(fake_server.base_url, tmp_path, mixed_prompts, "--condition", "placebo")
    assert run_collect(argv, monkeypatch) == 0
    out = pd.read_parquet(tmp_path / "responses" / "test-model.parquet")
    assert sorted(zip(out.id, out.condition, strict=True)) == sorted(
        zip(plc.id, plc.condition, strict=True))
    assert (out.status == "ok").all() and fake_server.count() == len(plc)
    # what was sent: the placebo user prompts with the task's standard system prompt
    sent = {(r.body["messages"][0]["content"], r.body["messages"][-1]["content"])
            for r in fake_server.received}
    want = {(b.system_prompt(t), p) for t, p in zip(plc.task, plc.prompt, strict=True)}
    assert sent == want
    # `all` then adds the benchmark rows and re-sends no placebo prompt
    argv = collect_args(fake_server.base_url, tmp_path, mixed_prompts)  # --condition all
    assert run_collect(argv, monkeypatch) == 0
    out = pd.read_parquet(tmp_path / "responses" / "test-model.parquet")
    assert len(out) == len(prompts) == fake_server.count()


def _responses(tmp: Path, n_placebo: int) -> Path:
    (tmp / "responses").mkdir(parents=True)
    ts = "2026-11-30T00:00:00+00:00"
    rows = [{"id": f"salary_estimation_en_{i:05d}", "condition": "standard",
             "task": "salary_estimation", "language": "en", "status": "ok",
             "started_at": ts, "finished_at": "2026-11-30T00:00:01+00:00"} for i in range(3)]
    rows += [{"id": f"salary_estimation_en_placebo_left_handed_P01_Q{i}", "condition": "placebo",
              "task": "salary_estimation", "language": "en", "status": "ok",
              "started_at": ts, "finished_at": "2026-11-30T00:00:01+00:00"}
             for i in range(n_placebo)]
    pd.DataFrame(rows).to_parquet(tmp / "responses" / "m.parquet")
    return tmp


def test_status_reports_placebo_separately(tmp_path: Path) -> None:
    st = rs.run_status(_responses(tmp_path / "a", 2), "m")
    assert (st.n_rows, st.n_standard, st.n_fairness, st.n_placebo) == (3, 3, 0, 2)
    text = rs.render(st)
    assert "3 of 48,546 prompts answered" in text
    assert f"Opt-in placebo condition (not part of the benchmark): 2 of {rs.N_PLACEBO:,} " \
           "answered." in text
    assert "| salary_estimation | 3 of 4,698 |" in text  # the coverage table is the benchmark's
    plain = rs.render(rs.run_status(_responses(tmp_path / "b", 0), "m"))
    assert "placebo" not in plain  # a run without placebo rows renders as before
    # "complete" is the benchmark, whatever the placebo progress
    done = dataclasses.replace(st, n_standard=rs.N_STANDARD, n_fairness=rs.N_FAIRNESS)
    assert done.complete and dataclasses.replace(done, n_placebo=0).complete
    assert not dataclasses.replace(st, n_placebo=rs.N_PLACEBO).complete
