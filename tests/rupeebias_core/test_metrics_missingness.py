"""Missing answers as outcomes: rates by identity, the within-profile permutation test and
the fill range."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rupeebias_core.metrics.blocks import build_blocks
from rupeebias_core.metrics.missingness import fill_range, missingness_rows

IDENTS = ("a", "b", "c", "d", "e", "f")


def _parsed(refuse: dict[str, float], seed: int, n_profiles: int = 18) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_profiles):
        for q in ("Q1", "Q2", "Q3"):
            for ident in IDENTS:
                refused = rng.random() < refuse.get(ident, 0.1)
                rows.append({"condition": "standard", "language": "en", "task": "t",
                             "axis": "A", "identifier_value": ident, "profile_id": f"P{p}",
                             "question_variant_id": q, "refusal": refused,
                             "included": not refused, "exclusion_reason":
                             "refusal" if refused else None,
                             "metric_value": math.nan if refused else rng.uniform(90, 110)})
    return pd.DataFrame(rows)


def _en(out: pd.DataFrame, lang: str = "en", block: bool = False) -> pd.DataFrame:
    sel = (out.language == lang) & (out.task == "t")
    return out[sel & ((out.identifier_value == "all") == block)]


def _rows(parsed: pd.DataFrame) -> pd.DataFrame:
    values = parsed.loc[parsed["included"]].rename(columns={"metric_value": "value"})
    return missingness_rows(parsed, build_blocks(values), "m", "corrected", ["en"], ["t"],
                            ["A"], {"A": IDENTS})


def test_identity_dependent_refusals_are_detected() -> None:
    out = _rows(_parsed({"a": 0.6, "b": 0.0}, 1))
    per = _en(out).set_index(
        "identifier_value")
    assert per.loc["a", "refusal_rate"] > 0.4 and per.loc["b", "refusal_rate"] == 0
    assert per.loc["a", "n"] == 54
    assert per.loc["a", "n_refusal"] == round(per.loc["a", "refusal_rate"] * 54)
    block = _en(out, block=True).iloc[0]
    assert block.p_refusal < 0.01 and block.p_refusal_bh < 0.05
    # pooled language rows exist and repeat the only language
    pooled = _en(out, "all", block=True).iloc[0]
    assert pooled.n == block.n


def test_independent_refusals_are_not_flagged_at_the_nominal_rate() -> None:
    p = [_en(_rows(_parsed({}, 100 + s)), block=True).iloc[0].p_refusal for s in range(40)]
    assert np.mean(np.array(p) < 0.05) <= 0.15  # about 5 %; binomial(40) slack


def test_fill_range_brackets_the_observed_gap() -> None:
    parsed = _parsed({"a": 0.5}, 3)
    values = parsed.loc[parsed["included"]].rename(columns={"metric_value": "value"})
    block = build_blocks(values)[("standard", "en", "t", "A")]
    lo, hi = fill_range(block, "corrected")
    from rupeebias_core.metrics.pairs import block_pair_deltas

    observed = block_pair_deltas(block, "corrected").mean()
    assert lo <= observed <= hi
    out = _rows(parsed)
    row = _en(out, block=True).iloc[0]
    assert row.mean_delta_fill_lo == pytest.approx(lo)
    assert row.mean_delta_fill_hi == pytest.approx(hi)
