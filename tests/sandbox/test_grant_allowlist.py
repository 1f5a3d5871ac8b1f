"""Grants by allow-list (issue 29, item 1): one "yes" must never let the agent's code run later.

A review proved that "Allow once" granted files the machine later ran: ``<working folder>/pandas.py`` (a kernel has
``''`` on ``sys.path`` before site-packages), a new folder ``<working folder>/pandas/`` and then ``__init__.py`` in it,
the notebook ``analysis.ipynb`` (nbclient ran the agent's cell), and as root ``/etc/python3.11/sitecustomize.py``,
``/etc/ld.so.preload``, ``/etc/profile.d/*``, ``/etc/cron.d/*``, ``/etc/environment`` and ``/etc/bash.bashrc``.

Each entry of the reviewed list (``nbagent/sandbox/boundary/grantable.py``, README's table) has a test here: the
attacks through the public executor with the guards on and off (the code tries the write, ``last_refusals`` says it
is never granted and why, ``grant()`` refuses even a forged "grantable" refusal, and no file appears), the rest as
forged refusals ``grant()`` must turn down. The kernel's working folder is a folder of this module's own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import assert_next_call_works, outcome

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor
from nbagent.sandbox.boundary import grantable
from nbagent.sandbox.wire.capabilities import RefusedCapability

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the worker's OS confinement is Linux-only")

NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The kernel's working folder (the worker forks into it): a notebook, a data folder and a package."""
    folder = Path(os.path.realpath(tmp_path_factory.mktemp("work")))
    (folder / "analysis.ipynb").write_text(NOTEBOOK)
    (folder / "data").mkdir()
    (folder / "lib").mkdir()
    (folder / "lib" / "__init__.py").write_text("")
    before = os.getcwd()
    os.chdir(folder)
    yield folder
    os.chdir(before)


@pytest.fixture(scope="module", params=[False, True], ids=["guards off", "guards on"])
def executor(request: pytest.FixtureRequest, work: Path) -> Iterator[IsolatedPythonExecutor]:
    executor = IsolatedPythonExecutor(
        guards=request.param, additional_authorized_imports=["io", "os"], timeout_seconds=10
    )
    executor("1")  # the worker starts in the working folder
    yield executor
    executor.close()


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder outside the working folder, a home of the test's own holding the config folders."""
    home = tmp_path / "home"
    for config in (".ipython/profile_default/startup", ".jupyter", ".config", ".local/bin"):
        (home / config).mkdir(parents=True)
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("HOME", str(home))
    return Path(os.path.realpath(tmp_path))


def attempt(executor: IsolatedPythonExecutor, code: str) -> RefusedCapability:
    """Run the agent's ``code``; the one thing it was refused."""
    assert isinstance(outcome(executor, code), ExecutionError)
    [refused] = executor.last_refusals
    return refused


def assert_never_granted(executor: IsolatedPythonExecutor, refused: RefusedCapability, why: str) -> None:
    """Nobody is asked (``grantable=False``, the reason in one line), and ``grant()`` refuses it even forged."""
    assert not refused.grantable and why in refused.reason and "\n" not in refused.reason, refused
    for claim in (refused, RefusedCapability(refused.kind, refused.target, "", grantable=True)):
        with pytest.raises(ValueError, match="does not grant"):
            executor.grant(claim)
    assert executor.grants == [] and executor.allow_write == ()


# --- the proven attacks, through the executor ---------------------------------------------------------------------


def test_a_pandas_py_in_the_working_folder_is_never_granted(executor: IsolatedPythonExecutor, work: Path) -> None:
    """The next ``import pandas`` in a kernel started here (``''`` first on ``sys.path``) would run it."""
    marker = work / "ran.txt"
    payload = f"open({str(marker)!r}, 'w')"
    refused = attempt(executor, f"open('pandas.py', 'w').write({payload!r})")
    assert (refused.kind, refused.target) == ("write", str(work / "pandas.py"))
    assert_never_granted(executor, refused, "Python files")
    assert not (work / "pandas.py").exists()  # the grant no longer creates it empty either
    found = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('pandas').origin)"],
        cwd=work, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert not found.stdout.startswith(str(work)) and not marker.exists()  # a later process loads the real pandas
    assert_next_call_works(executor)


