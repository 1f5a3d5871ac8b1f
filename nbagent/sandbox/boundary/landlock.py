"""Landlock (Linux >= 5.13) through its three system calls, with ctypes: an allow-list of file hierarchies and ports.

Used by the worker process after ``fork`` (see confine.py). Rights not granted to any hierarchy are denied everywhere,
including ``execve`` (``EXECUTE`` is handled and never granted). Works unprivileged once ``no_new_privs`` is set.

* ABI 1: files; ABI 2: ``REFER``; ABI 3: ``TRUNCATE``; ABI 4: TCP ``bind``/``connect`` by port; ABI 5: ``IOCTL_DEV``;
  ABI 6: scopes (signals and abstract unix sockets cannot reach processes outside the sandbox).
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Iterable

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # same numbers on both (generic table)

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = (1 << n for n in range(9, 16))
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
WRITE = READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | REFER | TRUNCATE | MAKE_FIFO

_PATH_BENEATH, _NET_PORT = 1, 2


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class LandlockError(OSError):
    pass


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _numbers() -> tuple[int, int, int] | None:
    return _SYSCALLS.get(platform.machine()) if os.uname().sysname == "Linux" else None


def abi_version() -> int:
    """The Landlock ABI the running kernel offers (0: none)."""
    numbers = _numbers()
    if numbers is None:
        return 0
    version = _libc().syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(0, int(version))


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class Ruleset:
    """Collect rules, then :meth:`restrict_self` (irreversible for this thread and the threads/processes it starts)."""

    def __init__(self, *, restrict_network: bool = True) -> None:
        numbers = _numbers()
        self.abi = abi_version()
        if numbers is None or self.abi < 1:
            raise LandlockError("Landlock is not available on this kernel")
        self._create, self._add, self._restrict = numbers
        self._libc = _libc()
        self.handled_fs = _handled_fs(self.abi)
        self.handled_net = (NET_BIND_TCP | NET_CONNECT_TCP) if restrict_network and self.abi >= 4 else 0
        self.scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if self.abi >= 6 else 0
        attr = _RulesetAttr(self.handled_fs, self.handled_net, self.scoped)
        size = 24 if self.abi >= 6 else 16 if self.abi >= 4 else 8
        fd = self._libc.syscall(self._create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = int(fd)
        self.paths: list[tuple[str, int]] = []

    def allow_path(self, path: str, rights: int) -> bool:
        """Grant ``rights`` beneath ``path`` (only the file rights if it is a file); False if it does not exist."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            if not os.path.isdir(path):
                rights &= FILE_RIGHTS
            rule = _PathBeneath(rights & self.handled_fs, fd)
            if self._libc.syscall(self._add, self.fd, _PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)
        self.paths.append((path, rights))
        return True

    def allow_ports(self, ports: Iterable[int], rights: int = NET_CONNECT_TCP) -> None:
        if not self.handled_net:
            return
        for port in ports:
            rule = _NetPort(rights & self.handled_net, int(port))
            if self._libc.syscall(self._add, self.fd, _NET_PORT, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for port {port}")

    def restrict_self(self) -> None:
        """Enforce the rules (``no_new_privs`` must already be set)."""
        try:
            if self._libc.syscall(self._restrict, self.fd, ctypes.c_uint32(0)) < 0:
                raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")
        finally:
            os.close(self.fd)
