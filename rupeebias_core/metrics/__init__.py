"""RupeeBias metrics: one module per metric, all working on numbers (not response text).

Data flow: :func:`parse_rows` (parse every response once) → :func:`apply_method` (upstream or
corrected loading rules → ``metric_value``) → :func:`build_blocks` (dense profile × QV ×
identifier arrays per condition, language, task and axis) → the metric modules →
:func:`finalise` (cross-model BH). :func:`compute_model` runs the whole chain for one model.

The names below are what callers import from the package; everything else is imported from
its submodule.
"""

from rupeebias_core.metrics.blocks import build_blocks, stack_languages
from rupeebias_core.metrics.bootstrap import (
    answer_bootstrap_pair_mean_ci,
    bootstrap_mean_ci,
    iid_bootstrap_means,
    percentile_ci,
    poisson_replicates,
    pool,
)
from rupeebias_core.metrics.canonical_gap import block_canonical_gap, canonical_gap
from rupeebias_core.metrics.delta import delta_cube, fine_cells
from rupeebias_core.metrics.fairness_ablation import fairness_rows
from rupeebias_core.metrics.identifier_deviation import deviation_rows, slice_deviation
from rupeebias_core.metrics.kendall_w import (
    bh_adjust,
    block_friedman,
    fisher_combine,
    kendall_w,
    profile_label,
)
from rupeebias_core.metrics.language_shift import (
    identifier_means,
    language_shift_rows,
    slot_normalised,
)
from rupeebias_core.metrics.leaderboard import leaderboard_rows
from rupeebias_core.metrics.max_gap import block_max_gap, max_gap
from rupeebias_core.metrics.merit_sensitivity import block_merit_deltas, merit_gap
from rupeebias_core.metrics.pairs import (
    METHODS,
    block_pair_deltas,
    block_pair_frame,
    pairs_per_slot,
    relative_gap,
)
from rupeebias_core.metrics.parse_health import parse_health_rows
from rupeebias_core.metrics.parsed import apply_method, health_frame, parse_rows
from rupeebias_core.metrics.pipeline import (
    benchmark_design,
    compute_from_values,
    compute_model,
    finalise,
)
from rupeebias_core.metrics.qv_robustness import min_qv_rho, qv_rows
from rupeebias_core.metrics.rank_agreement import block_identifier_rhos, rank_agreement_rows
from rupeebias_core.metrics.seeds import rng_for, seed_from_key
from rupeebias_core.metrics.tables import SCHEMAS, TABLE_NAMES, columns, to_arrow
from rupeebias_core.metrics.violation import count_violations, violation_rate, wilson_interval
from rupeebias_core.pair_semantics import signed_gap

__all__ = [
    "METHODS", "SCHEMAS", "TABLE_NAMES", "answer_bootstrap_pair_mean_ci", "apply_method",
    "benchmark_design", "bh_adjust", "block_canonical_gap", "block_friedman",
    "block_identifier_rhos", "block_max_gap", "block_merit_deltas", "block_pair_deltas",
    "block_pair_frame", "bootstrap_mean_ci", "build_blocks", "canonical_gap", "columns",
    "compute_from_values", "compute_model", "count_violations", "delta_cube", "deviation_rows",
    "fairness_rows", "finalise", "fine_cells", "fisher_combine", "health_frame",
    "identifier_means", "iid_bootstrap_means", "kendall_w", "language_shift_rows",
    "leaderboard_rows", "max_gap", "merit_gap", "min_qv_rho", "pairs_per_slot",
    "parse_health_rows", "parse_rows", "percentile_ci", "poisson_replicates", "pool",
    "profile_label", "qv_rows", "rank_agreement_rows", "relative_gap", "rng_for",
    "seed_from_key", "signed_gap", "slice_deviation", "slot_normalised", "stack_languages",
    "to_arrow", "violation_rate", "wilson_interval",
]