def test_a_new_pandas_folder_in_the_working_folder_is_never_granted(
    executor: IsolatedPythonExecutor, work: Path
) -> None:
    """The folder grant let the code create ``__init__.py`` in it: a package that shadows pandas."""
    code = "import os\nos.makedirs('pandas', exist_ok=True)\nopen('pandas/__init__.py', 'w').write('x = 1')"
    refused = attempt(executor, code)
    assert (refused.kind, refused.target) == ("write", f"{work}/pandas/")
    assert_never_granted(executor, refused, "could become a package")
    assert not (work / "pandas").exists()


def test_an_existing_folder_takes_no_package_and_no_folder_grant(executor: IsolatedPythonExecutor, work: Path) -> None:
    """A folder a person made: ``__init__.py`` in it is code, and a grant of the folder would cover every file."""
    (work / "tools").mkdir()
    try:
        refused = attempt(executor, "open('tools/__init__.py', 'w').write('x = 1')")
        assert refused.target == str(work / "tools" / "__init__.py")
        assert_never_granted(executor, refused, "Python files")
        forged = RefusedCapability("write", f"{work}/tools/", "", grantable=True)
        with pytest.raises(ValueError, match="whole folder"):
            executor.grant(forged)
        assert os.listdir(work / "tools") == []
    finally:
        (work / "tools").rmdir()


def test_the_notebook_is_never_granted(executor: IsolatedPythonExecutor, work: Path) -> None:
    """nbclient runs the notebook later: a cell the agent wrote into it would run in a kernel of its own."""
    code = "open('analysis.ipynb', 'a').write(' ')"
    refused = attempt(executor, code)
    assert refused.target == str(work / "analysis.ipynb")
    assert_never_granted(executor, refused, "notebook")
    assert (work / "analysis.ipynb").read_text() == NOTEBOOK


def test_a_file_inside_a_package_of_the_working_folder_is_never_granted(
    executor: IsolatedPythonExecutor, work: Path
) -> None:
    refused = attempt(executor, "open('lib/settings.json', 'w').write('{}')")
    assert_never_granted(executor, refused, "inside the package")
    assert not (work / "lib" / "settings.json").exists()


def test_a_home_config_folder_is_never_granted(executor: IsolatedPythonExecutor, elsewhere: Path) -> None:
    """``~/.ipython/profile_default/startup`` runs at every IPython start."""
    startup = elsewhere / "home" / ".ipython" / "profile_default" / "startup" / "00-x.py"
    refused = attempt(executor, f"open({str(startup)!r}, 'w').write('x = 1')")
    assert_never_granted(executor, refused, "hidden files")
    assert not startup.exists()


SYSTEM = [
    "/etc/python3.11/sitecustomize.py",
    "/etc/ld.so.preload",
    "/etc/profile.d/nbagent-probe.sh",
    "/etc/cron.d/nbagent-probe",
    "/etc/environment",
    "/etc/bash.bashrc",
]


@pytest.mark.parametrize("target", SYSTEM)
def test_what_the_machine_runs_is_never_granted(executor: IsolatedPythonExecutor, target: str) -> None:
    """As root no file's permissions stop a grant; what the machine loads at its next start must not be asked for.
    The code opens to append and writes nothing (and runs only where Landlock holds: this machine's files)."""
    if not executor.confinement.get("landlock_abi") or not os.path.isdir(os.path.dirname(target)):
        pytest.skip("needs Landlock and the folder (the test touches the machine's real files)")
    before = os.stat(target) if os.path.exists(target) else None
    try:
        refused = attempt(executor, f"open({target!r}, 'a').close()")
        assert (refused.kind, refused.target) == ("write", os.path.realpath(target))
        assert_never_granted(executor, refused, "the Python installation or the system")
    finally:
        if before is None and os.path.exists(target) and os.path.getsize(target) == 0:
            os.unlink(target)  # (only a failure of this test could have made it)
    after = os.stat(target) if os.path.exists(target) else None
    assert (before is None) == (after is None) and (before is None or before.st_mtime_ns == after.st_mtime_ns)


def test_a_data_file_in_the_working_folder_is_granted_alone(executor: IsolatedPythonExecutor, work: Path) -> None:
    """The allow-list still lets the work be done: a report beside the notebook, asked for and granted."""
    code = "open('data/report.csv', 'w').write('a,b')"
    refused = attempt(executor, code)
    assert refused.grantable and refused.target == str(work / "data" / "report.csv")
    grant = executor.grant(refused, "once")
    try:
        assert executor(code).output == 3 and (work / "data" / "report.csv").read_text() == "a,b"
        assert isinstance(outcome(executor, "open('data/helper.py', 'w')"), ExecutionError)  # that file only
    finally:
        executor.revoke(grant)
        (work / "data" / "report.csv").unlink()


