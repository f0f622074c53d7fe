"""`python -m precompute status`: how far a computed run has got, and its headline numbers.

Why: a long local run is collected over many sessions and restarts, and its status is quoted in
docs/methodology.md and in issue notes. Deriving that paragraph from the shipped files (and
testing that the doc still matches them) keeps the prose from drifting away from the data.

Reads ``DIR/responses/<slug>.parquet`` and ``DIR/metrics/{parse_health,leaderboard}.parquet``.
Busy time is the union of the requests' [started_at, finished_at] intervals, so pauses between
sessions do not count and concurrent requests are not double-counted.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from precompute import local_models
from rupeebias_core.benchmark import (
    CONDITIONS,
    LANGUAGES,
    PLACEBO_PROMPT_COUNT,
    PROMPT_COUNTS,
    TASKS,
    expected_prompts,
)
from rupeebias_core.placebo import PLACEBO_CONDITION, floor_too_thin
from rupeebias_core.registry import PAIR_INTERVAL_COVERAGE, PROFILE_INTERVAL_COVERAGE, DataLayout

N_STANDARD = PROMPT_COUNTS["standard"]
N_FAIRNESS = PROMPT_COUNTS["fairness"]
#: The benchmark: "complete" and "X of N answered" count standard + fairness only; the opt-in
#: placebo condition is reported on its own line, so collecting it never makes a run "partial".
N_TOTAL = N_STANDARD + N_FAIRNESS
N_PLACEBO = PLACEBO_PROMPT_COUNT
MARK = "<!-- run-status:{slug}:{edge} -->"


class StatusError(RuntimeError):
    """The run's files are missing or inconsistent."""


@dataclass(frozen=True)
class Headline:
    """One method's overall numbers."""

    parse_health: float
    strict_rate: float
    refusal_rate: float
    n_rows: int
    mean_delta: float | None
    lo: float | None
    hi: float | None
    n_pairs: int
    #: gap_decomposition, all languages, tasks and axes (None before it is computed)
    decomposition: dict[str, float] | None = None


@dataclass(frozen=True)
class RunStatus:
    slug: str
    n_rows: int  # benchmark (standard + fairness) prompts answered
    n_standard: int
    n_fairness: int
    by_task: dict[tuple[str, str, str], int]  # (task, language, condition) -> rows
    busy_hours: float
    prompts_per_s: float  # every answered prompt, placebo included, over the busy time
    upstream: Headline | None
    corrected: Headline | None
    n_placebo: int = 0

    @property
    def complete(self) -> bool:
        return self.n_standard == N_STANDARD and self.n_fairness == N_FAIRNESS


def busy_seconds(starts: pd.Series, ends: pd.Series) -> float:
    """Length of the union of the intervals [start, end] (seconds)."""
    frame = pd.DataFrame({"s": pd.to_datetime(starts, utc=True),
                          "e": pd.to_datetime(ends, utc=True)}).dropna()
    if frame.empty:
        return 0.0
    frame = frame.sort_values("s")
    total = 0.0
    cur_s, cur_e = frame["s"].iloc[0], frame["e"].iloc[0]
    for s, e in zip(frame["s"].iloc[1:], frame["e"].iloc[1:], strict=True):
        if s > cur_e:
            total += (cur_e - cur_s).total_seconds()
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    return total + (cur_e - cur_s).total_seconds()


def _headline(data: Path, slug: str, method: str) -> Headline | None:
    layout = DataLayout(data)
    paths = [layout.metrics(t) for t in ("parse_health", "leaderboard")]
    if not all(p.is_file() for p in paths):
        return None  # metrics not computed yet: render says so
    ph, lb = (pd.read_parquet(p) for p in paths)
    ph = ph[(ph.model == slug) & (ph.method == method) & (ph.language == "all")
            & (ph.task == "all")]
    if ph.empty:
        return None
    lb = lb[(lb.model == slug) & (lb.method == method) & (lb.language == "all")
            & (lb.task == "all") & (lb.axis == "all")]
    row = ph.iloc[0]
    has = not lb.empty and pd.notna(lb.iloc[0].mean_delta)
    decomposition = None
    gd_path = layout.metrics("gap_decomposition")
    if gd_path.is_file():
        gd = pd.read_parquet(gd_path)
        gd = gd[(gd.model == slug) & (gd.method == method) & (gd.language == "all")
                & (gd.task == "all") & (gd.axis == "all")]
        if not gd.empty:
            cols = ("mean_delta", "systematic_share", "systematic_share_lo",
                    "systematic_share_hi", "p_value", "placebo_delta", "excess_delta",
                    "excess_delta_lo", "excess_delta_hi", "n_placebo_pairs",
                    "placebo_coverage")
            decomposition = {c: float(gd.iloc[0].get(c, math.nan)) for c in cols}
    return Headline(
        parse_health=float(row.parse_health), strict_rate=float(row.strict_rate),
        refusal_rate=float(row.refusal_rate), n_rows=int(row.n_rows),
        mean_delta=float(lb.iloc[0].mean_delta) if has else None,
        lo=float(lb.iloc[0].mean_delta_lo) if has else None,
        hi=float(lb.iloc[0].mean_delta_hi) if has else None,
        n_pairs=int(lb.iloc[0].n_pairs) if has else 0, decomposition=decomposition)


