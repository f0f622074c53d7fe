"""Pinned hashes and send order: what a resumed run relies on to find its stored answers.

A long collection resumes by looking up each request's `cache_key` in its store (or in the
committed Parquet) and keeps the rows of its `config_hash`; `--order blocks` decides which
prompts a stopped run holds. Any change to the hashed JSON, the request a prompt becomes, the
prompts themselves or the order makes a rerun of the same command send everything again, or
mix orders. These values were computed by the code the Qwen run was started with; if one of
these tests fails, the change breaks resume of every existing run.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pandas as pd
import pytest

from precompute.client import ChatRequest
from precompute.collect import PlanItem, RunConfig, build_plan, cache_key
from precompute.selection import Selection, load_selection, prompts_sha256, send_order

#: The configuration of the Qwen run (progress/qwen2.5-coder-1.5b-instruct/*.manifest.json).
QWEN = RunConfig(
    endpoint_key="local-llama-cpp:qwen2.5-coder-1.5b-instruct-q4_k_m.gguf:cc324af070c2ecbf",
    model="qwen2.5-coder-1.5b-instruct", slug="qwen2.5-coder-1.5b-instruct", temperature=0.0,
    max_tokens=40, reasoning_effort="none", reasoning_style="omit", sample_index=0,
    system_prompt_style="indented")

SamplePlan = tuple[pd.DataFrame, list[PlanItem]]


def _sha_lines(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_cache_key_is_pinned() -> None:
    req = ChatRequest.chat("acme/test-model", "What salary?", "You are helpful.",
                           temperature=0.0, max_tokens=40, reasoning_effort="none",
                           reasoning_style="openrouter")
    assert cache_key("https://openrouter.ai/api/v1", req, 0) == \
        "f29421a31c44171b75b070f447b5a5254316f9e3c0cf981af86526c6ada2c2c0"
    assert cache_key("local-llama-cpp:qwen.gguf:0123456789abcdef",
                     ChatRequest.chat("q", "u"), 3) == \
        "df6306b35cade20150fa1b17ae2229b4cdb44eeef75f7d31144ea576b182229e"


def test_config_hash_is_pinned() -> None:
    assert QWEN.config_hash == "53a13f4e33e47e595b8029feb16165fd3cbebf33e76570c6cd83d007a0fcd48e"
    other = replace(QWEN, endpoint_key="local-llama-cpp:x.gguf:0123456789abcdef")
    assert other.config_hash == \
        "b6e308085295463e74da5c58c51ed9876103fcb22cbf297cbc9703269635def5"


def test_a_committed_answer_of_the_qwen_run_keeps_its_cache_key() -> None:
    frame = load_selection(Selection(tasks=("counter_offer_recommendation",),
                                     languages=("en",), condition="benchmark"))
    plan = {(p.id, p.condition): p for p in build_plan(frame, QWEN)}
    item = plan[("counter_offer_recommendation_en_00685", "standard")]
    assert item.cache_key == "c256be62191e45a54fe1246ff156d541e07ecbdb283b9d199ce8e8d4833bf177"


@pytest.fixture(scope="module")
def sample_plan() -> SamplePlan:
    frame = load_selection(Selection(condition="all", sample=120, seed=42))
    cfg = replace(QWEN, endpoint_key="local-llama-cpp:x.gguf:0123456789abcdef")
    return frame, build_plan(frame, cfg)


def test_plan_and_its_cache_keys_are_pinned(sample_plan: SamplePlan) -> None:
    frame, plan = sample_plan
    assert len(plan) == 120
    assert prompts_sha256(frame) == \
        "2b69f37c5c294e8277a0752ee63465ac9360b24ebeb49ec59bed88abd976211e"
    assert _sha_lines([p.cache_key for p in plan]) == \
        "67e1b2b6131711dfb259969bf76d444600e2e7d7dd8c45462cc1b4cbc99dc27d"


def test_blocks_send_order_is_pinned(sample_plan: SamplePlan) -> None:
    frame, plan = sample_plan
    pos = send_order(frame, "blocks", 42)
    order = sorted(plan, key=lambda p: pos[(p.id, p.condition)])
    assert _sha_lines([f"{p.id}|{p.condition}" for p in order]) == \
        "c11f33c4d8a580137b7f8ec2f06fe092072a65a03320fe1dacfff03bc5c67f4e"
    assert (order[0].id, order[0].condition) == ("service_pricing_client_en_01279", "standard")
    assert order[-1].condition == "placebo"  # opt-in conditions after the whole benchmark
