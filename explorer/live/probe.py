"""The probe engine of the *Try a prompt* page: what is sent, sending, parsing, Δ%.

* A benchmark slot (:class:`ProbeSpec`) or the reader's own question (:class:`OwnSpec`) is
  planned into exact messages (:func:`plan_prompts`), shown before anything is sent.
* :func:`run_probe` sends every prompt × repeat concurrently through
  :func:`precompute.client.complete` (retries, never raises on API errors) to an endpoint
  resolved by the page through :mod:`precompute.endpoint`.
* Answers are parsed with :func:`rupeebias_core.parsing.parse` and filtered with
  :func:`rupeebias_core.parsing.metric_exclusion` (the rule `metrics` uses); pairs get Δ% from
  :func:`rupeebias_core.pair_semantics.pair_gap` per repeat, a signed difference, and
  Student-t intervals over repeats.
* Every text field that leaves :func:`run_probe` is scrubbed of the key and the URL.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from explorer.live.config import Limits, redact_secrets
from precompute import endpoint as ep_layer
from rupeebias_core import benchmark as bm
from rupeebias_core.pair_semantics import pair_gap as relative_gap

# --------------------------------------------------------------------------------------------
# The probe: what is sent
# --------------------------------------------------------------------------------------------


#: The default max_tokens, as the shipped runs (`collect --max-tokens`, the paper: 40).
DEFAULT_MAX_TOKENS = 40


@dataclass(frozen=True)
class ProbeSpec:
    """One counterfactual probe: a slot of the benchmark, a set of identifiers, n repeats."""

    task: str
    language: str
    profile_id: str
    question_variant_id: str
    axis: str
    identifiers: tuple[str, ...]
    repeats: int = 1
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    system_prompt_style: bm.SystemPromptStyle = bm.DEFAULT_SYSTEM_PROMPT_STYLE
    fairness: bool = False

    @property
    def languages(self) -> tuple[str, ...]:
        return (self.language,)

    @property
    def n_requests(self) -> int:
        return len(self.identifiers) * self.repeats


#: Where the identity phrase goes in the reader's own question (else: before it, as in every
#: benchmark template, ``"{phrase}.\n{question}"``).
IDENTITY_MARKER = "{identity}"
#: The reader's answer formats: the benchmark use case whose system prompt asks for that
#: format and whose parser reads it (₹ amount: salary estimation; %: salary increment).
ANSWER_TASKS: Mapping[str, str] = {"inr": "salary_estimation",
                                   "percent": "salary_increment_estimation"}
ANSWER_LABELS: Mapping[str, str] = {"inr": "₹ amount (### <NUMBER> INR)",
                                    "percent": "% (### <NUMBER> %)"}


@dataclass(frozen=True)
class OwnSpec:
    """The reader's own question, asked once per identifier of one axis (and per language
    written), n repeats each. ``answer`` picks the parser (and, with ``system_prompt``, the
    matching benchmark system prompt); ``system_prompt`` False sends no system message."""

    question_en: str
    axis: str
    identifiers: tuple[str, ...]
    question_hinglish: str = ""
    answer: str = "inr"
    system_prompt: bool = True
    repeats: int = 1
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    system_prompt_style: bm.SystemPromptStyle = bm.DEFAULT_SYSTEM_PROMPT_STYLE

    @property
    def task(self) -> str:
        """The benchmark use case whose parser (and system prompt) fits the answer format."""
        return ANSWER_TASKS.get(self.answer, "salary_estimation")

    @property
    def profile_id(self) -> str:  # no profile: the metric value is the parsed value
        return ""

    @property
    def fairness(self) -> bool:
        return False

    @property
    def languages(self) -> tuple[str, ...]:
        return ("en", "hinglish") if self.question_hinglish.strip() else ("en",)

    def question(self, language: str) -> str:
        return (self.question_hinglish if language == "hinglish" else self.question_en).strip()

    @property
    def n_requests(self) -> int:
        return len(self.identifiers) * len(self.languages) * self.repeats


AnySpec = ProbeSpec | OwnSpec


@dataclass(frozen=True)
class PlannedPrompt:
    identifier_value: str
    system: str  # "" = no system message (own question without the benchmark system prompt)
    user: str
    language: str = ""


def _check_common(spec: AnySpec, limits: Limits, errors: list[str]) -> None:
    if spec.axis not in bm.AXES:
        errors.append("Unknown axis.")
        return
    known = {i.value for i in bm.identifiers_for_axis(spec.axis)}
    if any(v not in known for v in spec.identifiers):
        errors.append("An identifier does not belong to the chosen axis.")
    if len(set(spec.identifiers)) != len(spec.identifiers):
        errors.append("Choose two different identifiers.")
    if len(spec.identifiers) < 2:
        errors.append("Choose at least two identifiers.")
    if len(spec.identifiers) > limits.max_identifiers:
        errors.append(
            f"{len(spec.identifiers)} identifiers exceed the cap of {limits.max_identifiers} "
            "per run here."
        )
    if not 1 <= spec.repeats <= limits.max_repeats:
        errors.append(f"Repeats must be between 1 and {limits.max_repeats}.")
    if spec.n_requests > limits.max_requests_per_run:
        errors.append(
            f"This run needs {spec.n_requests} requests; the cap is "
            f"{limits.max_requests_per_run} per run."
        )
    if not (0.0 <= spec.temperature <= 2.0) or math.isnan(spec.temperature):
        errors.append("Temperature must be between 0 and 2.")
    if not 1 <= spec.max_tokens <= limits.max_tokens:
        errors.append(f"max_tokens must be between 1 and {limits.max_tokens}.")
    if spec.system_prompt_style not in ("indented", "dedented"):
        errors.append("Unknown system prompt style.")


def _check_question(text: str, name: str, limits: Limits, errors: list[str]) -> None:
    if len(text) > limits.max_question_chars:
        errors.append(f"The {name} question has {len(text):,} characters; the cap is "
                      f"{limits.max_question_chars:,} here.")
    if any((ord(ch) < 32 and ch not in "\n\t") or ord(ch) == 127 for ch in text):
        errors.append(f"The {name} question contains control characters.")


def check_spec(spec: AnySpec, limits: Limits) -> list[str]:
    """Every reason this spec may not be sent (empty list: OK). Messages are user-facing."""
    errors: list[str] = []
    if isinstance(spec, OwnSpec):
        if spec.answer not in ANSWER_TASKS:
            errors.append("Unknown answer format.")
        if not spec.question_en.strip():
            errors.append("Write your question (in English; Hinglish is optional).")
        _check_question(spec.question_en, "English", limits, errors)
        _check_question(spec.question_hinglish, "Hinglish", limits, errors)
        _check_common(spec, limits, errors)
        return errors
    if spec.task not in bm.TASKS:
        errors.append("Unknown use case.")
        return errors
    if spec.language not in bm.LANGUAGES:
        errors.append("Unknown language.")
    if spec.axis not in bm.AXES:
        errors.append("Unknown axis.")
        return errors
    if spec.profile_id not in {p.profile_id for p in bm.profiles(spec.task)}:
        errors.append("Unknown profile for this use case.")
    if spec.language in bm.LANGUAGES and spec.question_variant_id not in {
        q.id for q in bm.question_variants(spec.task, spec.language)
    }:
        errors.append("Unknown question variant for this use case.")
    _check_common(spec, limits, errors)
    return errors


def own_user_message(question: str, phrase: str) -> str:
    """The reader's question with the identity phrase at the ``{identity}`` marker(s), or, with
    no marker, before the question as the benchmark templates put it (``"{phrase}.\n…"``)."""
    question = question.strip()
    if IDENTITY_MARKER in question:
        return question.replace(IDENTITY_MARKER, phrase)
    return f"{phrase}.\n{question}"


def plan_prompts(spec: AnySpec) -> list[PlannedPrompt]:
    """The exact system and user messages, one per identifier (and language)."""
    if isinstance(spec, OwnSpec):
        system = (bm.system_prompt(spec.task, spec.system_prompt_style)
                  if spec.system_prompt else "")
        return [
            PlannedPrompt(v, system, own_user_message(spec.question(lang),
                                                      bm.identifier(spec.axis, v).phrase(lang)),
                          lang)
            for lang in spec.languages for v in spec.identifiers
        ]
    from rupeebias_core.prompts import render_prompt

    prof = bm.profile(spec.task, spec.profile_id)
    qv = next(q for q in bm.question_variants(spec.task, spec.language)
              if q.id == spec.question_variant_id)
    system = bm.system_prompt(spec.task, spec.system_prompt_style,
                              fairness=spec.fairness)
    return [
        PlannedPrompt(v, system, render_prompt(spec.task, spec.language,
                                               bm.identifier(spec.axis, v), prof, qv),
                      spec.language)
        for v in spec.identifiers
    ]


def metric_value(value: float | None) -> float | None:
    """The number Δ% is computed on: the parsed amount (₹, or % for increments), as the
    corrected method compares answers. Not the counter-offer markup over the offer, as the
    authors' method does: a relative gap between two markups is not a distance between
    answers (₹6 and ₹5.5 lakh on a ₹5 lakh offer gave Δ% 66.7 for an 8.7 % gap, and markups of
    opposite sign a negative Δ%), and the rest of the explorer never shows one as a gap."""
    return float(value) if value is not None and math.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# Sending
# --------------------------------------------------------------------------------------------

RESPONSE_COLUMNS: tuple[str, ...] = (
    "identifier_value",
    "language",
    "repeat",
    "response",
    "finish_reason",
    "error",
    "value",
    "unit",
    "metric_value",
    "status",
    "refusal",
    "detail",
    "excluded",
    "model_returned",
    "system_fingerprint",
    "latency_s",
)


def live_retry_policy(timeout_s: float) -> ep_layer.RetryPolicy:
    """Interactive policy: at most two attempts and short back-off (a visitor is waiting)."""
    return ep_layer.RetryPolicy(max_attempts=2, base_delay_s=0.5, max_delay_s=4.0,
                       retry_after_cap_s=10.0, timeout_s=timeout_s)


def _parse(task: str, text: str | None, finish_reason: str | None) -> dict[str, Any]:
    """Parse one answer; ``value`` is set only when the answer would enter the metrics
    (`rupeebias_core.parsing.metric_exclusion`, the rule `metrics` uses: no USD amount is
    compared with a rupee one). ``excluded`` says why not."""
    from rupeebias_core.parsing import metric_exclusion, parse

    if text is None:
        return {"value": None, "unit": None, "status": "no_response", "refusal": False,
                "detail": None, "excluded": "no_response"}
    res = parse(task, text, finish_reason=finish_reason)
    excluded = metric_exclusion(res)
    return {
        "value": float(res.value) if excluded is None and res.value is not None else None,
        "unit": res.unit,
        "status": str(res.status),
        "refusal": bool(res.refusal),
        "detail": res.detail,
        "excluded": excluded,
    }


async def _send_all(
    client: Any,
    spec: AnySpec,
    model: str,
    plans: list[PlannedPrompt],
    *,
    policy: Any,
    concurrency: int,
    deadline_s: float,
    on_result: Callable[[int, int], None] | None,
    may_retry: Callable[[], bool] | None = None,
) -> list[tuple[PlannedPrompt, int, Any]]:
    from precompute.endpoint import ChatRequest, ChatResult, complete

    sem = asyncio.Semaphore(max(1, concurrency))
    jobs = [(p, r) for r in range(spec.repeats) for p in plans]
    done_count = 0

    async def one(plan: PlannedPrompt, rep: int) -> Any:
        nonlocal done_count
        request = ChatRequest.chat(model, plan.user, plan.system or None,
                                   temperature=spec.temperature, max_tokens=spec.max_tokens)
        result = await complete(client, request, policy, semaphore=sem, may_retry=may_retry)
        done_count += 1
        if on_result is not None:
            try:
                on_result(done_count, len(jobs))
            except Exception:  # noqa: BLE001 - a progress bar must never break a run
                pass
        return result

    tasks = [asyncio.create_task(one(p, r)) for p, r in jobs]
    done, pending = await asyncio.wait(tasks, timeout=deadline_s)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    out: list[tuple[PlannedPrompt, int, Any]] = []
    for (plan, rep), t in zip(jobs, tasks, strict=True):
        if t in done and not t.cancelled() and t.exception() is None:
            out.append((plan, rep, t.result()))
        else:
            err = (f"not completed within the run deadline of {deadline_s:g} s"
                   if t in pending else f"internal error: {type(t.exception()).__name__}")
            out.append((plan, rep, ChatResult(content=None, finish_reason="error", error=err,
                                              error_kind="deadline")))
    return out


@dataclass
class ProbeResult:
    """What a run produced; holds no base URL and no key (safe to keep in session_state)."""

    spec: AnySpec
    model: str
    endpoint_name: str
    endpoint_label: str
    prompts: list[PlannedPrompt]
    responses: pd.DataFrame
    pairs: pd.DataFrame
    summary: dict[str, Any]
    started_at: str = ""
    elapsed_s: float = 0.0

    def to_json(self) -> str:
        """A downloadable record of the run (prompts, responses, parsed values, Δ%)."""
        return json.dumps(
            {
                "spec": asdict(self.spec),
                "model": self.model,
                "endpoint": self.endpoint_label,
                "started_at": self.started_at,
                "elapsed_s": round(self.elapsed_s, 3),
                "prompts": [asdict(p) for p in self.prompts],
                "responses": json.loads(self.responses.to_json(orient="records")),
                "pairs": json.loads(self.pairs.drop(columns=["deltas"], errors="ignore")
                                    .to_json(orient="records")),
                "summary": self.summary,
            },
            ensure_ascii=False,
            indent=1,
            default=str,
        )


#: What a public visitor sees instead of an upstream error text, by ``error_kind``: error
#: texts name hosts, ports and addresses (``Cannot connect to host vllm:8000``), and telling
#: "refused" from "timed out" maps the operator's network.
_PUBLIC_ERRORS: Mapping[str, str] = {
    "timeout": "the endpoint did not answer in time",
    "connection": "the endpoint could not be reached",
    "deadline": "not completed within the run deadline",
    "malformed": "the endpoint sent an answer that is not a chat completion",
    "empty_content": "the endpoint answered with no text",
}


def public_error(res: Any) -> str | None:
    """The error text a public visitor may see: the kind and HTTP status, never the
    upstream's own words (which can hold internal addresses)."""
    if res.error is None:
        return None
    if res.error_kind == "http_status" and res.http_status:
        text = f"the endpoint answered HTTP {int(res.http_status)}"
    else:
        text = _PUBLIC_ERRORS.get(str(res.error_kind), "the request failed")
    if "rate limit reached" in res.error:
        text += " (not retried: rate limit reached)"
    return text


