"""The worker's system calls by allow-list: real workloads still run (guards on and off), everything else is EPERM.

The denied calls are made raw (ctypes ``syscall()``, guards off): the OS layer alone must refuse them, and the host
(this pytest process) must live and the next call work.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from syscall_workloads import NETWORK, OFFLINE, THREADS, Workload, hello_server, tunnel

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor
from nbagent.sandbox.boundary import confine, seccomp, syscalls

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not seccomp.supported(), reason="the seccomp filter is Linux-only (x86_64, aarch64)"
)
NUMBERS = syscalls.NUMBERS.get(platform.machine(), {})


def run(workload: Workload, guards: bool, **options: object) -> object:
    executor = IsolatedPythonExecutor(
        guards=guards, additional_authorized_imports=list(workload.imports), timeout_seconds=60, **options
    )
    try:
        executor.send_variables({"SCRATCH": executor.scratch_dir})
        assert executor.confinement == {} or executor.confinement.get("seccomp")
        return executor(workload.code).output
    finally:
        executor.close()


# --- what must keep working ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("guards", [True, False], ids=["guards on", "guards off"])
@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_a_real_workload_runs_in_the_filtered_worker(name: str, guards: bool) -> None:
    workload = OFFLINE[name]
    assert run(workload, guards) == workload.expected


def test_threads_and_thread_pools_run_in_the_filtered_worker() -> None:
    assert run(THREADS, guards=False) == THREADS.expected


@pytest.mark.parametrize("guards", [True, False], ids=["guards on", "guards off"])
def test_a_granted_network_module_connects_without_a_namespace(guards: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no namespace can be made: requests and urllib straight to a TCP server (socket, connect, poll, send...)."""
    monkeypatch.setenv("NBAGENT_NETWORK_NAMESPACE", "0")
    with hello_server() as (url, port):
        monkeypatch.setattr(confine, "NETWORK_PORTS", (80, 443, port))
        executor = IsolatedPythonExecutor(
            guards=guards, additional_authorized_imports=list(NETWORK.imports), timeout_seconds=30
        )
        try:
            executor.send_variables({"URL": url})
            assert executor(NETWORK.code).output == NETWORK.expected
        finally:
            executor.close()


def test_a_granted_network_module_connects_through_the_relay() -> None:
    """In the worker's own namespace: the relay accepts (accept4 on its listener alone) and tunnels to the host."""
    with hello_server() as (_, port):
        executor = IsolatedPythonExecutor(
            guards=False, allow_network=True, allow_hosts=[f"127.0.0.1:{port}"], timeout_seconds=30
        )
        try:
            assert executor(tunnel(port)).output == b"hello"
        finally:
            executor.close()


# --- what must fail with EPERM -------------------------------------------------------------------------------------

