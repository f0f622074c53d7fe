"""The DuckDB layer: views, provenance, bound parameters, typed errors, the pair-browser join."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from explorer import data, vocab


def test_views_union_published_and_computed(data_env: Path, has_published: bool) -> None:
    lb = data.rows("leaderboard")
    kinds = set(lb["source_kind"])
    assert "computed" in kinds
    if has_published:
        assert "published" in kinds
        pub = lb[lb["source_kind"] == "published"]
        assert all(s.startswith("published: Table 2") for s in pub["source"])
    comp = lb[lb["source_kind"] == "computed"]
    assert set(comp["source"]) == {"computed"}
    assert set(lb["method"]) <= {"upstream", "corrected"}


def test_rows_filter_equals_parquet(data_env: Path) -> None:
    frame = pd.read_parquet(data_env / "metrics" / "delta.parquet")
    want = frame[(frame["model"] == "synthetic-model-a") & (frame["task"] == "all")
                 & (frame["axis"] == "Caste")].sort_values("language")
    got = data.rows("delta", model="synthetic-model-a", task="all", axis="Caste",
                    source_kind="computed").sort_values("language")
    assert got["mean_delta"].tolist() == want["mean_delta"].tolist()
    assert got["n_pairs"].tolist() == want["n_pairs"].tolist()


@pytest.mark.parametrize("hostile", ["';DROP TABLE delta;--", "<script>", "\x00", "a' OR '1'='1"])
def test_hostile_values_are_bound_not_executed(data_env: Path, hostile: str) -> None:
    assert data.rows("delta", model=hostile).empty
    assert len(data.rows("delta")) > 0  # the table is still there


def test_table_and_column_names_come_from_allow_lists(data_env: Path) -> None:
    with pytest.raises(ValueError):
        data.rows("delta; DROP TABLE delta")
    with pytest.raises((ValueError, data.DataUnavailable)):
        data.rows("delta", **{'model" OR 1=1 --': "x"})
    with pytest.raises(data.DataUnavailable):
        data.rows("delta", no_such_column="x")


def test_corrupt_file_is_a_typed_error_for_that_table_only(corrupt_dir: Path, use_dir) -> None:
    use_dir(corrupt_dir)
    with pytest.raises(data.DataUnavailable) as err:
        data.rows("kendall_w")
    assert err.value.table == "kendall_w"
    assert "metrics/kendall_w.parquet" in err.value.reason
    assert len(data.rows("delta")) > 0
    assert data.problem("kendall_w") and data.problem("delta") is None


def test_missing_column_is_reported(tmp_path: Path, synthetic_dir: Path, use_dir) -> None:
    root = use_dir(tmp_path)
    (root / "metrics").mkdir()
    pd.DataFrame({"model": ["x"], "language": ["en"]}).to_parquet(
        root / "metrics" / "delta.parquet")
    with pytest.raises(data.DataUnavailable, match="missing column"):
        data.rows("delta")


def test_missing_table_is_reported(empty_dir: Path, use_dir) -> None:
    use_dir(empty_dir)
    with pytest.raises(data.DataUnavailable, match="no `delta` table"):
        data.rows("delta")
    assert data.available_models().empty


def test_available_models(data_env: Path, has_published: bool) -> None:
    models = data.available_models()
    by = models.set_index("model")
    assert by.loc[vocab.SMOLLM_SLUG, "computed"] and by.loc[vocab.SMOLLM_SLUG, "has_raw"]
    assert not by.loc["synthetic-model-a", "has_raw"]
    assert "SYNTHETIC" in by.loc["synthetic-model-a", "label"]
    assert vocab.ALL not in by.index
    if has_published:
        assert set(vocab.PAPER_MODELS) <= set(models["model"])
        assert by.loc["gemini-3-flash", "label"] == "Gemini 3 Flash"
        assert by.loc["kimi-k2.5", "weights"] == "open"
        paper = [m for m in models["model"] if m in vocab.PAPER_MODELS]
        assert paper == list(vocab.PAPER_MODELS)  # the paper's order, then the rest


def test_slot_rows_join(data_env: Path) -> None:
    slot = data.slot_rows(vocab.SMOLLM_SLUG, "salary_estimation", "en", "P01", "Q1", "Caste")
    assert list(slot["identifier_value"]) == list(vocab.identifiers_of("Caste"))
    assert list(slot.columns[:len(data.SLOT_COLUMNS)]) == list(data.SLOT_COLUMNS)
    assert slot["response"].notna().all()
    assert all("B.Tech" in p for p in slot["prompt"])
    assert slot["system_prompt"].str.contains("INR").all()
    parsed = pd.read_parquet(data_env / "metrics" / "parsed.parquet")
    one = parsed[(parsed["id"] == slot.loc[0, "id"]) & (parsed["method"] == "upstream")
                 & (parsed["condition"] == "standard")]
    assert len(one) == 1 and slot.loc[0, "value"] == pytest.approx(one.iloc[0]["value"],
                                                                   nan_ok=True)
    assert slot.loc[0, "metric_value"] == pytest.approx(one.iloc[0]["metric_value"], nan_ok=True)


def test_slot_rows_without_answers_for_other_model(data_env: Path) -> None:
    slot = data.slot_rows("synthetic-model-a", "salary_estimation", "hinglish", "P02", "Q3",
                          "Gender")
    assert len(slot) == 5 and slot["response"].isna().all() and slot["prompt"].notna().all()


@pytest.mark.parametrize("args", [
    ("x'; DROP TABLE parsed;--", "salary_estimation", "en", "P01", "Q1", "Caste"),
    ("smollm2-135m-instruct", "salary_estimation", "en", "R01", "Q1", "Caste"),
    ("smollm2-135m-instruct", "nope", "en", "P01", "Q1", "Caste"),
    ("smollm2-135m-instruct", "salary_estimation", "en", "P01", "Q1", "Caste' --"),
    ("smollm2-135m-instruct", "salary_estimation", "en", "P01", "Q1", "Caste", "standard",
     "upstream' OR 1=1 --"),
])
def test_slot_rows_rejects_bad_arguments(data_env: Path, args: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        data.slot_rows(*args)


def test_answered_slots_lists_where_a_model_has_answers(data_env: Path) -> None:
    have = data.answered_slots(vocab.SMOLLM_SLUG, "salary_estimation", "en", "Caste")
    parsed = pd.read_parquet(data_env / "metrics" / "parsed.parquet")
    want = parsed[(parsed["model"] == vocab.SMOLLM_SLUG) & (parsed["task"] == "salary_estimation")
                  & (parsed["language"] == "en") & (parsed["axis"] == "Caste")
                  & (parsed["condition"] == "standard")]
    assert len(have) == want.groupby(["profile_id", "question_variant_id"]).ngroups > 0
    assert (have["n_answers"] == 24).all()  # every Caste identity of a collected slot
    assert (have["n_readable"] <= have["n_answers"]).all()
    assert data.answered_slots("synthetic-model-a", "salary_estimation", "en", "Caste").empty
    for bad in (("x'; DROP TABLE parsed;--", "salary_estimation", "en", "Caste"),
                (vocab.SMOLLM_SLUG, "nope", "en", "Caste"),
                (vocab.SMOLLM_SLUG, "salary_estimation", "en", "Caste' --")):
        with pytest.raises(ValueError):
            data.answered_slots(*bad)


def test_new_data_is_picked_up(tmp_path: Path, synthetic_dir: Path, use_dir) -> None:
    root = use_dir(tmp_path / "d")
    shutil.copytree(synthetic_dir, root)
    before = data.rows("merit_sensitivity", model="synthetic-model-a")["mean_delta"].max()
    frame = pd.read_parquet(root / "metrics" / "merit_sensitivity.parquet")
    frame["mean_delta"] = 123.0
    frame.to_parquet(root / "metrics" / "merit_sensitivity.parquet")
    after = data.rows("merit_sensitivity", model="synthetic-model-a")["mean_delta"].max()
    assert before != 123.0 and after == 123.0


def test_status_lists_every_table(corrupt_dir: Path, use_dir) -> None:
    use_dir(corrupt_dir)
    status = data.status().set_index("table")
    assert status.loc["kendall_w", "status"] == "unreadable"
    assert status.loc["delta", "status"] == "ok"


def test_the_files_looked_for_are_the_registry_files(tmp_path: Path, synthetic_dir: Path
                                                     ) -> None:
    from rupeebias_core.registry import TABLES, DataLayout

    root = tmp_path / "d"
    shutil.copytree(synthetic_dir, root)
    (root / "models.parquet").write_bytes(b"nothing writes this file")  # the old drift
    found = data.table_files(root)
    assert set(found) <= set(TABLES) and set(data.ALL_TABLES) == set(TABLES)
    layout = DataLayout(root)
    for table, files in found.items():
        for path, kind in files:
            spec = next(f for f in TABLES[table].files if f.kind == kind)
            assert layout.matches(spec, path), (table, path)
    assert root / "models.parquet" not in {p for files in found.values() for p, _ in files}
    assert [p for p, _ in found["models"]] == [layout.metrics("models"),
                                               layout.published("models")]


def test_shipped_human_validation_table_is_read(data_env: Path) -> None:
    frame = data.rows("human_validation")
    assert len(frame) == len(pd.read_parquet(data_env / "published" / "human_validation.parquet"))
    assert set(frame["source_kind"]) == {"published"}
    assert data.numeric_columns("human_validation", frame.columns) == ("n", "pct", "pabak")
