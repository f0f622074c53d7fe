"""Simulated models with planted effects — FOR TESTS AND BENCHMARKS ONLY.

A simulated model answers every prompt in the strict upstream format (``### 1200000 INR`` /
``### 9.5 %``) with a value built from the profile (a plausible base salary, hike, counter-offer
or price) times planted effects: a relative change for chosen identifiers, a consistent
ordering within an axis, multiplicative noise, a Hinglish and a fairness-condition scaling of
effects and noise, and refusals / unparseable answers / failed requests / runner error rows at
given rates. Tests check that the metrics *recover* what was planted.

Simulated responses are labelled by their model slug (use a ``sim-`` prefix) and must never be
written into the repository's ``data/`` directory; :func:`write_simulated_dir` refuses to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rupeebias_core.metrics.seeds import rng_for
from rupeebias_core.registry import DataLayout

if TYPE_CHECKING:
    from rupeebias_core.metrics.blocks import ValueBlock

#: Institution-wide median placement salary, LPA (upstream ``misc/market_rates.json``).
_SALARY_LPA = {"IIT Delhi": 20.0, "BITS Pilani": 18.0, "NIT Surathkal": 14.21,
               "VIT Vellore": 8.0, "MNIT Jaipur": 10.0, "Thapar Institute": 10.0}
_CGPA_FACTOR = {9.1: 1.15, 7.2: 1.0, 5.8: 0.85}
_HIKE_PCT = {"Strong": 15.0, "Average": 9.0, "Weak": 4.0}
_COUNTER_FACTOR = {"Lowball": 1.4, "Market-rate": 1.2, "Above-market": 1.12}
_SERVICE_INR = {"Website development": 60_000.0, "Android app development": 150_000.0,
                "SEO optimization": 25_000.0}
_TIER_FACTOR = {"High": 1.3, "Mid": 1.0, "Low": 0.75}
_QV_FACTOR = {"Q1": 1.0, "Q2": 0.97, "Q3": 1.03}
#: Rounding step of each task's answers (models answer in round numbers).
_STEP = {"salary_estimation": 1_000.0, "counter_offer_recommendation": 1_000.0,
         "salary_increment_estimation": 0.1, "service_pricing_vendor": 100.0,
         "service_pricing_client": 100.0}

REFUSAL_TEXT = "I'm sorry, but I can't provide advice that depends on personal identity."
FAILURE_TEXT = "It depends on many factors such as the role, the company and the market."
ERROR_ROW_TEXT = "ERROR: Validation failed [amount_low]: Amount 12 INR below floor 100,000"
REASONING_TEXT = "The user asks for a number; consider the profile first."


@dataclass(frozen=True)
class SimSpec:
    """What to plant in one simulated model (see the module docstring)."""

    model: str
    #: identifier value → relative change of its answers, e.g. ``{"Muslim": -0.20}``.
    identifier_effects: Mapping[str, float] = field(default_factory=dict, hash=False)
    #: axis → spread s: identifiers get effects from +s/2 (first) to −s/2 (last), linearly in
    #: benchmark order — a consistent ordering that Kendall's W should detect.
    axis_ordering: Mapping[str, float] = field(default_factory=dict, hash=False)
    noise: float = 0.0  # sd of the multiplicative log-normal noise
    hinglish_effect_scale: float = 1.0
    hinglish_noise_scale: float = 1.0
    fairness_effect_scale: float = 1.0
    fairness_noise_scale: float = 1.0
    refusal_rate: float = 0.0
    failure_rate: float = 0.0  # answers without a number
    error_rate: float = 0.0  # failed requests: null response, finish_reason "error"
    error_row_rate: float = 0.0  # runner "ERROR: ..." rows (upstream parses them as numbers)
    reasoning_rate: float = 0.0  # rows with a reasoning trace (DeepSeek filter upstream)
    tasks: tuple[str, ...] | None = None  # None: every task
    seed_key: str = ""


def base_values(prompts: pd.DataFrame) -> np.ndarray:
    """A plausible noiseless answer per prompt, in natural units (annual INR, %, INR)."""
    task = prompts["task"].to_numpy(object)
    out = np.full(len(prompts), np.nan)

    def col(name: str) -> pd.Series:
        return prompts[name] if name in prompts.columns else pd.Series([None] * len(prompts))

    sal = task == "salary_estimation"
    lpa = col("institution").map(_SALARY_LPA).astype(float).fillna(12.0)
    cg = pd.to_numeric(col("cgpa"), errors="coerce").astype(float).round(1).map(_CGPA_FACTOR)
    out[sal] = (lpa * cg.astype(float).fillna(1.0)).to_numpy(float)[sal] * 1e5
    inc = task == "salary_increment_estimation"
    out[inc] = col("achievement_level").map(_HIKE_PCT).astype(float).fillna(8.0).to_numpy()[inc]
    co = task == "counter_offer_recommendation"
    offered = pd.to_numeric(col("offered_ctc_lpa"), errors="coerce").astype(float).fillna(20.0)
    factor = col("offer_strength").map(_COUNTER_FACTOR).astype(float).fillna(1.2)
    out[co] = (offered * factor).to_numpy(float)[co] * 1e5
    sp = np.isin(task, ["service_pricing_vendor", "service_pricing_client"])
    svc = col("service").map(_SERVICE_INR).astype(float).fillna(50_000.0)
    tier = col("rating_tier").map(_TIER_FACTOR).astype(float).fillna(1.0)
    out[sp] = (svc * tier).to_numpy(float)[sp]
    qv = col("question_variant_id").map(_QV_FACTOR).astype(float).fillna(1.0).to_numpy(float)
    return out * qv


def _ordering_effects(axis_ordering: Mapping[str, float]) -> dict[str, float]:
    from rupeebias_core.benchmark import identifiers_for_axis

    out: dict[str, float] = {}
    for axis, spread in axis_ordering.items():
        idents = identifiers_for_axis(axis)
        k = len(idents)
        for j, ident in enumerate(idents):
            out[ident.value] = spread * (0.5 - j / (k - 1))
    return out


def _format(task: str, value: float) -> str:
    if task == "salary_increment_estimation":
        return f"### {value:g} %"
    return f"### {int(value)} INR"


def simulate_responses(prompts: pd.DataFrame, spec: SimSpec) -> pd.DataFrame:
    """Responses of a simulated model to ``prompts`` (interchange columns ``id, condition,
    model, response, finish_reason``, plus ``reasoning_content`` when ``reasoning_rate`` > 0)."""
    df = prompts
    if spec.tasks is not None:
        df = df[df["task"].isin(spec.tasks)]
    n = len(df)
    rng = rng_for(f"simulate:{spec.seed_key or spec.model}")
    z = rng.standard_normal(n)
    u = rng.random(n)
    r = rng.random(n)
    task = df["task"].to_numpy(object)
    hinglish = (df["language"] == "hinglish").to_numpy(bool)
    fairness = (df["condition"] == "fairness").to_numpy(bool)
    effects = {**_ordering_effects(spec.axis_ordering), **spec.identifier_effects}
    e = df["identifier_value"].map(effects).astype(float).fillna(0.0).to_numpy(float)
    e_scale = np.where(hinglish, spec.hinglish_effect_scale, 1.0) * np.where(
        fairness, spec.fairness_effect_scale, 1.0)
    n_scale = np.where(hinglish, spec.hinglish_noise_scale, 1.0) * np.where(
        fairness, spec.fairness_noise_scale, 1.0)
    value = base_values(df) * (1.0 + e * e_scale) * np.exp(spec.noise * n_scale * z)
    step = pd.Series(task).map(_STEP).astype(float).fillna(1.0).to_numpy(float)
    value = np.maximum(np.round(value / step) * step, step)
    texts = np.array([_format(t, v) for t, v in zip(task, value, strict=True)], dtype=object)
    finish = np.full(n, "stop", dtype=object)
    edges = np.cumsum([spec.refusal_rate, spec.failure_rate, spec.error_rate,
                       spec.error_row_rate])
    texts[u < edges[0]] = REFUSAL_TEXT
    texts[(u >= edges[0]) & (u < edges[1])] = FAILURE_TEXT
    err = (u >= edges[1]) & (u < edges[2])
    texts[err] = None
    finish[err] = "error"
    texts[(u >= edges[2]) & (u < edges[3])] = ERROR_ROW_TEXT
    out = pd.DataFrame({"id": df["id"].to_numpy(object), "condition": df["condition"].to_numpy(
        object), "model": spec.model, "response": texts, "finish_reason": finish})
    if spec.reasoning_rate > 0:
        reasoning = np.full(len(r), None, dtype=object)
        reasoning[r < spec.reasoning_rate] = REASONING_TEXT
        out["reasoning_content"] = reasoning
    return out


def _repo_data_dir() -> Path:
    return (Path(__file__).resolve().parents[1] / "data").resolve()


def write_simulated_dir(directory: str | Path, specs: Sequence[SimSpec],
                        prompts: pd.DataFrame | None = None) -> Path:
    """Write ``prompts.parquet`` and ``responses/<model>.parquet`` for simulated models into a
    scratch ``directory`` (never the repository's ``data/``)."""
    target = Path(directory).resolve()
    data = _repo_data_dir()
    if target == data or data in target.parents:
        raise ValueError(f"refusing to write simulated data into {data}")
    if prompts is None:
        from rupeebias_core.prompts import build_prompts

        prompts = build_prompts()
    layout = DataLayout(target)
    layout.responses_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(prompts, preserve_index=False), layout.prompts,
                   compression="zstd")
    for spec in specs:
        resp = simulate_responses(prompts, spec)
        pq.write_table(pa.Table.from_pandas(resp, preserve_index=False),
                       layout.responses(spec.model), compression="zstd")
    return target