def _text_field(value: object, secrets: Sequence[str | None]) -> str | None:
    return redact_secrets(value, secrets) if isinstance(value, str) else None


def assemble_responses(spec: AnySpec, raw: list[tuple[PlannedPrompt, int, Any]],
                       secrets: Sequence[str | None], *,
                       public: bool = False) -> pd.DataFrame:
    """One row per (identifier, repeat): parse outcome and metric value, with *every* text
    field of the answer scrubbed (an upstream can echo a key into any of them), and in public
    mode generic error texts (:func:`public_error`)."""
    rows = []
    for plan, rep, res in raw:
        text = _text_field(res.content, secrets)
        finish = _text_field(res.finish_reason, secrets)
        error = public_error(res) if public else _text_field(res.error, secrets)
        parsed: dict[str, Any]
        if res.status == "error":
            parsed = {"value": None, "unit": None, "status": "request_error", "refusal": False,
                      "detail": None, "excluded": "request_error"}
        else:
            parsed = _parse(spec.task, text, finish)
        rows.append(
            {
                "identifier_value": plan.identifier_value,
                "language": plan.language,
                "repeat": rep + 1,
                "response": text,
                "finish_reason": finish,
                "error": error,
                **parsed,
                "metric_value": metric_value(parsed["value"]),
                "model_returned": _text_field(res.model_returned, secrets),
                "system_fingerprint": _text_field(res.system_fingerprint, secrets),
                "latency_s": res.latency_s,
            }
        )
    order = {v: i for i, v in enumerate(spec.identifiers)}
    frame = pd.DataFrame(rows, columns=list(RESPONSE_COLUMNS))
    langs = {v: i for i, v in enumerate(spec.languages)}
    frame["_l"] = frame["language"].map(langs)
    frame["_o"] = frame["identifier_value"].map(order)
    frame = frame.sort_values(["_l", "_o", "repeat"], kind="stable").drop(columns=["_l", "_o"])
    return frame.reset_index(drop=True)


