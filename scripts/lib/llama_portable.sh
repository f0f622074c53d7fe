# shellcheck shell=bash
# One definition of the portable llama-cpp-python build, sourced by scripts/test.sh (CI) and
# scripts/install_local_model.sh (the README's explore command). docs/collect.md, "Portable
# llama.cpp build", says why: some hosts advertise AMX but trap it, so a -march=native build
# dies with SIGILL there.
#
#   source scripts/lib/llama_portable.sh && ensure_portable_llama

LLAMA_VERSION=0.3.36
# Deterministic flags: no -march=native; AVX2/FMA/F16C on (every x86-64 host of this machine
# kind has them); AVX-512 and AMX off.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
PYTHON="${PYTHON:-python3}"

# True when the installed llama-cpp-python is the pinned version and its CPU library holds no
# AMX instruction (`tilezero`).
portable_llama_installed() {
  local dir
  dir="$("$PYTHON" - "$LLAMA_VERSION" <<'PY' 2>/dev/null
import importlib.metadata as m, importlib.util, os, sys
try:
    ok = m.version("llama-cpp-python") == sys.argv[1]
except m.PackageNotFoundError:
    ok = False
spec = importlib.util.find_spec("llama_cpp") if ok else None
if spec is None or not spec.origin:
    sys.exit(1)
print(os.path.dirname(spec.origin))
PY
)" || return 1
  [ -f "$dir/lib/libggml-cpu.so" ] || return 1
  command -v objdump >/dev/null 2>&1 || return 1
  # awk reads everything (no SIGPIPE under pipefail) and fails when it sees an AMX instruction;
  # an objdump failure fails too: when in doubt, rebuild.
  objdump -d "$dir/lib/libggml-cpu.so" | awk '/tilezero/ { amx = 1 } END { exit amx }'
}

# Build and install llama-cpp-python[server] portably unless a portable build is installed
# (~5 min on 2 cores). Never from pip's wheel cache: it is keyed by URL, not by CMAKE_ARGS, so
# a cached native wheel would come back silently.
ensure_portable_llama() {
  if portable_llama_installed; then
    return 0
  fi
  # A non-portable build of the same version would make pip say "already satisfied".
  "$PYTHON" -m pip uninstall -y -q llama-cpp-python >/dev/null 2>&1 || true
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$PYTHON" -m pip install --no-cache-dir \
    --no-binary llama-cpp-python "llama-cpp-python[server]==$LLAMA_VERSION"
}
