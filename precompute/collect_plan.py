"""What `collect` sends and how each request is cached: the run configuration, the plan and
the cache key.

Why a module of its own: everything here is hashed into the store (`cache_key`,
`RunConfig.config_hash`). Changing a field name, the hashed JSON form or the request a prompt
becomes orphans every stored answer of a running or committed run, so a resumed run would
send everything again. `tests/precompute/test_collect_plan.py` pins the hashes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from precompute.client import ChatRequest, ReasoningStyle
from precompute.manifest import sha256_text


def stable_sha(obj: Any) -> str:
    """sha256 of canonical JSON (sorted keys, no spaces, UTF-8): the one hash of the store."""
    data = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def cache_key(endpoint_key: str, request: ChatRequest, sample_index: int) -> str:
    """sha256 of (endpoint, full request body incl. messages and params, sample index)."""
    return stable_sha({"endpoint": endpoint_key, "body": request.body(),
                       "sample_index": sample_index})


@dataclass(frozen=True)
class RunConfig:
    """Everything that identifies *how* responses were produced (hashed into config_hash:
    field names are part of the hash, never rename them)."""

    endpoint_key: str
    model: str
    slug: str
    temperature: float
    max_tokens: int
    reasoning_effort: str | None
    reasoning_style: ReasoningStyle
    sample_index: int
    system_prompt_style: str

    @property
    def config_hash(self) -> str:
        return stable_sha(asdict(self))


@dataclass(frozen=True)
class PlanItem:
    """One prompt of the selection as the request it becomes, with its cache key."""

    id: str
    condition: str
    task: str
    language: str
    request: ChatRequest
    cache_key: str
    system_prompt_sha256: str
    prompt_sha256: str

    def item_record(self, cfg: RunConfig) -> dict[str, Any]:
        """The store's `items` row: the per-prompt columns of the responses Parquet."""
        return {
            "id": self.id, "condition": self.condition, "task": self.task,
            "language": self.language, "model": cfg.slug, "model_requested": cfg.model,
            "temperature": cfg.temperature, "max_tokens": cfg.max_tokens,
            "reasoning_effort": self.request.reasoning_sent,
            "system_prompt_sha256": self.system_prompt_sha256,
            "prompt_sha256": self.prompt_sha256, "sample_index": cfg.sample_index,
            "cache_key": self.cache_key,
        }


def build_plan(frame: pd.DataFrame, cfg: RunConfig) -> list[PlanItem]:
    """One item per selected prompt, in the frame's (id, condition) order."""
    plan: list[PlanItem] = []
    for row in frame.itertuples(index=False):
        system = "" if pd.isna(row.system_prompt) else str(row.system_prompt)
        req = ChatRequest.chat(cfg.model, str(row.prompt), system or None,
                               temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                               reasoning_effort=cfg.reasoning_effort,
                               reasoning_style=cfg.reasoning_style)
        plan.append(PlanItem(
            id=str(row.id), condition=str(row.condition), task=str(row.task),
            language=str(row.language), request=req,
            cache_key=cache_key(cfg.endpoint_key, req, cfg.sample_index),
            system_prompt_sha256=sha256_text(system), prompt_sha256=sha256_text(str(row.prompt)),
        ))
    return plan


def subset(frame: pd.DataFrame, items: list[PlanItem]) -> pd.DataFrame:
    """The rows of `frame` that `items` cover (what the estimate is made for)."""
    keys = {(p.id, p.condition) for p in items}
    mask = [(i, c) in keys for i, c in zip(frame["id"], frame["condition"], strict=True)]
    return frame[mask]


def system_prompt_hashes(plan: list[PlanItem]) -> tuple[tuple[str, str, str], ...]:
    """Sorted distinct (task, condition, system prompt sha256) of a plan, for the manifest."""
    return tuple(sorted({(p.task, p.condition, p.system_prompt_sha256) for p in plan}))
