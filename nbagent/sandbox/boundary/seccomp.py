"""A seccomp-BPF system-call filter, assembled by hand (no libseccomp): the worker may make the calls syscalls.py allows.

The program: another architecture, or the x32 ABI, kills the process; then a binary search over the sorted numbers of
the allowed calls (a handful of comparisons per call) ends either in ``ALLOW``, in a short block that checks the
call's arguments (:data:`syscalls.CONDITIONAL`), or in ``EPERM`` (not a kill: a library gets a clean ``OSError``).
``clone3`` answers ``ENOSYS`` so that threads fall back to ``clone``, whose flags can be read.

Classic BPF jumps reach at most 255 instructions ahead, so every long jump goes through ``JA`` (32-bit offset):
each branch of the search is ``JGE mid -> JA right_half``, and each leaf test is ``JEQ nr -> RET`` or ``-> JA check``.
Arguments are read as their low 32 bits (the kernel reads ``int`` arguments so); a pointer is checked whole.
"""

from __future__ import annotations

import ctypes
import errno
import itertools
import platform
import socket
import struct
from collections.abc import Callable

from . import syscalls

_LD_W_ABS, _JA, _JEQ, _JGE, _JSET, _RET = 0x20, 0x05, 0x15, 0x35, 0x45, 0x06
_ALU_AND_K = 0x54
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000
_NR, _ARCH = 0, 4
_LEAF = 4  # numbers tested one by one at the bottom of the search

_CLONE_THREAD = 0x00010000
_CLONE_NAMESPACES = 0x7E020000  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
_SOCK_TYPE_FLAGS = 0x800 | 0x80000  # SOCK_NONBLOCK | SOCK_CLOEXEC (the same on x86_64 and aarch64)
_IPPROTO_TCP = 6
#: prctl options that only read state or touch the calling thread: PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_NAME,
#: PR_GET_NAME, PR_GET_SECCOMP, PR_CAPBSET_READ, PR_GET_TIMERSLACK, PR_GET_NO_NEW_PRIVS, PR_GET_THP_DISABLE,
#: PR_SVE_GET_VL, PR_GET_SPECULATION_CTRL, PR_GET_TAGGED_ADDR_CTRL, PR_SET_VMA (glibc names its anonymous maps).
_PRCTL_OPTIONS = (2, 3, 15, 16, 21, 23, 30, 39, 42, 51, 52, 56, 0x53564D41)
#: ioctl requests (asm-generic, shared by x86_64 and aarch64): TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIONCLEX, FIOCLEX.
_IOCTL_REQUESTS = (0x5401, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451)
#: fcntl commands: F_DUPFD..F_SETLKW (0-7), F_GETOWN (9, reading), F_OFD_GETLK/SETLK/SETLKW (36-38),
#: F_DUPFD_CLOEXEC (1030), F_SETPIPE_SZ/GETPIPE_SZ (1031/1032), F_ADD_SEALS/GET_SEALS (1033/1034).
_FCNTL_COMMANDS = (0, 1, 2, 3, 4, 5, 6, 7, 9, 36, 37, 38, 1030, 1031, 1032, 1033, 1034)


def _arg(index: int, high: bool = False) -> int:
    return 16 + 8 * index + (4 if high else 0)  # seccomp_data.args[index], little-endian halves


