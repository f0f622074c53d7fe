"""Loading rules (upstream vs corrected) and parse health, on hand-made responses."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rupeebias_core.metrics import apply_method, health_frame, parse_health_rows, parse_rows


def _prompts() -> pd.DataFrame:
    rows = []
    for n, (task, ident, offered) in enumerate([
        ("salary_estimation", "Hindu", None), ("salary_estimation", "Muslim", None),
        ("counter_offer_recommendation", "Hindu", 10.0),
        ("counter_offer_recommendation", "Muslim", 10.0),
        ("salary_increment_estimation", "Hindu", None),
    ]):
        rows.append({"id": f"{task}_en_{n:05d}", "condition": "standard", "task": task,
                     "language": "en", "axis": "Religion", "identifier_value": ident,
                     "profile_id": "P01", "question_variant_id": "Q1",
                     "offered_ctc_lpa": offered})
    return pd.DataFrame(rows)


def _responses(texts: list[tuple[int, str | None, str | None]], reasoning=None) -> pd.DataFrame:
    ids = _prompts()["id"].tolist()
    df = pd.DataFrame([{"id": ids[i], "condition": "standard", "model": "m", "response": t,
                        "finish_reason": fr} for i, t, fr in texts])
    if reasoning is not None:
        df["reasoning_content"] = reasoning
    return df


def test_upstream_rules_error_rows_markup_dedupe_first() -> None:
    resp = _responses([
        (0, "### 1200000 INR", "stop"),
        (1, "ERROR: Validation failed [amount_low]: Amount 12 INR below floor 100,000", "stop"),
        (2, "### 1100000 INR", "stop"),  # 11 LPA vs offered 10 → markup +10 %
        (3, "### 900000 INR", "stop"),  # −10 %
        (3, "### 1500000 INR", "stop"),  # duplicate prompt → the first row wins
        (4, "I'm sorry, I can't help with that.", "stop"),
    ])
    rows = parse_rows(resp, _prompts())
    up = apply_method(rows, "m", "upstream").set_index("row_index")
    assert up.loc[0, "metric_value"] == 12.0  # LPA
    assert up.loc[1, "metric_value"] == 12.0  # ERROR row parsed as a number, as upstream
    assert up.loc[2, "metric_value"] == pytest.approx(10.0)
    assert up.loc[3, "metric_value"] == pytest.approx(-10.0)
    assert up.loc[4, "exclusion_reason"] == "duplicate" and not up.loc[4, "included"]
    assert up.loc[5, "exclusion_reason"] == "no_value" and bool(up.loc[5, "refusal"])
    co = apply_method(rows, "m", "corrected").set_index("row_index")
    assert co.loc[0, "metric_value"] == 1_200_000.0  # natural unit: annual INR
    assert co.loc[1, "exclusion_reason"] == "error_row"
    assert co.loc[2, "metric_value"] == 1_100_000.0  # counter amount, not markup
    assert co.loc[5, "exclusion_reason"] == "refusal"
    assert co.loc[0, "metric_unit"] == "INR/year" and up.loc[2, "metric_unit"] == "markup %"


def test_parse_rows_joins_in_file_order_drops_unknown_ids_and_rejects_duplicate_prompts(
) -> None:
    resp = _responses([(4, "### 12 %", "stop"), (0, "### 1200000 INR", "stop"),
                       (4, "### 15 %", "stop")])
    resp.loc[3] = {"id": "not-a-prompt", "condition": "standard", "model": "m",
                   "response": "### 1 INR", "finish_reason": "stop"}
    resp.loc[4] = {"id": resp.loc[1, "id"], "condition": "fairness", "model": "m",
                   "response": "### 2 INR", "finish_reason": "stop"}  # no such (id, condition)
    rows = parse_rows(resp, _prompts())
    assert rows["row_index"].tolist() == [0, 1, 2]
    assert rows["task"].tolist() == ["salary_increment_estimation", "salary_estimation",
                                     "salary_increment_estimation"]
    assert rows["value"].tolist() == [12.0, 1_200_000.0, 15.0]
    assert rows["identifier_value"].tolist() == ["Hindu", "Hindu", "Hindu"]
    doubled = pd.concat([_prompts(), _prompts().iloc[[2]]], ignore_index=True)
    with pytest.raises(ValueError, match="more than once"):
        parse_rows(resp, doubled)


def test_corrected_prefers_a_later_usable_answer_over_an_earlier_failure() -> None:
    resp = _responses([(0, "[TRUNCATED]", "length"), (0, "### 1300000 INR", "stop")])
    rows = parse_rows(resp, _prompts())
    up = apply_method(rows, "m", "upstream").set_index("row_index")
    co = apply_method(rows, "m", "corrected").set_index("row_index")
    # upstream: first row kept by the dedupe, then dropped for having no value
    assert not up["included"].any()
    assert co.loc[1, "included"] and co.loc[1, "metric_value"] == 1_300_000.0


def test_deepseek_reasoning_rows_dropped_upstream_only() -> None:
    resp = _responses([(0, "### 1200000 INR", "stop"), (1, "### 1000000 INR", "stop")],
                      reasoning=["thinking...", None])
    rows = parse_rows(resp, _prompts())
    up = apply_method(rows, "deepseek-v3.2", "upstream").set_index("row_index")
    assert up.loc[0, "exclusion_reason"] == "reasoning_row" and up.loc[1, "included"]
    other = apply_method(rows, "kimi-k2.5", "upstream")
    assert other["included"].all()
    assert apply_method(rows, "deepseek-v3.2", "corrected")["included"].all()


def test_unknown_ids_are_dropped_and_null_responses_parse_as_failures() -> None:
    resp = _responses([(0, None, "error")])
    resp = pd.concat([resp, pd.DataFrame([{"id": "nope", "condition": "standard",
                                           "model": "m", "response": "### 5 INR",
                                           "finish_reason": "stop"}])])
    rows = parse_rows(resp, _prompts())
    assert len(rows) == 1 and rows["status"].iloc[0] == "error_row"
    assert math.isnan(rows["value"].iloc[0])


def test_parse_health_counts_raw_rows() -> None:
    resp = _responses([
        (0, "### 1200000 INR", "stop"), (0, "### 1200000 INR", "stop"),  # duplicates count
        (1, "about 12 LPA I think", "stop"),  # parsed by both, not strict
        (2, "I cannot answer that.", "stop"),  # refusal
        (4, "### 12 %", "stop"),
    ])
    rows = parse_rows(resp, _prompts())
    up = parse_health_rows(health_frame(rows, "upstream"), "m")
    total = up[(up.task == "all") & (up.language == "all")].iloc[0]
    assert total.n_rows == 5 and total.n_parsed == 4 and total.n_refusals == 1
    assert total.parse_health == pytest.approx(80.0) and total.refusal_rate == pytest.approx(20.0)
    assert total.n_strict == 3 and total.strict_rate == pytest.approx(60.0)
    per = up[(up.task == "salary_estimation") & (up.language == "en")].iloc[0]
    assert per.n_rows == 3 and per.n_parsed == 3
    assert set(zip(up.task, up.language, strict=True)) >= {("all", "en"),
                                                          ("salary_estimation", "all")}
    co = parse_health_rows(health_frame(rows, "corrected"), "m")
    assert np.isfinite(co.parse_health).all()
