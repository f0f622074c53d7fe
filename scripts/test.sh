#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite (the README's test command; CI runs this).
# Installs: Debian's headless Chromium (browser test), a portable build of llama-cpp-python
# (~5 min on 2 cores, skipped when one is installed), the Python dev requirements at the exact
# versions of constraints.txt, then runs ruff, the type checker (mypy) and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# llama-cpp-python first, on its own, built portably: some hosts advertise AMX but trap it, so a
# -march=native build dies with SIGILL there. One definition, shared with scripts/explore.sh.
# shellcheck source=scripts/lib/llama_portable.sh
source scripts/lib/llama_portable.sh
ensure_portable_llama

python3 -m pip install -q -c constraints.txt -r requirements-dev.txt
python3 -m ruff check .
python3 -m mypy  # rupeebias_core, precompute, explorer: pyproject.toml [tool.mypy]
python3 -m pytest "$@"
