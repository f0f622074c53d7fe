"""Prompt generation: the 39,150 released RupeeBias prompts, the 9,396-prompt fairness condition
and the opt-in placebo condition.

The loop order (axis → identifier → profile → question variant), the id scheme and the row key
order follow the authors' generators, so :func:`released_jsonl` reproduces their JSONL files
byte for byte; :func:`build_prompts` adds the system prompt, the fairness condition and the
placebo rows (the same templates with a placebo statement where the identity phrase stands).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd

from rupeebias_core.benchmark import (
    CONDITION_CHOICES,
    DEFAULT_SYSTEM_PROMPT_STYLE,
    FAIRNESS_TASKS,
    IDENTIFIERS,
    LANGUAGE_ID_TAG,
    LANGUAGES,
    TASKS,
    Identifier,
    Profile,
    QuestionVariant,
    SystemPromptStyle,
    conditions_for,
    profile_fields,
    profiles,
    question_variants,
    system_prompt,
    template,
)
from rupeebias_core.placebo import PLACEBO_CONDITION, PLACEBO_STATEMENTS, PlaceboStatement

#: Profile columns each task's released rows carry, in the released key order.
_PROFILE_COLUMNS: dict[str, tuple[str, ...]] = {
    "salary_estimation": ("institution", "ownership", "cgpa"),
    "salary_increment_estimation": (
        "company",
        "experience_years",
        "achievement_level",
        "achievement_text",
        "current_ctc_lpa",
    ),
    "counter_offer_recommendation": (
        "company",
        "experience_years",
        "offer_strength",
        "offered_ctc_lpa",
    ),
    "service_pricing_vendor": ("service", "service_description", "rating_tier", "rating_phrase"),
    "service_pricing_client": ("service", "service_description", "rating_tier", "rating_phrase"),
}
_SIDE = {"service_pricing_vendor": "vendor", "service_pricing_client": "customer"}

#: Every profile column of `prompts.parquet`, in schema order, with its pandas dtype.
PROFILE_COLUMN_DTYPES: dict[str, str] = {
    "institution": "string",
    "ownership": "string",
    "cgpa": "Float64",
    "company": "string",
    "experience_years": "Int64",
    "achievement_level": "string",
    "achievement_text": "string",
    "current_ctc_lpa": "Int64",
    "offered_ctc_lpa": "Int64",
    "offer_strength": "string",
    "service": "string",
    "service_description": "string",
    "rating_tier": "string",
    "rating_phrase": "string",
    "side": "string",
}
PROMPT_COLUMNS: tuple[str, ...] = (
    "id",
    "task",
    "language",
    "condition",
    "axis",
    "identifier_value",
    "identifier_phrase",
    "profile_id",
    "question_variant_id",
    "question_variant",
    "prompt",
    "system_prompt",
    "system_prompt_style",
    *PROFILE_COLUMN_DTYPES,
)


def prompt_id(task: str, language: str, n: int) -> str:
    """`<task>_<en|hi>_<NNNNN>`, 1-based and zero-padded, as in the released files."""
    return f"{task}_{LANGUAGE_ID_TAG[language]}_{n:05d}"


def placebo_prompt_id(
    task: str, language: str, statement: str, profile_id: str, question_variant_id: str
) -> str:
    """`<task>_<en|hi>_placebo_<statement>_<profile>_<qv>`: never of the released form
    (which ends in five digits), and built from names, not positions, so adding a statement
    or reordering the list leaves every existing id -- and its cached response -- valid."""
    tag = LANGUAGE_ID_TAG[language]
    return f"{task}_{tag}_{PLACEBO_CONDITION}_{statement}_{profile_id}_{question_variant_id}"


def render_prompt(
    task: str,
    language: str,
    ident: Identifier | PlaceboStatement,
    prof: Profile,
    question: QuestionVariant | str,
) -> str:
    """One user message, exactly as the released dataset words it."""
    fields = profile_fields(prof, language)
    text = question.text if isinstance(question, QuestionVariant) else question
    client = task == "service_pricing_client"
    phrase = ident.phrase(language, client=client)
    return template(task, language).format(
        identifier_phrase=phrase, client_phrase=phrase, question=text, **fields
    )


def released_rows(task: str, language: str) -> Iterator[dict[str, Any]]:
    """The rows of one released prompt file, in file order and with its key order."""
    return _rows(task, language, IDENTIFIERS, placebo=False)


def placebo_rows(task: str, language: str) -> Iterator[dict[str, Any]]:
    """The placebo rows of one task and language: the released rows' layout, with each
    placebo statement in the identity's place (statement → profile → question variant)."""
    return _rows(task, language, PLACEBO_STATEMENTS, placebo=True)


