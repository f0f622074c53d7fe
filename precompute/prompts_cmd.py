"""`python -m precompute prompts --out PATH.parquet`: write the prompt table."""

from __future__ import annotations

import argparse
from pathlib import Path

from precompute.parquet_io import write_table
from rupeebias_core.benchmark import CONDITION_CHOICES, DEFAULT_SYSTEM_PROMPT_STYLE
from rupeebias_core.prompts import build_prompts
from rupeebias_core.registry import DataLayout


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=DataLayout(Path("data")).prompts,
                        help="output Parquet file (default: data/prompts.parquet)")
    parser.add_argument("--condition", choices=CONDITION_CHOICES, default="all",
                        help="which condition's rows to write: standard, fairness, placebo, "
                             "benchmark (standard + fairness, the released 48,546) or all "
                             "(benchmark + placebo; the default)")
    parser.add_argument("--system-prompt-style", choices=("indented", "dedented"),
                        default=DEFAULT_SYSTEM_PROMPT_STYLE,
                        help="indented = as the published runs were sent (default); "
                             "dedented = the authors' current code")


def main(args: argparse.Namespace) -> int:
    frame = build_prompts(args.condition, args.system_prompt_style)
    write_table(frame, args.out)
    counts = frame.groupby(["condition"]).size().to_dict()
    print(f"wrote {len(frame):,} prompts to {args.out} ({counts})")
    return 0
