#!/usr/bin/env bash
# The README's first command: set up a fresh machine and start the explorer on the shipped
# data. Installs the runtime requirements at the exact versions of constraints.txt, the bundled
# local model (scripts/install_local_model.sh: portable llama.cpp build + SmolLM2 weights), then
# runs `streamlit run serve.py` (app.py behind serve.py's faster deep links) with any arguments
# given (e.g. --server.address=127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install -q -c constraints.txt -r requirements.txt
# The explorer works without the local model (Try a prompt then says what is missing and shows
# the shipped answers), so a failed build (no C++ compiler?) does not stop it from starting.
bash scripts/install_local_model.sh || echo "warning: the bundled local model could not be " \
  "installed (see above); the explorer starts without it. Retry: bash scripts/install_local_model.sh" >&2
exec "$PYTHON" -m streamlit run serve.py "$@"
