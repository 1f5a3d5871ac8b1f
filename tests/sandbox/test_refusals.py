"""What the boundary refused the code, and grants that widen it (issue 23, item 2).

A refused read or write (Landlock), a socket without a network grant (seccomp) and a connection the proxy's policy
turned down are listed after the call in ``executor.last_refusals``; ``grant(refused)`` lets the same code through at
the next call, ``revoke(grant)`` closes it again. With the guards on and off (the OS layer alone). The worker is
hostile: its forged claims are bounded and checked, and never grant anything by themselves.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import TO_THE_HOST, assert_next_call_works, outcome

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor
from nbagent.sandbox.boundary import confine, netns, proxy, refusals
from nbagent.sandbox.wire.capabilities import RefusedCapability

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the worker's OS confinement is Linux-only")
FILES = ["io", "os", "pathlib"]


@pytest.fixture(scope="module", params=[False, True], ids=["guards off", "guards on"])
def executor(request: pytest.FixtureRequest) -> Iterator[IsolatedPythonExecutor]:
    executor = IsolatedPythonExecutor(guards=request.param, additional_authorized_imports=FILES, timeout_seconds=10)
    yield executor
    executor.close()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the working directory and the scratch folder, reached through a link (refusals name the real
    path)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    return tmp_path


def refused_by(executor: IsolatedPythonExecutor, code: str) -> list[RefusedCapability]:
    assert isinstance(outcome(executor, code), ExecutionError)
    return executor.last_refusals


def test_a_refused_write_is_reported_granted_and_revoked(executor: IsolatedPythonExecutor, outside: Path) -> None:
    code = f"open({str(outside / 'link' / 'report.csv')!r}, 'w').write('a,b')"
    target = str(outside / "real" / "report.csv")
    [refused] = refused_by(executor, code)
    assert (refused.kind, refused.target, refused.grantable) == ("write", target, True)
    assert refused.describe() == f"write `{target}`"
    grant = executor.grant(refused, "run")
    assert executor.grants == [grant] and "created the empty file" in grant.note  # only that file, not its folder
    assert executor(code).output == 3 and executor.last_refusals == []
    assert any("fresh worker" in note for note in executor.last_notes)  # the OS rules are fixed at a worker's start
    assert (outside / "real" / "report.csv").read_text() == "a,b"
    assert refused_by(executor, f"open({str(outside / 'real' / 'other.csv')!r}, 'w')")[0].kind == "write"
    executor.revoke(grant)
    assert executor.grants == [] and refused_by(executor, code) == [refused]
    assert (outside / "real" / "report.csv").read_text() == "a,b"  # what the code wrote stays


def test_allow_once_re_runs_the_step_from_its_snapshot_with_the_grant(
    executor: IsolatedPythonExecutor, outside: Path
) -> None:
    """The loop's "Allow once": rewind to before the step, grant, re-run it, revoke."""
    target = outside / "real" / "rows.txt"
    executor("rows = [1, 2]")
    executor.checkpoint(7)
    code = f"rows.append(3)\nopen({str(target)!r}, 'w').write(str(rows))"
    [refused] = refused_by(executor, code)
    assert executor.state["rows"] == [1, 2, 3]  # the failed step changed the list before it was refused
    executor.rewind(7)
    grant = executor.grant(refused, "once")
    executor.checkpoint(7)
    assert executor(code).output == 9 and target.read_text() == "[1, 2, 3]"
    executor.revoke(grant)
    assert executor.grants == []


def test_a_refused_read_is_found_behind_a_wrapping_error(executor: IsolatedPythonExecutor, outside: Path) -> None:
    data = outside / "real" / "data.txt"
    data.write_text("hello")
    code = f"try:\n    text = open({str(data)!r}).read()\nexcept OSError as e:\n    raise RuntimeError('no data') from e\ntext"
    [refused] = refused_by(executor, code)
    assert (refused.kind, refused.target, refused.grantable) == ("read", str(data), True)
    grant = executor.grant(refused, "once")
    assert executor(code).output == "hello"
    executor.revoke(grant)
    assert refused_by(executor, code) == [refused]


