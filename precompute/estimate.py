"""`python -m precompute estimate`: requests, tokens, cost and time — before anything is spent.

Input tokens are exact when a tokenizer is cheaply available (the bundled SmolLM2 vocabulary
through llama_cpp, with its chat template) and otherwise approximated as ceil(chars / 4) plus
3 tokens per message and 3 for the reply (OpenAI's chat accounting); the output says which.
Output tokens are a range, because only the cap is known: low = a strict one-line answer,
expected = the authors' per-model figure (spec §5) when a preset applies, else the cap, high =
the cap on every request.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from precompute.selection import (
    SelectionError,
    add_selection_args,
    load_selection,
    selection_from_args,
)
from precompute.serve_local import LocalModelError

# A strict answer, "### 1234567 INR": about 6-8 tokens on common tokenizers.
STRICT_ANSWER_TOKENS = 8
MESSAGE_OVERHEAD = 3
REPLY_OVERHEAD = 3


@dataclass(frozen=True)
class Preset:
    """A paper model's price and the authors' per-request token assumptions (spec §5/§8)."""

    slug: str
    provider_id: str
    price_in: float  # USD per million input tokens
    price_out: float  # USD per million output tokens
    tokens_in: int  # authors' assumed input tokens per request
    tokens_out: int  # authors' assumed output tokens per request


PRESETS: dict[str, Preset] = {p.slug: p for p in (
    Preset("claude-opus-4.7", "anthropic/claude-opus-4.7", 5.00, 25.00, 310, 13),
    Preset("claude-haiku-4.5", "anthropic/claude-haiku-4.5", 1.00, 5.00, 220, 13),
    Preset("gemini-3-flash", "google/gemini-3-flash", 0.50, 3.00, 180, 6),
    Preset("gpt-5.4", "openai/gpt-5.4", 2.50, 15.00, 180, 10),
    Preset("gpt-5.4-mini", "openai/gpt-5.4-mini", 0.75, 4.50, 180, 10),
    Preset("kimi-k2.5", "moonshotai/kimi-k2.5", 0.44, 2.00, 180, 10),
    Preset("deepseek-v3.2", "deepseek/deepseek-v3.2", 0.252, 0.378, 180, 15),
    Preset("glm-5.1", "z-ai/glm-5.1", 1.05, 3.50, 180, 6),
    Preset("sarvam-105b", "sarvam-105b", 0.04, 0.13, 180, 2500),
)}


def preset_for_model(model: str | None) -> Preset | None:
    """The preset whose slug or provider id matches a model id, if any."""
    if not model:
        return None
    tail = model.rsplit("/", 1)[-1].replace(":", "-")
    for p in PRESETS.values():
        if model in (p.slug, p.provider_id) or tail == p.slug:
            return p
    return None


@dataclass(frozen=True)
class Estimate:
    n_requests: int
    input_tokens: int
    input_method: str
    output_low: int
    output_expected: int
    output_high: int
    price_in: float | None
    price_out: float | None
    price_source: str
    concurrency: int
    latency_s: float
    warnings: tuple[str, ...] = ()

    def cost(self, output_tokens: int) -> float | None:
        if self.price_in is None or self.price_out is None:
            return None
        return (self.input_tokens * self.price_in + output_tokens * self.price_out) / 1e6

    @property
    def wall_s(self) -> float:
        """Latency-bound time: ceil(n / concurrency) sequential waves of `latency_s`."""
        if self.n_requests == 0:
            return 0.0
        return math.ceil(self.n_requests / max(1, self.concurrency)) * self.latency_s


def approx_tokens(system: str, user: str) -> int:
    """ceil(chars/4) per message + 3 per message + 3 for the reply."""
    n = REPLY_OVERHEAD
    for text in (system, user):
        if text:
            n += math.ceil(len(text) / 4) + MESSAGE_OVERHEAD
    return n


def count_input_tokens(frame: pd.DataFrame, method: str = "chars4") -> tuple[int, str]:
    """Total input tokens of the selection and a label saying how they were counted."""
    systems = frame["system_prompt"].fillna("").astype(str).tolist()
    users = frame["prompt"].astype(str).tolist()
    if method == "smollm2":
        from precompute.serve_local import SmolTokenizer

        tok = SmolTokenizer.load()
        total = sum(tok.count_chat(s, u) for s, u in zip(systems, users, strict=True))
        return total, "exact (SmolLM2 tokenizer + chat template, via llama_cpp)"
    if method != "chars4":
        raise ValueError(f"unknown token counting method {method!r}")
    total = sum(approx_tokens(s, u) for s, u in zip(systems, users, strict=True))
    return total, "approximate (ceil(chars/4) + 3 per message + 3)"


def make_estimate(frame: pd.DataFrame, *, max_tokens: int, concurrency: int, latency_s: float,
                  model: str | None = None, preset: str | None = None,
                  price_in: float | None = None, price_out: float | None = None,
                  token_method: str = "chars4",
                  expected_output: int | None = None) -> Estimate:
    if max_tokens < 1:
        raise ValueError("max_tokens must be >= 1")
    if (price_in is None) != (price_out is None):
        raise ValueError("give both --price-in and --price-out, or neither")
    p: Preset | None = None
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
        p = PRESETS[preset]
    elif price_in is None:
        p = preset_for_model(model)
    warnings: list[str] = []
    if price_in is not None:
        source = "given on the command line"
    elif p is not None:
        price_in, price_out = p.price_in, p.price_out
        source = f"preset {p.slug} (spec §8 price table)"
    else:
        source = "no price (local or unknown model): cost not computed"
    n = len(frame)
    tokens_in, method = count_input_tokens(frame, token_method) if n else (0, "none")
    high = n * max_tokens
    low = n * min(STRICT_ANSWER_TOKENS, max_tokens)
    if expected_output is not None:
        per = min(expected_output, max_tokens)
    elif p is not None:
        per = min(p.tokens_out, max_tokens)
        if p.tokens_out > max_tokens:
            warnings.append(
                f"the authors assumed ~{p.tokens_out} output tokens per request for {p.slug} "
                f"(reasoning trace); max_tokens={max_tokens} will truncate most answers")
    else:
        per = max_tokens
    return Estimate(n_requests=n, input_tokens=tokens_in, input_method=method,
                    output_low=low, output_expected=n * per, output_high=high,
                    price_in=price_in, price_out=price_out, price_source=source,
                    concurrency=concurrency, latency_s=latency_s, warnings=tuple(warnings))


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h {m:02d}m" if h else (f"{m}m {sec:02d}s" if m else f"{sec}s")


def _usd(x: float | None) -> str:
    return "n/a" if x is None else f"${x:,.4f}" if x < 1 else f"${x:,.2f}"


def format_estimate(est: Estimate) -> str:
    per = est.input_tokens / est.n_requests if est.n_requests else 0.0
    lines = [
        f"requests            {est.n_requests:,}",
        f"input tokens        {est.input_tokens:,}  ({per:.0f}/request; {est.input_method})",
        f"output tokens       low {est.output_low:,} / expected {est.output_expected:,} / "
        f"high {est.output_high:,}",
        f"price               {est.price_source}"
        + ("" if est.price_in is None else f": ${est.price_in}/M in, ${est.price_out}/M out"),
        f"cost (USD)          low {_usd(est.cost(est.output_low))} / expected "
        f"{_usd(est.cost(est.output_expected))} / high {_usd(est.cost(est.output_high))}",
        f"time                ~{_hms(est.wall_s)} at concurrency {est.concurrency} and "
        f"{est.latency_s:g} s/request (latency-bound; --latency to change)",
    ]
    lines += [f"warning             {w}" for w in est.warnings]
    return "\n".join(lines)


def add_estimate_args(parser: argparse.ArgumentParser, *, for_collect: bool = False) -> None:
    g = parser.add_argument_group("estimate")
    if not for_collect:
        g.add_argument("--model", default=None, help="model id (picks a price preset if known)")
        g.add_argument("--max-tokens", type=int, default=40,
                       help="max_tokens per request (default 40, as the paper)")
        g.add_argument("--concurrency", type=int, default=None,
                       help="requests in flight (default 8; local model: 2 server processes)")
    g.add_argument("--price-in", type=float, default=None, metavar="USD_PER_M",
                   help="input price in USD per million tokens")
    g.add_argument("--price-out", type=float, default=None, metavar="USD_PER_M",
                   help="output price in USD per million tokens")
    g.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="use a paper model's price (spec §8)")
    g.add_argument("--latency", type=float, default=None, metavar="SECONDS",
                   help="assumed seconds per request (default 1.0; local model: "
                        "0.3 + 0.021 x max_tokens, measured here)")
    g.add_argument("--expected-output-tokens", type=int, default=None, metavar="N",
                   help="expected output tokens per request (default: preset figure or cap)")
    g.add_argument("--tokenizer", choices=("auto", "chars4", "smollm2"), default="auto",
                   help="auto = exact SmolLM2 tokens for the local model, chars/4 otherwise")


def configure(parser: argparse.ArgumentParser) -> None:
    add_selection_args(parser)
    add_estimate_args(parser)


# Measured on the 2-core machine (bench/local_throughput.py): llama.cpp evaluates the user part
# of a prompt (the system prompt is KV-cached) in ~0.3 s and decodes ~21 ms per output token,
# per server process with one thread.
LOCAL_PREFILL_S = 0.3
LOCAL_DECODE_S_PER_TOKEN = 0.021


def default_latency(local: bool, max_tokens: int) -> float:
    return LOCAL_PREFILL_S + LOCAL_DECODE_S_PER_TOKEN * max_tokens if local else 1.0


def resolve_token_method(choice: str, local: bool, served: Path | None = None) -> str:
    """How to count input tokens: SmolLM2's own tokenizer when the bundled SmolLM2 is the model
    (``served``: the GGUF a local collect serves, None = the bundled one), else chars/4 — its
    counts are not exact for another model's vocabulary."""
    if choice != "auto":
        return choice
    if local:
        from precompute.serve_local import LocalModelError, check_llama_cpp, find_gguf

        try:  # exact counts only when the tokenizer is cheaply at hand
            check_llama_cpp()
            bundled = find_gguf()
        except LocalModelError:
            return "chars4"
        if served is not None and served.resolve() != Path(bundled).resolve():
            return "chars4"
        return "smollm2"
    return "chars4"


def main(args: argparse.Namespace) -> int:
    try:
        sel = selection_from_args(args)
        frame = load_selection(sel)
        local = args.model is None and args.preset is None and args.price_in is None
        concurrency = args.concurrency if args.concurrency is not None else (2 if local else 8)
        if concurrency < 1:
            raise SelectionError("--concurrency must be >= 1")
        latency = args.latency if args.latency is not None else \
            default_latency(local, args.max_tokens)
        est = make_estimate(
            frame, max_tokens=args.max_tokens, concurrency=concurrency, latency_s=latency,
            model=args.model, preset=args.preset, price_in=args.price_in,
            price_out=args.price_out, token_method=resolve_token_method(args.tokenizer, local),
            expected_output=args.expected_output_tokens)
    except (SelectionError, ValueError, LocalModelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_estimate(est))
    return 0
