"""Which prompts a run covers: the selection flags shared by `estimate` and `collect`.

Why sample whole *slots*: every bias metric compares prompts that differ only in the
demographic identifier inside one (task, language, axis, profile, question variant) slot. A
sample of independent prompts would leave most of them without a partner; ranking slots by a
seeded hash keeps pairs together, is stable across machines and versions (a slot's rank does
not depend on any other slot), and a larger `--sample` is always a superset of a smaller one.
"""

from __future__ import annotations

import argparse
import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rupeebias_core.benchmark import (
    ALL_CONDITIONS,
    CONDITION_CHOICES,
    EXTRA_CONDITIONS,
    SystemPromptStyle,
    conditions_for,
)

REQUIRED_COLUMNS = ("id", "task", "language", "condition", "prompt", "system_prompt")
SLOT_COLUMNS = ("task", "language", "condition", "axis", "profile_id", "question_variant_id")
BLOCK_COLUMNS = ("task", "language", "condition", "axis", "profile_id")
SEND_ORDERS = ("blocks", "id")
SMOKE_PER_GROUP = 5
SYSTEM_PROMPT_STYLES: dict[str, SystemPromptStyle] = {"indented": "indented",
                                                      "dedented": "dedented"}


class SelectionError(ValueError):
    """The selection flags or the prompts file are unusable (reported, exit code 2)."""


@dataclass(frozen=True)
class Selection:
    tasks: tuple[str, ...] | None = None
    languages: tuple[str, ...] | None = None
    condition: str = "standard"
    sample: int | None = None
    smoke: bool = False
    seed: int = 42
    system_prompt_style: SystemPromptStyle = "indented"
    prompts_path: Path | None = None

    def describe(self) -> dict[str, object]:
        return {
            "tasks": list(self.tasks) if self.tasks else "all",
            "languages": list(self.languages) if self.languages else "all",
            "condition": self.condition,
            "sample": self.sample,
            "smoke": self.smoke,
            "seed": self.seed,
            "system_prompt_style": self.system_prompt_style,
            "prompts_file": str(self.prompts_path) if self.prompts_path else None,
        }


def add_selection_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("prompt selection")
    g.add_argument("--data", type=Path, default=Path("data"),
                   help="data directory (responses/ is written under it; default: data)")
    g.add_argument("--prompts", type=Path, default=None,
                   help="read prompts from this prompts.parquet instead of generating them")
    g.add_argument("--tasks", nargs="+", default=None, metavar="TASK",
                   help="tasks to include (default: all); commas also accepted")
    g.add_argument("--languages", nargs="+", default=None, metavar="LANG",
                   help="languages: en, hinglish (default: both)")
    g.add_argument("--condition", choices=CONDITION_CHOICES, default="standard",
                   help="standard prompts, the fairness-instruction ablation, the opt-in "
                        "placebo statements, benchmark (standard + fairness) or all (benchmark "
                        "+ placebo; placebo blocks are sent last) (default: standard)")
    size = g.add_mutually_exclusive_group()
    size.add_argument("--sample", type=int, default=None, metavar="N",
                      help="a deterministic sample of N prompts (whole slots, seeded)")
    size.add_argument("--smoke", action="store_true",
                      help=f"a fixed small sample: {SMOKE_PER_GROUP} prompts per "
                           "task x language x condition")
    g.add_argument("--seed", type=int, default=42, help="sampling seed (default: 42)")
    g.add_argument("--system-prompt-style", choices=("indented", "dedented"),
                   default="indented",
                   help="indented = as the published runs (default); dedented = current code")


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    out: list[str] = []
    for v in values:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return tuple(dict.fromkeys(out)) or None


def selection_from_args(args: argparse.Namespace) -> Selection:
    if args.sample is not None and args.sample < 1:
        raise SelectionError(f"--sample must be >= 1, got {args.sample}")
    if args.system_prompt_style not in SYSTEM_PROMPT_STYLES:
        raise SelectionError(f"unknown system prompt style {args.system_prompt_style!r}")
    return Selection(
        tasks=_split(args.tasks),
        languages=_split(args.languages),
        condition=args.condition,
        sample=args.sample,
        smoke=bool(args.smoke),
        seed=int(args.seed),
        system_prompt_style=SYSTEM_PROMPT_STYLES[args.system_prompt_style],
        prompts_path=args.prompts,
    )


