"""The RupeeBias benchmark definition: identifiers, base profiles, templates, questions, prompts.

Everything here is read from ``data/benchmark.json``, which holds the released dataset's values
byte for byte (see ``docs/methodology.md``). Keeping the definition as data, not code, means a
reviewer can diff it against the authors' release, and a test can render all 39,150 prompts from
it and compare them with the released rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Literal

from rupeebias_core.placebo import PLACEBO_CONDITION, PLACEBO_STATEMENTS

TASKS: tuple[str, ...] = (
    "salary_estimation",
    "salary_increment_estimation",
    "counter_offer_recommendation",
    "service_pricing_vendor",
    "service_pricing_client",
)
LANGUAGES: tuple[str, ...] = ("en", "hinglish")
#: The released benchmark's conditions: what a complete run answers (48,546 prompts).
CONDITIONS: tuple[str, ...] = ("standard", "fairness")
#: Opt-in conditions added here, not in the released dataset (docs/methodology.md §4.10).
EXTRA_CONDITIONS: tuple[str, ...] = (PLACEBO_CONDITION,)
ALL_CONDITIONS: tuple[str, ...] = (*CONDITIONS, *EXTRA_CONDITIONS)
#: What `--condition` accepts: one condition, ``benchmark`` (= CONDITIONS) or ``all``
#: (= ALL_CONDITIONS, placebo included).
CONDITION_CHOICES: tuple[str, ...] = (*ALL_CONDITIONS, "benchmark", "all")


def conditions_for(selector: str) -> tuple[str, ...]:
    """The conditions one `--condition` value stands for."""
    if selector == "all":
        return ALL_CONDITIONS
    if selector == "benchmark":
        return CONDITIONS
    if selector in ALL_CONDITIONS:
        return (selector,)
    raise ValueError(f"unknown condition {selector!r}; expected one of {CONDITION_CHOICES}")


#: Tasks that have a fairness-instruction condition (the authors ran it on salary estimation only).
FAIRNESS_TASKS: tuple[str, ...] = ("salary_estimation",)
#: Standard-condition prompts per task (paper Table 1), half in each language; the fairness
#: condition repeats the FAIRNESS_TASKS prompts. `build_prompts` is tested to produce exactly these.
TASK_PROMPT_COUNTS: MappingProxyType[str, int] = MappingProxyType({
    "salary_estimation": 9_396,
    "salary_increment_estimation": 14_094,
    "counter_offer_recommendation": 9_396,
    "service_pricing_vendor": 3_132,
    "service_pricing_client": 3_132,
})
#: Prompts per condition: what a complete run of one model answers.
PROMPT_COUNTS: MappingProxyType[str, int] = MappingProxyType({
    "standard": sum(TASK_PROMPT_COUNTS.values()),
    "fairness": sum(TASK_PROMPT_COUNTS[t] for t in FAIRNESS_TASKS),
})
#: Placebo prompts per task: every (language, profile, question variant) slot once per placebo
#: statement (87 identifiers per slot in the standard condition). Kept out of PROMPT_COUNTS,
#: which is what "complete" means.
PLACEBO_TASK_PROMPT_COUNTS: MappingProxyType[str, int] = MappingProxyType({
    t: n // 87 * len(PLACEBO_STATEMENTS) for t, n in TASK_PROMPT_COUNTS.items()
})
PLACEBO_PROMPT_COUNT: int = sum(PLACEBO_TASK_PROMPT_COUNTS.values())


def expected_prompts(task: str, language: str, condition: str) -> int:
    """How many prompts one (task, language, condition) cell of the benchmark holds (0 if the
    condition does not apply to the task)."""
    if condition == "fairness" and task not in FAIRNESS_TASKS:
        return 0
    if condition == PLACEBO_CONDITION:
        counts = PLACEBO_TASK_PROMPT_COUNTS
        return counts.get(task, 0) // len(LANGUAGES) if language in LANGUAGES else 0
    return TASK_PROMPT_COUNTS.get(task, 0) // len(LANGUAGES) if language in LANGUAGES else 0


#: The id tag of each language (`hi`, not `hinglish`, as in the released ids).
LANGUAGE_ID_TAG: MappingProxyType[str, str] = MappingProxyType({"en": "en", "hinglish": "hi"})

TASK_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {
        "salary_estimation": "Salary estimation",
        "salary_increment_estimation": "Salary increment",
        "counter_offer_recommendation": "Counter-offer",
        "service_pricing_vendor": "Service pricing (vendor)",
        "service_pricing_client": "Service pricing (client)",
    }
)
LANGUAGE_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {"en": "English", "hinglish": "Hinglish"}
)

#: Required answer format per task: `### <NUMBER> INR` or `### <NUMBER> %`.
OUTPUT_FAMILY: MappingProxyType[str, Literal["INR", "%"]] = MappingProxyType(
    {
        "salary_estimation": "INR",
        "salary_increment_estimation": "%",
        "counter_offer_recommendation": "INR",
        "service_pricing_vendor": "INR",
        "service_pricing_client": "INR",
    }
)

#: Which of the three system prompts each task uses (counter-offer reuses the salary prompt).
_SYSTEM_PROMPT_KEY: MappingProxyType[str, str] = MappingProxyType(
    {
        "salary_estimation": "salary",
        "counter_offer_recommendation": "salary",
        "salary_increment_estimation": "hike",
        "service_pricing_vendor": "project_price",
        "service_pricing_client": "project_price",
    }
)

#: Canonical (privileged, marginalised) pair per axis, as in the authors' analysis code.
#: DATASET_CARD names Brahmin/Chamar for caste; the analysis (and the paper's figures) use Dalit.
CANONICAL_PAIRS: MappingProxyType[str, tuple[str, str]] = MappingProxyType(
    {
        "Religion": ("Hindu", "Muslim"),
        "Caste": ("Brahmin", "Dalit"),
        "Region": ("Gujarati", "Santhali"),
        "Gender": ("Male", "Female"),
        "Disability": ("No disability", "Intellectual disability"),
        "Urban/Rural": ("Tier 1 city", "Village"),
    }
)

SystemPromptStyle = Literal["indented", "dedented"]
#: The released runs were produced with the indented form; reproducing them is the default.
DEFAULT_SYSTEM_PROMPT_STYLE: SystemPromptStyle = "indented"


@dataclass(frozen=True)
class Identifier:
    """One demographic identifier with its four phrase forms."""

    axis: str
    value: str
    index: int  # 0-based position in generation order (0..86)
    phrase_en: str
    phrase_hinglish: str
    client_phrase_en: str
    client_phrase_hinglish: str

    def phrase(self, language: str, *, client: bool = False) -> str:
        """The phrase stored in `identifier_phrase` for this language and voice."""
        if client:
            return self.client_phrase_en if language == "en" else self.client_phrase_hinglish
        return self.phrase_en if language == "en" else self.phrase_hinglish


@dataclass(frozen=True)
class Profile:
    """A base profile; ``fields`` holds the row columns it contributes (language-specific
    values such as ``rating_phrase`` are resolved by :func:`profile_fields`)."""

    task: str
    profile_id: str
    fields: MappingProxyType[str, Any] = field(hash=False, compare=False)


@dataclass(frozen=True)
class QuestionVariant:
    id: str
    text: str


@cache
def _definition() -> dict[str, Any]:
    text = resources.files("rupeebias_core").joinpath("data/benchmark.json").read_text("utf-8")
    return json.loads(text)


def _axes() -> tuple[str, ...]:
    return tuple(_definition()["axes"])


AXES: tuple[str, ...] = _axes()


def _identifiers() -> tuple[Identifier, ...]:
    rows = _definition()["identifiers"]
    return tuple(Identifier(index=i, **row) for i, row in enumerate(rows))


IDENTIFIERS: tuple[Identifier, ...] = _identifiers()


def identifiers_for_axis(axis: str) -> tuple[Identifier, ...]:
    """Identifiers of one axis, in generation order."""
    if axis not in AXES:
        raise ValueError(f"unknown axis {axis!r}; expected one of {AXES}")
    return tuple(i for i in IDENTIFIERS if i.axis == axis)


def identifier(axis: str, value: str) -> Identifier:
    for ident in identifiers_for_axis(axis):
        if ident.value == value:
            return ident
    raise ValueError(f"unknown identifier {value!r} on axis {axis!r}")


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; expected one of {LANGUAGES}")


@cache
def profiles(task: str) -> tuple[Profile, ...]:
    """Base profiles of a task, in generation order."""
    _check_task(task)
    out = []
    for row in _definition()["profiles"][task]:
        fields = {k: v for k, v in row.items() if k != "profile_id"}
        out.append(Profile(task, row["profile_id"], MappingProxyType(fields)))
    return tuple(out)


def profile(task: str, profile_id: str) -> Profile:
    for p in profiles(task):
        if p.profile_id == profile_id:
            return p
    raise ValueError(f"unknown profile {profile_id!r} for task {task!r}")


def profile_summary(task: str, profile_id: str) -> str:
    """``P01 · IIT Delhi · CGPA 9.1``: a profile in words, as pages label it (the id alone for
    an unknown profile, so a label never fails)."""
    try:
        f = dict(profile(task, profile_id).fields)
    except ValueError:
        return profile_id
    if task == "salary_estimation":
        bits = [f.get("institution"), f"CGPA {f.get('cgpa')}"]
    elif task == "salary_increment_estimation":
        bits = [f.get("company"), f"{f.get('experience_years')} yrs",
                f"{f.get('achievement_level')} performer", f"₹{f.get('current_ctc_lpa')} LPA"]
    elif task == "counter_offer_recommendation":
        bits = [f.get("company"), f"{f.get('experience_years')} yrs",
                f"{f.get('offer_strength')} offer ₹{f.get('offered_ctc_lpa')} LPA"]
    else:
        bits = [f.get("service"), f"{f.get('rating_tier')} rating"]
    return f"{profile_id} · " + " · ".join(str(b) for b in bits)


def profile_fields(prof: Profile, language: str) -> dict[str, Any]:
    """The row columns a profile contributes, resolved for one language."""
    _check_language(language)
    out: dict[str, Any] = {}
    for key, value in prof.fields.items():
        out[key] = value[language] if isinstance(value, dict) else value
    if prof.task == "salary_increment_estimation":
        texts = _definition()["achievement_texts"]
        out["achievement_text"] = texts[out["company"]][out["achievement_level"]][language]
    return out


@cache
def question_variants(task: str, language: str) -> tuple[QuestionVariant, ...]:
    _check_task(task)
    _check_language(language)
    return tuple(
        QuestionVariant(q["id"], q[language]) for q in _definition()["question_variants"][task]
    )


def template(task: str, language: str) -> str:
    """The prompt template (``str.format`` placeholders) of a task and language."""
    _check_task(task)
    _check_language(language)
    return _definition()["templates"][task][language]


FAIRNESS_INSTRUCTION: str = _definition()["fairness_instruction"]


def _indent(text: str) -> str:
    """The released runs' form: every non-empty line after the first blank line is indented by
    8 spaces (an undedented triple-quoted string in the authors' older runner)."""
    head, sep, tail = text.partition("\n\n")
    if not sep:
        return text
    lines = ["        " + line if line else line for line in tail.split("\n")]
    return head + sep + "\n".join(lines)


def system_prompt(
    task: str, style: SystemPromptStyle = DEFAULT_SYSTEM_PROMPT_STYLE, *, fairness: bool = False
) -> str:
    """The system message for a task; with ``fairness`` the instruction is appended after a
    blank line, as the authors' ``--fair`` flag does."""
    _check_task(task)
    if style not in ("indented", "dedented"):
        raise ValueError(f"unknown system prompt style {style!r}")
    base = _definition()["system_prompts"][_SYSTEM_PROMPT_KEY[task]]
    text = _indent(base) if style == "indented" else base
    if fairness:
        text = text + "\n\n" + FAIRNESS_INSTRUCTION
    return text
