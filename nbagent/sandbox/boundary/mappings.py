"""Inherited shared mappings: the kernel's ``MAP_SHARED`` file mappings made private in the worker (Linux).

A fork inherits every mapping as it is. A ``MAP_SHARED`` one (``np.memmap(path, mode="r+")``, ``mmap.mmap(fd, n)``,
``mmap.mmap(-1, n)``, a multiprocessing buffer) is the *same* memory in the kernel and the worker: a write by the
agent's code changes the user's file, or the kernel's memory, whatever Landlock says about the path.

:func:`make_private` runs in the worker before any agent code and before Landlock hides ``/proc``. Each shared mapping
becomes private copy-on-write at the same address with the same protection, unless ``allowed`` (the plan's
writable paths: scratch directory and ``allow_write``) covers its file:

* a regular file: opened read-only and mapped ``MAP_PRIVATE | MAP_FIXED`` over itself (no copy: pages come from the
  page cache; a write copies the page, in the worker only);
* shared memory without a file we can reopen (a deleted file, ``/dev/zero``, a System V segment): its bytes are
  copied into a private anonymous mapping at the same address (up to :data:`MAX_COPY_BYTES`; larger ones become
  read-only: a write then costs the worker, never the kernel);
* a device's mapping: read-only. ``memfd`` mappings are left alone (nbagent's own machinery may use them).

An object that wraps the mapping (the memmap array) is unchanged; the worker's writes reach its copy, which the
change report sees like any in-place change.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import stat
import sys
from dataclasses import dataclass

MAX_COPY_BYTES = 256 * 2**20
_PROT = {"r": mmap.PROT_READ, "w": mmap.PROT_WRITE, "x": mmap.PROT_EXEC}
_MAP_FIXED = 0x10
_MAP_FAILED = ctypes.c_void_p(-1).value


@dataclass(frozen=True)
class Region:
    """One line of ``/proc/self/maps``."""

    start: int
    end: int
    perms: str
    offset: int
    inode: int
    path: str

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def shared(self) -> bool:
        return self.perms[3] == "s"

    @property
    def protection(self) -> int:
        return sum(_PROT[c] for c in self.perms[:3] if c in _PROT)


def regions() -> list[Region]:
    """This process's mappings (empty where ``/proc`` is not readable)."""
    try:
        with open("/proc/self/maps") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 5:
            continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        path = parts[5].strip() if len(parts) > 5 else ""
        out.append(Region(start, end, parts[1], int(parts[2], 16), int(parts[4]), path))
    return out


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def make_private(allowed: list[str]) -> list[str]:
    """Make every inherited shared mapping private (see the module docstring); returns what was done, one line each."""
    libc = _libc()
    done = []
    for region in regions():
        if not region.shared or region.path.startswith("/memfd:") or region.path.startswith("["):
            continue
        try:
            action = _privatize(libc, region, allowed)
        except OSError as exc:
            action = f"left shared ({exc.strerror or exc})"
        if action:
            done.append(f"{region.path or 'anonymous'} [{region.size:,} bytes]: {action}")
    return done


def _privatize(libc: ctypes.CDLL, region: Region, allowed: list[str]) -> str:
    deleted = region.path.endswith(" (deleted)")
    path = region.path[: -len(" (deleted)")] if deleted else region.path
    if path.startswith("/dev/") and path != "/dev/zero":
        _protect(libc, region, region.protection & ~mmap.PROT_WRITE)
        return "read-only (a device)"
    if not deleted and path and _regular(path):
        if _inside(os.path.realpath(path), allowed):
            return ""  # granted by allow_write: the agent's writes reach the file, as asked
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            _map(libc, region, mmap.MAP_PRIVATE, fd, region.offset)
        finally:
            os.close(fd)
        return "private copy-on-write"
    if region.size > MAX_COPY_BYTES or not region.perms.startswith("r"):
        _protect(libc, region, region.protection & ~mmap.PROT_WRITE)
        return "read-only (too large to copy)"
    content = ctypes.string_at(region.start, region.size)
    _map(libc, region, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0, extra=mmap.PROT_WRITE)
    ctypes.memmove(region.start, content, region.size)
    if not region.perms[1] == "w":
        _protect(libc, region, region.protection)
    return "private copy"


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _map(libc: ctypes.CDLL, region: Region, flags: int, fd: int, offset: int, extra: int = 0) -> None:
    address = libc.mmap(region.start, region.size, region.protection | extra, flags | _MAP_FIXED, fd, offset)
    if address in (None, _MAP_FAILED) or address != region.start:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def _protect(libc: ctypes.CDLL, region: Region, protection: int) -> None:
    if libc.mprotect(region.start, region.size, protection) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def plain_view(value: object) -> object:
    """A memmap as the plain array it is (its pages are the worker's private copy): what a checksum can read, so an
    in-place change to it is seen like any array's."""
    numpy = sys.modules.get("numpy")
    memmap = getattr(numpy, "memmap", None)
    if memmap is not None and isinstance(value, memmap):
        return value.view(numpy.ndarray)
    return value
