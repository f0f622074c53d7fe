"""The `collect` command line and the one place where it becomes a `CollectJob`.

Why here and only here: flags, their defaults and the checks on them are read once, in
`job_from_args`, in the order whose first failure the user sees (argument checks, endpoint,
selection, local model, API key, slug). Everything after it works on the frozen job.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from precompute import endpoint, serve_local
from precompute import estimate as est_mod
from precompute.client import ReasoningStyle, RetryPolicy
from precompute.collect_job import (
    CollectJob,
    EstimateSettings,
    FlushPolicy,
    LocalServerSettings,
    OutputPaths,
)
from precompute.collect_plan import RunConfig
from precompute.selection import SEND_ORDERS, add_selection_args, selection_from_args

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
REASONING_STYLES: Mapping[str, ReasoningStyle] = {
    "openrouter": "openrouter", "sarvam": "sarvam", "omit": "omit"}
SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class CollectError(RuntimeError):
    """A problem with the command line or environment, reported without a traceback."""


def default_slug(model: str) -> str:
    """Last `/` segment of the model id with `:` replaced by `-` (the authors' rule)."""
    return model.rstrip("/").rsplit("/", 1)[-1].replace(":", "-")


def reasoning_style_for(base_url: str | None, model: str, choice: str = "auto") -> ReasoningStyle:
    """Sarvam models get a top-level `reasoning_effort`, OpenRouter the `reasoning` object,
    every other host nothing (llama.cpp / vLLM may reject unknown fields)."""
    if choice != "auto":
        if choice not in REASONING_STYLES:
            raise CollectError(f"unknown reasoning style {choice!r}")
        return REASONING_STYLES[choice]
    if "sarvam" in model.lower():
        return "sarvam"
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
        return "openrouter"
    return "omit"


def normalize_base_url(base_url: str) -> str:
    """The cache-key form of a base URL (`endpoint.normalize_base_url`), as a CollectError."""
    try:
        return endpoint.normalize_base_url(base_url)
    except endpoint.EndpointError as exc:
        raise CollectError(str(exc)) from None


def api_key(env_name: str, base_url: str | None, local: bool) -> str:
    """The key from the environment variable `env_name` (never from the command line); the
    dummy key for the bundled model."""
    if local:
        return endpoint.DUMMY_KEY
    try:
        return endpoint.lookup_api_key(env_name, os.environ, base_url=base_url, required=True)
    except endpoint.EndpointError as exc:
        raise CollectError(str(exc)) from None


def configure(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("endpoint and request")
    g.add_argument("--model", default=None,
                   help="model id as the endpoint names it (default without --base-url: "
                        "the bundled smollm2-135m-instruct)")
    g.add_argument("--base-url", default=None,
                   help="OpenAI-compatible base URL, e.g. https://openrouter.ai/api/v1 "
                        "(default: start the bundled local model)")
    g.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="environment variable holding the API key (default OPENAI_API_KEY); "
                        "the key itself is never accepted on the command line")
    g.add_argument("--slug", default=None,
                   help="model slug for file names (default: last segment of --model)")
    g.add_argument("--max-tokens", type=int, default=40, help="default 40, as the paper")
    g.add_argument("--temperature", type=float, default=0.0, help="default 0.0, as the paper")
    g.add_argument("--reasoning-effort", choices=REASONING_EFFORTS, default="none",
                   help="default none (reasoning off, as the paper)")
    g.add_argument("--reasoning-style", choices=("auto", "openrouter", "sarvam", "omit"),
                   default="auto",
                   help="how the effort is sent: auto = Sarvam model -> top-level "
                        "reasoning_effort, openrouter.ai -> reasoning object, else omitted")
    g.add_argument("--sample-index", type=int, default=0,
                   help="draw index, part of the cache key (default 0)")
    g.add_argument("--order", choices=SEND_ORDERS, default="blocks",
                   help="send order: blocks = whole profile blocks in seeded random order, so a "
                        "stopped run is a fair sample of every task and language (default); "
                        "id = by system prompt then id")
    r = parser.add_argument_group("concurrency, retries, durability")
    r.add_argument("--concurrency", type=int, default=None,
                   help="requests in flight (default 8; local model: 1 per server process)")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds per attempt")
    r.add_argument("--max-attempts", type=int, default=6, help="attempts per request")
    r.add_argument("--backoff-base", type=float, default=1.0, help="seconds (full jitter)")
    r.add_argument("--backoff-max", type=float, default=30.0, help="seconds")
    r.add_argument("--retry-after-cap", type=float, default=120.0,
                   help="longest Retry-After honoured, seconds")
    r.add_argument("--flush-every", type=int, default=5000,
                   help="rewrite the Parquet every N results (default 5000)")
    r.add_argument("--flush-seconds", type=float, default=60.0,
                   help="... or every S seconds (default 60)")
    r.add_argument("--dry-run", action="store_true",
                   help="print the estimate and resume status, send nothing")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    loc = parser.add_argument_group("local model (no --base-url)")
    loc.add_argument("--local-backend", choices=("llama-cpp-python", "llama-server", "auto"),
                     default="llama-cpp-python",
                     help="llama-cpp-python (default; the shipped run's backend), llama-server "
                          "(`python -m precompute build-llama-server`; batches requests across "
                          "slots), or auto = llama-server when built. The backend is part of "
                          "the cache key: switching it starts a new run")
    loc.add_argument("--local-servers", type=int, default=None,
                     help="server processes (default: 1 for llama-server, 2 for "
                          "llama-cpp-python)")
    loc.add_argument("--local-slots", type=int, default=None,
                     help="requests decoded together per process (llama-server only; "
                          "default 8)")
    loc.add_argument("--local-threads", type=int, default=None,
                     help="threads per server process (default: cores / processes)")
    loc.add_argument("--local-ctx-size", type=int, default=2048,
                     help="context size per slot")
    add_selection_args(parser)
    est_mod.add_estimate_args(parser, for_collect=True)


def validate_args(args: argparse.Namespace) -> None:
    """The checks that need no file, network or model: exit 2 with one line each."""
    checks = [
        (args.max_tokens >= 1, "--max-tokens must be >= 1"),
        (0.0 <= args.temperature <= 2.0, "--temperature must be in [0, 2]"),
        (args.concurrency is None or args.concurrency >= 1, "--concurrency must be >= 1"),
        (args.timeout > 0, "--timeout must be > 0"),
        (args.max_attempts >= 1, "--max-attempts must be >= 1"),
        (args.backoff_base >= 0 and args.backoff_max >= 0, "back-off must be >= 0"),
        (args.flush_every >= 1 and args.flush_seconds > 0, "flush settings must be positive"),
        (args.local_servers is None or args.local_servers >= 1,
         "--local-servers must be >= 1"),
        (args.local_slots is None or args.local_slots >= 1, "--local-slots must be >= 1"),
        (args.sample_index >= 0, "--sample-index must be >= 0"),
    ]
    for ok, msg in checks:
        if not ok:
            raise CollectError(msg)
    if "\n" in (args.model or "") or (args.model is not None and not args.model.strip()):
        raise CollectError("--model must be a non-empty single-line model id")
    if args.base_url is not None and args.model is None:
        raise CollectError("--model is required with --base-url")


def local_settings(args: argparse.Namespace, model: str) -> LocalServerSettings:
    """The bundled model's servers with the defaults of the chosen backend filled in."""
    model_path = serve_local.find_gguf(model)
    backend = serve_local.resolve_backend(args.local_backend)
    if args.local_slots not in (None, 1) and backend != "llama-server":
        raise CollectError("--local-slots needs the llama-server backend")
    return LocalServerSettings(
        model_path=model_path, backend=backend,
        processes=args.local_servers or (1 if backend == "llama-server" else 2),
        slots=args.local_slots or serve_local.default_slots(backend),
        threads=args.local_threads, ctx_size=args.local_ctx_size,
        from_catalogue=not os.environ.get(serve_local.GGUF_ENV))


def job_from_args(args: argparse.Namespace) -> CollectJob:
    """Validate the flags and resolve them into the job (`args` is not modified)."""
    validate_args(args)
    try:
        target = endpoint.choose(args.base_url, args.model)
    except endpoint.EndpointError as exc:
        raise CollectError(str(exc)) from None
    sel = selection_from_args(args)
    model = target.model
    local: LocalServerSettings | None = None
    if target.local:
        local = local_settings(args, model)
        endpoint_key = serve_local.endpoint_key(local.model_path, local.backend)
        # One request per slot: more would only queue inside the server.
        concurrency = args.concurrency or local.processes * local.slots
    else:
        endpoint_key = normalize_base_url(args.base_url)
        concurrency = args.concurrency or 8
    key = api_key(args.api_key_env, args.base_url, target.local)
    slug = args.slug or default_slug(model)
    if not SLUG_RE.match(slug):
        raise CollectError(f"slug {slug!r} is not a safe file name; pass --slug")
    cfg = RunConfig(endpoint_key=endpoint_key, model=model, slug=slug,
                    temperature=float(args.temperature), max_tokens=int(args.max_tokens),
                    reasoning_effort=args.reasoning_effort,
                    reasoning_style=reasoning_style_for(args.base_url, model,
                                                        args.reasoning_style),
                    sample_index=int(args.sample_index),
                    system_prompt_style=sel.system_prompt_style)
    return CollectJob(
        config=cfg, target=target, api_key=key, selection=sel, order=args.order,
        retry=RetryPolicy(max_attempts=args.max_attempts, base_delay_s=args.backoff_base,
                          max_delay_s=args.backoff_max, retry_after_cap_s=args.retry_after_cap,
                          timeout_s=args.timeout),
        flush=FlushPolicy(every=args.flush_every, seconds=args.flush_seconds),
        concurrency=concurrency, paths=OutputPaths.under(args.data, slug), local_server=local,
        estimate=EstimateSettings(latency_s=args.latency, preset=args.preset,
                                  price_in=args.price_in, price_out=args.price_out,
                                  tokenizer=args.tokenizer,
                                  expected_output_tokens=args.expected_output_tokens),
        dry_run=bool(args.dry_run), show_progress=not args.no_progress)