def run_status(data: Path, slug: str) -> RunStatus:
    path = DataLayout(data).responses(slug)
    if not path.is_file():
        raise StatusError(f"no responses for {slug!r} at {path}")
    cols = ["id", "condition", "task", "language", "status", "started_at", "finished_at"]
    rows = pd.read_parquet(path, columns=cols)
    answered = rows[rows.status.isin(["ok", "empty"])]
    counts = answered.groupby(["task", "language", "condition"], sort=True).size()
    busy = busy_seconds(answered.started_at, answered.finished_at)
    n_standard = int((answered.condition == "standard").sum())
    n_fairness = int((answered.condition == "fairness").sum())
    return RunStatus(
        slug=slug, n_rows=n_standard + n_fairness, n_standard=n_standard, n_fairness=n_fairness,
        by_task={k: int(v) for k, v in counts.items()},
        busy_hours=busy / 3600, prompts_per_s=len(answered) / busy if busy else 0.0,
        upstream=_headline(data, slug, "upstream"), corrected=_headline(data, slug, "corrected"),
        n_placebo=int((answered.condition == PLACEBO_CONDITION).sum()))


def _pct(x: float) -> str:
    return f"{x:.1f} %"


def _delta(h: Headline) -> str:
    if h.mean_delta is None:
        return "no matched pairs yet"
    return f"{h.mean_delta:.1f} [{h.lo:.1f}, {h.hi:.1f}] ({h.n_pairs:,} pairs)"


def coverage_table(by_task: dict[tuple[str, str, str], int]) -> list[str]:
    """Answered of expected prompts per task, language and condition (Markdown table rows):
    where a partial run's numbers come from."""
    cells = [(lang, cond) for cond in CONDITIONS for lang in LANGUAGES]
    head = ["task", *(f"{lang}{', ' + cond if cond != 'standard' else ''}"
                      for lang, cond in cells)]
    rows = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(cells) + "|"]
    for task in TASKS:
        out = []
        for lang, cond in cells:
            total = expected_prompts(task, lang, cond)
            n = by_task.get((task, lang, cond), 0)
            out.append("–" if total == 0 else f"{n:,} of {total:,}")
        rows.append(f"| {task} | " + " | ".join(out) + " |")
    return rows