def test_a_link_or_dotdot_is_judged_where_it_leads(executor: IsolatedPythonExecutor, work: Path) -> None:
    (work / "data" / "out.csv").symlink_to(work / "pandas.py")
    try:
        for target in (str(work / "data" / "out.csv"), f"{work}/data/../pandas.py"):
            with pytest.raises(ValueError, match="Python files"):
                executor.grant(RefusedCapability("write", target, "", grantable=True))
        assert not (work / "pandas.py").exists()
    finally:
        (work / "data" / "out.csv").unlink()


# --- every entry of the list, as a forged refusal grant() must turn down ----------------------------------------

CODE = [f"evil{suffix}" for suffix in grantable.CODE_SUFFIXES] + ["libevil.so.1", "EVIL.PY", *grantable.CONFIG_NAMES]


@pytest.mark.parametrize("name", CODE)
@pytest.mark.parametrize("where", ["working folder", "elsewhere"])
def test_code_like_files_are_never_granted_anywhere(
    executor: IsolatedPythonExecutor, work: Path, elsewhere: Path, name: str, where: str
) -> None:
    folder = work / "data" if where == "working folder" else elsewhere
    forged = RefusedCapability("write", str(folder / name), "", grantable=True)
    with pytest.raises(ValueError, match="does not grant"):
        executor.grant(forged)
    assert not (folder / name).exists() and executor.grants == []


def closed_places(work: Path, home: Path, elsewhere: Path) -> dict[str, tuple[str, str]]:
    """entry: (target, words of its reason; "" where the place's own reason comes first on this machine: an
    installation under a dot-folder, ``~/.pyenv`` or ``.venv``, is a hidden one)."""
    site_packages = next(p for p in sys.path if p.endswith("site-packages"))
    return {
        "~/.ipython": (f"{home}/.ipython/profile_default/startup/x.csv", "hidden"),
        "~/.jupyter": (f"{home}/.jupyter/jupyter_server_config.json", "hidden"),
        "~/.config": (f"{home}/.config/autostart.csv", "hidden"),
        "~/.local": (f"{home}/.local/bin/tool", "hidden"),
        "a dot-folder of the working folder": (f"{work}/.ipynb_checkpoints/x.csv", "hidden"),
        "the kernel's secrets": ("/proc/self/environ", "connection file"),
        "a folder holding the working folder": (f"{work.parent}/", "it holds"),
        "a folder holding home": (f"{home.parent}/", "holds your home"),
        "/etc": ("/etc/nbagent.csv", "`/etc`"),
        "/usr": ("/usr/local/lib/nbagent.csv", "`/usr`"),
        "/var": ("/var/lib/nbagent.csv", "`/var`"),
        "/opt": ("/opt/nbagent.csv", "`/opt`"),
        "/boot": ("/boot/nbagent.csv", "`/boot`"),
        "/root": ("/root/nbagent.csv", ""),  # (closed as a secret too when it is not your home)
        "/lib": ("/lib/nbagent.csv", "the system"),
        "the Python installation": (os.path.join(sys.prefix, "report.csv"), ""),
        "site-packages": (os.path.join(site_packages, "evil.csv"), ""),
        "notebook": (f"{work}/data/Other.IPYNB", "notebook"),
        "notebook elsewhere": (f"{elsewhere}/x.ipynb", "notebook"),
        "an existing folder": (f"{work}/data/", "whole folder"),
        "an existing folder elsewhere": (f"{elsewhere}/data/", "whole folder"),
        "a new folder in the working folder's tree": (f"{work}/data/new/", "could become a package"),
        "a file deep in a package": (f"{work}/lib/sub/x.csv", "inside the package"),
    }


ENTRIES = list(closed_places(Path("/w"), Path("/h"), Path("/e")))


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("root", [True, False], ids=["as root", "not root"])
def test_each_closed_place_is_never_granted(
    executor: IsolatedPythonExecutor,
    work: Path,
    elsewhere: Path,
    monkeypatch: pytest.MonkeyPatch,
    entry: str,
    root: bool,
) -> None:
    (work / "lib" / "sub").mkdir(exist_ok=True)
    monkeypatch.setattr(grantable, "is_root", lambda: root)
    target, why = closed_places(work, elsewhere / "home", elsewhere)[entry]
    said = grantable.why_not("write", target)
    assert said and why in said
    with pytest.raises(ValueError, match="does not grant"):
        executor.grant(RefusedCapability("write", target, "", grantable=True))
    assert executor.grants == [] and executor.allow_write == ()