class _Program:
    """A tiny assembler: instructions with symbolic jump targets, resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int, int | str, int | str]] = []
        self.labels: dict[str, int] = {}
        self._names = itertools.count()

    def new_label(self, hint: str) -> str:
        return f"{hint}.{next(self._names)}"

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, offset, 0, 0))

    def jump(self, op: int, value: int, true: int | str = 0, false: int | str = 0) -> None:
        self.code.append((op, value, true, false))

    def goto(self, target: str) -> None:
        self.code.append((_JA, target, 0, 0))  # type: ignore[arg-type]  # k: resolved in assemble

    def ret(self, value: int) -> None:
        self.code.append((_RET, value, 0, 0))

    def assemble(self) -> bytes:
        out = b""
        for index, (op, k, jt, jf) in enumerate(self.code):
            if op == _JA:
                k, jt, jf = self.labels[k] - index - 1, 0, 0  # type: ignore[index]
            true, false = (self.labels[t] - index - 1 if isinstance(t, str) else t for t in (jt, jf))
            if not (0 <= true <= 255 and 0 <= false <= 255) or (op == _JA and k < 0):
                raise ValueError("seccomp program jump out of range")
            out += struct.pack("<HBBI", op, true, false, k & 0xFFFFFFFF)
        if len(self.code) > 4096:
            raise ValueError("seccomp program too long")
        return out


def supported() -> bool:
    return platform.machine() in _AUDIT_ARCH and platform.machine() in syscalls.NUMBERS


def build(pid: int, *, allow_network: bool, accept_fd: int | None = None) -> bytes:
    """The filter for the worker process ``pid`` (signals and scheduling queries only to itself).

    ``allow_network``: ``socket`` may make TCP sockets (else every ``socket`` is ``EPERM``). ``accept_fd``: the one
    descriptor ``accept4`` may accept on (a listener made before the filter; ``None``: no ``accept4`` at all).
    """
    machine = platform.machine()
    table = syscalls.numbers(machine)
    p = _Program()
    p.load(_ARCH)
    p.jump(_JEQ, _AUDIT_ARCH[machine], 1, 0)
    p.ret(_RET_KILL_PROCESS)
    p.load(_NR)
    if machine == "x86_64":
        p.jump(_JGE, _X32_BIT, 0, 1)
        p.ret(_RET_KILL_PROCESS)
    checks = _checks(pid, allow_network, accept_fd)
    actions: dict[int, str | None] = {table[name]: None for name in syscalls.allowed_names() if name in table}
    actions.update({table[name]: name for name in checks if name in table})
    _search(p, sorted(actions.items()))
    for name, check in checks.items():
        if name in table:
            p.label(f"check:{name}")
            check(p)
    return p.assemble()


def _search(p: _Program, items: list[tuple[int, str | None]]) -> None:
    """Binary search over sorted (number, check or None = allow) pairs; the accumulator holds the number."""
    if len(items) <= _LEAF:
        for number, check in items:
            p.jump(_JEQ, number, 0, 1)
            if check is None:
                p.ret(_RET_ALLOW)
            else:
                p.goto(f"check:{check}")
        p.ret(_RET_ERRNO | errno.EPERM)
        return
    middle = len(items) // 2
    right = p.new_label("right")
    p.jump(_JGE, items[middle][0], 0, 1)
    p.goto(right)
    _search(p, items[:middle])
    p.label(right)
    _search(p, items[middle:])


# --- argument checks: each is a short block ending in a return ----------------------------------------------------

Check = Callable[[_Program], None]


def _allow_if_any(p: _Program, values: tuple[int, ...]) -> None:
    """The accumulator is one of ``values``: allow, else EPERM."""
    for index, value in enumerate(values):
        p.jump(_JEQ, value, len(values) - index, 0)  # to the final RET ALLOW
    p.ret(_RET_ERRNO | errno.EPERM)
    p.ret(_RET_ALLOW)


def _arg_in(index: int, values: tuple[int, ...]) -> Check:
    def check(p: _Program) -> None:
        p.load(_arg(index))
        _allow_if_any(p, values)

    return check


def _returns(value: int) -> Check:
    def check(p: _Program) -> None:
        p.ret(value)

    return check


def _clone(p: _Program) -> None:
    p.load(_arg(0))
    p.jump(_JSET, _CLONE_NAMESPACES, 0, 1)
    p.ret(_RET_ERRNO | errno.EPERM)
    p.jump(_JSET, _CLONE_THREAD, 0, 1)
    p.ret(_RET_ALLOW)
    p.ret(_RET_ERRNO | errno.EPERM)


def _socket(p: _Program) -> None:
    """AF_INET/AF_INET6, SOCK_STREAM (flags aside), protocol 0 or IPPROTO_TCP (not MPTCP, 262)."""
    deny = p.new_label("deny")
    p.load(_arg(0))
    p.jump(_JEQ, socket.AF_INET, 1, 0)
    p.jump(_JEQ, socket.AF_INET6, 0, deny)
    p.load(_arg(1))
    p.code.append((_ALU_AND_K, ~_SOCK_TYPE_FLAGS & 0xFFFFFFFF, 0, 0))
    p.jump(_JEQ, socket.SOCK_STREAM, 0, deny)
    p.load(_arg(2))
    p.jump(_JEQ, 0, 1, 0)
    p.jump(_JEQ, _IPPROTO_TCP, 0, deny)
    p.ret(_RET_ALLOW)
    p.label(deny)
    p.ret(_RET_ERRNO | errno.EPERM)


def _sendto(p: _Program) -> None:
    """No destination address: ``dest_addr`` (argument 4, a pointer) is NULL, both halves."""
    p.load(_arg(4))
    p.jump(_JEQ, 0, 0, 2)
    p.load(_arg(4, high=True))
    p.jump(_JEQ, 0, 1, 0)
    p.ret(_RET_ERRNO | errno.EPERM)
    p.ret(_RET_ALLOW)


def _checks(pid: int, allow_network: bool, accept_fd: int | None) -> dict[str, Check]:
    self_or_zero = _arg_in(0, (0, pid))
    return {
        "clone": _clone,
        "clone3": _returns(_RET_ERRNO | errno.ENOSYS),
        "socket": _socket if allow_network else _returns(_RET_ERRNO | errno.EPERM),
        "socketpair": _arg_in(0, (socket.AF_UNIX,)),
        "accept4": _arg_in(0, (accept_fd,)) if accept_fd is not None else _returns(_RET_ERRNO | errno.EPERM),
        "sendto": _sendto,
        "kill": _arg_in(0, (pid,)),
        "tgkill": _arg_in(0, (pid,)),
        "prlimit64": _arg_in(0, (0,)),
        "getpgid": self_or_zero,
        "getsid": self_or_zero,
        "sched_getaffinity": self_or_zero,
        "sched_getparam": self_or_zero,
        "sched_getscheduler": self_or_zero,
        "prctl": _arg_in(0, _PRCTL_OPTIONS),
        "ioctl": _arg_in(1, _IOCTL_REQUESTS),
        "fcntl": _arg_in(1, _FCNTL_COMMANDS),
    }


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(program: bytes) -> None:
    """Install ``program`` for the calling thread and its future threads (``no_new_privs`` must be set)."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "installing the seccomp filter failed")