def test_a_refused_folder_is_created_as_a_folder(executor: IsolatedPythonExecutor, outside: Path) -> None:
    folder = outside / "real" / "out"
    code = f"import os\nos.makedirs({str(folder / 'figures')!r}, exist_ok=True)\n'made'"
    [refused] = refused_by(executor, code)
    assert (refused.kind, refused.target) == ("write", f"{folder}/")
    grant = executor.grant(refused)
    assert folder.is_dir() and executor(code).output == "made" and (folder / "figures").is_dir()
    executor.revoke(grant)
    assert folder.is_dir()  # not empty: kept


def test_an_unused_created_file_goes_with_its_grant(executor: IsolatedPythonExecutor, outside: Path) -> None:
    target = outside / "real" / "never.txt"
    [refused] = refused_by(executor, f"open({str(target)!r}, 'w').write('x')")
    grant = executor.grant(refused)
    assert target.exists() and target.read_text() == ""
    executor.revoke(grant)
    assert not target.exists()


def test_a_granted_path_that_becomes_a_link_is_withdrawn(executor: IsolatedPythonExecutor, outside: Path) -> None:
    data = outside / "real" / "data"
    data.mkdir()
    (data / "a.txt").write_text("a")
    code = f"open({str(data / 'a.txt')!r}).read()"
    executor.grant(refused_by(executor, code)[0])
    assert executor(code).output == "a"
    (outside / "secret").mkdir()
    (outside / "secret" / "a.txt").write_text("secret")
    (data / "a.txt").unlink()
    data.rmdir()
    data.symlink_to(outside / "secret")  # what a hostile worker able to write the parent could do
    executor.restart()  # a worker starts: it never follows the link
    assert executor.grants == [] and any("was withdrawn" in note for note in executor.last_notes)
    assert isinstance(outcome(executor, code), ExecutionError)


@pytest.mark.parametrize(
    "target, why",
    [
        ("~/.ssh/id_rsa", "hidden files"),
        ("/proc/1/environ", "never grants"),
        ("/", "holds your home folder"),
        ("~", "holds your home folder"),
        (".", "holds the working directory"),
        ("/usr/lib/evil.py", "the Python installation or the system"),
    ],
)
def test_never_granted_whatever_the_refusal_says(executor: IsolatedPythonExecutor, target: str, why: str) -> None:
    forged = RefusedCapability("write", os.path.abspath(os.path.expanduser(target)), "", grantable=True)
    with pytest.raises(ValueError, match=why):
        executor.grant(forged)
    assert executor.grants == [] and str(forged.target) not in executor.allow_write


# --- the network -----------------------------------------------------------------------------------------------------


def test_no_network_grant_is_reported_and_granted() -> None:
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=10)
    try:
        code = "import socket\nsocket.socket().close()\n'socket'"
        assert refused_by(executor, code) == [RefusedCapability("network", "", refused_by(executor, code)[0].reason)]
        grant = executor.grant(executor.last_refusals[0])
        assert executor(code).output == "socket" and executor.allow_network
        assert outcome(executor, "import os\nos.environ.get('HTTPS_PROXY')") == netns.RELAY_URL
        executor.revoke(grant)
        assert refused_by(executor, code)[0].kind == "network" and not executor.allow_network
    finally:
        executor.close()


def tunnel(host: str, port: int) -> str:
    """Agent code: a CONNECT through the host's proxy; the status line the code sees."""
    return f"""
import http.client
c = http.client.HTTPConnection('127.0.0.1', {netns.RELAY_PORT}, timeout=5)
c.set_tunnel({host!r}, {port})
try:
    c.request('GET', '/')
    answer = c.getresponse().status
except OSError as e:
    answer = str(e)
answer
"""


