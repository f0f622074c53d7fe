"""`python -m precompute metrics` on small simulated data directories (tmp dirs only)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest

from precompute.__main__ import main as precompute_main
from rupeebias_core import registry
from rupeebias_core.metrics import TABLE_NAMES, block_pair_frame, build_blocks
from rupeebias_core.prompts import build_prompts
from rupeebias_core.simulate import SimSpec, write_simulated_dir

AXES = ("Religion", "Gender", "Urban/Rural")
#: Contract columns per table (docs/data-format.md, "Metric tables").
CONTRACT: dict[str, set[str]] = {
    "delta": {"language", "task", "axis", "mean_delta", "mean_delta_lo", "mean_delta_hi",
              "violation_10", "violation_10_lo", "violation_10_hi", "n_pairs", "n_violations"},
    "leaderboard": {"language", "task", "axis", "mean_delta", "n_pairs",
                    "mean_delta_unweighted"},
    "kendall_w": {"language", "axis", "w", "p_value", "p_bh", "significant", "n_tasks"},
    "kendall_w_usecase": {"language", "task", "axis", "w", "p_value", "p_bh", "significant",
                          "n_blocks", "n_identifiers"},
    "canonical_gaps": {"task", "axis", "language", "privileged", "marginalised", "cpg",
                       "cpg_lo", "cpg_hi", "sign_consistency", "n_matched_slots",
                       "n_privileged", "n_marginalised"},
    "max_gaps": {"task", "axis", "language", "gap", "gap_lo", "gap_hi", "top_identifier",
                 "bottom_identifier", "n_rows"},
    "language_shift": {"axis", "rho", "rho_p", "n_identifiers", "mean_delta_en",
                       "mean_delta_hinglish", "delta_shift", "delta_shift_lo",
                       "delta_shift_hi", "n_pairs_en", "n_pairs_hinglish"},
    "qv_robustness": {"language", "axis", "min_rho", "min_rho_lo", "min_rho_hi", "robust",
                      "n_tasks"},
    "merit_sensitivity": {"language", "task", "mean_delta", "mean_delta_lo", "mean_delta_hi",
                          "n_pairs"},
    "profile_rank_agreement": {"language", "task", "rho", "rho_lo", "rho_hi", "n_pairs"},
    "identifier_deviation": {"language", "task", "axis", "identifier_value", "pct_dev",
                             "n_slices", "n_rows"},
    "fairness_ablation": {"language", "std_mean_delta", "fair_mean_delta", "delta",
                          "reduction_pct", "n_pairs_std", "n_pairs_fair"},
    "parse_health": {"language", "task", "n_rows", "parse_health", "refusal_rate",
                     "strict_rate", "n_parsed", "n_refusals"},
    "parsed": {"id", "condition", "task", "language", "axis", "identifier_value", "profile_id",
               "question_variant_id", "value", "metric_value", "status", "strict", "refusal"},
    "identity_effects": {"language", "task", "axis", "identifier_value", "effect_pct",
                         "effect_pct_lo", "effect_pct_hi", "effect_natural", "unit", "p_value",
                         "p_bh", "n_slots"},
    "gap_decomposition": {"language", "task", "axis", "mean_delta", "mean_delta_lo",
                          "mean_delta_hi", "systematic_delta", "idiosyncratic_delta",
                          "systematic_share", "systematic_share_lo", "systematic_share_hi",
                          "p_value", "placebo_delta", "excess_delta", "excess_delta_lo",
                          "excess_delta_hi", "n_pairs"},
    "missingness": {"language", "task", "axis", "identifier_value", "n", "refusal_rate",
                    "unusable_rate", "p_refusal", "p_refusal_bh", "p_unusable",
                    "p_unusable_bh", "mean_delta_fill_lo", "mean_delta_fill_hi"},
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prompts = build_prompts()
    prompts = prompts[prompts["task"].isin(["salary_estimation", "service_pricing_vendor"])
                      & prompts["axis"].isin(AXES)].reset_index(drop=True)
    specs = [
        SimSpec("sim-alpha", identifier_effects={"Muslim": -0.2}, noise=0.05,
                fairness_effect_scale=0.5, fairness_noise_scale=0.5, refusal_rate=0.01),
        SimSpec("sim-beta", axis_ordering={"Urban/Rural": 0.3}, noise=0.05,
                tasks=("salary_estimation",)),
        SimSpec("sim-deepseek-like", noise=0.1, reasoning_rate=0.1, error_row_rate=0.02),
    ]
    return write_simulated_dir(tmp_path_factory.mktemp("simdata"), specs, prompts)


def _run(*args: str) -> int:
    # 200 bootstrap replicates keep these runs quick; CI values are tested elsewhere
    return precompute_main(["metrics", "--resamples", "200", *args])


def _bytes(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.parquet"))}


@pytest.fixture(scope="module")
def both_out(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `--method both` run shared by the read-only tests."""
    out = tmp_path_factory.mktemp("both")
    assert _run("--data", str(data_dir), "--out", str(out), "--method", "both") == 0
    return out


