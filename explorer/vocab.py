"""The explorer's fixed vocabulary: tasks, languages, axes, identifiers, labels, model order.

Everything a URL parameter may name is listed here (or read from the data), so state validation
has one allow-list to check against. Values come from ``rupeebias_core.benchmark`` so the app
never disagrees with the prompt generator about what the benchmark contains.
"""

from __future__ import annotations

from math import comb
from types import MappingProxyType

from precompute.endpoint import local_model_id, local_model_notes
from rupeebias_core import benchmark as bm
from rupeebias_core import pair_semantics

TASKS: tuple[str, ...] = bm.TASKS
LANGUAGES: tuple[str, ...] = bm.LANGUAGES
AXES: tuple[str, ...] = bm.AXES
ALL = "all"

TASK_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {**bm.TASK_LABELS, ALL: "All use cases"}
)
LANGUAGE_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {**bm.LANGUAGE_LABELS, ALL: "English + Hinglish"}
)
#: Column-group names of the per-language tables (``Overall Mean Δ%``, ``English CI low``).
GROUP_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {ALL: "Overall", "en": "English", "hinglish": "Hinglish"}
)
AXIS_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {**{a: a for a in AXES}, ALL: "All axes", "Mean": "Mean of the six axes"}
)

#: (axis, identifier value) for all 87 identifiers, in generation order.
IDENTIFIERS: tuple[tuple[str, str], ...] = tuple((i.axis, i.value) for i in bm.IDENTIFIERS)
IDENTIFIER_VALUES: tuple[str, ...] = tuple(v for _, v in IDENTIFIERS)
CANONICAL_PAIRS: MappingProxyType[str, tuple[str, str]] = bm.CANONICAL_PAIRS
CONDITIONS: tuple[str, ...] = bm.CONDITIONS
FAIRNESS_TASKS: tuple[str, ...] = bm.FAIRNESS_TASKS


def identifiers_of(axis: str) -> tuple[str, ...]:
    """Identifier values of one axis (all 87 for ``all``), in generation order."""
    return tuple(v for a, v in IDENTIFIERS if axis in (ALL, a))


def profile_ids(task: str) -> tuple[str, ...]:
    return tuple(p.profile_id for p in bm.profiles(task))


def question_variant_ids(task: str) -> tuple[str, ...]:
    return tuple(q.id for q in bm.question_variants(task, "en"))


def expected_pairs(task: str, language: str, axis: str) -> int:
    """Pairs a model with every response parsed contributes to one delta cell.

    Used for the coverage column: n_pairs / expected says how much of the benchmark a computed
    number rests on (parse failures and missing responses form no pairs).
    """
    tasks = TASKS if task == ALL else (task,)
    langs = len(LANGUAGES) if language == ALL else 1
    axes = AXES if axis == ALL else (axis,)
    total = 0
    for t in tasks:
        slots = len(profile_ids(t)) * len(question_variant_ids(t))
        total += slots * sum(comb(len(identifiers_of(a)), 2) for a in axes)
    return total * langs


#: The paper, as a reader cites it (authors as on arXiv 2609.31245, v2).
PAPER_CITATION = (
    "P. M. Nair, B. Talaviya, S. Bhushan, R. Pankajakshan, S. Guruvadoo, G. Gressel and "
    "K. Achuthan (2026). *RupeeBias: Auditing Demographic Bias in Indian Economic Guidance "
    "from Large Language Models.* arXiv:2609.31245")


#: The paper's model order (the authors' config order); models computed here follow,
#: alphabetically, so every table and chart lists models the same way.
PAPER_MODELS: tuple[str, ...] = (
    "claude-opus-4.7",
    "claude-haiku-4.5",
    "gpt-5.4",
    "gpt-5.4-mini",
    "gemini-3-flash",
    "kimi-k2.5",
    "deepseek-v3.2",
    "glm-5.1",
    "sarvam-105b",
)

#: The bundled model (the endpoint layer names it, from the local-model catalogue).
SMOLLM_SLUG = local_model_id()
#: One sentence about each local model (the catalogue's), shown wherever its numbers are.
MODEL_NOTES: MappingProxyType[str, str] = MappingProxyType(local_model_notes())
SMOLLM_NOTE = MODEL_NOTES[SMOLLM_SLUG]


#: Standard + fairness prompts: a complete run answers every one of them.
TOTAL_PROMPTS = sum(bm.PROMPT_COUNTS.values())
#: Standard-condition prompts, overall and per task: what parse health (and so a run's
#: coverage) counts.
STANDARD_PROMPTS = bm.PROMPT_COUNTS["standard"]
TASK_PROMPTS: MappingProxyType[str, int] = bm.TASK_PROMPT_COUNTS

SOURCE_KINDS: tuple[str, ...] = ("published", "computed")
SOURCE_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {"published": "Published (paper)", "computed": "Computed here"}
)
#: The lane of a model label ("GPT 5.4 · Published (paper)") in a word, for a phone's screen.
SOURCE_SHORT: MappingProxyType[str, str] = MappingProxyType(
    {"published": "paper", "computed": "computed"}
)
#: Between a model's name and its lane in a label.
LANE_SEP = " · "
#: One colour per source kind, everywhere (Okabe–Ito blue and orange: colour-blind safe).
SOURCE_COLORS: MappingProxyType[str, str] = MappingProxyType(
    {"published": "#0072B2", "computed": "#E69F00"}
)
METHODS: tuple[str, ...] = pair_semantics.METHODS
METHOD_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {"upstream": "Authors' method (upstream)", "corrected": "Corrected method"}
)
