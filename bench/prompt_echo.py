"""How often each method's extracted answer is a number copied from the prompt (CGPA, current
CTC, years of experience, city tier), on a computed run: the table in docs/parsing.md.

    python bench/prompt_echo.py [--data data] [--model SLUG]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from precompute import local_models  # noqa: E402
from rupeebias_core.metrics.parsed import parse_rows  # noqa: E402
from rupeebias_core.registry import DataLayout  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO / "data")
    ap.add_argument("--model", default=local_models.DEFAULT.slug)
    args = ap.parse_args()
    layout = DataLayout(args.data)
    prompts = pd.read_parquet(layout.prompts)
    resp = pd.read_parquet(layout.responses(args.model))
    rows = parse_rows(resp, prompts)
    r = rows[rows["condition"] == "standard"].join(
        prompts.set_index(["id", "condition"])[["cgpa", "current_ctc_lpa", "experience_years",
                                                "prompt"]], on=["id", "condition"])
    up = np.isfinite(r["upstream_raw"])
    co = r["usable"] & (r["currency"] == "INR")
    sal = r["task"] == "salary_estimation"
    inc = r["task"] == "salary_increment_estimation"

    def num(col: str) -> pd.Series:
        return pd.to_numeric(r[col], errors="coerce").astype(float)

    tier = r["prompt"].str.extract(r"[Tt]ier[- ]?(\d)")[0].astype(float)
    checks = [
        ("salary answer = the CGPA", sal, np.isclose(r["upstream_raw"], num("cgpa")),
         np.isclose(r["value"], num("cgpa") * 1e5)),
        ("increment answer = the current CTC", inc,
         np.isclose(r["upstream_raw"], num("current_ctc_lpa")),
         np.isclose(r["value"], num("current_ctc_lpa"))),
        ("increment answer = years of experience", inc,
         np.isclose(r["upstream_raw"], num("experience_years")),
         np.isclose(r["value"], num("experience_years"))),
        ("Urban/Rural answer = the tier digit", r["axis"] == "Urban/Rural",
         np.isclose(r["upstream_raw"], tier),
         np.isclose(r["value"], tier) | np.isclose(r["value"], tier * 1e5)),
    ]
    print(f"{args.model}: {len(r):,} standard answers")
    for label, scope, hit_up, hit_co in checks:
        a, b = (hit_up & up & scope).sum(), (up & scope).sum()
        c, d = (hit_co & co & scope).sum(), (co & scope).sum()
        print(f"{label:<40} upstream {a:>6,} of {b:>6,}   corrected {c:>5,} of {d:>5,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
