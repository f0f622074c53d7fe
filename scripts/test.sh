#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite (the README's test command; CI runs this).
# Installs: Debian's headless Chromium (browser test), a portable build of llama-cpp-python
# (~5 min on 2 cores, skipped when one is installed), the Python dev requirements at the exact
# versions of constraints.txt, then runs ruff and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# llama-cpp-python first, on its own, built portably: some hosts advertise AMX but trap it, so a
# -march=native build dies with SIGILL there. Skipped when the installed build is already the
# pinned version and its CPU library holds no AMX instruction (`tilezero`).
LLAMA_VERSION=0.3.36
portable_llama_installed() {
  local dir
  dir="$(python3 - "$LLAMA_VERSION" <<'EOF' 2>/dev/null
import importlib.metadata as m, importlib.util, os, sys
try:
    ok = m.version("llama-cpp-python") == sys.argv[1]
except m.PackageNotFoundError:
    ok = False
spec = importlib.util.find_spec("llama_cpp") if ok else None
if spec is None or not spec.origin:
    sys.exit(1)
print(os.path.dirname(spec.origin))
EOF
)" || return 1
  [ -f "$dir/lib/libggml-cpu.so" ] || return 1
  command -v objdump >/dev/null 2>&1 || return 1
  # awk reads everything (no SIGPIPE under pipefail) and fails when it sees an AMX instruction;
  # an objdump failure fails too: when in doubt, rebuild.
  objdump -d "$dir/lib/libggml-cpu.so" | awk '/tilezero/ { amx = 1 } END { exit amx }'
}
if ! portable_llama_installed; then
  # A non-portable build of the same version would make pip say "already satisfied".
  python3 -m pip uninstall -y -q llama-cpp-python >/dev/null 2>&1 || true
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" python3 -m pip install --no-cache-dir --no-binary llama-cpp-python "llama-cpp-python[server]==0.3.36"
fi

python3 -m pip install -q -c constraints.txt -r requirements-dev.txt
python3 -m ruff check .
python3 -m pytest "$@"