def test_every_written_table_has_its_registry_schema(both_out: Path) -> None:
    for name in TABLE_NAMES:
        written = pq.read_schema(both_out / f"{name}.parquet")
        assert written.equals(registry.COMPUTED[name].schema, check_metadata=True), name
    models = pq.read_table(both_out / "models.parquet")
    spec = registry.table("models").file("computed")
    assert spec is not None and models.schema.equals(spec.schema, check_metadata=True)


def test_models_table_names_every_computed_model(data_dir: Path, both_out: Path) -> None:
    """metrics/models.parquet is written: one row per responses file, labels from the
    local-model catalogue, the slug otherwise."""
    models = pd.read_parquet(both_out / "models.parquet").set_index("model")
    slugs = {p.name.removesuffix(".parquet") for p in (data_dir / "responses").glob("*.parquet")}
    assert set(models.index) == slugs
    assert set(models["source"]) == {"computed"}
    for slug in slugs:
        assert models.loc[slug, "label"] == slug  # simulated models are not in the catalogue


def test_writes_every_table_with_contract_columns(both_out: Path) -> None:
    out = both_out
    assert {p.stem for p in out.glob("*.parquet")} == {*TABLE_NAMES, "models"}
    for name in TABLE_NAMES:
        df = pd.read_parquet(out / f"{name}.parquet")
        assert {"model", "source", "method"} | CONTRACT[name] <= set(df.columns), name
        assert len(df) > 0, name
        assert set(df["source"]) == {"computed"}
        assert set(df["method"]) == {"upstream", "corrected"}
        meta = pq.read_metadata(out / f"{name}.parquet").metadata or {}
        assert b"pandas" not in meta
    delta = pd.read_parquet(out / "delta.parquet")
    beta = delta[delta.model == "sim-beta"]
    assert set(beta.task) == {"salary_estimation", "all"}  # no vendor runs → no vendor cells
    lb = pd.read_parquet(out / "leaderboard.parquet")
    assert (lb.task == "all").all() and (lb.axis == "all").all()
    fa = pd.read_parquet(out / "fairness_ablation.parquet")
    alpha = fa[(fa.model == "sim-alpha") & (fa.method == "corrected")]
    assert (alpha.reduction_pct > 30).all() and (alpha.delta_hi < 0).all()
    parsed = pd.read_parquet(out / "parsed.parquet")
    ds = parsed[(parsed.model == "sim-deepseek-like")]
    assert (ds[ds.method == "upstream"].exclusion_reason == "reasoning_row").sum() > 0
    assert (ds[ds.method == "corrected"].exclusion_reason == "reasoning_row").sum() == 0