_RAW = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def errno_of(number, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    return 0 if result >= 0 else ctypes.get_errno()
"""

#: name -> arguments: each an attack or a call the worker has no business making.
_DENIED_CALLS = {
    "shmget": (0, 4096, 0o1600),  # IPC_PRIVATE, IPC_CREAT | 0600
    "shmctl": (0, 3, 0),  # IPC_INFO: lists the machine's segments
    "semget": (0, 1, 0o1600),
    "msgget": (0, 0o1600),
    "setsid": (),
    "setpgid": (0, 0),
    "bind": (0, 0, 0),
    "listen": (0, 1),
    "accept": (0, 0, 0),
    "accept4": (0, 0, 0, 0),
    "socket": (1, 1, 0),  # AF_UNIX
    "socketpair": (2, 1, 0, 0),  # AF_INET
    "chmod": (0, 0o777),
    "fchmod": (0, 0o666),  # /dev/null's own mode: harmless if it were allowed
    "memfd_create": (0, 0),
    "mq_open": (0, 0o100, 0o600, 0),
    "io_uring_setup": (1, 0),
    "userfaultfd": (0,),
    "clone3": (0, 0),  # ENOSYS: glibc falls back to clone
}


def _errno_codes(executor: IsolatedPythonExecutor, calls: dict[str, tuple[int, ...]]) -> dict[str, int]:
    lines = [f"{name!r}: errno_of({NUMBERS[name]}, *{args!r})," for name, args in calls.items() if name in NUMBERS]
    return executor(_RAW + "{\n" + "\n".join(lines) + "\n}").output


@pytest.fixture
def raw() -> Iterator[IsolatedPythonExecutor]:
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=10)
    yield executor
    executor.close()


def _sysv_segments() -> set[str]:
    try:
        return {line.split()[1] for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]}
    except OSError:
        return set()


def test_denied_calls_fail_with_eperm(raw: IsolatedPythonExecutor) -> None:
    before = _sysv_segments()
    codes = _errno_codes(raw, _DENIED_CALLS)
    expected = {name: errno.ENOSYS if name == "clone3" else errno.EPERM for name in codes}
    assert codes == expected
    assert _sysv_segments() == before
    assert raw("6 * 7").output == 42


def test_signals_limits_and_descriptors_reach_only_the_worker(raw: IsolatedPythonExecutor) -> None:
    host = os.getpid()
    calls = {
        "kill": (host, 0),
        "tgkill": (host, host, 0),
        "prlimit64": (host, 7, 0, 0),  # RLIMIT_NOFILE of the kernel
        "getpgid": (host,),
        "getsid": (host,),
        "sched_getaffinity": (host, 0, 0),
        "prctl": (1, 0, 0, 0, 0),  # PR_SET_PDEATHSIG 0: undo the tie to the kernel's life
        "ioctl": (0, 0x5412, 0),  # TIOCSTI
        "fcntl": (0, 8, host),  # F_SETOWN: SIGIO to the kernel
        "sendto": (0, 0, 0, 0, 1, 16),  # a destination address
    }
    codes = _errno_codes(raw, calls)
    assert codes == dict.fromkeys(codes, errno.EPERM)
    own = "import os, signal\nos.kill(os.getpid(), 0)\nsignal.pthread_kill(__import__('threading').get_ident(), 0)\n1"
    assert raw(own).output == 1
    assert raw("6 * 7").output == 42


def test_sockets_with_a_grant_are_tcp_only() -> None:
    executor = IsolatedPythonExecutor(guards=False, allow_network=True, timeout_seconds=10)
    try:
        code = """
import socket
def made(*args):
    try:
        socket.socket(*args).close()
        return "made"
    except OSError as exc:
        return exc.errno
[made(socket.AF_INET, socket.SOCK_STREAM), made(socket.AF_INET6, socket.SOCK_STREAM | socket.SOCK_NONBLOCK, 6),
 made(socket.AF_INET, socket.SOCK_STREAM, 262), made(socket.AF_INET, socket.SOCK_DGRAM),
 made(socket.AF_INET6, socket.SOCK_RAW, 58), made(socket.AF_UNIX, socket.SOCK_STREAM),
 made(socket.AF_NETLINK, socket.SOCK_RAW, 0), made(socket.AF_PACKET, socket.SOCK_RAW, 0)]
"""
        assert executor(code).output == ["made", "made"] + [errno.EPERM] * 6
        assert executor("6 * 7").output == 42
    finally:
        executor.close()


def test_the_x32_abi_kills_the_worker_and_the_next_call_works(raw: IsolatedPythonExecutor) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("x32 exists on x86_64 only")
    with pytest.raises(ExecutionError, match="killed|crashed|ended"):
        raw(_RAW + f"errno_of({0x40000000 | NUMBERS['getpid']})")
    assert raw("6 * 7").output == 42


# --- the program itself, run by a small BPF interpreter (both architectures, every number) ------------------------

_ALLOW, _KILL, _EPERM, _ENOSYS = 0x7FFF0000, 0x80000000, 0x50000 | errno.EPERM, 0x50000 | errno.ENOSYS
_ARCHES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def evaluate(program: bytes, arch: int, number: int, *args: int) -> int:
    """What the filter answers for one call (classic BPF: the few opcodes seccomp.py emits)."""
    data = struct.pack("<iIQ6Q", number, arch, 0, *(list(args) + [0] * 6)[:6])
    code = [struct.unpack_from("<HBBI", program, offset) for offset in range(0, len(program), 8)]
    pc = acc = 0
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        if op == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == 0x54:
            acc &= k
        elif op == 0x05:
            pc += k
        elif op == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += jt if taken else jf


@pytest.fixture(params=sorted(_ARCHES))
def machine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(platform, "machine", lambda: request.param)
    return request.param


def test_the_program_allows_exactly_the_table(machine: str) -> None:
    program = seccomp.build(1234, allow_network=True, accept_fd=7)
    arch, table = _ARCHES[machine], syscalls.numbers(machine)
    allowed = {table[name] for name in syscalls.allowed_names() if name in table}
    conditional = {table[name] for name in syscalls.CONDITIONAL if name in table}
    assert len(program) // 8 < 1000
    for number in range(600):
        expected = _ALLOW if number in allowed else None if number in conditional else _EPERM
        if expected is not None:
            assert evaluate(program, arch, number) == expected, number
    assert all(evaluate(program, arch, table[name]) == _EPERM for name in syscalls.denied_names() if name in table)
    assert evaluate(program, arch ^ 1, table["read"]) == _KILL
    if machine == "x86_64":
        assert evaluate(program, arch, 0x40000000 | table["read"]) == _KILL


def test_the_program_checks_arguments(machine: str) -> None:
    arch, table = _ARCHES[machine], syscalls.numbers(machine)
    granted = seccomp.build(1234, allow_network=True, accept_fd=7)
    closed = seccomp.build(1234, allow_network=False)

    def answer(name: str, *args: int, program: bytes = granted) -> int:
        return evaluate(program, arch, table[name], *args)

    inet, inet6, unix, stream, dgram, nonblock_cloexec = 2, 10, 1, 1, 2, 0x800 | 0x80000
    assert answer("socket", inet, stream | nonblock_cloexec, 0) == _ALLOW
    assert answer("socket", inet6, stream, 6) == _ALLOW
    assert answer("socket", inet, stream, 0, program=closed) == _EPERM
    for args in [(inet, stream, 262), (inet, dgram, 0), (unix, stream, 0), (16, 3, 0), (inet6, 3, 0)]:
        assert answer("socket", *args) == _EPERM, args
    assert answer("socketpair", unix, stream, 0, 0) == _ALLOW and answer("socketpair", inet, stream, 0, 0) == _EPERM
    assert answer("accept4", 7) == _ALLOW and answer("accept4", 8) == _EPERM
    assert answer("accept4", 7, program=closed) == _EPERM
    thread = 0x00010000 | 0x100 | 0x800 | 0x200  # CLONE_THREAD | VM | SIGHAND | FS
    assert answer("clone", thread) == _ALLOW
    assert answer("clone", 17) == _EPERM  # SIGCHLD: a new process
    assert answer("clone", thread | 0x40000000) == _EPERM  # and a network namespace
    assert answer("clone3", 0, 88) == _ENOSYS
    assert answer("kill", 1234, 9) == _ALLOW and answer("kill", 1, 0) == _EPERM and answer("kill", 0, 9) == _EPERM
    assert answer("tgkill", 1234, 1235, 0) == _ALLOW and answer("tgkill", 99, 99, 0) == _EPERM
    assert answer("prlimit64", 0, 7) == _ALLOW and answer("prlimit64", 1234, 7) == _EPERM
    assert answer("getsid", 0) == _ALLOW and answer("getsid", 1234) == _ALLOW and answer("getsid", 1) == _EPERM
    assert answer("prctl", 15) == _ALLOW  # PR_SET_NAME
    for option in (1, 4, 22, 24, 36, 38, 0x59616D61):  # PDEATHSIG, DUMPABLE, SECCOMP, CAPBSET_DROP, SUBREAPER...
        assert answer("prctl", option) == _EPERM, option
    assert answer("ioctl", 0, 0x5401) == _ALLOW and answer("ioctl", 0, 0x5412) == _EPERM  # TCGETS / TIOCSTI
    assert answer("fcntl", 3, 6) == _ALLOW and answer("fcntl", 3, 8) == _EPERM  # F_SETLK / F_SETOWN
    assert answer("sendto", 3, 0, 10, 0, 0, 0) == _ALLOW
    assert answer("sendto", 3, 0, 10, 0, 0x1000, 16) == _EPERM
    assert evaluate(granted, arch, table["sendto"], 3, 0, 10, 0, 1 << 40, 16) == _EPERM  # the pointer's high half