def test_a_connection_outside_allow_domains_is_reported_and_granted_at_once() -> None:
    executor = IsolatedPythonExecutor(
        guards=False, additional_authorized_imports=["http"], allow_domains=["example.com"], timeout_seconds=10
    )
    try:
        assert "403 nbagent: example.org is not in" in executor(tunnel("example.org", 443)).output
        [refused] = executor.last_refusals
        assert (refused.kind, refused.target, refused.grantable) == ("connect", "example.org:443", True)
        pid = executor.worker_pid
        grant = executor.grant(refused, "run")
        # There is no internet here: past the policy, the proxy's next question is the address (it does not resolve).
        assert "not in this agent's allow_domains" not in executor(tunnel("example.org", 443)).output
        assert executor.worker_pid == pid and executor.last_refusals == []  # live: the same worker
        with pytest.raises(proxy.Refused, match="allow_domains"):
            executor._proxy.policy.resolve("example.org", 80)  # that host and port only
        executor.revoke(grant)
        assert "403 nbagent: example.org is not in" in executor(tunnel("example.org", 443)).output
        executor(tunnel("127.0.0.1", 443))
        [loopback] = executor.last_refusals
        assert loopback.target == "127.0.0.1:443" and not loopback.grantable  # allow_hosts is the explicit way
        with pytest.raises(ValueError, match="does not grant"):
            executor.grant(loopback)
    finally:
        executor.close()


# --- a hostile worker ------------------------------------------------------------------------------------------------

FORGE = (
    TO_THE_HOST
    + """
import struct, json, time
def forge(header):
    data = json.dumps(header).encode()
    to_the_host(lambda s: s.sendall(struct.pack('<II', len(data), 0) + data))
"""
)


def test_forged_refusals_are_bounded_checked_and_grant_nothing(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connection = tmp_path / "kernel-1.json"
    connection.write_text("{}")
    monkeypatch.setattr(confine, "_connection_file", lambda: str(connection))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("key")
    secrets = [str(home / ".ssh" / "id_rsa"), str(connection), "/proc/self/environ"]
    junk = [
        "read /etc/passwd", None, 5, {"kind": 5}, {"kind": "read", "target": ["/x"]}, {"kind": "read"},
        {"kind": "read", "target": "relative/path"}, {"kind": "write", "target": "/" + "a" * 100_000},
        {"kind": "connect", "target": "evil.example:443"}, {"kind": "network", "target": "x"},
        {"kind": "exec", "target": "/bin/sh"},
    ]  # fmt: skip
    forged = [
        {"kind": "write", "target": f"/tmp/forged-{i}", "grantable": True, "reason": "x" * 300} for i in range(1000)
    ]
    sent = junk + [{"kind": "read", "target": s} for s in secrets] + forged
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=10)
    try:
        code = FORGE + f"forge({{'t': 'done', 'id': 1, 'names': {{}}, 'deleted': [], 'refused': {sent!r}}})\n"
        outcome(executor, code + "time.sleep(0.5)")
        refused = executor.last_refusals
        assert len(refused) == 5, refused
        assert [r.target for r in refused[:3]] == [os.path.realpath(s) for s in secrets]
        assert not any(r.grantable for r in refused[:3])
        assert [r.target for r in refused[3:]] == ["/tmp/forged-0", "/tmp/forged-1"]
        assert all(len(r.reason) < 200 for r in refused)  # the host's own words, not the worker's
        assert executor.grants == [] and executor.allow_write == () and not executor.allow_network
        for secret in refused[:3]:
            with pytest.raises(ValueError, match="nbagent does not grant"):
                executor.grant(secret)
        assert_next_call_works(executor)
    finally:
        executor.close()


def test_a_path_a_person_cannot_read_is_refused_with_the_reason_never_asked(tmp_path: Path) -> None:
    """Control or bidi characters in a claimed path (issue 29, item 2): never grantable, the reason said, so the views
    show it escaped and nobody is asked about a name that reads as something else."""
    reach = refusals.Reach(scratch=str(tmp_path / "scratch"))
    claims = ["/tmp/a\nb", "/tmp/\x1b[31mred", "/tmp/invoice\u202efdp.exe", "/tmp/x\u2066y", "/tmp/nul\0l", "rel\u202e"]
    found = refusals.from_worker([{"kind": "write", "target": t} for t in claims], reach)
    assert [r.target for r in found] == ["/tmp/a\nb", "/tmp/\x1b[31mred", "/tmp/invoice\u202efdp.exe", "/tmp/x\u2066y"]
    assert not any(r.grantable for r in found) and all("bidi" in r.reason for r in found)
    assert refusals.from_worker([{"kind": "write", "target": "/tmp/report`x.csv"}], reach)[0].grantable  # escaped