def render(st: RunStatus) -> str:
    """The status paragraph (Markdown) quoted in docs/methodology.md section 6."""
    state = "complete" if st.complete else "partial"
    placebo = "placebo prompts included, " if st.n_placebo else ""
    lines = [f"**Status of the shipped run: {state}.** {st.n_rows:,} of {N_TOTAL:,} prompts "
             f"answered ({100 * st.n_rows / N_TOTAL:.1f} %): {st.n_standard:,} of "
             f"{N_STANDARD:,} standard and {st.n_fairness:,} of {N_FAIRNESS:,} fairness, over "
             f"{st.busy_hours:.1f} h of collection ({placebo}{st.prompts_per_s:.2f} prompts/s "
             "overall, restarts and other jobs on the machine included)."]
    left = N_TOTAL - st.n_rows
    if left > 0 and st.prompts_per_s > 0:
        lines[0] += (f" At that rate the remaining {left:,} prompts need ≈ "
                     f"{left / st.prompts_per_s / 3600:.1f} h more.")
    if st.n_placebo:
        lines[0] += (f" Opt-in placebo condition (not part of the benchmark): "
                     f"{st.n_placebo:,} of {N_PLACEBO:,} answered.")
    lines.extend(["", *coverage_table(st.by_task), ""])
    if st.upstream and st.corrected:
        u, c = st.upstream, st.corrected
        if {u.n_rows, c.n_rows} != {st.n_standard}:  # parse health counts standard rows
            lines.append(f"**The metrics below were computed on {u.n_rows:,} standard-condition "
                         f"responses, not the {st.n_standard:,} collected: rerun `python -m "
                         "precompute metrics`.**")
        lines.append(f"Parse health {_pct(u.parse_health)} with the authors' extractor, "
                     f"{_pct(c.parse_health)} usable with ours; strict format "
                     f"{_pct(u.strict_rate)}; refusals {_pct(u.refusal_rate)}. Mean Δ% "
                     f"{_delta(u)} with the upstream method and {_delta(c)} corrected. "
                     "The upstream interval is the authors' pair bootstrap, which treats the "
                     "pairs of a slot as independent and is far too narrow (§4.11: "
                     f"{PAIR_INTERVAL_COVERAGE} coverage of a nominal 95 % in simulation); the "
                     f"corrected one resamples profiles ({PROFILE_INTERVAL_COVERAGE}).")
        if c.decomposition and math.isfinite(c.decomposition["systematic_share"]):
            d = c.decomposition
            text = (f"Of the corrected gap ({d['mean_delta']:.1f} % on the decomposition's "
                    f"pairs), {100 * d['systematic_share']:.0f} % "
                    f"[{100 * d['systematic_share_lo']:.0f}, "
                    f"{100 * d['systematic_share_hi']:.0f}] is systematic (consistent identity "
                    f"effects; permutation p = {d['p_value']:.3f}), the rest is jitter.")
            if math.isfinite(d["placebo_delta"]) and floor_too_thin(d["n_placebo_pairs"],
                                                                    d["placebo_coverage"]):
                cover = (f" covering {100 * d['placebo_coverage']:.0f} % of the identity pairs"
                         if math.isfinite(d["placebo_coverage"]) else "")
                text += (f" The placebo floor rests on {d['n_placebo_pairs']:,.0f} placebo pairs"
                         f"{cover}: too few to compare the gap with yet.")
            elif math.isfinite(d["placebo_delta"]):
                text += (f" Swapping identity-free statements (placebo) in the same slots moves "
                         f"answers by {d['placebo_delta']:.1f} %, so the excess over the placebo "
                         f"floor is {_excess(d)}.")
            lines.append(text)
    else:
        lines.append("Metrics not computed yet: run `python -m precompute metrics`.")
    return "\n".join(lines)


def _excess(d: dict[str, float]) -> str:
    """The excess over the placebo floor with its interval and what the interval says."""
    lo, hi = d["excess_delta_lo"], d["excess_delta_hi"]
    text = f"{d['excess_delta']:.1f} points"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return text + " (no interval)"
    verdict = ("no more than the floor within noise" if lo <= 0 <= hi else
               "above the floor" if lo > 0 else "below the floor")
    return f"{text} [{lo:.1f}, {hi:.1f}]: {verdict}"


def replace_block(text: str, slug: str, body: str) -> str:
    start, end = MARK.format(slug=slug, edge="start"), MARK.format(slug=slug, edge="end")
    pattern = re.compile(re.escape(start) + r"\n.*?\n" + re.escape(end), re.S)
    if not pattern.search(text):
        raise StatusError(f"markers {start} ... {end} not found")
    return pattern.sub(lambda _: f"{start}\n{body}\n{end}", text, count=1)


def read_block(text: str, slug: str) -> str:
    start, end = MARK.format(slug=slug, edge="start"), MARK.format(slug=slug, edge="end")
    m = re.search(re.escape(start) + r"\n(.*?)\n" + re.escape(end), text, re.S)
    if not m:
        raise StatusError(f"markers {start} ... {end} not found")
    return m.group(1)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=Path("data"), help="data folder")
    parser.add_argument("--slug", default=local_models.DEFAULT.slug,
                        help="model slug (default: the bundled model)")
    parser.add_argument("--write-doc", type=Path, default=None, metavar="MARKDOWN",
                        help="replace the run-status block of this file (between its "
                             "<!-- run-status:SLUG:start/end --> markers)")


def main(args: argparse.Namespace) -> int:
    try:
        body = render(run_status(args.data, args.slug))
        if args.write_doc:
            doc = args.write_doc.read_text(encoding="utf-8")
            args.write_doc.write_text(replace_block(doc, args.slug, body), encoding="utf-8")
            print(f"updated {args.write_doc}", file=sys.stderr)
    except (StatusError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(body)
    return 0