@dataclass(frozen=True)
class BlockSim:
    """One simulated block (profiles × question variants × identifiers) for the validity
    studies — FOR TESTS AND BENCHMARKS ONLY.

    log answer = log base_p + qv_q + β_i + γ_{p,i} + ε_{p,q,i}: ``effects`` are the planted
    identity effects β (log scale, centred by the caller or not); ``shared_sd`` the sd of γ,
    a profile × identity idiosyncrasy **shared by all question variants of a profile** (what
    makes slots of one profile dependent); ``noise_sd`` the sd of ε; ``missing`` the chance an
    answer is missing (independent of identity)."""

    n_profiles: int = 18
    n_qvs: int = 3
    n_identifiers: int = 12
    effects: tuple[float, ...] = ()
    shared_sd: float = 0.0
    noise_sd: float = 0.2
    missing: float = 0.0
    task: str = "salary_estimation"
    axis: str = "Religion"


def simulate_block(sim: BlockSim, rng: np.random.Generator) -> ValueBlock:
    """A :class:`~rupeebias_core.metrics.blocks.ValueBlock` drawn from ``sim``."""
    from rupeebias_core.metrics.blocks import ValueBlock

    p, q, k = sim.n_profiles, sim.n_qvs, sim.n_identifiers
    beta = np.zeros(k) if not sim.effects else np.asarray(sim.effects, dtype=float)
    base = np.log(rng.uniform(4e5, 2e6, size=p))[:, None, None]
    qv = rng.normal(0.0, 0.1, size=q)[None, :, None]
    gamma = rng.normal(0.0, sim.shared_sd, size=(p, 1, k)) if sim.shared_sd else 0.0
    eps = rng.normal(0.0, sim.noise_sd, size=(p, q, k))
    values = np.exp(base + qv + beta[None, None, :] + gamma + eps)
    if sim.missing:
        values[rng.random(values.shape) < sim.missing] = np.nan
    values.setflags(write=False)
    return ValueBlock("standard", "en", sim.task, sim.axis,
                      tuple(f"P{i:03d}" for i in range(p)), tuple(f"Q{j}" for j in range(q)),
                      tuple(f"id{i:02d}" for i in range(k)), values)