def test_the_local_executor_has_the_same_surface_and_grants_nothing() -> None:
    local = LocalPythonExecutor(timeout_seconds=5)
    with pytest.raises(ExecutionError):
        local("raise PermissionError(13, 'Permission denied', '/etc/x')")
    assert local.last_refusals == [] and local.grants == []
    with pytest.raises(RuntimeError, match="no OS confinement"):
        local.grant(RefusedCapability("write", "/tmp/x"))


def test_a_connection_file_in_the_shared_temp_folder_closes_its_keys_not_the_whole_folder(monkeypatch, tmp_path):
    """nbclient (nbval, nbconvert) puts the kernel's connection file straight into /tmp: a file a person allows in a
    folder of /tmp may be asked for, /tmp itself and the key files beside the connection file never."""
    from nbagent.sandbox.boundary import confine, refusals

    monkeypatch.setattr(confine, "_connection_file", lambda: "/tmp/tmp-kernel-keys.json")
    lesson = tempfile.mkdtemp(dir="/tmp")
    assert refusals.never_granted("write", f"{lesson}/report.csv") == ""
    os.rmdir(lesson)
    assert "connection file" in refusals.never_granted("read", "/tmp/tmp-other-kernel.json")
    assert refusals.never_granted("read", "/tmp/tmp-kernel-keys.json")
    assert refusals.never_granted("write", "/tmp/")  # it holds the connection file (or the working directory)
    monkeypatch.setattr(confine, "_connection_file", lambda: str(tmp_path / "runtime" / "kernel-1.json"))
    assert refusals.never_granted("read", str(tmp_path / "runtime" / "notes.txt"))  # a runtime folder: all closed


def test_a_project_folder_on_sys_path_takes_reports_never_python_files(monkeypatch, tmp_path):
    """An editable install puts the project's folder on sys.path: a CSV written there may be asked for, a module the
    kernel could import may not; the interpreter's own folders stay closed."""
    import sys

    from nbagent.sandbox.boundary import refusals

    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(project)])
    assert refusals.never_granted("write", str(project / "notebooks" / "report.csv")) == ""
    assert "Python files" in refusals.never_granted("write", str(project / "json.py"))
    assert "Python files" in refusals.never_granted("write", str(project / "notebooks" / "helper.py"))
    assert refusals.never_granted("write", os.path.join(sys.prefix, "report.csv"))


def test_a_kernel_whose_keys_are_in_tmp_still_lets_the_worker_use_a_working_directory_in_tmp(monkeypatch):
    """nbval's kernels keep their connection file in /tmp: the worker's plan closes the key files there, not all of
    /tmp (which had closed a working directory and every granted file under /tmp)."""
    from nbagent.sandbox.boundary import confine

    work = os.path.realpath(tempfile.mkdtemp(dir="/tmp"))
    keys = tempfile.NamedTemporaryFile(dir="/tmp", suffix=".json", delete=False).name
    try:
        monkeypatch.setattr(confine, "_connection_file", lambda: os.path.realpath(keys))
        monkeypatch.chdir(work)
        report = os.path.join(work, "report.csv")
        open(report, "w").close()
        plan = confine.plan(tempfile.gettempdir(), allow_write=(report,))
        assert report in plan.read and report in plan.write  # the working directory (its entries) and the grant
        assert os.path.realpath(keys) in confine.never_granted() and "/tmp" not in confine.never_granted()
    finally:
        os.unlink(keys)
        os.unlink(os.path.join(work, "report.csv"))
        os.rmdir(work)
