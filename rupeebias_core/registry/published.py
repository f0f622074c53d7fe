"""The published tables: ``published/<name>.parquet``, the paper's numbers as printed, written
by ``python -m precompute published`` (docs/published.md).

They use the computed tables' file and column names wherever the quantity is the same, plus
``preferred``, ``label``, ``note`` and a few reference columns. Unlike the computed files their
schemas declare nullability and carry a small metadata block (table, description, generator);
``precompute.published`` writes exactly these schemas, so a rebuild is byte-identical.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import pyarrow as pa

from rupeebias_core.registry.columns import make_fields
from rupeebias_core.registry.layout import published_path
from rupeebias_core.registry.spec import TableFile

WRITER = "python -m precompute published"

STR, F64, I64, BOOL = pa.string(), pa.float64(), pa.int64(), pa.bool_()
_PROVENANCE = [("source", STR, False), ("method", STR, False)]
_TRAILER = [*_PROVENANCE, ("label", STR, True), ("note", STR, True)]


def _file(name: str, description: str, fields: Sequence[tuple[str, pa.DataType, bool]]
          ) -> TableFile:
    """A published file: nullability and a small, deterministic metadata block."""
    return TableFile(name, "published", published_path(name), make_fields(name, fields), WRITER,
                     metadata=(("rupeebias.table", name), ("rupeebias.description", description),
                               ("rupeebias.generator", WRITER)))


_DELTA_VALUES = [
    ("mean_delta", F64, True), ("mean_delta_lo", F64, True), ("mean_delta_hi", F64, True),
    ("violation_10", F64, True), ("violation_10_lo", F64, True), ("violation_10_hi", F64, True),
    ("n_pairs", I64, True), ("n_violations", I64, True),
]
_DELTA_KEYS = [("model", STR, False), ("language", STR, False), ("task", STR, False),
               ("axis", STR, False)]

_FILES: tuple[TableFile, ...] = (
    _file(
        "delta", "Mean Δ% cube as published: Table 2 (axis='all') and Tables 3/4 (per axis)",
        [*_DELTA_KEYS, *_DELTA_VALUES, ("flag", STR, True), ("preferred", BOOL, False),
         *_TRAILER]),
    _file(
        "leaderboard", "Table 2 as published: paper (1 dp) and authors README (2 dp)",
        [*_DELTA_KEYS, *_DELTA_VALUES, ("mean_delta_unweighted", F64, True),
         ("flag", STR, True), ("preferred", BOOL, False), *_TRAILER]),
    _file(
        "kendall_w", "Axis-wise Kendall's W as published (Tables 5 and 6)",
        [("model", STR, False), ("language", STR, False), ("axis", STR, False),
         ("w", F64, True), ("p_value", F64, True), ("p_bh", F64, True),
         ("significant", BOOL, True), ("n_tasks", I64, True), ("rank", I64, True),
         ("profile", STR, True), ("w_chance", F64, True), ("w_corrected", F64, True),
         ("w_perm_p", F64, True), *_TRAILER]),
    _file(
        "qv_robustness", "Question-variant robustness as published (Tables 7 and 8)",
        [("model", STR, False), ("language", STR, False), ("axis", STR, False),
         ("min_rho", F64, True), ("min_rho_lo", F64, True), ("min_rho_hi", F64, True),
         ("robust", BOOL, True), ("n_tasks", I64, True), *_TRAILER]),
    _file(
        "parse_health", "Parse health and refusal rate as published (Table 22)",
        [("model", STR, False), ("language", STR, False), ("task", STR, False),
         ("n_rows", I64, True), ("parse_health", F64, True), ("refusal_rate", F64, True),
         ("strict_rate", F64, True), ("n_parsed", I64, True), ("n_refusals", I64, True),
         *_TRAILER]),
    _file(
        "fairness_ablation", "Fairness-instruction ablation: only what Appendix E's text states",
        [("model", STR, False), ("language", STR, False),
         ("std_mean_delta", F64, True), ("fair_mean_delta", F64, True), ("delta", F64, True),
         ("reduction_pct", F64, True), ("n_pairs_std", I64, True), ("n_pairs_fair", I64, True),
         ("direction", STR, True), *_TRAILER]),
    _file(
        "models", "The nine evaluated models (authors' MODEL_CARD, upstream spec §8)",
        [("model", STR, False), ("label", STR, False), ("provider_id", STR, False),
         ("weights", STR, False), ("price_in_usd_per_m", F64, False),
         ("price_out_usd_per_m", F64, False), ("access", STR, False), *_PROVENANCE,
         ("note", STR, True)]),
    _file(
        "dataset_composition", "Dataset composition by use case (Table 1)",
        [("task", STR, False), ("use_case", STR, False), ("n_identifiers", I64, True),
         ("n_profiles", I64, True), ("n_question_variants", I64, True),
         ("n_languages", I64, True), ("n_prompts", I64, False), *_PROVENANCE,
         ("note", STR, True)]),
    _file(
        "human_validation",
        "Human validation studies: achievement descriptions (Table 14), Hinglish (Tables 19, 20)",
        [("study", STR, False), ("criterion", STR, False), ("rating", STR, True),
         ("n", I64, True), ("pct", F64, True), ("pabak", F64, True), *_PROVENANCE,
         ("note", STR, True)]),
)

FILES: Mapping[str, TableFile] = MappingProxyType({f.table: f for f in _FILES})
NAMES: tuple[str, ...] = tuple(FILES)