def test_an_installation_outside_any_dot_folder_is_never_written(
    executor: IsolatedPythonExecutor, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A virtual environment in ``venv/`` (no dot): its site-packages, data files included (a ``.pth`` is code)."""
    site_packages = elsewhere / "venv" / "lib" / "python3.11" / "site-packages"
    site_packages.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(site_packages)])
    for name in ("evil.pth", "pandas/x.csv", "report.csv"):
        assert "the Python installation" in grantable.why_not("write", str(site_packages / name))
        with pytest.raises(ValueError, match="does not grant"):
            executor.grant(RefusedCapability("write", str(site_packages / name), "", grantable=True))
    assert os.listdir(site_packages) == []


def test_a_new_folder_on_sys_path_is_never_granted(
    executor: IsolatedPythonExecutor, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editable install's project folder: a CSV may be asked for, a new folder (a package) not."""
    monkeypatch.setattr(sys, "path", [*sys.path, str(elsewhere)])
    assert grantable.why_not("write", f"{elsewhere}/report.csv") == ""
    with pytest.raises(ValueError, match="could become a package"):
        executor.grant(RefusedCapability("write", f"{elsewhere}/mypkg/", "", grantable=True))
    assert not (elsewhere / "mypkg").exists()


@pytest.mark.parametrize(
    "variable, target",
    [
        ("PATH", "bin/tool"),
        ("IPYTHONDIR", "ipython/profile_default/startup/x.csv"),
        ("JUPYTER_CONFIG_DIR", "jupyter/jupyter_server_config.json"),
        ("XDG_CONFIG_HOME", "config/autostart/x.desktop"),
        ("PYTHONSTARTUP", "startup.txt"),
    ],
)
def test_folders_programs_and_configuration_come_from_are_never_granted(
    executor: IsolatedPythonExecutor, elsewhere: Path, monkeypatch: pytest.MonkeyPatch, variable: str, target: str
) -> None:
    named = elsewhere / target.split("/")[0]
    monkeypatch.setenv(variable, f"{named}:/usr/bin" if variable == "PATH" else str(named))
    (elsewhere / target).parent.mkdir(parents=True, exist_ok=True)
    with pytest.raises(ValueError, match="programs or configuration"):
        executor.grant(RefusedCapability("write", str(elsewhere / target), "", grantable=True))
    assert not (elsewhere / target).exists()


# --- root: only your folders -----------------------------------------------------------------------------------


def test_as_root_only_your_folders_are_asked_for(
    executor: IsolatedPythonExecutor, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder outside the working folder, home and the temporary folder: as root refused with the reason (reads
    too: root reads every file), otherwise asked for (the file's own permissions protect the rest)."""
    (elsewhere / "data.csv").write_text("x")
    monkeypatch.setattr(grantable, "temp_folders", lambda: [])  # this test's folder stands for /srv, /mnt...
    monkeypatch.setattr(grantable, "is_root", lambda: True)
    for kind, target in (("read", "data.csv"), ("write", "out.csv"), ("write", "out/")):
        with pytest.raises(ValueError, match="runs as root"):
            executor.grant(RefusedCapability(kind, str(elsewhere / target), "", grantable=True))
    assert executor.grants == [] and not (elsewhere / "out.csv").exists()
    monkeypatch.setattr(grantable, "is_root", lambda: False)
    assert grantable.why_not("read", str(elsewhere / "data.csv")) == ""
    assert grantable.why_not("write", str(elsewhere / "out.csv")) == ""
    assert grantable.why_not("write", f"{elsewhere}/out/") == ""  # a new folder where nothing imports from


def test_a_new_folder_outside_the_import_folders_is_granted_and_kept(
    executor: IsolatedPythonExecutor, elsewhere: Path
) -> None:
    """Where nothing imports from, a refused ``mkdir`` is granted as that new, empty folder; the worker that starts
    with it keeps it (the check before each start judges it as the new folder it was)."""
    folder = elsewhere / "out"
    code = f"import os\nos.makedirs({str(folder / 'figures')!r}, exist_ok=True)\nopen({str(folder / 'a.csv')!r}, 'w')"
    refused = attempt(executor, code)
    assert refused.grantable and refused.target == f"{folder}/"
    grant = executor.grant(refused)
    try:
        assert executor(code + "\n'made'").output == "made" and executor.grants == [grant]
    finally:
        executor.revoke(grant)
