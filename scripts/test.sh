#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite (the README's test command; CI runs this).
# Installs: Debian's headless Chromium (browser test), the Python dev requirements (which build
# llama-cpp-python from source, ~5 min on 2 cores, cached by pip afterwards), then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

python3 -m pip install -q -r requirements-dev.txt
python3 -m ruff check .
python3 -m pytest "$@"
