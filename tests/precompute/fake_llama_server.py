"""A stand-in for llama.cpp's `llama-server` binary in tests (the real one takes ~15 min to build).

It accepts llama-server's command line, answers ``--version`` like the real binary, records its
argv to $FAKE_LLAMA_ARGV_DIR/<port>.json and serves the fake OpenAI API on ``--port``. Tests
reach it through a tiny shell wrapper so that it is an executable like the real server.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.precompute.fake_openai_server import FakeOpenAIServer  # noqa: E402


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print("version: 9999 (fakefake)\nbuilt with fake-cc for x86_64-linux-gnu",
              file=sys.stderr)
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--model", required=True)
    args, _ = ap.parse_known_args(argv)
    if not Path(args.model).is_file():
        print(f"error: failed to load model {args.model}", file=sys.stderr)
        return 1
    out = os.environ.get("FAKE_LLAMA_ARGV_DIR")
    if out:
        Path(out, f"{args.port}.json").write_text(json.dumps(argv))
    return FakeOpenAIServer(latency_s=0.01, host=args.host, port=args.port).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
