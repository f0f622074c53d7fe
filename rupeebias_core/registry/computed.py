"""The computed metric tables: ``metrics/<name>.parquet``, written by ``python -m precompute
metrics`` (docs/data-format.md).

Every file starts with the :data:`PREFIX` columns; then the table's own columns in
:data:`SPECS` order. The order and types here are the written files' exact Arrow schema (no
metadata, every column nullable): ``rupeebias_core.metrics.tables`` converts frames to it, which
is what keeps reruns byte-identical. Changing a type or the order changes the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pyarrow as pa

from rupeebias_core.registry.columns import make_columns
from rupeebias_core.registry.layout import metrics_path
from rupeebias_core.registry.spec import TableFile

WRITER = "python -m precompute metrics"

S, F, INT, B = pa.string(), pa.float64(), pa.int64(), pa.bool_()
PREFIX: tuple[tuple[str, pa.DataType], ...] = (("model", S), ("source", S), ("method", S))
_DELTA = (("mean_delta", F), ("mean_delta_lo", F), ("mean_delta_hi", F), ("violation_10", F),
          ("violation_10_lo", F), ("violation_10_hi", F), ("n_pairs", INT), ("n_violations", INT))

SPECS: Mapping[str, tuple[tuple[str, pa.DataType], ...]] = MappingProxyType({
    "delta": (("language", S), ("task", S), ("axis", S), *_DELTA, ("flag", S)),
    "leaderboard": (("language", S), ("task", S), ("axis", S), *_DELTA,
                    ("mean_delta_unweighted", F), ("mean_delta_unweighted_lo", F),
                    ("mean_delta_unweighted_hi", F), ("mean_delta_task_axis", F),
                    ("n_tasks", INT), ("n_axes", INT), ("flag", S)),
    "kendall_w": (("language", S), ("axis", S), ("w", F), ("p_value", F), ("p_bh", F),
                  ("significant", B), ("n_tasks", INT), ("n_axes", INT), ("rank", INT),
                  ("profile", S), ("w_chance", F), ("w_corrected", F), ("w_perm_p", F)),
    "kendall_w_usecase": (("language", S), ("task", S), ("axis", S), ("w", F), ("p_value", F),
                          ("p_bh", F), ("significant", B), ("n_blocks", INT),
                          ("n_identifiers", INT), ("n_axes", INT), ("w_chance", F),
                          ("w_corrected", F), ("w_perm_p", F)),
    "canonical_gaps": (("language", S), ("task", S), ("axis", S), ("privileged", S),
                       ("marginalised", S), ("cpg", F), ("cpg_lo", F), ("cpg_hi", F),
                       ("sign_consistency", F), ("n_matched_slots", INT), ("n_privileged", INT),
                       ("n_marginalised", INT), ("rank_biserial", F), ("ci_excludes_zero", B),
                       ("flag", S)),
    "max_gaps": (("language", S), ("task", S), ("axis", S), ("gap", F), ("gap_lo", F),
                 ("gap_hi", F), ("top_identifier", S), ("bottom_identifier", S), ("n_rows", INT),
                 ("n_identifiers", INT), ("flag", S)),
    "language_shift": (("axis", S), ("rho", F), ("rho_p", F), ("n_identifiers", INT),
                       ("mean_delta_en", F), ("mean_delta_hinglish", F), ("delta_shift", F),
                       ("delta_shift_lo", F), ("delta_shift_hi", F), ("n_pairs_en", INT),
                       ("n_pairs_hinglish", INT), ("delta_shift_std", F),
                       ("delta_shift_std_lo", F), ("delta_shift_std_hi", F),
                       ("n_tasks_std", INT), ("flag", S)),
    "qv_robustness": (("language", S), ("axis", S), ("min_rho", F), ("min_rho_lo", F),
                      ("min_rho_hi", F), ("robust", B), ("n_tasks", INT), ("n_axes", INT)),
    "merit_sensitivity": (("language", S), ("task", S), ("mean_delta", F),
                          ("mean_delta_lo", F), ("mean_delta_hi", F), ("n_pairs", INT)),
    "profile_rank_agreement": (("language", S), ("task", S), ("rho", F), ("rho_lo", F),
                               ("rho_hi", F), ("n_pairs", INT)),
    "identifier_deviation": (("language", S), ("task", S), ("axis", S),
                             ("identifier_value", S), ("pct_dev", F), ("n_slices", INT),
                             ("n_rows", INT), ("mean_value", F), ("flag", S)),
    "fairness_ablation": (("language", S), ("task", S), ("std_mean_delta", F),
                          ("fair_mean_delta", F), ("delta", F), ("delta_lo", F),
                          ("delta_hi", F), ("reduction_pct", F), ("n_pairs_std", INT),
                          ("n_pairs_fair", INT), ("n_axes", INT)),
    "identity_effects": (("language", S), ("task", S), ("axis", S), ("identifier_value", S),
                         ("effect_pct", F), ("effect_pct_lo", F), ("effect_pct_hi", F),
                         ("effect_natural", F), ("effect_natural_lo", F),
                         ("effect_natural_hi", F), ("unit", S), ("typical_answer", F),
                         ("p_value", F), ("p_bh", F), ("significant", B), ("n_slots", INT),
                         ("n_clusters", INT)),
    "gap_decomposition": (("language", S), ("task", S), ("axis", S), ("mean_delta", F),
                          ("mean_delta_lo", F), ("mean_delta_hi", F), ("systematic_delta", F),
                          ("systematic_delta_raw", F), ("systematic_delta_null", F),
                          ("idiosyncratic_delta", F), ("systematic_share", F),
                          ("systematic_share_lo", F), ("systematic_share_hi", F),
                          ("p_value", F), ("placebo_delta", F), ("excess_delta", F),
                          ("excess_delta_lo", F), ("excess_delta_hi", F),
                          ("placebo_coverage", F), ("n_pairs", INT), ("n_placebo_pairs", INT),
                          ("n_clusters", INT), ("flag", S)),
    "missingness": (("language", S), ("task", S), ("axis", S), ("identifier_value", S),
                    ("n", INT), ("n_refusal", INT), ("n_unusable", INT), ("refusal_rate", F),
                    ("unusable_rate", F), ("p_refusal", F), ("p_refusal_bh", F),
                    ("p_unusable", F), ("p_unusable_bh", F), ("mean_delta_fill_lo", F),
                    ("mean_delta_fill_hi", F)),
    "parse_health": (("language", S), ("task", S), ("n_rows", INT), ("parse_health", F),
                     ("refusal_rate", F), ("strict_rate", F), ("n_parsed", INT),
                     ("n_refusals", INT), ("n_strict", INT)),
    "parsed": (("id", S), ("condition", S), ("task", S), ("language", S), ("axis", S),
               ("identifier_value", S), ("profile_id", S), ("question_variant_id", S),
               ("value", F), ("metric_value", F), ("status", S), ("strict", B),
               ("refusal", B), ("unit", S), ("metric_unit", S), ("currency", S),
               ("included", B), ("exclusion_reason", S), ("row_index", INT)),
})

#: Table names in the order ``precompute metrics`` writes them.
NAMES: tuple[str, ...] = tuple(SPECS)


def _file(name: str) -> TableFile:
    return TableFile(name, "computed", metrics_path(name),
                     make_columns(name, (*PREFIX, *SPECS[name])), WRITER)


FILES: Mapping[str, TableFile] = MappingProxyType({name: _file(name) for name in NAMES})