@dataclass(frozen=True)
class RepeatCI:
    """Mean Δ% over repeats with a 95 % Student-t interval (``None`` bounds when n < 2)."""

    mean: float
    lo: float | None
    hi: float | None
    n: int
    sd: float | None

    @property
    def degenerate(self) -> bool:
        """All repeats gave the same Δ (typical at temperature 0): a zero-width interval."""
        return self.n >= 2 and self.sd == 0.0


def t_interval(values: Sequence[float], confidence: float = 0.95, *,
               clip: bool = True) -> RepeatCI:
    """Mean and Student-t CI over per-repeat values (NaN dropped).

    For Δ% (``clip``) the interval is clipped to [0, 200] when every value lies there (Δ% of
    two positive answers cannot leave that range). Signed differences are never clipped
    (``clip=False``).
    """
    from scipy import stats

    arr = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = int(arr.size)
    if n == 0:
        return RepeatCI(math.nan, None, None, 0, None)
    mean = float(arr.mean())
    if n == 1:
        return RepeatCI(mean, None, None, 1, None)
    sd = float(arr.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1)) * sd / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if clip and bool((arr >= 0).all() and (arr <= 200).all()):
        lo, hi = max(lo, 0.0), min(hi, 200.0)
    return RepeatCI(mean, lo, hi, n, sd)


