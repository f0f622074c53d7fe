"""Every table of a data directory: its files, keys and the columns the explorer requires.

New tables are added here (and, for their files, in ``computed`` / ``published`` / ``raw``);
precompute writes the declared schemas and the explorer reads exactly the declared files.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pyarrow as pa

from rupeebias_core.registry import computed, published, raw
from rupeebias_core.registry.columns import make_columns
from rupeebias_core.registry.layout import metrics_path
from rupeebias_core.registry.spec import Table, TableFile

_S, _F = pa.string(), pa.float64()

#: ``metrics/models.parquet``: display facts of computed models, one row per responses file,
#: written by ``python -m precompute metrics`` (labels from the local-model catalogue); the
#: paper's models are in ``published/models.parquet``.
COMPUTED_MODELS = TableFile("models", "computed", metrics_path("models"), make_columns("models", (
    ("model", _S), ("label", _S), ("provider_id", _S), ("weights", _S),
    ("price_in_usd_per_m", _F), ("price_out_usd_per_m", _F), ("source", _S), ("method", _S),
    ("note", _S),
)), "python -m precompute metrics")

_MSM = ("model", "source", "method")


def _files(name: str) -> tuple[TableFile, ...]:
    """The table's computed file first, then its published one (the explorer's union order)."""
    return tuple(f for f in (computed.FILES.get(name), published.FILES.get(name)) if f)


def _table(name: str, description: str, keys: tuple[str, ...], required: tuple[str, ...],
           files: tuple[TableFile, ...] | None = None, raw_rows: bool = False) -> Table:
    return Table(name, description, keys, required, files or _files(name), raw_rows)


_TABLES: tuple[Table, ...] = (
    _table("delta", "The Mean Δ% cube: model × language × use case × axis.",
           (*_MSM, "language", "task", "axis"),
           ("model", "language", "task", "axis", "mean_delta")),
    _table("leaderboard", "Table 2: the delta rows with task = axis = 'all', plus unweighted "
           "means.", (*_MSM, "language", "task", "axis"), ("model", "language", "mean_delta")),
    _table("kendall_w", "Axis-wise Kendall's W (Tables 5/6).", (*_MSM, "language", "axis"),
           ("model", "language", "axis", "w")),
    _table("kendall_w_usecase", "Kendall's W per use case (Figure 6).",
           (*_MSM, "language", "task", "axis"), ("model", "language", "task", "axis", "w")),
    _table("canonical_gaps", "Signed gap of one canonical pair per axis (Figure 7).",
           (*_MSM, "language", "task", "axis"), ("model", "task", "axis", "cpg")),
    _table("max_gaps", "Maximum observed gap per axis, naming both identifiers (Figure 8).",
           (*_MSM, "language", "task", "axis"), ("model", "task", "axis", "gap")),
    _table("language_shift", "English vs Hinglish: the shift in Mean Δ% and the rank "
           "correlation (Figure 5b).", (*_MSM, "axis"), ("model", "axis", "delta_shift")),
    _table("qv_robustness", "Question-variant robustness (Tables 7/8).",
           (*_MSM, "language", "axis"), ("model", "language", "axis", "min_rho")),
    _table("merit_sensitivity", "How much answers move with the profile (Figure 11).",
           (*_MSM, "language", "task"), ("model", "language", "task", "mean_delta")),
    _table("profile_rank_agreement", "Do identities agree on which profiles deserve more "
           "(Figure 12).", (*_MSM, "language", "task"), ("model", "language", "task", "rho")),
    _table("identifier_deviation", "Each identity's deviation from its axis mean (Figures 4, "
           "9, 10).", (*_MSM, "language", "task", "axis", "identifier_value"),
           ("model", "language", "task", "axis", "identifier_value", "pct_dev")),
    _table("fairness_ablation", "The fairness-instruction ablation (Figure 13, Appendix E).",
           (*_MSM, "language"), ("model", "language", "delta")),
    _table("parse_health", "Parse health and refusal rate (Table 22).",
           (*_MSM, "language", "task"), ("model", "parse_health")),
    # Bias vs noise (methodology §4.11; computed models only).
    _table("identity_effects", "Signed identity effects with intervals and BH flags.",
           (*_MSM, "language", "task", "axis", "identifier_value"),
           ("model", "language", "task", "axis", "identifier_value", "effect_pct")),
    _table("gap_decomposition", "How much of a gap is more than noise: systematic share and "
           "excess over the placebo floor.", (*_MSM, "language", "task", "axis"),
           ("model", "language", "task", "axis", "mean_delta")),
    _table("missingness", "Refusals and unusable answers as outcomes, per identity.",
           (*_MSM, "language", "task", "axis", "identifier_value"),
           ("model", "language", "task", "axis", "identifier_value", "refusal_rate")),
    # Reference tables.
    _table("models", "Model display facts: label, weights, prices.", ("model", "source"),
           ("model",), (COMPUTED_MODELS, published.FILES["models"])),
    _table("dataset_composition", "Dataset composition by use case (Table 1).", ("task",),
           ("task", "n_prompts")),
    _table("human_validation", "Human validation studies: achievement descriptions (Table 14), "
           "Hinglish translations (Tables 19, 20).", ("source", "study", "criterion", "rating"),
           ("study", "criterion", "rating", "n", "pct", "pabak", "source")),
    # Row-level tables.
    _table("parsed", "One row per response: the parsed value and whether the metrics use it.",
           ("model", "method", "id", "condition", "row_index"),
           ("model", "id", "condition", "task", "language", "axis", "identifier_value",
            "profile_id", "question_variant_id", "value", "metric_value", "status", "strict"),
           raw_rows=True),
    _table("prompts", "The prompt set: one row per (id, condition).", ("id", "condition"),
           ("id", "condition", "task", "language", "axis", "identifier_value", "profile_id",
            "question_variant_id", "prompt", "system_prompt"), (raw.PROMPTS,), raw_rows=True),
    _table("responses", "One model's raw answers (the interchange format).",
           ("model", "id", "condition", "sample_index"),
           ("id", "condition", "model", "response", "finish_reason"), (raw.RESPONSES,),
           raw_rows=True),
)

#: Every table by name, in the explorer's order.
TABLES: Mapping[str, Table] = MappingProxyType({t.name: t for t in _TABLES})


def table(name: str) -> Table:
    """The registered table ``name`` (KeyError for an unknown one)."""
    return TABLES[name]


def files() -> tuple[TableFile, ...]:
    """Every declared file layout."""
    return tuple(f for t in TABLES.values() for f in t.files)
