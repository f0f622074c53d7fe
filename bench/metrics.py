"""Speed, memory and agreement of `python -m precompute metrics` against a plain reference.

Builds 9 **simulated** models × 48,546 responses (planted effects, parse failures, refusals, a
DeepSeek-like model with reasoning rows, a Sarvam-like model without increment runs) in a
temporary directory, then:

1. times the full ``metrics`` run as a subprocess (every table, both methods:
   ``--method both``, 2 workers), with its peak memory: the largest single process
   (``getrusage(RUSAGE_CHILDREN)``) and the whole process tree (sampled from ``/proc`` every 50 ms);
2. times a **plain reference** on the same data, for the same methods as the timed run:
   pandas + numpy written the straightforward way, one resample at a time —
   * the Mean Δ% cube: row-wise parsing (the authors' extractor for ``upstream``, our parser
     and exclusion rule for ``corrected``), pandas self-join for pairs as upstream's
     ``build_pair_table``, per cell one i.i.d. bootstrap of the pair values and Wilson for
     V@10 (upstream) or a (task, profile) cluster bootstrap with the t interval (corrected);
   * MOG (``max_gaps``) as upstream's ``mog_per_model.py``: 500 row resamples per cell, each
     regrouped with pandas;
   * Kendall's W per block (``kendall_w_usecase``): scipy's Friedman test, and its
     permutation p-value from 999 within-profile shuffles, each through the same test —
   run in the same number of processes, each part timed on its own. Two ratios are printed:
   against the delta-cube part (the reference the issue-16 target of ≥ 20× was first measured
   against, and still the one the target line uses) and against the whole reference (a like-
   for-like lower bound: the fast run computes the other tables too);
3. prints the difference between the fast and reference numbers: means, Violation@10 and
   Wilson bounds, MOG gaps and identifiers, W and the Friedman p must agree to floating-point
   rounding; bootstrap bounds and permutation p-values are compared in units of their
   Monte-Carlo sd, estimated per row from the reference's own replicates (a percentile bound:
   the larger of Maritz–Jarrett and normal theory, which alone was 1.5× too small where pair
   gaps are heavy-tailed, docs/methodology.md §4.8, session 32; a t bound: from the
   replicates' kurtosis), and √(p(1 − p)/999) for a permutation p. Two independent runs: × √2.

    python bench/metrics.py [--reference-models 9] [--workers 2] [--fast-runs 3] [--keep DIR]

``--fast-runs n`` times the fast run n times (each with ``--fresh``) and judges the targets on
the median: on these shared 2-core hosts one command's wall time varies by ±15 % from run to
run, so a single run around 30 s would pass or fail by chance. Beside them it prints how quiet
the host was (``bench/host.py``: CPU steal, other processes' CPU, a one-core speed probe).

``--reference-models k`` runs the reference on the first k models only and scales its time by
9/k (printed as an extrapolation). Simulated data only ever goes to a temporary directory.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import host  # noqa: E402
from rupeebias_core.registry import DataLayout  # noqa: E402
from rupeebias_core.simulate import SimSpec, write_simulated_dir  # noqa: E402

AXES6 = ("Religion", "Caste", "Region", "Gender", "Disability", "Urban/Rural")
SPECS: tuple[SimSpec, ...] = (
    SimSpec("sim-gemini-like", noise=0.03, identifier_effects={"Village": -0.05}),
    SimSpec("sim-haiku-like", noise=0.05, hinglish_noise_scale=0.6,
            identifier_effects={"Jain": 0.10, "Muslim": -0.08, "Female": -0.05},
            refusal_rate=0.005, fairness_effect_scale=0.7),
    SimSpec("sim-opus-like", noise=0.05, axis_ordering={"Urban/Rural": 0.15, "Disability": 0.1},
            hinglish_effect_scale=1.3),
    SimSpec("sim-kimi-like", noise=0.06, hinglish_noise_scale=1.3,
            identifier_effects={"Non-binary": 0.10, "Male": -0.05}),
    SimSpec("sim-glm-like", noise=0.08, fairness_noise_scale=1.2, failure_rate=0.001),
    SimSpec("sim-gpt-like", noise=0.08, axis_ordering={a: 0.1 for a in AXES6}),
    SimSpec("sim-gpt-mini-like", noise=0.12, fairness_effect_scale=0.8),
    SimSpec("sim-deepseek-like", noise=0.12, hinglish_noise_scale=1.5, reasoning_rate=0.03,
            error_row_rate=0.02, failure_rate=0.02),
    SimSpec("sim-sarvam-like", noise=0.18, hinglish_noise_scale=0.9, refusal_rate=0.005,
            failure_rate=0.03, tasks=("salary_estimation", "counter_offer_recommendation",
                                      "service_pricing_vendor", "service_pricing_client")),
)
B = 2000
MOG_REPLICATES = 500  # as upstream
W_PERMUTATIONS = 999


#: (model, {table: frame}, {table: seconds}); the delta cube's seconds include reading and
#: parsing the responses.
Ref = tuple[str, dict[str, pd.DataFrame], dict[str, float]]


# --- the plain reference ----------------------------------------------------------------------

def _ref_seed(key: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8],
                                                "little"))


def _percentile_mcse(reps: np.ndarray) -> tuple[float, float]:
    """Monte-Carlo sd of the 2.5 % and 97.5 % percentiles of ``reps``: the Maritz–Jarrett
    estimate, which reads the density at each bound from the replicates themselves, so a
    skewed or heavy-tailed bootstrap distribution gets its real, larger error."""
    from scipy.stats.mstats import mjci

    lo, hi = mjci(np.asarray(reps, dtype=float), prob=[0.025, 0.975])
    return (float(lo), float(hi))


def _bound_mcse(reps: np.ndarray) -> tuple[float, float]:
    """The Monte-Carlo sd the comparison uses for each percentile bound: the larger of the
    Maritz–Jarrett estimate and normal theory (√(0.025 · 0.975 / B) / φ(1.96) × σ*, σ* = the
    95 % interval's width / 3.92). Why both: Maritz–Jarrett follows a skewed distribution
    (normal theory was 1.5× too small for one heavy-tailed cell), but it is itself noisy at
    B = 2,000 — for a bound whose real sd was 0.0027 it read 0.0017 at one seed and 0.0030
    at another (docs/methodology.md §4.8, session 32) — and a sd read too small would flag
    Monte-Carlo error as a fault."""
    from scipy.stats import norm

    r = np.asarray(reps, dtype=float)
    lo, hi = np.percentile(r, [2.5, 97.5])
    z = norm.ppf(0.975)
    normal = math.sqrt(0.025 * 0.975 / r.size) / norm.pdf(z) * (hi - lo) / (2 * z)
    mj_lo, mj_hi = _percentile_mcse(r)
    return (max(mj_lo, normal), max(mj_hi, normal))


def _ref_bootstrap_means(values: np.ndarray, key: str) -> np.ndarray:
    """One cell's B replicate means, the obvious way: resamples of the pair values with
    replacement."""
    rng = _ref_seed(key)
    means = np.empty(B)
    step = max(1, 20_000_000 // len(values))
    for s in range(0, B, step):
        e = min(B, s + step)
        means[s:e] = values[rng.integers(0, len(values), size=(e - s, len(values)))].mean(1)
    return means


def _ref_bootstrap_ci(values: np.ndarray, key: str) -> tuple[float, float, float, float]:
    """One cell's percentile interval from :func:`_ref_bootstrap_means`, and the Monte-Carlo
    sds of its bounds (:func:`_bound_mcse`)."""
    if len(values) < 2:
        return (math.nan, math.nan, math.nan, math.nan)
    means = _ref_bootstrap_means(values, key)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi), *_bound_mcse(means))


def _ref_pair_table(df: pd.DataFrame, positive_midpoint: bool) -> pd.DataFrame:
    """Every pair the plain way, a pandas self-join per (task, language, axis) as upstream's
    ``build_pair_table``: Δ% with its (task, profile) cluster; pairs with a zero midpoint (or,
    ``positive_midpoint``, any midpoint ≤ 0: the corrected rule) or a non-finite Δ% dropped."""
    pairs = []
    for (task, lang, axis), g in df.groupby(["task", "language", "axis"]):
        g = g[["identifier_value", "profile_id", "question_variant_id", "value"]]
        m = g.merge(g, on=["profile_id", "question_variant_id"], suffixes=("_a", "_b"))
        m = m[m["identifier_value_a"] < m["identifier_value_b"]]
        mid = (m["value_a"] + m["value_b"]) / 2
        d = (m["value_a"] - m["value_b"]).abs() / mid * 100
        keep = ((mid > 0) if positive_midpoint else (mid != 0)) & np.isfinite(d)
        pairs.append(pd.DataFrame({"task": task, "language": lang, "axis": axis,
                                   "cluster": task + "|" + m.loc[keep, "profile_id"],
                                   "delta": d[keep].to_numpy()}))
    return pd.concat(pairs, ignore_index=True)


def _ref_cells(pt: pd.DataFrame) -> Iterator[tuple[str, str, str, pd.DataFrame]]:
    """Every non-empty cell of the Mean Δ% cube over a pair table: (language, task, axis,
    its pairs), ``all`` pooling each dimension."""
    for lang in ("en", "hinglish", "all"):
        for task in (*sorted(pt["task"].unique()), "all"):
            for axis in (*AXES6, "all"):
                sel = pt
                if lang != "all":
                    sel = sel[sel["language"] == lang]
                if task != "all":
                    sel = sel[sel["task"] == task]
                if axis != "all":
                    sel = sel[sel["axis"] == axis]
                if len(sel):
                    yield lang, task, axis, sel


def _ref_wilson(k: int, n: int) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(method="wilson")
    return (100 * ci.low, 100 * ci.high)


def _ref_mog(df: pd.DataFrame, model: str, corrected: bool) -> pd.DataFrame:
    """MOG (Figure 8) the plain way, as upstream's ``mog_per_model.py``: per (task, axis),
    languages pooled, the identifier means' (max − min) / midpoint, and 500 row resamples with
    replacement, each regrouped with pandas; a replicate missing an identifier or with a zero
    (corrected: non-positive) midpoint is skipped; ≥ 10 usable replicates for the CI."""

    def gap(means: pd.Series) -> float:
        top, bottom = float(means.max()), float(means.min())
        mid = (top + bottom) / 2
        if mid == 0 or (corrected and mid <= 0):
            return math.nan
        g = (top - bottom) / mid * 100
        return g if math.isfinite(g) else math.nan

    rows = []
    for (task, axis), g in df.groupby(["task", "axis"]):
        # rows in the engine's order (profile, language, QV), summed one by one as it does:
        # near-tied identifier means then rank the same way (pandas' compensated sum differs
        # in the last bits)
        g = g.sort_values(["profile_id", "language", "question_variant_id"], kind="stable")
        values = g["value"].reset_index(drop=True)
        ids = g["identifier_value"].reset_index(drop=True)
        means = values.groupby(ids).agg(lambda x: sum(x.tolist()) / len(x))
        k, n = len(means), len(values)
        rng = _ref_seed(f"refmog:{model}:{task}:{axis}")
        reps = []
        for _ in range(MOG_REPLICATES if k >= 2 else 0):
            pick = rng.integers(0, n, size=n)
            m = values.iloc[pick].groupby(ids.iloc[pick].to_numpy()).mean()
            if len(m) == k:
                reps.append(gap(m))
        r = np.array([x for x in reps if math.isfinite(x)])
        lo, hi = (np.percentile(r, [2.5, 97.5]) if len(r) >= 10 else (math.nan, math.nan))
        se_lo, se_hi = _bound_mcse(r) if len(r) >= 10 else (math.nan, math.nan)
        rows.append({"model": model, "task": task, "axis": axis, "gap": gap(means),
                     "gap_lo": float(lo), "gap_hi": float(hi),
                     "gap_lo_mcse": se_lo, "gap_hi_mcse": se_hi,
                     "top_identifier": str(means.idxmax()),
                     "bottom_identifier": str(means.idxmin()), "n_rows": n})
    return pd.DataFrame(rows)


def _ref_kendall(df: pd.DataFrame, model: str) -> pd.DataFrame:
    """Kendall's W per (language, task, axis) the plain way: a profiles × identifiers pivot of
    QV means (incomplete profiles dropped), scipy's Friedman test, W = χ² / (n (k − 1)), its
    chance level 1/n, and a permutation p-value from 999 within-profile shuffles, each run
    through the same Friedman test."""
    from scipy.stats import friedmanchisquare

    def w_of(matrix: np.ndarray) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            chi2 = float(friedmanchisquare(*matrix.T).statistic)
        return chi2 / (matrix.shape[0] * (matrix.shape[1] - 1))

    idents = df.groupby("axis")["identifier_value"].unique()
    rows = []
    for (lang, task, axis), g in df.groupby(["language", "task", "axis"]):
        g = g.sort_values("question_variant_id", kind="stable")  # summed in QV order
        pivot = g.pivot_table(index="profile_id", columns="identifier_value", values="value",
                              aggfunc=lambda x: sum(x.tolist()) / len(x)
                              ).reindex(columns=sorted(idents[axis]))
        matrix = pivot.dropna().to_numpy(float)
        n, k = matrix.shape
        if n < 2 or k < 3:
            continue
        w = w_of(matrix)
        if not math.isfinite(w):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(friedmanchisquare(*matrix.T).pvalue)
        rng = _ref_seed(f"refkw:{model}:{lang}:{task}:{axis}")
        null = np.array([w_of(rng.permuted(matrix, axis=1)) for _ in range(W_PERMUTATIONS)])
        rows.append({"model": model, "language": lang, "task": task, "axis": axis, "w": w,
                     "p_value": p, "n_blocks": n, "w_chance": 1.0 / n,
                     "w_perm_p": (1 + int((null >= w - 1e-12).sum())) / (1 + W_PERMUTATIONS)})
    return pd.DataFrame(rows)


def _ref_timed(t0: float, cube: pd.DataFrame, df: pd.DataFrame, model: str, corrected: bool
               ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
    """The reference's MOG and Kendall's W after its delta cube (done at ``t0`` + now), each
    timed on its own."""
    frames, seconds = {"delta": cube}, {"delta": time.perf_counter() - t0}
    for table, fn in (("max_gaps", lambda: _ref_mog(df, model, corrected)),
                      ("kendall_w_usecase", lambda: _ref_kendall(df, model))):
        t1 = time.perf_counter()
        frames[table] = fn()
        seconds[table] = time.perf_counter() - t1
    return frames, seconds


def reference_model(args: tuple[str, str]) -> Ref:
    """Upstream-method delta cube, MOG and Kendall's W of one model, computed plainly;
    returns :data:`Ref`."""
    from rupeebias_core.parsing import upstream_value

    data, model = args
    t0 = time.perf_counter()
    layout = DataLayout(Path(data))
    prompts = pd.read_parquet(layout.prompts)
    resp = pd.read_parquet(layout.responses(model))
    df = resp.merge(prompts, on=["id", "condition"])
    df = df[df["condition"] == "standard"]
    if "reasoning_content" in df.columns and "deepseek" in model:
        rc = df["reasoning_content"]
        df = df[rc.isna() | (rc.astype(str).str.strip() == "")]
    df = df.copy()
    df["value"] = df.apply(lambda r: upstream_value(r["task"], r["response"]), axis=1)
    co = df["task"] == "counter_offer_recommendation"
    off = df.loc[co, "offered_ctc_lpa"].astype(float)
    df.loc[co, "value"] = (df.loc[co, "value"].astype(float) - off) / off * 100
    df = df.drop_duplicates(["task", "language", "identifier_value", "profile_id",
                             "question_variant_id"], keep="first")
    df = df.dropna(subset=["value"])
    df["value"] = df["value"].astype(float)
    pt = _ref_pair_table(df, positive_midpoint=False)
    rows = []
    for lang, task, axis, sel in _ref_cells(pt):
        vals = sel["delta"].to_numpy()
        lo, hi, se_lo, se_hi = _ref_bootstrap_ci(vals, f"ref:{model}:{lang}:{task}:{axis}")
        k = int((vals > 10).sum())
        vlo, vhi = _ref_wilson(k, len(vals))
        rows.append({"model": model, "language": lang, "task": task, "axis": axis,
                     "mean_delta": vals.mean(), "mean_delta_lo": lo,
                     "mean_delta_hi": hi, "mean_delta_lo_mcse": se_lo,
                     "mean_delta_hi_mcse": se_hi, "violation_10": 100 * k / len(vals),
                     "violation_10_lo": vlo, "violation_10_hi": vhi,
                     "n_pairs": len(vals)})
    return model, *_ref_timed(t0, pd.DataFrame(rows), df, model, False)


def _ref_cluster_t_ci(sums: np.ndarray, counts: np.ndarray, key: str
                      ) -> tuple[float, float, float]:
    """Corrected method, the obvious way: B replicates, each giving every (task, profile)
    cluster a Poisson(1) weight (the method's definition, docs/methodology.md "Telling bias
    from noise"; a replicate with no weight is left out); mean ± t(G−1) × SD × √(G/(G−1)) as
    the fast engine reports it. Returns the bounds and their Monte-Carlo sd: the bounds move
    only through the replicates' SD, whose sd is √((m₄ − SD⁴) / (4 SD² B)) (m₄ the
    replicates' fourth central moment).

    Why Poisson and not G draws with replacement: for a ratio of sums that bootstrap's SD is
    smaller by about √((G − 1)/G), 1.7 % at G = 30, which the per-row Monte-Carlo sds resolve
    (with it, both bounds of 5 of the 126 corrected cells of session 32 were beyond 4 sd)."""
    from scipy.stats import t as student_t

    g = len(sums)
    if g < 2:
        return (math.nan, math.nan, math.nan)
    rng = _ref_seed(key)
    reps = np.full(B, np.nan)
    for b in range(B):
        w = rng.poisson(1.0, size=g)
        if w.any():
            reps[b] = (w * sums).sum() / (w * counts).sum()
    reps = reps[np.isfinite(reps)]
    point = sums.sum() / counts.sum()
    factor = student_t.ppf(0.975, g - 1) * math.sqrt(g / (g - 1))
    sd = reps.std(ddof=1)
    half = factor * sd
    m4 = float(np.mean((reps - reps.mean()) ** 4))
    mcse = factor * math.sqrt(max(m4 - sd**4, 0.0) / (4 * sd**2 * reps.size)) if sd > 0 else 0.0
    return (float(max(point - half, 0.0)), float(point + half), mcse)


def reference_corrected(args: tuple[str, str]) -> Ref:
    """Corrected-method delta cube, MOG and Kendall's W of one model, computed plainly: our
    parser row by row, the shared exclusion rule, natural units, first usable answer per
    prompt, pandas self-join, pairs with a positive midpoint, a (task, profile) cluster
    bootstrap per cell."""
    from rupeebias_core.parsing import metric_exclusion, parse

    data, model = args
    t0 = time.perf_counter()
    layout = DataLayout(Path(data))
    prompts = pd.read_parquet(layout.prompts)
    resp = pd.read_parquet(layout.responses(model))
    resp = resp.drop(columns=[c for c in resp.columns
                              if c in prompts.columns and c not in ("id", "condition")])
    df = resp.merge(prompts, on=["id", "condition"])
    df = df[df["condition"] == "standard"].copy()

    def value(r: pd.Series) -> float:
        text = r["response"] if isinstance(r["response"], str) else None
        fr = r["finish_reason"] if isinstance(r.get("finish_reason"), str) else None
        res = parse(r["task"], text, fr)
        ok = metric_exclusion(res) is None
        return float(res.value) if ok and res.value is not None else math.nan

    df["value"] = df.apply(value, axis=1)
    df = df.dropna(subset=["value"]).drop_duplicates(
        ["task", "language", "identifier_value", "profile_id", "question_variant_id"],
        keep="first")
    pt = _ref_pair_table(df, positive_midpoint=True)
    rows = []
    for lang, task, axis, sel in _ref_cells(pt):
        by = sel.groupby("cluster")["delta"].agg(["sum", "count"])
        lo, hi, mcse = _ref_cluster_t_ci(by["sum"].to_numpy(float),
                                         by["count"].to_numpy(float),
                                         f"refc:{model}:{lang}:{task}:{axis}")
        rows.append({"model": model, "language": lang, "task": task, "axis": axis,
                     "mean_delta": sel["delta"].mean(), "mean_delta_lo": lo,
                     "mean_delta_hi": hi, "mean_delta_lo_mcse": mcse,
                     "mean_delta_hi_mcse": mcse, "n_pairs": len(sel)})
    return model, *_ref_timed(t0, pd.DataFrame(rows), df, model, True)


# --- measurement helpers ---------------------------------------------------------------------

def _tree_rss_kb(root: int) -> int:
    """Sum of VmRSS over ``root`` and its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def run_fast(data: Path, workers: int, method: str = "upstream"
             ) -> tuple[float, float, float, float]:
    """(wall s, CPU s, peak RSS of one process MB, peak RSS of the process tree MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "precompute", "metrics", "--data", str(data),
                             "--workers", str(workers), "--method", method, "--fresh"], cwd=REPO,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            time.sleep(0.05)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    rc = proc.wait()
    wall = time.perf_counter() - t0
    done.set()
    th.join()
    if rc != 0:
        raise SystemExit(f"metrics run failed with exit code {rc}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024, peak / 1024


def compare(fast: pd.DataFrame, ref: pd.DataFrame, percentile: bool) -> None:
    """The delta cubes matched on their keys. ``percentile``: the bounds are percentile bounds
    (upstream), whose Monte-Carlo sd is a conservative one (:func:`_bound_mcse`); otherwise t
    bounds (corrected), whose sd is unbiased."""
    keys = ["model", "language", "task", "axis"]
    m = fast.merge(ref, on=keys, suffixes=("_f", "_r"), how="outer", indicator=True)
    print(f"  cells compared: {int((m['_merge'] == 'both').sum())} "
          f"(only fast: {int((m['_merge'] == 'left_only').sum())}, "
          f"only reference: {int((m['_merge'] == 'right_only').sum())})")
    m = m[m["_merge"] == "both"]
    for col in ("n_pairs", "mean_delta", "violation_10", "violation_10_lo", "violation_10_hi"):
        f, r = m[f"{col}_f"].astype(float), m[f"{col}_r"].astype(float)
        diff = (f - r).abs()
        rel = (diff / r.abs().clip(lower=1.0)).max()
        print(f"  max |fast − reference| {col:16s} {diff.max():.3g} (relative {rel:.2g})")
    expected = "at most about 0.8 mean expected" if percentile else "about 0.8 mean expected"
    for col in ("mean_delta_lo", "mean_delta_hi"):
        d = (m[f"{col}_f"] - m[f"{col}_r"]).abs()
        sd = m[f"{col}_mcse"] * math.sqrt(2)  # two independent runs
        z = (d / sd)[sd > 0]
        print(f"  max |fast − reference| {col:16s} {d.max():.3g}; in Monte-Carlo sd: mean "
              f"{z.mean():.2f}, max {z.max():.2f} ({int((z > 4).sum())} of {len(z)} beyond 4; "
              f"{expected} from Monte-Carlo error alone)")


#: Per table: its key columns, the columns that must agree to rounding, and the Monte-Carlo
#: ones with the sd of a fast − reference difference from Monte-Carlo error alone.
TABLE_CHECKS = {
    "max_gaps": (["model", "task", "axis"],
                 ["gap", "n_rows", "top_identifier", "bottom_identifier"], ["gap_lo", "gap_hi"]),
    "kendall_w_usecase": (["model", "language", "task", "axis"],
                          ["w", "p_value", "n_blocks", "w_chance"], ["w_perm_p"]),
}


def _mc_sd(table: str, ref: pd.DataFrame, col: str) -> pd.Series:
    """The sd of fast − reference in ``col`` from Monte-Carlo error alone, per row: a MOG
    bound's from the reference's 500 replicates (:func:`_bound_mcse`); a permutation p
    of 999 draws has sd √(p(1 − p)/999). Two independent runs: × √2."""
    if table == "max_gaps":
        sd = ref[f"{col}_mcse"]
    else:
        p = ref["w_perm_p_r"].clip(1 / 1000, 1 - 1 / 1000)
        sd = np.sqrt(p * (1 - p) / W_PERMUTATIONS)
    return sd * math.sqrt(2)


def compare_table(table: str, fast: pd.DataFrame, ref: pd.DataFrame) -> None:
    """Rows matched on the table's keys; exact columns to rounding, Monte-Carlo ones in units
    of their Monte-Carlo sd (about 0.8 on average if the two agree, the mean of |N(0, 1)|;
    more than 4 is a finding)."""
    keys, exact, mc = TABLE_CHECKS[table]
    if "axis" in fast.columns:
        fast = fast[fast["axis"] != "Mean"]  # the reference has per-block rows only
    mcse = [c for c in ref.columns if c.endswith("_mcse")]
    m = fast[keys + exact + mc].merge(ref[keys + exact + mc + mcse], on=keys, how="outer",
                                      suffixes=("_f", "_r"), indicator=True)
    print(f"    rows compared: {int((m['_merge'] == 'both').sum())} "
          f"(only fast: {int((m['_merge'] == 'left_only').sum())}, "
          f"only reference: {int((m['_merge'] == 'right_only').sum())})")
    m = m[m["_merge"] == "both"]
    for col in exact:
        f, r = m[f"{col}_f"], m[f"{col}_r"]
        if not (pd.api.types.is_numeric_dtype(f) and pd.api.types.is_numeric_dtype(r)):
            print(f"    {col:18s} {int((f != r).sum())} of {len(m)} differ")
        else:
            print(f"    max |fast − reference| {col:18s} "
                  f"{(f.astype(float) - r.astype(float)).abs().max():.3g}")
    for col in mc:
        sd = _mc_sd(table, m, col)
        z = ((m[f"{col}_f"] - m[f"{col}_r"]).abs() / sd)[sd > 0]
        print(f"    |fast − reference| {col:18s} mean {z.mean():.2f}, max {z.max():.2f} "
              f"Monte-Carlo sd ({int((z > 4).sum())} of {len(z)} beyond 4; "
              f"{'at most ' if table == 'max_gaps' else ''}about 0.8 mean "
              "expected from Monte-Carlo error alone)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reference-models", type=int, default=len(SPECS))
    ap.add_argument("--keep", type=Path, default=None, help="build the data here and keep it")
    ap.add_argument("--fast-runs", type=int, default=3,
                    help="time the fast run this many times; targets use the median (default 3)")
    ap.add_argument("--method", choices=("both", "upstream", "corrected"), default="both",
                    help="methods of the timed run (default both: what the targets are for)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rb-bench-metrics-")) if args.keep is None else args.keep
    try:
        t0 = time.perf_counter()
        write_simulated_dir(tmp, SPECS)
        print(f"simulated data: {len(SPECS)} models × 48,546 responses in {tmp} "
              f"({time.perf_counter() - t0:.1f} s to build)")
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")

        speed, start = host.speed_probe(), host.snapshot()
        runs = [run_fast(tmp, args.workers, args.method) for _ in range(max(1, args.fast_runs))]
        print(f"{host.between(start, host.snapshot()).line()}; speed probe {speed:.3f} s "
              "(the fast runs; bench/host.py)")
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        rss1, rss_tree = max(r[2] for r in runs), max(r[3] for r in runs)
        from rupeebias_core.metrics.tables import TABLE_NAMES

        each = ", ".join(f"{r[0]:.1f}" for r in runs)
        print(f"fast   : python -m precompute metrics --method {args.method} --workers "
              f"{args.workers}: {wall:.1f} s wall (median of {len(runs)} runs: {each} s), "
              f"{cpu:.1f} s CPU, peak RSS {rss1:.0f} MB largest process, {rss_tree:.0f} MB "
              f"whole process tree (all {len(TABLE_NAMES)} tables)")

        k = max(1, min(args.reference_models, len(SPECS)))
        models = [s.model for s in SPECS[:k]]
        scale = len(SPECS) / k
        methods = ("upstream", "corrected") if args.method == "both" else (args.method,)
        refs = {"upstream": reference_model, "corrected": reference_corrected}
        ref_total = ref_cpu_all = ref_cube_total = 0.0
        for method in methods:
            t1 = time.perf_counter()
            with ProcessPoolExecutor(args.workers) as pool:
                results = list(pool.map(refs[method], [(str(tmp), m) for m in models]))
            ref_wall = time.perf_counter() - t1
            part_s = {t: sum(r[2][t] for r in results) for t in results[0][2]}
            ref_cpu = sum(part_s.values())
            if k == len(SPECS):
                total, label = ref_wall, ""
            else:  # per-model times × 9/k, spread over the workers
                total = ref_cpu * scale / args.workers
                label = f" (measured on {k} model(s), extrapolated ×{scale:.2f} over " \
                        f"{args.workers} processes)"
            parts = ", ".join(f"{t} {v * scale:.0f} s" for t, v in part_s.items())
            print(f"reference ({method}): plain pandas/numpy delta cube, MOG and Kendall's W "
                  f"(per block), {args.workers} processes: {total:.1f} s wall{label}, "
                  f"{ref_cpu * scale:.1f} s CPU ({parts})")
            ref_total += total
            ref_cpu_all += ref_cpu * scale
            ref_cube_total += total * part_s["delta"] / ref_cpu
            fast = pd.read_parquet(DataLayout(tmp).metrics("delta"))
            fast = fast[fast["model"].isin(models) & (fast["method"] == method)]
            ref_cube = pd.concat([r[1]["delta"] for r in results], ignore_index=True)
            if len(fast):
                if method == "corrected":  # no V@10 in this reference
                    fast = fast.drop(columns=[c for c in fast.columns
                                              if c.startswith("violation_10")])
                    ref_cube = ref_cube.assign(violation_10=np.nan, violation_10_lo=np.nan,
                                               violation_10_hi=np.nan)
                    fast = fast.assign(violation_10=np.nan, violation_10_lo=np.nan,
                                       violation_10_hi=np.nan)
                print(f"  delta ({method}):")
                compare(fast.drop(columns=["flag"], errors="ignore"), ref_cube,
                        percentile=method == "upstream")
            for table in ("max_gaps", "kendall_w_usecase"):
                f = pd.read_parquet(DataLayout(tmp).metrics(table))
                f = f[f["model"].isin(models) & (f["method"] == method)]
                print(f"  {table} ({method}):")
                compare_table(table, f, pd.concat([r[1][table] for r in results],
                                                  ignore_index=True))
        print(f"speed-up: {ref_cube_total / wall:.1f}× wall against the delta-cube part of the "
              "reference (the reference the issue-16 target was measured against until now)")
        print(f"          {ref_total / wall:.1f}× wall, {ref_cpu_all / cpu:.1f}× CPU against the "
              f"whole reference ({', '.join(methods)}: delta cube, MOG and Kendall's W; still a "
              f"lower bound: the fast run also computes {len(TABLE_NAMES) - 3} more tables)")
        # The target is held to the delta-cube reference it was first measured against: a
        # reference that grows with the fast run's work would make it easier to meet.
        targets = [("full run ≤ 30 s", wall <= 30),
                   ("≥ 20× the delta-cube reference", ref_cube_total / wall >= 20),
                   ("≤ 2 GB peak", rss_tree <= 2048)]
        print("targets: " + ", ".join(f"{n}: {'met' if ok else 'MISSED'}" for n, ok in targets))
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
