"""The default model's fast runtime: llama-cpp-python, built from source once for this CPU and kept as a wheel.

llama-cpp-python has no binary wheel for Linux on the package index, so pip builds it from its sdist (about
5 CPU-minutes: only libllama + ggml, no multimodal library and no llama-common, which the Python bindings never
load). It is built for this CPU (`-march=native`) but never with ggml's AMX kernels: on machines whose CPU has
AMX but whose kernel or hypervisor does not grant the tile state, they crash at the first `ldtilecfg`. Whether
`-march=native` would turn AMX on is read from /proc/cpuinfo and from the compiler itself; when either says yes,
`-mno-amx-*` flags switch it off (explicit ISA flags win over what `-march=native` implies).

The wheel is kept in `~/.cache/nbagent/wheels` (or `$XDG_CACHE_HOME`), so a later set-up or a new venv installs
it in seconds; beside it, the CPU signature it was built for (a cache shared with other CPUs is not misused). A file lock lets two set-ups share one build: the second waits, then finds the wheel.

Standard library only: `scripts/setup.sh` runs the build before nbagent's own dependencies are installed.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .default import cache_dir

try:
    import fcntl
except ImportError:  # Windows: no lock; two set-ups at once would each build
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LLAMA_CPP_VERSION",
    "AMX_FLAGS",
    "BuildPlan",
    "amx_in_cpuinfo",
    "build_plan",
    "build_wheel",
    "cached_wheel",
    "compiler_enables_amx",
    "install_runtime",
    "installed_version",
    "wheel_dir",
]

LLAMA_CPP_VERSION = "0.3.36"
AMX_FLAGS = ("-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16")
_CPUINFO_AMX = ("amx_tile", "amx_int8", "amx_bf16")

# Read by CMake after each project() call. llama-cpp-python forces LLAMA_BUILD_COMMON=ON in its own CMakeLists
# (so -DLLAMA_BUILD_COMMON=OFF is ignored); this turns it off again before llama.cpp's CMakeLists reads it.
_CMAKE_HOOK = """\
if(PROJECT_NAME STREQUAL "llama.cpp")
  set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
