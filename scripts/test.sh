#!/usr/bin/env bash
# The whole test suite: lint, JS unit tests, Python tests (incl. the real model, real servers and
# real JupyterLab + Debian Chromium browser tests). Sets up what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
[ -x .venv/bin/nbagent ] && [ -f nbagent/static/widget.js ] && .venv/bin/python -c "import xdist" 2>/dev/null || bash scripts/setup.sh # a venv from before the suite ran in parallel lacks pytest-xdist

.venv/bin/ruff check nbagent tests benchmarks scripts
.venv/bin/ruff format --check nbagent tests benchmarks scripts
.venv/bin/lint-imports  # the architecture contract in pyproject.toml (layers, no cycles)
npm test --silent
npm run typecheck --silent
# two xdist workers, each running whole groups (a test file, a notebook, all browser tests: tests/conftest.py);
# --durations=10 prints the ten slowest tests at the end
.venv/bin/python -m pytest tests notebooks --nbval-lax -q -p no:cacheprovider -n 2 --dist loadgroup --durations=10 "$@"