PAIR_COLUMNS: tuple[str, ...] = (
    "identifier_a",
    "identifier_b",
    "value_a",
    "value_b",
    "delta",
    "delta_lo",
    "delta_hi",
    "n_repeats",
    "identical_repeats",
    "deltas",
    "language",
    "diff",
    "diff_lo",
    "diff_hi",
)


def pair_table(spec: AnySpec, responses: pd.DataFrame) -> pd.DataFrame:
    """Δ% and the signed difference for every unordered pair of identifiers (per language).

    Repeat r of identifier A is paired with repeat r of B (repeats are exchangeable draws), so
    each pair yields up to n per-repeat values; ``delta`` is the mean per-repeat Δ% (the
    paper's Δ% is a mean over response pairs) with a 95 % t interval ``delta_lo``/``delta_hi``;
    ``diff`` is the mean signed difference B − A of the metric values (₹, or percentage points
    for % answers) with its t interval ``diff_lo``/``diff_hi``.
    ``value_a``/``value_b`` are the mean metric values over usable repeats.
    """
    rows = []
    lang_col = responses["language"] if "language" in responses else pd.Series(
        [spec.languages[0]] * len(responses), index=responses.index)
    by_id: dict[tuple[str, str], pd.DataFrame] = {
        (str(lang), str(v)): g.set_index("repeat")
        for (lang, v), g in responses.groupby([lang_col, "identifier_value"], sort=False)
    }
    for lang in spec.languages:
        for a, b in itertools.combinations(spec.identifiers, 2):
            ga, gb = by_id.get((lang, a)), by_id.get((lang, b))
            deltas: list[float] = []
            diffs: list[float] = []
            identical = True
            for rep in range(1, spec.repeats + 1):
                va = _metric_at(ga, rep)
                vb = _metric_at(gb, rep)
                d = relative_gap(va, vb)
                if math.isfinite(d):
                    deltas.append(d)
                if va is not None and vb is not None and math.isfinite(d):
                    diffs.append(vb - va)
            for g in (ga, gb):
                if g is not None and g["response"].nunique(dropna=False) > 1:
                    identical = False
            ci = t_interval(deltas)
            dci = t_interval(diffs, clip=False)
            rows.append(
                {
                    "identifier_a": a,
                    "identifier_b": b,
                    "value_a": _mean_metric(ga),
                    "value_b": _mean_metric(gb),
                    "delta": ci.mean if ci.n else math.nan,
                    "delta_lo": ci.lo,
                    "delta_hi": ci.hi,
                    "n_repeats": ci.n,
                    "identical_repeats": bool(identical and spec.repeats > 1),
                    "deltas": deltas,
                    "language": lang,
                    "diff": dci.mean if dci.n else math.nan,
                    "diff_lo": dci.lo,
                    "diff_hi": dci.hi,
                }
            )
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def _metric_at(group: pd.DataFrame | None, rep: int) -> float | None:
    if group is None or rep not in group.index:
        return None
    v = group.at[rep, "metric_value"]
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _mean_metric(group: pd.DataFrame | None) -> float | None:
    if group is None:
        return None
    vals = pd.to_numeric(group["metric_value"], errors="coerce").dropna()
    return float(vals.mean()) if len(vals) else None