def test_same_inputs_give_byte_identical_files(data_dir: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run("--data", str(data_dir), "--out", str(a), "--workers", "2") == 0
    assert _run("--data", str(data_dir), "--out", str(b), "--workers", "1") == 0
    assert _bytes(a) == _bytes(b)


def test_split_jobs_give_the_same_files(data_dir: Path, both_out: Path, tmp_path: Path
                                       ) -> None:
    """Three models on two workers: the smallest runs as one job per method, and the files
    are those of the one-process run."""
    out = tmp_path / "split"
    assert _run("--data", str(data_dir), "--out", str(out), "--method", "both",
                "--workers", "2") == 0
    assert _bytes(out) == _bytes(both_out)


def test_plan_jobs_largest_first_and_tail_split_by_method() -> None:
    from precompute.metrics_cmd import plan_jobs

    both = ("upstream", "corrected")
    jobs = plan_jobs(["a", "b", "c"], [10, 30, 20], both, 2)
    assert jobs == [("b", both), ("c", both), ("a", ("upstream",)), ("a", ("corrected",))]
    assert plan_jobs(["a", "b"], [10, 30], both, 2) == [("b", both), ("a", both)]
    assert plan_jobs(["a", "b", "c"], [1, 1, 1], ("upstream",), 2) == [
        ("a", ("upstream",)), ("b", ("upstream",)), ("c", ("upstream",))]


def test_methods_merge_into_the_same_tables(data_dir: Path, both_out: Path,
                                            tmp_path: Path) -> None:
    both, seq = both_out, tmp_path / "seq"
    assert _run("--data", str(data_dir), "--out", str(seq), "--method", "corrected") == 0
    assert _run("--data", str(data_dir), "--out", str(seq), "--method", "upstream") == 0
    assert _bytes(both) == _bytes(seq)
    # a one-model rerun keeps the other models and redoes BH across all of them
    assert _run("--data", str(data_dir), "--out", str(seq), "--method", "upstream",
                "--models", "sim-beta") == 0
    assert _bytes(both) == _bytes(seq)
    assert _run("--data", str(data_dir), "--out", str(seq), "--models", "sim-beta",
                "--method", "corrected", "--fresh") == 0
    assert set(pd.read_parquet(seq / "delta.parquet").model) == {"sim-beta"}


def test_duckdb_drilldown_lists_every_pair_of_a_slot(data_dir: Path, both_out: Path) -> None:
    """The query documented in docs/methodology.md (§4.7)."""
    out = both_out
    query = (Path(__file__).parents[2] / "docs" / "methodology.md").read_text()
    sql = query.split("```sql\n", 1)[1].split("```", 1)[0]
    sql = (sql.replace("DIR/metrics/", f"{out}/").replace("DIR/", f"{data_dir}/")
           .replace("gpt-5.4", "sim-alpha"))
    got = duckdb.sql(sql).df()
    assert len(got) == 66  # C(12, 2) Religion pairs of slot (P01, Q1)
    assert got["response_a"].str.startswith("###").all()
    parsed = pd.read_parquet(out / "parsed.parquet")
    sel = parsed[(parsed.model == "sim-alpha") & parsed.included & (parsed.method == "upstream")
                 & (parsed.condition == "standard") & (parsed.language == "en")
                 & (parsed.task == "salary_estimation") & (parsed.axis == "Religion")
                 & (parsed.profile_id == "P01") & (parsed.question_variant_id == "Q1")]
    block = next(iter(build_blocks(sel.drop(columns="value").rename(
        columns={"metric_value": "value"})).values()))
    ref = block_pair_frame(block).sort_values(["identifier_a", "identifier_b"])
    got = got.sort_values(["identifier_a", "identifier_b"])
    assert got["delta_pct"].to_numpy() == pytest.approx(ref["delta"].to_numpy())


def test_missing_directory_fails_cleanly(tmp_path: Path) -> None:
    assert _run("--data", str(tmp_path)) == 1
    (tmp_path / "responses").mkdir()
    assert _run("--data", str(tmp_path)) == 1