def _rows(
    task: str,
    language: str,
    statements: tuple[Identifier, ...] | tuple[PlaceboStatement, ...],
    *,
    placebo: bool,
) -> Iterator[dict[str, Any]]:
    profs = profiles(task)
    qvs = question_variants(task, language)
    client = task == "service_pricing_client"
    n = 0
    for ident in statements:
        for prof in profs:
            fields = profile_fields(prof, language)
            for qv in qvs:
                n += 1
                pid = (placebo_prompt_id(task, language, ident.value, prof.profile_id, qv.id)
                       if placebo else prompt_id(task, language, n))
                row: dict[str, Any] = {"id": pid, "task": task}
                if task in _SIDE:
                    row["side"] = _SIDE[task]
                row.update(
                    language=language,
                    axis=ident.axis,
                    identifier_value=ident.value,
                    identifier_phrase=ident.phrase(language, client=client),
                    profile_id=prof.profile_id,
                )
                for col in _PROFILE_COLUMNS[task]:
                    row[col] = fields[col]
                row.update(
                    question_variant_id=qv.id,
                    question_variant=qv.text,
                    prompt=render_prompt(task, language, ident, prof, qv),
                    model_response=None,
                )
                yield row


def released_jsonl(task: str, language: str) -> str:
    """The released `<task>_<language>.jsonl` file content (UTF-8 text, `\\n` after each row)."""
    return "".join(
        json.dumps(row, ensure_ascii=False) + "\n" for row in released_rows(task, language)
    )


def build_prompts(
    condition: str = "benchmark",
    system_prompt_style: SystemPromptStyle = DEFAULT_SYSTEM_PROMPT_STYLE,
    tasks: tuple[str, ...] = TASKS,
    languages: tuple[str, ...] = LANGUAGES,
) -> pd.DataFrame:
    """The prompt table of ``docs/data-format.md``: one row per (id, condition).

    ``condition`` is ``standard``, ``fairness``, ``placebo``, ``benchmark`` (standard +
    fairness: the released 48,546, the default) or ``all`` (benchmark + placebo). Fairness
    rows exist for salary_estimation only and share ids and user prompts with their standard
    rows; placebo rows have their own ids and the standard system prompt.
    """
    if condition not in CONDITION_CHOICES:
        raise ValueError(f"unknown condition {condition!r}")
    records: list[dict[str, Any]] = []
    for cond in conditions_for(condition):
        for task in tasks:
            if cond == "fairness" and task not in FAIRNESS_TASKS:
                continue
            sys_text = system_prompt(task, system_prompt_style, fairness=cond == "fairness")
            for language in languages:
                rows = placebo_rows if cond == PLACEBO_CONDITION else released_rows
                for row in rows(task, language):
                    row.pop("model_response")
                    row["condition"] = cond
                    row["system_prompt"] = sys_text
                    row["system_prompt_style"] = system_prompt_style
                    records.append(row)
    frame = pd.DataFrame.from_records(records)
    for col, dtype in PROFILE_COLUMN_DTYPES.items():
        if col not in frame:
            frame[col] = pd.NA
        frame[col] = frame[col].astype(dtype)
    for col in PROMPT_COLUMNS:
        if col not in PROFILE_COLUMN_DTYPES:
            frame[col] = frame[col].astype("string")
    return frame.loc[:, list(PROMPT_COLUMNS)].reset_index(drop=True)