def _rank(seed: int, parts: tuple[object, ...]) -> str:
    text = "\x1f".join(["rupeebias-sample", str(seed), *map(str, parts)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _source(sel: Selection) -> pd.DataFrame:
    if sel.prompts_path is not None:
        if not sel.prompts_path.is_file():
            raise SelectionError(f"prompts file not found: {sel.prompts_path}")
        try:
            frame = pd.read_parquet(sel.prompts_path)
        except Exception as exc:  # pyarrow raises several types for a non-Parquet file
            raise SelectionError(f"cannot read prompts file {sel.prompts_path}: {exc}") from exc
        if "system_prompt_style" in frame.columns:
            frame = frame[frame["system_prompt_style"].astype(str) == sel.system_prompt_style]
        return frame
    from rupeebias_core.benchmark import LANGUAGES, TASKS
    from rupeebias_core.prompts import build_prompts

    for task in sel.tasks or ():
        if task not in TASKS:
            raise SelectionError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
    for lang in sel.languages or ():
        if lang not in LANGUAGES:
            raise SelectionError(f"unknown language {lang!r}; choose from {', '.join(LANGUAGES)}")
    return build_prompts(condition=sel.condition, system_prompt_style=sel.system_prompt_style,
                         tasks=sel.tasks or TASKS, languages=sel.languages or LANGUAGES)


def _validate(frame: pd.DataFrame, origin: str) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise SelectionError(f"{origin} lacks required column(s): {', '.join(missing)}")
    for col in REQUIRED_COLUMNS:
        bad = frame[col].isna() | (frame[col].astype(str) == "")
        if col != "system_prompt" and bad.any():
            raise SelectionError(f"{origin}: {int(bad.sum())} row(s) with empty {col!r} "
                                 f"(first id: {frame.loc[bad, 'id'].iloc[0]!r})")
    bad_cond = ~frame["condition"].isin(ALL_CONDITIONS)
    if bad_cond.any():
        raise SelectionError(f"{origin}: unknown condition value(s) "
                             f"{sorted(set(frame.loc[bad_cond, 'condition']))}")
    dup = frame.duplicated(["id", "condition"], keep=False)
    if dup.any():
        first = frame.loc[dup, ["id", "condition"]].iloc[0].tolist()
        raise SelectionError(f"{origin}: (id, condition) is not unique, e.g. {first}")


def load_selection(sel: Selection) -> pd.DataFrame:
    """The selected prompts, validated, sorted by (id, condition)."""
    origin = str(sel.prompts_path) if sel.prompts_path else "generated prompts"
    if sel.condition not in CONDITION_CHOICES:
        raise SelectionError(f"unknown condition {sel.condition!r}; choose from "
                             f"{', '.join(CONDITION_CHOICES)}")
    frame = _source(sel)
    _validate(frame, origin)
    if sel.tasks:
        unknown = set(sel.tasks) - set(frame["task"].astype(str))
        if unknown:
            raise SelectionError(f"{origin} has no prompts for task(s) {sorted(unknown)}")
        frame = frame[frame["task"].isin(sel.tasks)]
    if sel.languages:
        frame = frame[frame["language"].isin(sel.languages)]
    frame = frame[frame["condition"].isin(conditions_for(sel.condition))]
    if frame.empty:
        raise SelectionError(f"the selection matches no prompts in {origin}")
    frame = frame.copy()
    slot_cols = [c for c in SLOT_COLUMNS if c in frame.columns]
    if not {"axis", "profile_id", "question_variant_id"} <= set(slot_cols):
        slot_cols = [*slot_cols, "id"]  # no slot structure: sample prompts individually
    slot_keys = list(zip(*(frame[c].astype(str) for c in slot_cols), strict=True))
    frame["_rank"] = [_rank(sel.seed, k) for k in slot_keys]
    frame = frame.sort_values(["_rank", "id", "condition"], kind="mergesort")
    if sel.sample is not None:
        frame = frame.head(sel.sample)
    elif sel.smoke:
        frame = frame.groupby(["task", "language", "condition"], sort=False).head(SMOKE_PER_GROUP)
    frame = frame.drop(columns="_rank")
    return frame.sort_values(["id", "condition"], kind="mergesort").reset_index(drop=True)


def send_order(frame: pd.DataFrame, order: str, seed: int) -> dict[tuple[str, str], int]:
    """Position of each (id, condition) in the order `collect` sends prompts.

    ``blocks`` (the default) sends whole profile blocks -- every identifier and question
    variant of one (task, language, condition, axis, profile) -- in a seeded random order, so
    a run stopped at any point holds complete comparison slots spread over every task,
    language and condition, not the first task only. A block's twins -- the same block in the
    other language and with the fairness instruction -- follow it, so the paired comparisons
    (language shift, fairness ablation) have matched slots at any point. Inside a block
    prompts go in id order,
    where neighbours share the identifier and profile lines, so a local server still reuses
    most of its KV-cache prefix; only a block change re-reads the system prompt.
    ``id`` groups by system prompt, then id: the most prefix reuse, least representative
    when stopped early.

    In ``blocks`` order the opt-in conditions (placebo) follow the whole benchmark: a
    ``--condition all`` run finishes the 48,546 released prompts first, and adding placebo
    rows leaves the relative order of the benchmark's prompts -- a resumed run's plan -- as
    it was.
    """
    if order not in SEND_ORDERS:
        raise SelectionError(f"unknown send order {order!r}; choose from {', '.join(SEND_ORDERS)}")
    if order == "id":
        keys = frame[["system_prompt", "id", "condition"]].astype(str)
        ranked = keys.sort_values(["system_prompt", "id", "condition"], kind="mergesort")
    else:
        # ranked without language and condition: a block's twins (the other language, the
        # fairness condition) follow it, so the paired comparisons have matched slots
        cols = [c for c in BLOCK_COLUMNS if c in frame.columns
                and c not in ("language", "condition")]
        block = list(zip(*(frame[c].astype(str) for c in cols), strict=True))
        ranked = pd.DataFrame({"_rank": [_rank(seed, ("block", *k)) for k in block],
                               "id": frame["id"].astype(str).to_numpy(),
                               "condition": frame["condition"].astype(str).to_numpy(),
                               "_lang": frame["language"].astype(str).to_numpy()})
        ranked["_fair"] = ranked["condition"] != "standard"  # standard first, then fairness
        ranked["_extra"] = ranked["condition"].isin(EXTRA_CONDITIONS)  # placebo after all
        ranked = ranked.sort_values(["_extra", "_rank", "_fair", "_lang", "id"],
                                    kind="mergesort")
    return {(i, c): n for n, (i, c) in enumerate(zip(ranked["id"], ranked["condition"],
                                                      strict=True))}


def prompts_sha256(frame: pd.DataFrame) -> str:
    """A content hash of the selected prompts (id, condition, system prompt, user prompt)."""
    h = hashlib.sha256()
    for row in frame[["id", "condition", "system_prompt", "prompt"]].itertuples(index=False):
        for part in row:
            h.update(str(part).encode("utf-8"))
            h.update(b"\x1f")
        h.update(b"\x1e")
    return h.hexdigest()
