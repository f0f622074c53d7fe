"""`precompute.selection`: deterministic, pair-preserving samples and input validation."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from precompute.selection import Selection, SelectionError, load_selection

SLOT = ["task", "language", "condition", "axis", "profile_id", "question_variant_id"]


def test_sample_is_stable_nested_and_keeps_pairs() -> None:
    s100 = load_selection(Selection(tasks=("salary_estimation",), sample=100))
    again = load_selection(Selection(tasks=("salary_estimation",), sample=100))
    s40 = load_selection(Selection(tasks=("salary_estimation",), sample=40))
    assert len(s100) == 100 and s100.id.tolist() == again.id.tolist()
    assert set(s40.id) <= set(s100.id)
    assert s100.id.tolist() == sorted(s100.id)
    sizes = s100.groupby(SLOT).size()
    assert (sizes >= 2).sum() >= len(sizes) - 1  # whole slots: at most the last is partial
    other = load_selection(Selection(tasks=("salary_estimation",), sample=100, seed=7))
    assert set(other.id) != set(s100.id)


def test_smoke_is_five_per_task_language_condition() -> None:
    sm = load_selection(Selection(tasks=("salary_estimation", "service_pricing_client"),
                                  condition="benchmark", smoke=True))
    counts = sm.groupby(["task", "language", "condition"]).size()
    assert counts.tolist() == [5] * 6  # salary x2 conditions x2 langs + client x2 langs
    every = load_selection(Selection(tasks=("salary_estimation", "service_pricing_client"),
                                     condition="all", smoke=True))
    counts = every.groupby(["task", "language", "condition"]).size()
    assert counts.tolist() == [5] * 10  # ... + placebo for both tasks x2 langs


def test_full_selection_counts() -> None:
    assert len(load_selection(Selection(condition="fairness"))) == 9_396
    assert len(load_selection(Selection(tasks=("service_pricing_vendor",),
                                        languages=("hinglish",)))) == 1_566


def test_prompts_file_validation(tmp_path: Path) -> None:
    base = pd.DataFrame({"id": ["a", "b"], "task": ["t", "t"], "language": ["en", "en"],
                         "condition": ["standard", "standard"], "prompt": ["p", "q"],
                         "system_prompt": ["s", "s"]})
    ok = tmp_path / "ok.parquet"
    base.to_parquet(ok)
    assert load_selection(Selection(prompts_path=ok)).id.tolist() == ["a", "b"]
    missing = tmp_path / "missing.parquet"
    base.drop(columns="prompt").to_parquet(missing)
    with pytest.raises(SelectionError, match="lacks required column"):
        load_selection(Selection(prompts_path=missing))
    empty = tmp_path / "empty.parquet"
    base.assign(prompt=["p", ""]).to_parquet(empty)
    with pytest.raises(SelectionError, match="empty 'prompt'"):
        load_selection(Selection(prompts_path=empty))
    badcond = tmp_path / "badcond.parquet"
    base.assign(condition=["standard", "weird"]).to_parquet(badcond)
    with pytest.raises(SelectionError, match="unknown condition"):
        load_selection(Selection(prompts_path=badcond))
    with pytest.raises(SelectionError, match="not found"):
        load_selection(Selection(prompts_path=tmp_path / "nope.parquet"))
    with pytest.raises(SelectionError, match="matches no prompts"):
        load_selection(Selection(prompts_path=ok, languages=("hinglish",)))


BLOCK = ["task", "language", "condition", "axis", "profile_id"]


def _in_send_order(frame: pd.DataFrame, order: str, seed: int = 42) -> pd.DataFrame:
    from precompute.selection import send_order

    pos = send_order(frame, order, seed)
    ranked = frame.assign(_pos=[pos[(i, c)] for i, c in
                                zip(frame["id"], frame["condition"], strict=True)])
    return ranked.sort_values("_pos").reset_index(drop=True)


def test_block_order_sends_whole_blocks_spread_over_tasks() -> None:
    frame = load_selection(Selection(condition="all"))
    sent = _in_send_order(frame, "blocks")
    assert sorted(sent["_pos"]) == list(range(len(frame)))  # a total order, no ties
    # each profile block is one contiguous run, in id order inside
    keys = sent[BLOCK].astype(str)
    runs = (keys != keys.shift()).any(axis=1).astype(int).cumsum()
    assert runs.max() == frame.groupby(BLOCK).ngroups
    for _, g in list(sent.groupby(runs))[:50]:
        assert g["id"].tolist() == sorted(g["id"])
    # a block's twins (other language, fairness condition) follow it: standard English,
    # standard Hinglish, then fairness English and Hinglish (salary estimation only)
    firsts = sent.groupby(runs).head(1).reset_index(drop=True)
    family = firsts[["task", "axis", "profile_id"]].astype(str).agg("|".join, axis=1)
    assert (family != family.shift()).sum() == family.nunique()  # each family is contiguous
    for _, fam in list(firsts.groupby(family, sort=False))[:60]:
        got = list(zip(fam["condition"], fam["language"], strict=True))
        full = [("standard", "en"), ("standard", "hinglish"), ("fairness", "en"),
                ("fairness", "hinglish")]
        assert got == (full if fam["task"].iloc[0] == "salary_estimation" else full[:2])
    # the opt-in placebo condition follows the whole benchmark
    n_placebo = int((frame.condition == "placebo").sum())
    assert n_placebo > 0 and set(sent.condition.tail(n_placebo)) == {"placebo"}
    # stopped after 5 %, the run already covers every task, language and benchmark condition
    head = sent.head(len(sent) // 20)
    assert set(head.task) == set(frame.task)
    assert set(head.language) == {"en", "hinglish"}
    assert set(head.condition) == {"standard", "fairness"}
    # deterministic, and the seed matters
    assert _in_send_order(frame, "blocks")["id"].tolist() == sent["id"].tolist()
    assert _in_send_order(frame, "blocks", seed=7)["id"].head(200).tolist() != \
        sent["id"].head(200).tolist()


def test_id_order_groups_by_system_prompt_then_id() -> None:
    frame = load_selection(Selection(tasks=("salary_estimation",), condition="all"))
    sent = _in_send_order(frame, "id")
    systems = sent["system_prompt"].tolist()
    changes = sum(a != b for a, b in zip(systems, systems[1:], strict=False))
    # standard and fairness; Hinglish prompts carry the English system prompt
    assert changes + 1 == frame["system_prompt"].nunique() == 2
    for _, g in sent.groupby("system_prompt", sort=False):
        assert g["id"].tolist() == sorted(g["id"])


def test_unknown_send_order_is_an_error() -> None:
    from precompute.selection import send_order

    frame = load_selection(Selection(tasks=("service_pricing_vendor",), sample=20))
    with pytest.raises(SelectionError, match="unknown send order"):
        send_order(frame, "random", 42)
