"""Simulated models with planted effects: the metrics must recover what was planted.

Runs the whole chain (response text → parse → loading rules → metrics) on prompt subsets, plus
one end-to-end run on all 48,546 prompts. Simulated data lives only in memory/tmp dirs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rupeebias_core.metrics import compute_model, finalise, parse_rows
from rupeebias_core.prompts import build_prompts
from rupeebias_core.simulate import SimSpec, simulate_responses, write_simulated_dir

SUBSET_TASKS = ("salary_estimation", "service_pricing_vendor")


@pytest.fixture(scope="module")
def prompts() -> pd.DataFrame:
    df = build_prompts()
    return pd.DataFrame({c: df[c].astype(object).where(df[c].notna(), None) for c in df.columns})


def _run_methods(prompts: pd.DataFrame, spec: SimSpec, methods: tuple[str, ...],
                 tasks: tuple[str, ...] = SUBSET_TASKS, fairness: bool = False
                 ) -> dict[str, dict[str, pd.DataFrame]]:
    """Simulate, parse once, and compute every table under each method."""
    sub = prompts[prompts["task"].isin(tasks)]
    if not fairness:
        sub = sub[sub["condition"] == "standard"]
    rows = parse_rows(simulate_responses(sub, spec), sub)
    out = {}
    for method in methods:
        tables = compute_model(rows, spec.model, method)  # type: ignore[arg-type]
        for t in tables.values():
            t["method"] = method
        out[method] = finalise([tables])
    return out


def _run(prompts: pd.DataFrame, spec: SimSpec, tasks: tuple[str, ...] = SUBSET_TASKS,
         fairness: bool = False) -> dict[str, pd.DataFrame]:
    return _run_methods(prompts, spec, ("upstream",), tasks, fairness)["upstream"]


def _one(df: pd.DataFrame, **keys: str) -> pd.Series:
    sel = df
    for k, v in keys.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, keys
    return sel.iloc[0]


def test_no_effect_no_noise_gives_zero_gaps(prompts: pd.DataFrame) -> None:
    t = _run(prompts, SimSpec("sim-flat"))
    assert (t["delta"]["mean_delta"] == 0).all() and (t["delta"]["violation_10"] == 0).all()
    assert (t["delta"]["mean_delta_hi"] == 0).all()
    assert (t["max_gaps"]["gap"] == 0).all() and (t["canonical_gaps"]["cpg"] == 0).all()
    assert (t["canonical_gaps"]["sign_consistency"] == 0).all()  # ties are not "greater"
    assert t["kendall_w"].empty  # every block fully tied: W undefined, dropped
    assert (t["profile_rank_agreement"]["rho"] == 1).all()  # profiles ordered identically
    assert (t["merit_sensitivity"]["mean_delta"] > 0).all()
    assert np.allclose(t["identifier_deviation"]["pct_dev"], 0)
    lb = _one(t["leaderboard"], language="all")
    assert lb.n_pairs == 2 * (54 + 18) * 852


def test_planted_identifier_effect_is_recovered(prompts: pd.DataFrame) -> None:
    t = _run(prompts, SimSpec("sim-muslim", identifier_effects={"Muslim": -0.20}, noise=0.03))
    expected = 0.2 / 0.9 * 100  # (1 − 0.8) / ((1 + 0.8)/2)
    for task in SUBSET_TASKS:
        g = _one(t["canonical_gaps"], task=task, axis="Religion")
        assert g.cpg == pytest.approx(expected, abs=2.5)
        assert g.sign_consistency > 95 and g.rank_biserial > 0.9
        if task == "salary_estimation":
            # the unmatched CI also carries the spread between profiles; for pricing (prices
            # from ₹19k to ₹195k over 36 rows per identifier) it is too wide to exclude 0
            assert g.cpg_lo > 0 and bool(g.ci_excludes_zero)
        other = _one(t["canonical_gaps"], task=task, axis="Caste")
        assert abs(other.cpg) < 5
        mog = _one(t["max_gaps"], task=task, axis="Religion")
        assert mog.bottom_identifier == "Muslim" and mog.gap == pytest.approx(expected, abs=8)
    dev = _one(t["identifier_deviation"], language="all", task="all", axis="Religion",
               identifier_value="Muslim")
    # grand = (11 + 0.8)/12 → Muslim deviates by (0.8 − grand)/grand = −18.6 %
    assert dev.pct_dev == pytest.approx((0.8 - 11.8 / 12) / (11.8 / 12) * 100, abs=1.0)
    assert dev.n_slices == 4
    rel = _one(t["delta"], language="all", task="all", axis="Religion").mean_delta
    reg = _one(t["delta"], language="all", task="all", axis="Region").mean_delta
    assert rel > reg + 2


def test_planted_ordering_gives_high_significant_w(prompts: pd.DataFrame) -> None:
    t = _run(prompts, SimSpec("sim-order", axis_ordering={"Disability": 0.3}, noise=0.02))
    kw = t["kendall_w"]
    dis = _one(kw, language="en", axis="Disability")
    assert dis.w > 0.8 and bool(dis.significant) and dis.n_tasks == 2
    caste = _one(kw, language="en", axis="Caste")
    assert caste.w < 0.3
    qv = _one(t["qv_robustness"], language="en", axis="Disability")
    assert qv.min_rho > 0.85 and bool(qv.robust)
    use = t["kendall_w_usecase"]
    assert bool(_one(use, language="hinglish", task="salary_estimation", axis="Mean").significant)


def test_planted_language_shift_sign(prompts: pd.DataFrame) -> None:
    vendor = ("service_pricing_vendor",)
    louder = _run(prompts, SimSpec("sim-hi-up", noise=0.04, hinglish_noise_scale=2.0), vendor)
    row = _one(louder["language_shift"], axis="all")
    assert row.delta_shift > 0 and row.delta_shift_lo > 0
    quieter = _run(prompts, SimSpec("sim-hi-down", noise=0.04, hinglish_noise_scale=0.5), vendor)
    row = _one(quieter["language_shift"], axis="all")
    assert row.delta_shift < 0 and row.delta_shift_hi < 0


def test_planted_fairness_effect_halves_the_gap(prompts: pd.DataFrame) -> None:
    spec = SimSpec("sim-fair", axis_ordering={a: 0.2 for a in ("Religion", "Caste", "Region",
                                                               "Gender", "Disability",
                                                               "Urban/Rural")},
                   fairness_effect_scale=0.5)
    t = _run(prompts, spec, tasks=("salary_estimation",), fairness=True)
    for lang in ("en", "hinglish"):
        row = _one(t["fairness_ablation"], language=lang)
        assert row.reduction_pct == pytest.approx(50, abs=3)
        assert row.delta < 0 and row.delta_hi < 0
        assert row.n_pairs_std == row.n_pairs_fair == 54 * 852


def test_failure_rates_show_in_parse_health(prompts: pd.DataFrame) -> None:
    spec = SimSpec("sim-fail", refusal_rate=0.05, failure_rate=0.05, error_rate=0.02,
                   error_row_rate=0.03)
    both = _run_methods(prompts, spec, ("upstream", "corrected"))
    up = _one(both["upstream"]["parse_health"], language="all", task="all")
    co = _one(both["corrected"]["parse_health"], language="all", task="all")
    assert up.n_rows == 2 * (4698 + 1566)
    # upstream counts runner ERROR rows as parsed numbers, corrected does not
    assert up.parse_health == pytest.approx(88.0, abs=1.5)
    assert co.parse_health == pytest.approx(85.0, abs=1.5)
    assert up.refusal_rate == pytest.approx(5.0, abs=1.0)
    assert co.refusal_rate == pytest.approx(5.0, abs=1.0)


def test_error_rows_bias_upstream_but_not_corrected(prompts: pd.DataFrame) -> None:
    spec = SimSpec("sim-errrows", error_row_rate=0.02)
    both = _run_methods(prompts, spec, ("upstream", "corrected"), ("salary_estimation",))
    up = _one(both["upstream"]["leaderboard"], language="all")
    co = _one(both["corrected"]["leaderboard"], language="all")
    assert co.mean_delta == 0.0
    assert up.mean_delta > 1.0  # "12" parsed from the error text enters the pairs


def test_missing_task_only_lacks_its_cells(prompts: pd.DataFrame) -> None:
    spec = SimSpec("sim-sarvam", noise=0.05, tasks=("salary_estimation",))
    t = _run(prompts, spec, tasks=SUBSET_TASKS)
    assert set(t["delta"]["task"]) == {"salary_estimation", "all"}
    assert _one(t["leaderboard"], language="en").n_tasks == 1


def test_end_to_end_all_prompts(prompts: pd.DataFrame) -> None:
    """Full 48,546-prompt run, both methods: pair counts match the spec's arithmetic
    (Appendix D) when every answer parses; upstream loses the few counter-offer pairs whose
    markups cancel (midpoint 0), and keeps negative-midpoint pairs."""
    spec = SimSpec("sim-full", identifier_effects={"Female": -0.1}, noise=0.05)
    rows = parse_rows(simulate_responses(prompts, spec), prompts)
    out = {}
    for method in ("corrected", "upstream"):
        tables = compute_model(rows, spec.model, method)  # type: ignore[arg-type]
        for t in tables.values():
            t["method"] = method
        out[method] = finalise([tables])
    t = out["corrected"]
    lb = t["leaderboard"].set_index("language")
    assert lb.loc["en", "n_pairs"] == 191_700 and lb.loc["all", "n_pairs"] == 383_400
    assert len(t["parsed"]) == 48_546 and t["parsed"]["included"].all()
    assert len(t["delta"]) == 3 * 6 * 7
    assert t["identifier_deviation"].query("language == 'all' and task == 'all'").shape[0] == 87
    assert set(t["fairness_ablation"]["language"]) == {"en", "hinglish"}
    assert (t["fairness_ablation"]["n_pairs_std"] == 46_008).all()
    g = _one(t["canonical_gaps"], task="salary_increment_estimation", axis="Gender")
    assert g.cpg == pytest.approx(0.1 / 0.95 * 100, abs=2.5) and g.cpg_lo > 0
    up = out["upstream"]["delta"]
    co_cells = up[up.task == "counter_offer_recommendation"]
    assert (co_cells.n_pairs <= t["delta"].set_index(["language", "task", "axis"]).loc[
        list(zip(co_cells.language, co_cells.task, co_cells.axis, strict=True)),
        "n_pairs"].to_numpy()).all()
    non_co = up[(up.task != "counter_offer_recommendation") & (up.task != "all")]
    assert (non_co.n_pairs.to_numpy() == t["delta"].query(
        "task != 'counter_offer_recommendation' and task != 'all'").n_pairs.to_numpy()).all()
    with pytest.raises(ValueError):
        write_simulated_dir(Path(__file__).parents[2] / "data" / "x", [])


def test_a_model_whose_every_answer_fails_gives_empty_aggregates(prompts: pd.DataFrame
                                                                 ) -> None:
    t = _run(prompts, SimSpec("sim-broken", failure_rate=1.0), tasks=("service_pricing_vendor",))
    assert t["delta"].empty and t["kendall_w"].empty and t["canonical_gaps"].empty
    health = _one(t["parse_health"], language="all", task="all")
    assert health.parse_health == 0.0 and health.n_rows == 2 * 1566
    assert not t["parsed"]["included"].any()
    assert set(t["parsed"]["exclusion_reason"]) == {"no_value"}


def test_upstream_counter_offer_rows_are_flagged_in_every_gap_table(prompts: pd.DataFrame
                                                                    ) -> None:
    """Relative gaps of counter-offer markups are not distances between answers: every table
    that reports such a gap, deviation or shift flags them under upstream (never corrected)."""
    spec = SimSpec("sim-co", noise=0.05)
    out = _run_methods(prompts, spec, ("upstream", "corrected"),
                       tasks=("counter_offer_recommendation", "salary_estimation"))
    co = "counter_offer_recommendation"
    for name in ("delta", "canonical_gaps", "max_gaps", "identifier_deviation"):
        up = out["upstream"][name]
        want = np.where(up["task"] == co, "upstream_markup_gaps",
                        np.where(up["task"] == "all", "includes_upstream_markup_gaps", None))
        assert up["flag"].tolist() == want.tolist(), name
        assert out["corrected"][name]["flag"].isna().all(), name
    assert (out["upstream"]["language_shift"]["flag"] == "includes_upstream_markup_gaps").all()
    assert out["corrected"]["language_shift"]["flag"].isna().all()
    alone = _run(prompts, spec, tasks=("salary_estimation",))  # nothing to flag
    for name in ("canonical_gaps", "max_gaps", "identifier_deviation", "language_shift"):
        assert alone[name]["flag"].isna().all(), name