endif()
"""


def say_now(line: str) -> None:
    """Print at once, also into a log or a pipe (CI must see a 5-minute build's progress as it happens)."""
    print(line, flush=True)


def wheel_dir() -> Path:
    return cache_dir() / "wheels"


def cpu_signature(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The instruction sets `-march=native` reads, in short: a wheel built for other flags may not run here."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        text = ""
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return hashlib.sha256(" ".join(sorted(flags)).encode()).hexdigest()[:16]


def _built_for(wheel: Path) -> Path:
    return wheel.with_name(wheel.name + ".cpu")  # beside the wheel: the CPU signature it was built for


def cached_wheel(version: str = LLAMA_CPP_VERSION) -> Path | None:
    """The llama-cpp-python wheel an earlier set-up built for this CPU, if any.

    A cache shared by machines with other CPUs (a home directory on a network drive, Dask workers) holds
    wheels built with their `-march=native`: one whose recorded signature differs is not used here.
    """
    for wheel in sorted(wheel_dir().glob(f"llama_cpp_python-{version}-*.whl")):
        record = _built_for(wheel)
        if not record.exists() or record.read_text().strip() == cpu_signature():  # no record: an older set-up's
            return wheel
    return None


def installed_version() -> str | None:
    """The llama-cpp-python version importable here (None when it is not installed)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def amx_in_cpuinfo(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """The AMX flags the kernel reports for this CPU (empty off Linux or without AMX)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return []
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return [flag for flag in _CPUINFO_AMX if flag in flags]


def compiler_enables_amx(compiler: str | None = None) -> bool:
    """True when `-march=native` makes this compiler emit AMX (it reads CPUID, which a VM may show unmasked)."""
    compiler = compiler or shutil.which("gcc") or shutil.which("cc")
    if not compiler:
        return False
    try:
        out = subprocess.run(
            [compiler, "-march=native", "-Q", "--help=target"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return any(line.split()[:2] == ["-mamx-tile", "[enabled]"] for line in out.splitlines())


@dataclass(frozen=True)
class BuildPlan:
    """How llama-cpp-python is built on this machine, and why."""

    c_flags: tuple[str, ...]
    reason: str

    def cmake_args(self, hook: Path) -> str:
        args = ["-DGGML_NATIVE=ON", "-DLLAVA_BUILD=OFF", f"-DCMAKE_PROJECT_INCLUDE={hook}"]
        if self.c_flags:
            flags = " ".join(self.c_flags)
            args += [f"-DCMAKE_C_FLAGS='{flags}'", f"-DCMAKE_CXX_FLAGS='{flags}'"]
        return " ".join(args)


def build_plan(cpuinfo: Path = Path("/proc/cpuinfo"), compiler: str | None = None) -> BuildPlan:
    """The flags for this CPU: AMX off when /proc/cpuinfo or `-march=native` would turn it on."""
    listed = amx_in_cpuinfo(cpuinfo)
    if listed:
        return BuildPlan(AMX_FLAGS, f"this CPU has AMX ({', '.join(listed)}): built without ggml's AMX kernels")
    if compiler_enables_amx(compiler):
        return BuildPlan(AMX_FLAGS, "-march=native enables AMX here: built without ggml's AMX kernels")
    return BuildPlan((), "no AMX on this CPU: a plain -march=native build")


def missing_build_tools() -> list[str]:
    """What a from-source build needs and this machine lacks (cmake and ninja come from the index)."""
    missing = []
    if not (shutil.which("cc") or shutil.which("gcc")):
        missing.append("a C compiler")
    if not (shutil.which("c++") or shutil.which("g++")):
        missing.append("a C++ compiler")
    return missing


class BuildError(RuntimeError):
    """Building or installing llama-cpp-python failed; the message says what to do."""


def build_wheel(python: str = sys.executable, say: Callable[[str], None] = say_now) -> Path:
    """Build llama-cpp-python into the wheel cache (or wait for a build already running) and return the wheel."""
    wheels = wheel_dir()
    wheels.mkdir(parents=True, exist_ok=True)
    with (wheels / ".build.lock").open("w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # a second set-up waits here, then finds the wheel below
        wheel = cached_wheel()
        if wheel is not None:
            return wheel
        missing = missing_build_tools()
        if missing:
            raise BuildError(
                f"llama-cpp-python builds from source here and needs {' and '.join(missing)} "
                "(Debian/Ubuntu: `apt-get install build-essential`)."
            )
        plan = build_plan()
        say(f"building llama-cpp-python {LLAMA_CPP_VERSION} from source, once ({plan.reason}; ~5 CPU-minutes)")
        with tempfile.TemporaryDirectory(prefix="nbagent-build-") as tmp:
            built = _pip_wheel(python, plan, Path(tmp), say)
            # rename into place: an interrupted build never leaves a half-written wheel in the cache
            partial = wheels / f".{built.name}.{os.getpid()}"
            shutil.move(str(built), partial)
            _built_for(wheels / built.name).write_text(cpu_signature() + "\n")
            partial.replace(wheels / built.name)
        return wheels / built.name


def _pip_wheel(python: str, plan: BuildPlan, tmp: Path, say: Callable[[str], None]) -> Path:
    hook = tmp / "hook.cmake"
    hook.write_text(_CMAKE_HOOK)
    env = {**os.environ, "CMAKE_ARGS": plan.cmake_args(hook)}
    command = [python, "-m", "pip", "wheel", "--no-cache-dir", "--no-deps", "--disable-pip-version-check"]
    log = tmp / "build.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [*command, "-w", str(tmp), f"llama-cpp-python=={LLAMA_CPP_VERSION}"], stdout=out, stderr=out, env=env
        )
        _heartbeat(process, say)
    if process.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise BuildError(f"building llama-cpp-python failed (exit code {process.returncode}); the log ends:\n{tail}")
    return next(tmp.glob(f"llama_cpp_python-{LLAMA_CPP_VERSION}-*.whl"))


def _heartbeat(process: subprocess.Popen, say: Callable[[str], None], every: float = 60.0) -> None:
    """A line every `every` seconds while the compiler runs (a silent 5 minutes reads as a hang)."""
    started = time.monotonic()
    next_line = every
    try:
        while True:
            try:
                process.wait(timeout=1.0)
                return
            except subprocess.TimeoutExpired:
                pass
            elapsed = time.monotonic() - started
            if elapsed >= next_line:
                say(f"  still building llama-cpp-python ({elapsed / 60:.0f} min so far)")
                next_line += every
    except BaseException:  # Ctrl-C: no compiler left running behind us
        process.kill()
        process.wait()
        raise


def install_runtime(python: str = sys.executable, say: Callable[[str], None] = say_now) -> str:
    """Install llama-cpp-python from the cached wheel (building it first if needed); returns what was done."""
    version = installed_version() if python == sys.executable else None
    if version == LLAMA_CPP_VERSION:
        return f"llama-cpp-python {version} already installed"
    wheel = build_wheel(python, say)
    result = subprocess.run(
        [python, "-m", "pip", "install", "--disable-pip-version-check", "-q", str(wheel)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise BuildError(f"installing {wheel.name} failed:\n{result.stderr[-2000:]}")
    importlib.invalidate_caches()
    return f"llama-cpp-python {LLAMA_CPP_VERSION} installed from {wheel}"
