"""`python -m precompute published`: rebuild ``data/published/`` from the transcribed paper tables.

The numbers live, as printed, in ``precompute/published_src/*.csv`` (one file per paper table,
plus the authors' two-decimal README version of Table 2 and the model card). This module only
reshapes them into the metric-table layout of ``docs/data-format.md`` (same file and column names
as the computed tables, ``source`` naming the paper table, ``method = 'upstream'``) and writes
zstd Parquet with the explicit schemas the table registry declares
(``rupeebias_core/registry/published.py``), so a rebuild is byte-identical. Nothing here
estimates a value: whatever the paper does not state is null. Provenance: ``docs/published.md``.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rupeebias_core import benchmark as bm
from rupeebias_core.registry import PUBLISHED, DataLayout

SRC_DIR = Path(__file__).resolve().parent / "published_src"
DEFAULT_OUT = DataLayout(Path(__file__).resolve().parents[1] / "data").published_dir

METHOD = "upstream"
LANGUAGES = (*bm.LANGUAGES, "all")
AXES = bm.AXES
SARVAM = "sarvam-105b"
SARVAM_NOTE = (
    "pools 4 of 5 use cases: no salary_increment_estimation runs in the authors' data "
    "(upstream spec §8)"
)

SRC_T2 = "published: Table 2"
SRC_T2_README = "published: Table 2 (authors README, 2 dp)"
SRC_APPENDIX_E = "published: Appendix E text"
SRC_MODEL_CARD = "published: MODEL_CARD model table (upstream spec §8)"

Row = dict[str, Any]

#: The Arrow schema of each file (nullability and metadata included), from the table registry.
SCHEMAS: Mapping[str, pa.Schema] = {name: f.schema for name, f in PUBLISHED.items()}


# --------------------------------------------------------------------------------------------
# reading the transcription


def _read(name: str, src_dir: Path) -> list[dict[str, str]]:
    """Rows of one transcription CSV, as strings."""
    with (src_dir / name).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _f(text: str) -> float | None:
    """A printed number, or None for an empty cell."""
    return float(text) if text.strip() else None


def _i(text: str) -> int | None:
    """A printed integer, or None for an empty cell."""
    return int(text) if text.strip() else None


def _b(text: str) -> bool:
    """A transcribed mark: 'true' / 'false'."""
    if text not in ("true", "false"):
        raise ValueError(f"expected true/false, got {text!r}")
    return text == "true"


def _note(*parts: str | None) -> str | None:
    """Join the non-empty note fragments with '; ' (None when there are none)."""
    kept = [p for p in parts if p]
    return "; ".join(kept) if kept else None


def _sarvam(model: str) -> str | None:
    """The Sarvam note for Sarvam rows."""
    return SARVAM_NOTE if model == SARVAM else None


def _order(values: Sequence[str]) -> Callable[[str], int]:
    """Sort key placing values in the given order (unknown values raise)."""
    index = {v: i for i, v in enumerate(values)}
    return index.__getitem__


# --------------------------------------------------------------------------------------------
# building the tables


def _labels(src_dir: Path) -> dict[str, str]:
    """Slug -> display name, in the canonical model order of models.csv."""
    return {r["model"]: r["label"] for r in _read("models.csv", src_dir)}


def _table2_rows(src: Path, name: str, source: str, preferred: bool,
                 labels: dict[str, str]) -> list[Row]:
    """Table 2 cells as delta rows (task='all', axis='all')."""
    rows = []
    for r in _read(name, src):
        model, lang = r["model"], r["language"]
        rows.append({
            "model": model, "language": lang, "task": "all", "axis": "all",
            "mean_delta": _f(r["mean_delta"]), "mean_delta_lo": _f(r["mean_delta_lo"]),
            "mean_delta_hi": _f(r["mean_delta_hi"]), "violation_10": _f(r["violation_10"]),
            "violation_10_lo": _f(r["violation_10_lo"]),
            "violation_10_hi": _f(r["violation_10_hi"]),
            "n_pairs": None, "n_violations": None, "preferred": preferred,
            "source": source, "method": METHOD, "label": labels[model],
            "note": _note(
                "Overall: English and Hinglish pairs pooled (pair-weighted); Table 2 reports "
                "Violation@10% per language only" if lang == "all" else None,
                None if preferred else
                "1-dp rounding as printed in the paper; the README 2-dp row is preferred",
                _sarvam(model)),
        })
    return rows


def _axis_rows(src: Path, name: str, table: int, language: str,
               labels: dict[str, str]) -> list[Row]:
    """Tables 3/4 cells as delta rows (task='all', one axis)."""
    return [{
        "model": r["model"], "language": language, "task": "all", "axis": r["axis"],
        "mean_delta": _f(r["mean_delta"]), "mean_delta_lo": _f(r["mean_delta_lo"]),
        "mean_delta_hi": _f(r["mean_delta_hi"]), "violation_10": None,
        "violation_10_lo": None, "violation_10_hi": None, "n_pairs": None,
        "n_violations": None, "preferred": True, "source": f"published: Table {table}",
        "method": METHOD, "label": labels[r["model"]], "note": _sarvam(r["model"]),
    } for r in _read(name, src)]


def _model_key(models: Sequence[str]) -> Callable[[str], int]:
    """Sort key: models in canonical order, then the 'all' (Axis mean) row."""
    return _order([*models, "all"])


def build_leaderboard(src: Path, labels: dict[str, str]) -> list[Row]:
    """Table 2, both versions (paper 1 dp and README 2 dp)."""
    rows = [*_table2_rows(src, "table_02.csv", SRC_T2, False, labels),
            *_table2_rows(src, "table_02_readme.csv", SRC_T2_README, True, labels)]
    for row in rows:
        row["mean_delta_unweighted"] = None
    return rows


def build_delta(src: Path, labels: dict[str, str]) -> list[Row]:
    """Table 2 rows (axis='all') plus Tables 3/4 (one row per axis)."""
    return [*_table2_rows(src, "table_02.csv", SRC_T2, False, labels),
            *_table2_rows(src, "table_02_readme.csv", SRC_T2_README, True, labels),
            *_axis_rows(src, "table_03.csv", 3, "en", labels),
            *_axis_rows(src, "table_04.csv", 4, "hinglish", labels)]


def build_kendall_w(src: Path, labels: dict[str, str]) -> list[Row]:
    """Tables 5 (en) and 6 (hinglish)."""
    rows = []
    for table, lang in ((5, "en"), (6, "hinglish")):
        for r in _read(f"table_{table:02d}.csv", src):
            rows.append({
                "model": r["model"], "language": lang, "axis": r["axis"], "w": _f(r["w"]),
                "p_value": None, "p_bh": None, "significant": _b(r["significant"]),
                "n_tasks": None, "source": f"published: Table {table}", "method": METHOD,
                "label": labels[r["model"]],
                "note": _note("Mean W: unweighted mean of the six axis W values"
                              if r["axis"] == "Mean" else None, _sarvam(r["model"])),
            })
    return rows


AXIS_MEAN_NOTE = (
    "the paper's 'Axis mean' row (model='all'); per upstream spec §4.13 it pools every "
    "model's per-use-case values, so it need not equal the mean of the nine model rows"
)


def build_qv_robustness(src: Path, labels: dict[str, str]) -> list[Row]:
    """Tables 7 (en) and 8 (hinglish), including the Axis mean row as model='all'."""
    rows = []
    for table, lang in ((7, "en"), (8, "hinglish")):
        for r in _read(f"table_{table:02d}.csv", src):
            model = r["model"]
            rows.append({
                "model": model, "language": lang, "axis": r["axis"],
                "min_rho": _f(r["min_rho"]), "min_rho_lo": _f(r["min_rho_lo"]),
                "min_rho_hi": _f(r["min_rho_hi"]), "robust": _b(r["robust"]), "n_tasks": None,
                "source": f"published: Table {table}", "method": METHOD,
                "label": "Axis mean" if model == "all" else labels[model],
                "note": _note(AXIS_MEAN_NOTE if model == "all" else None,
                              "Mean: mean of the six axis values ('Mean min ρ')"
                              if r["axis"] == "Mean" else None, _sarvam(model)),
            })
    return rows


def build_parse_health(src: Path, labels: dict[str, str]) -> list[Row]:
    """Table 22 (pooled over tasks and languages)."""
    rows = []
    for r in _read("table_22.csv", src):
        model = r["model"]
        decimals = len(r["parse_health"].partition(".")[2])
        rows.append({
            "model": model, "language": "all", "task": "all", "n_rows": None,
            "parse_health": _f(r["parse_health"]), "refusal_rate": _f(r["refusal_rate"]),
            "strict_rate": None, "n_parsed": None, "n_refusals": None,
            "source": "published: Table 22", "method": METHOD, "label": labels[model],
            "note": _note(f"parse health printed with {decimals} dp ({r['parse_health']}); "
                          "the other rows print 2 dp" if decimals != 2 else None,
                          _sarvam(model)),
        })
    return rows


def build_fairness_ablation(src: Path, labels: dict[str, str]) -> list[Row]:
    """Appendix E: the numbers its text states, and the direction its prose gives."""
    rows = []
    for r in _read("appendix_e.csv", src):
        model = r["model"]
        if r["direction"] not in ("reduced", "increased", "not increased"):
            raise ValueError(f"bad direction {r['direction']!r}")
        rows.append({
            "model": model, "language": r["language"],
            "std_mean_delta": _f(r["std_mean_delta"]), "fair_mean_delta": _f(r["fair_mean_delta"]),
            "delta": _f(r["delta"]), "reduction_pct": _f(r["reduction_pct"]),
            "n_pairs_std": None, "n_pairs_fair": None, "direction": r["direction"],
            "source": SRC_APPENDIX_E, "method": METHOD, "label": labels[model],
            "note": _note(r["note"], _sarvam(model),
                          "irrelevant here: the ablation is salary_estimation only"
                          if model == SARVAM else None),
        })
    return rows


def build_models(src: Path) -> list[Row]:
    """The nine models (MODEL_CARD table, upstream spec §8)."""
    rows = []
    for r in _read("models.csv", src):
        if r["weights"] not in ("open", "closed"):
            raise ValueError(f"bad weights {r['weights']!r}")
        model = r["model"]
        rows.append({
            "model": model, "label": r["label"], "provider_id": r["provider_id"],
            "weights": r["weights"], "price_in_usd_per_m": float(r["price_in_usd_per_m"]),
            "price_out_usd_per_m": float(r["price_out_usd_per_m"]), "access": r["access"],
            "source": SRC_MODEL_CARD, "method": METHOD,
            "note": _note("accessed through the Sarvam API, not OpenRouter"
                          if model == SARVAM else None, _sarvam(model)),
        })
    return rows


def build_dataset_composition(src: Path) -> list[Row]:
    """Table 1."""
    rows = []
    for r in _read("table_01.csv", src):
        total = r["task"] == "all"
        rows.append({
            "task": r["task"], "use_case": r["use_case"],
            "n_identifiers": _i(r["n_identifiers"]), "n_profiles": _i(r["n_profiles"]),
            "n_question_variants": _i(r["n_question_variants"]),
            "n_languages": _i(r["n_languages"]), "n_prompts": int(r["n_prompts"]),
            "source": "published: Table 1", "method": METHOD,
            "note": "the paper prints '–' for the other Total cells (null here)" if total else None,
        })
    return rows


def build_human_validation(src: Path) -> list[Row]:
    """Tables 14, 19 and 20."""
    rows: list[Row] = []
    for r in _read("table_14.csv", src):
        rows.append({"study": "achievement_descriptions", "criterion": r["criterion"],
                     "rating": r["rating"], "n": int(r["n"]), "pct": None, "pabak": None,
                     "source": "published: Table 14", "method": METHOD,
                     "note": "counts of survey responses (Appendix G)"})
    for r in _read("table_19.csv", src):
        rows.append({"study": "hinglish_validation", "criterion": r["criterion"],
                     "rating": r["rating"], "n": int(r["n"]), "pct": float(r["pct"]),
                     "pabak": None, "source": "published: Table 19", "method": METHOD,
                     "note": "initial ratings, % within criterion (Appendix J)"})
    for r in _read("table_20.csv", src):
        rows.append({"study": "hinglish_validation", "criterion": r["criterion"],
                     "rating": None, "n": None, "pct": None, "pabak": float(r["pabak"]),
                     "source": "published: Table 20", "method": METHOD,
                     "note": "inter-annotator agreement (PABAK) on the initial ratings"})
    return rows


# Row order: model (models.csv order, then 'all'), language, task, axis, then source.
_SOURCE_ORDER = [SRC_T2, SRC_T2_README, *(f"published: Table {n}" for n in (3, 4, 5, 6, 7, 8))]


def _sorted(rows: list[Row], models: Sequence[str]) -> list[Row]:
    model_key = _model_key(models)
    lang_key = _order(LANGUAGES)
    axis_key = _order(["all", *AXES, "Mean"])
    source_key = _order(_SOURCE_ORDER)

    def key(row: Row) -> tuple[int, ...]:
        return (model_key(row["model"]), lang_key(row.get("language", "all")),
                axis_key(row.get("axis", "all")), source_key(row["source"])
                if row["source"] in _SOURCE_ORDER else -1)

    return sorted(rows, key=key)


def _to_table(name: str, rows: list[Row]) -> pa.Table:
    """Rows to an Arrow table with the declared schema; non-nullable columns are checked."""
    schema = SCHEMAS[name]
    extra = {k for row in rows for k in row} - set(schema.names)
    if extra:
        raise ValueError(f"{name}: columns not in the schema: {sorted(extra)}")
    table = pa.Table.from_pylist(rows, schema=schema)
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise ValueError(f"{name}.{field.name} must not be null")
    return table


def build_tables(src_dir: Path = SRC_DIR) -> dict[str, pa.Table]:
    """All published tables, keyed by file stem, in a deterministic row order."""
    labels = _labels(src_dir)
    models = list(labels)
    per_model = {
        "leaderboard": build_leaderboard(src_dir, labels),
        "delta": build_delta(src_dir, labels),
        "kendall_w": build_kendall_w(src_dir, labels),
        "qv_robustness": build_qv_robustness(src_dir, labels),
        "parse_health": build_parse_health(src_dir, labels),
        "fairness_ablation": build_fairness_ablation(src_dir, labels),
        "models": build_models(src_dir),
    }
    tables = {name: _to_table(name, _sorted(rows, models)) for name, rows in per_model.items()}
    tables["dataset_composition"] = _to_table("dataset_composition",
                                              build_dataset_composition(src_dir))
    tables["human_validation"] = _to_table("human_validation", build_human_validation(src_dir))
    return dict(sorted(tables.items()))


# --------------------------------------------------------------------------------------------
# writing


def parquet_bytes(table: pa.Table) -> bytes:
    """Serialise a table to zstd Parquet in memory (deterministic for a given pyarrow)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def write_tables(tables: dict[str, pa.Table], out_dir: Path) -> list[Path]:
    """Write each table to ``out_dir/<name>.parquet``; files already identical are untouched."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in tables.items():
        path = out_dir / f"{name}.parquet"
        data = parquet_bytes(table)
        if not path.exists() or path.read_bytes() != data:
            tmp = path.with_suffix(".parquet.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        written.append(path)
    return written


def stale_files(tables: dict[str, pa.Table], out_dir: Path) -> list[str]:
    """Names of files in ``out_dir`` that are missing or differ from a fresh rebuild."""
    return [name for name, table in tables.items()
            if not (out_dir / f"{name}.parquet").exists()
            or (out_dir / f"{name}.parquet").read_bytes() != parquet_bytes(table)]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the command-line options of `python -m precompute published`."""
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="output directory (default: data/published in the repository)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if any file in --out differs from a rebuild")


def main(args: argparse.Namespace) -> int:
    """Rebuild (or, with --check, verify) the published Parquet files."""
    tables = build_tables()
    if args.check:
        stale = stale_files(tables, args.out)
        for name in stale:
            print(f"stale: {args.out / (name + '.parquet')}")
        return 1 if stale else 0
    for path in write_tables(tables, args.out):
        print(f"{path}  {tables[path.stem].num_rows} rows")
    return 0
