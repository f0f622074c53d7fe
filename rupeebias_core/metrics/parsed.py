"""From raw responses to the per-response ``parsed`` table: parse once, then apply a method's
loading rules to decide which number each response contributes (``metric_value``) and why a row
is left out (``exclusion_reason``).

Upstream rules (spec §3.3), in order: drop DeepSeek rows that carry a reasoning trace, take the
authors' extractor value (LPA / % / INR, ``ERROR:`` rows parsed as numbers), turn counter-offers
into markup % over the offer, keep the first row per (condition, task, language, identifier,
profile, QV) in file order, drop rows without a value. Corrected rules: keep only usable
``parse()`` results in INR or % (:func:`~rupeebias_core.parsing.metric_exclusion`, the rule the
live page shares), in natural units (annual INR for salary and counter-offer, %
for increments, INR for prices), no model-specific filter, then keep the first usable row per
prompt.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rupeebias_core.pair_semantics import COUNTER_OFFER, METRIC_UNIT, Method, markup_pct
from rupeebias_core.parsing import (
    metric_exclusion,
    parse,
    upstream_is_refusal,
    upstream_value,
)

PROMPT_COLUMNS: tuple[str, ...] = (
    "id", "condition", "task", "language", "axis", "identifier_value", "profile_id",
    "question_variant_id", "offered_ctc_lpa",
)
SLOT_KEY: list[str] = ["condition", "task", "language", "identifier_value", "profile_id",
                       "question_variant_id"]


def _text(x: object) -> str | None:
    return x if isinstance(x, str) else None


def _nonempty(series: pd.Series) -> np.ndarray:
    return series.map(lambda x: isinstance(x, str) and x.strip() != "").to_numpy(bool)


def _join_prompts(resp: pd.DataFrame, prompts: pd.DataFrame) -> pd.DataFrame:
    """An inner join of responses to their prompt on (id, condition), in file order. Through
    an index rather than ``merge(validate=...)``, whose uniqueness check cost a third of the
    join; the index checks the same thing."""
    key = ["id", "condition"]
    index = pd.MultiIndex.from_frame(prompts[key])
    if not index.is_unique:
        dup = index[index.duplicated()][0]
        raise ValueError(f"prompts hold (id, condition) {dup!r} more than once")
    pos = index.get_indexer(pd.MultiIndex.from_frame(resp[key]))
    found = np.flatnonzero(pos >= 0)
    extra = [c for c in PROMPT_COLUMNS if c in prompts.columns and c not in key]
    return pd.concat([resp.iloc[found].reset_index(drop=True),
                      prompts[extra].iloc[pos[found]].reset_index(drop=True)], axis=1)


def parse_rows(responses: pd.DataFrame, prompts: pd.DataFrame) -> pd.DataFrame:
    """Join responses to their prompts on (id, condition) and parse every response once.

    Adds ``row_index`` (file order), ``value``/``unit``/``currency``/``status``/``strict``/
    ``parse_refusal`` (our parser), ``upstream_raw``/``upstream_refusal`` (authors' extractor)
    and ``has_reasoning``. Responses whose id is not a known prompt are dropped."""
    resp = responses.copy()
    if "condition" not in resp.columns:
        resp["condition"] = "standard"
    for col in ("finish_reason", "reasoning_content"):
        if col not in resp.columns:
            resp[col] = None
    resp["row_index"] = np.arange(len(resp), dtype=np.int64)
    has_reasoning_col = "reasoning_content" in responses.columns
    resp["has_reasoning"] = _nonempty(resp["reasoning_content"]) if has_reasoning_col else False
    keep = ["id", "condition", "response", "finish_reason", "row_index", "has_reasoning"]
    df = _join_prompts(resp[keep], prompts)
    cache: dict[tuple[str, str | None, str | None], tuple[object, ...]] = {}
    out = []
    for task, text, fr in zip(df["task"], df["response"], df["finish_reason"], strict=True):
        text, fr = _text(text), _text(fr)
        key = (task, text, fr)
        hit = cache.get(key)
        if hit is None:
            r = parse(task, text, fr)
            uv = upstream_value(task, text)
            hit = (math.nan if r.value is None else float(r.value), r.unit, r.currency,
                   str(r.status), bool(r.strict), bool(r.refusal), bool(r.usable),
                   math.nan if uv is None else float(uv), bool(upstream_is_refusal(text)),
                   metric_exclusion(r))
            cache[key] = hit
        out.append(hit)
    cols = ["value", "unit", "currency", "status", "strict", "parse_refusal", "usable",
            "upstream_raw", "upstream_refusal", "corrected_exclusion"]
    parsed = pd.DataFrame(out, columns=cols) if out else pd.DataFrame(columns=cols)
    return pd.concat([df.drop(columns=["response", "finish_reason"]), parsed], axis=1)


def _first_per_prompt(df: pd.DataFrame, candidate: np.ndarray) -> np.ndarray:
    """Mask of rows that are a candidate but not the first candidate of their prompt cell."""
    dup = np.zeros(len(df), dtype=bool)
    idx = np.flatnonzero(candidate)
    dup[idx] = df.iloc[idx].duplicated(SLOT_KEY, keep="first").to_numpy()
    return dup


def apply_method(rows: pd.DataFrame, model: str, method: Method) -> pd.DataFrame:
    """Add ``metric_value``, ``metric_unit``, ``refusal``, ``included`` and
    ``exclusion_reason`` to the output of :func:`parse_rows` under ``method``."""
    df = rows.copy()
    reason = np.full(len(df), None, dtype=object)
    task = df["task"].to_numpy(object)
    if method == "upstream":
        mv = df["upstream_raw"].to_numpy(float).copy()
        co = task == COUNTER_OFFER
        offered = pd.to_numeric(df["offered_ctc_lpa"], errors="coerce").to_numpy(float)
        mv[co] = markup_pct(mv[co], offered[co])
        df["refusal"] = df["upstream_refusal"].to_numpy(bool)
        reasoning = df["has_reasoning"].to_numpy(bool) & ("deepseek" in model.lower())
        reason[reasoning] = "reasoning_row"
        dup = _first_per_prompt(df, ~reasoning)
        reason[dup] = "duplicate"
        reason[(reason == None) & ~np.isfinite(mv)] = "no_value"  # noqa: E711
    elif method == "corrected":
        mv = df["value"].to_numpy(float).copy()
        # the one rule shared with the live page (parsing.metric_exclusion)
        excl = df["corrected_exclusion"]
        reason[:] = np.where(excl.isna().to_numpy(bool), None, excl.to_numpy(object))
        dup = _first_per_prompt(df, reason == None)  # noqa: E711
        reason[dup] = "duplicate"
        df["refusal"] = df["parse_refusal"].to_numpy(bool)
    else:
        raise ValueError(f"unknown method {method!r}")
    included = reason == None  # noqa: E711
    mv[~included] = np.nan
    df["metric_value"] = mv
    df["metric_unit"] = [METRIC_UNIT[method].get(t) for t in task]
    df["included"] = included
    df["exclusion_reason"] = reason
    df["model"] = model
    df["method"] = method
    return df


def health_frame(rows: pd.DataFrame, method: Method) -> pd.DataFrame:
    """Raw standard rows with the booleans parse health counts (spec §3.4)."""
    std = rows[rows["condition"] == "standard"]
    if method == "upstream":
        parsed = np.isfinite(std["upstream_raw"].to_numpy(float))
        refusal = std["upstream_refusal"].to_numpy(bool)
    else:
        parsed = std["usable"].to_numpy(bool) & (std["currency"].to_numpy(object) == "INR")
        refusal = std["parse_refusal"].to_numpy(bool)
    return pd.DataFrame({"task": std["task"].to_numpy(object),
                         "language": std["language"].to_numpy(object),
                         "parsed": parsed, "refusal": refusal,
                         "strict": std["strict"].to_numpy(bool)})
