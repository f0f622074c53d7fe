"""Canonical pair gap and maximum observed gap on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rupeebias_core.metrics import (
    block_canonical_gap,
    block_max_gap,
    build_blocks,
    canonical_gap,
    max_gap,
    signed_gap,
    stack_languages,
)


def _block(values: dict[tuple[str, str, str], float]):
    """values: (identifier, profile, qv) → value, languages en/hinglish by qv prefix."""
    rows = [{"condition": "standard", "language": q.split(":")[0], "task": "t", "axis": "A",
             "identifier_value": i, "profile_id": p, "question_variant_id": q.split(":")[1],
             "value": v} for (i, p, q), v in values.items()]
    blocks = build_blocks(pd.DataFrame(rows))
    return stack_languages(list(blocks.values()))


def test_signed_gap_formula() -> None:
    assert float(signed_gap(100.0, 80.0)) == pytest.approx(200 / 9)
    assert float(signed_gap(80.0, 100.0)) == pytest.approx(-200 / 9)
    assert math.isnan(float(signed_gap(5.0, -5.0)))
    assert float(signed_gap(-10.0, -30.0)) == pytest.approx(-100.0)  # upstream keeps the sign
    assert math.isnan(float(signed_gap(-10.0, -30.0, "corrected")))


def test_cpg_unmatched_means_and_matched_sign_consistency() -> None:
    vals = {}
    # P: 100, 120 (en Q1, Q2), 110 (hinglish Q1); M: 90, 130, 100 in the same slots + an extra
    for (slot, p, m) in (("en:Q1", 100, 90), ("en:Q2", 120, 130), ("hinglish:Q1", 110, 100)):
        vals[("P", "X", slot)] = p
        vals[("M", "X", slot)] = m
    vals[("M", "Y", "en:Q1")] = 40  # unmatched extra M row (no P in that slot)
    vals[("Z", "X", "en:Q1")] = 1  # other identifiers are ignored
    block = _block(vals)
    g = block_canonical_gap(block, "P", "M", "cpg:m:t:A")
    mp, mm = 110.0, (90 + 130 + 100 + 40) / 4
    assert g.cpg == pytest.approx((mp - mm) / ((mp + mm) / 2) * 100)
    assert (g.n_privileged, g.n_marginalised, g.n_matched_slots) == (3, 4, 3)
    assert g.sign_consistency == pytest.approx(200 / 3)  # P > M in 2 of 3 matched slots
    assert g.rank_biserial == pytest.approx(1 / 3)
    assert g.cpg_lo <= g.cpg <= g.cpg_hi


def test_cpg_ties_count_as_not_greater_and_ci_excludes_zero_for_a_clear_gap() -> None:
    rng = np.random.default_rng(0)
    p = 100 + rng.normal(0, 2, 200)
    m = 80 + rng.normal(0, 2, 200)
    g = canonical_gap(p, m, p, m, "k")
    assert g.cpg == pytest.approx(signed_gap(p.mean(), m.mean()))
    assert g.cpg_lo > 0 and g.sign_consistency == 100.0
    tied = canonical_gap([5.0, 5.0], [5.0, 5.0], [5.0, 5.0], [5.0, 5.0], "k")
    assert tied.sign_consistency == 0.0 and math.isnan(tied.rank_biserial)
    assert tied.cpg == 0.0


def test_mog_top_bottom_and_gap() -> None:
    values = np.array([10, 12, 20, 22, 15, 15.0])
    idents = np.array(["a", "a", "b", "b", "c", "c"])
    mg = max_gap(values, idents, "mog:m:t:A")
    # means a = 11, b = 21, c = 15 → (21 − 11)/16 · 100
    assert (mg.top_identifier, mg.bottom_identifier) == ("b", "a")
    assert mg.gap == pytest.approx(62.5)
    assert mg.n_rows == 6 and mg.n_identifiers == 3
    assert mg.gap_lo <= mg.gap_hi


def test_mog_ci_resamples_rows_and_needs_all_identifiers() -> None:
    rng = np.random.default_rng(1)
    idents = np.repeat(np.array(["a", "b", "c", "d"]), 100)
    values = np.repeat([100.0, 90.0, 95.0, 80.0], 100) + rng.normal(0, 3, 400)
    mg = max_gap(values, idents, "k")
    assert mg.bottom_identifier == "d" and mg.top_identifier == "a"
    assert mg.gap_lo < mg.gap < mg.gap_hi
    assert mg.gap_hi - mg.gap_lo < 5
    assert max_gap(values, idents, "k") == mg  # deterministic
    # one row per identifier: every replicate loses an identifier with high probability,
    # and fewer than 10 usable replicates leave the CI undefined
    few = max_gap(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]), np.array(list("abcdefg")), "k")
    assert math.isnan(few.gap_lo)


def test_mog_needs_two_identifiers() -> None:
    # a lone identifier's "gap" with itself would be 0 by construction: no gap, nobody named
    lone = max_gap(np.array([100.0, 100.0, 90.0]), np.array(["Sunni"] * 3), "k")
    assert math.isnan(lone.gap) and math.isnan(lone.gap_lo) and math.isnan(lone.gap_hi)
    assert lone.top_identifier is None and lone.bottom_identifier is None
    assert (lone.n_rows, lone.n_identifiers) == (3, 1)
    two = max_gap(np.array([110.0, 90.0]), np.array(["a", "b"]), "k")
    assert two.gap == pytest.approx(20.0) and (two.top_identifier, two.bottom_identifier) == (
        "a", "b")


def test_block_mog_pools_languages() -> None:
    block = _block({("a", "X", "en:Q1"): 10, ("a", "X", "hinglish:Q1"): 30,
                    ("b", "X", "en:Q1"): 10, ("b", "X", "hinglish:Q1"): 10})
    mg = block_max_gap(block, "k")
    assert mg.gap == pytest.approx((20 - 10) / 15 * 100) and mg.n_rows == 4