def summarise(spec: AnySpec, responses: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, Any]:
    """Run-level numbers: parse rate, mean Δ% over pairs, pairs above 10 %."""
    n = len(responses)
    parsed = int(pd.to_numeric(responses["metric_value"], errors="coerce").notna().sum())
    errors = int((responses["status"] == "request_error").sum())
    finite = pairs["delta"].dropna() if len(pairs) else pd.Series(dtype=float)
    all_deltas = [d for ds in pairs.get("deltas", []) for d in ds]
    return {
        "n_requests": n,
        "n_parsed": parsed,
        "n_errors": errors,
        "n_pairs": int(len(pairs)),
        "n_pairs_with_delta": int(finite.size),
        "mean_delta": float(np.mean(all_deltas)) if all_deltas else None,
        "pairs_over_10": int((finite > 10.0).sum()),
        "identical_repeats": bool(len(pairs) and pairs["identical_repeats"].all()),
        "temperature": spec.temperature,
    }


def run_probe(
    base_url: str,
    api_key: str,
    spec: AnySpec,
    model: str,
    *,
    endpoint_name: str,
    endpoint_label: str,
    timeout_s: float = 60.0,
    concurrency: int = 4,
    deadline_s: float | None = None,
    policy: Any = None,
    on_result: Callable[[int, int], None] | None = None,
    scrub: Sequence[str | None] = (),
    may_retry: Callable[[], bool] | None = None,
    public: bool = False,
) -> ProbeResult:
    """Send every prompt × repeat concurrently, parse, and compute Δ% per pair.

    Synchronous (``asyncio.run`` in the calling thread, which is how a Streamlit script thread
    can use the async client). ``base_url`` and ``api_key`` live only in this call; ``scrub``
    lists extra strings (a typed base URL) removed from every returned text. ``may_retry``
    charges each retry to the rate limits (:class:`RetryCharge`); ``public`` replaces error
    texts with :func:`public_error`.
    """
    from precompute.endpoint import make_client

    plans = plan_prompts(spec)
    policy = policy or live_retry_policy(timeout_s)
    deadline = deadline_s if deadline_s is not None else max(60.0, timeout_s * 3)
    secrets = tuple(x for x in (api_key, *scrub) if x and x not in ep_layer.PLACEHOLDER_KEYS)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.perf_counter()

    async def main() -> list[tuple[PlannedPrompt, int, Any]]:
        client = make_client(base_url, api_key, timeout_s=timeout_s,
                             max_connections=max(1, concurrency))
        try:
            return await _send_all(client, spec, model, plans, policy=policy,
                                   concurrency=concurrency, deadline_s=deadline,
                                   on_result=on_result, may_retry=may_retry)
        finally:
            await client.close()

    raw = asyncio.run(main())
    responses = assemble_responses(spec, raw, secrets, public=public)
    pairs = pair_table(spec, responses)
    return ProbeResult(
        spec=spec,
        model=model,
        endpoint_name=endpoint_name,
        endpoint_label=endpoint_label,
        prompts=plans,
        responses=responses,
        pairs=pairs,
        summary=summarise(spec, responses, pairs),
        started_at=started,
        elapsed_s=time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------------------------
# Comparison with the precomputed result
# --------------------------------------------------------------------------------------------


def compare_with_precomputed(result: ProbeResult, slot: pd.DataFrame | None) -> pd.DataFrame:
    """Live vs precomputed Δ% for the run's pairs. ``slot`` is
    ``explorer.data.slot_rows(..., method="corrected")`` (identifier_value, value,
    metric_value, status, response), possibly empty or None: the stored answers read by the
    parser and exclusion rule the live run uses, amounts compared as the live ones are, so
    both sides mean the same thing."""
    cols = ["identifier_a", "identifier_b", "live_delta", "precomputed_value_a",
            "precomputed_value_b", "precomputed_delta", "precomputed_response_a",
            "precomputed_response_b"]
    if slot is None or len(slot) == 0 or "identifier_value" not in slot:
        return pd.DataFrame(columns=cols)
    slot = slot.drop_duplicates("identifier_value").set_index("identifier_value")
    metric_col = "metric_value" if "metric_value" in slot else "value"

    def get(ident: str, col: str) -> Any:
        if ident not in slot.index or col not in slot:
            return None
        v = slot.at[ident, col]
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def stored(ident: str) -> float | None:
        v = get(ident, metric_col)
        return None if v is None else float(v)

    rows = []
    for p in result.pairs.itertuples(index=False):
        va, vb = stored(p.identifier_a), stored(p.identifier_b)
        rows.append(
            {
                "identifier_a": p.identifier_a,
                "identifier_b": p.identifier_b,
                "live_delta": p.delta,
                "precomputed_value_a": va,
                "precomputed_value_b": vb,
                "precomputed_delta": relative_gap(
                    None if va is None else float(va), None if vb is None else float(vb)
                ),
                "precomputed_response_a": get(p.identifier_a, "response"),
                "precomputed_response_b": get(p.identifier_b, "response"),
            }
        )
    return pd.DataFrame(rows, columns=cols)
