"""Large buffers through sealed memory files (Linux ``memfd``), where shared memory gets huge pages.

For one message (a tool call or the answer) with buffers larger than :data:`SHARED_MIN_BYTES`:

1. the worker asks for files: ``{"t": "shm", "sizes": [...]}`` (at most :data:`MAX_FILES`; more large buffers than
   that share files, each at a page-aligned offset);
2. the host checks the sizes against the call's budget, creates each file (``memfd_create``), sets its size, seals it
   against shrinking and growing, and passes the descriptors (``{"t": "shm_ok", "n": K}`` with ``SCM_RIGHTS``;
   ``n == 0``: refused, the worker sends everything inline);
3. the worker writes each buffer into its place (a shared mapping asking for huge pages where the kernel allows them:
   :func:`huge_pages`, else ``pwrite``), closes the descriptors and sends the message: its header's ``shm`` lists
   ``[buffer, file, offset, length]``, and each such buffer travels as an empty one;
4. the host seals each file against writing (``EBUSY`` while the worker keeps a writable mapping: an anomaly), checks
   its size with ``fstat`` and each placement against it (inside the file, page-aligned, no two overlapping, each
   buffer placed once), and maps each file once, copy-on-write (``MAP_PRIVATE``): the user's array is writable and
   the sealed file never changes (a descriptor the worker kept can no longer write it). Decoding then checks dtype ×
   shape against the length, as for any buffer.

The worker needs no new system call (``recvmsg``, ``pwrite``, ``close``; ``memfd_create`` and ``sendmsg`` stay denied),
and nothing it sends is executed.

When this path is taken (:func:`available`): only where Linux gives shared memory 2 MiB pages (``shmem_enabled``
``advise``, ``within_size``, ``always`` or ``force``). There the worker's one copy runs at memcpy's speed and the
host's side costs a mapping: one copy in all. With 4 KiB pages (``never``, what Debian and Ubuntu ship) every page
is allocated one by one as the worker writes it and faulted again as the kernel first reads it, and the socket is
faster: the worker sends, and the host receives into private anonymous memory asking for huge pages
(``channel.private_memory``; ``MADV_HUGEPAGE`` is allowed by default), so the first read costs what a native
array's does (issue 32, ``benchmarks/isolation.py big-results``, one run on two busy cores, (step + first read −
native) ÷ memcpy: 1 GB array 1.5× by the socket, 1.8× by 4 KiB files, 1.0× by 2 MiB files; 100 MB 1.7×, 2.1×,
1.1×). Measured and not taken on such machines: the host allocating
the files (``fallocate``) and mapping them populated (no faster: the pages are still 4 KiB, allocated or mapped one
by one, only elsewhere), a warm pool of such files (the same per-page writes, and memory held between steps), the
host copying the files into huge-page memory (a second copy on top of the first), and ``vmsplice`` through a pipe
(one copy, but a new system call for the worker and no faster than the socket on two cores).

``NBAGENT_SHARED_BUFFERS``: ``0`` (false/no/off) keeps every buffer inline; ``1`` (true/yes/on) takes this path even
with 4 KiB pages (for comparisons); unset, the machine decides as above. Where ``memfd`` is missing (macOS) every
buffer travels inline. Not taken anywhere: the host copying the bytes out of the worker's memory
(``process_vm_readv``, memcpy speed) needs ptrace rights over a worker that is deliberately not dumpable. The host
maps with ``mmap(2)`` through ctypes: Python's ``mmap`` keeps a duplicate descriptor open per mapping (a frame of
many columns would hold many open files in the kernel), and ctypes keeps a new array type per length.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import mmap
import os
from collections.abc import Sequence
from typing import Any

from .channel import MAX_FDS
from .plain import WireError

#: Buffers larger than this travel by shared memory (smaller ones cost less inline than a round trip).
SHARED_MIN_BYTES = 1 << 20
#: Files per message (each is one open descriptor in the kernel while the worker fills it; all pass in one message).
MAX_FILES = MAX_FDS
#: ``NBAGENT_SHARED_BUFFERS``: ``0`` keeps every buffer inline, ``1`` always takes shared memory (see the module).
SWITCH_VARIABLE = "NBAGENT_SHARED_BUFFERS"
PAGE = mmap.PAGESIZE
FILE_NAME = "nbagent-buffer"

_PROT = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FAILED = ctypes.c_void_p(-1).value


def switch() -> str:
    """``NBAGENT_SHARED_BUFFERS`` read in the host (where the environment is the user's): "off", "on" or "auto"."""
    value = os.environ.get(SWITCH_VARIABLE, "").strip().lower()
    return "off" if value in ("0", "false", "no", "off") else "on" if value in ("1", "true", "yes", "on") else "auto"


def switched_on() -> bool:
    """False when ``NBAGENT_SHARED_BUFFERS`` says off."""
    return switch() != "off"


@functools.lru_cache(maxsize=1)
def supported() -> bool:
    """Whether this host can create, seal and map memory files (probed once: a container may deny memfd_create)."""
    if not hasattr(os, "memfd_create") or not hasattr(fcntl, "F_ADD_SEALS"):
        return False
    try:
        import numpy  # noqa: F401  (the host's arrays are built on the mappings)

        fd = _create(PAGE)
    except (OSError, ImportError):
        return False
    try:
        _seal_write(fd)
        _map_private(fd, PAGE)  # unmapped at once: nothing uses it
        return True
    except (OSError, WireError):
        return False
    finally:
        os.close(fd)


#: Linux's switch for huge pages in shared memory (memory files included); "never" on many distributions.
SHMEM_HUGE_SETTING = "/sys/kernel/mm/transparent_hugepage/shmem_enabled"


#: Linux's switch for transparent huge pages in private anonymous memory; "madvise" by default.
ANON_HUGE_SETTING = "/sys/kernel/mm/transparent_hugepage/enabled"


def setting(path: str) -> str:
    """The chosen value of a kernel setting written like ``always [madvise] never``; "" where it cannot be read."""
    try:
        with open(path) as file:
            text = file.read()
    except OSError:
        return ""
    return text[text.find("[") + 1 : text.find("]")] if "[" in text else ""


@functools.lru_cache(maxsize=1)
def huge_pages() -> bool:
    """Whether memory files get 2 MiB pages when a mapping asks (``MADV_HUGEPAGE``): the kernel's setting is
    ``advise``, ``within_size``, ``always`` or ``force``. Read in the host (the worker cannot read /sys)."""
    return setting(SHMEM_HUGE_SETTING) in ("advise", "within_size", "always", "force")


@functools.lru_cache(maxsize=1)
def private_huge_pages() -> bool:
    """Whether private anonymous memory that asks (``MADV_HUGEPAGE``) gets 2 MiB pages: ``madvise`` (the default) or
    ``always``. Buffers received through the socket are such memory (``channel.private_memory``)."""
    return setting(ANON_HUGE_SETTING) in ("madvise", "always")


def available() -> bool:
    """Large buffers travel by shared memory here by default: supported, and switched on, or left to the machine and
    shared memory gets huge pages (elsewhere the socket into huge-page private memory is faster: see the module)."""
    chosen = switch()
    return chosen != "off" and supported() and (chosen == "on" or huge_pages())


# --- the worker's side -------------------------------------------------------------------------------------------


def plan(buffers: Sequence[Any], max_file: int | None = None) -> tuple[list[int], list[list[int]]]:
    """Which buffers go by shared memory: ``(file sizes, placements)``, a placement being ``[buffer, file, offset,
    length]``; no placements when none is large enough. Past :data:`MAX_FILES` large buffers, consecutive ones share
    a file (each at a page-aligned offset). No file is larger than ``max_file`` (the worker's file-size limit,
    which applies to memory files too): a buffer larger than that travels inline."""
    large = [i for i, b in enumerate(buffers) if SHARED_MIN_BYTES < _nbytes(b) <= (max_file or _nbytes(b))]
    per_file = -(-len(large) // MAX_FILES)
    sizes: list[int] = []
    placements: list[list[int]] = []
    count = 0  # buffers in the current file
    for index in large:
        length = _nbytes(buffers[index])
        offset = -(-sizes[-1] // PAGE) * PAGE if sizes else 0
        if not sizes or count == per_file or (max_file is not None and offset + length > max_file):
            if len(sizes) == MAX_FILES:
                break  # the rest travel inline
            sizes.append(0)
            offset, count = 0, 0
        placements.append([index, len(sizes) - 1, offset, length])
        sizes[-1] = offset + length
        count += 1
    return sizes, placements


def fill(fds: Sequence[int], buffers: list, placements: list[list[int]], huge: bool = False) -> list:
    """Write each placed buffer into its file (one copy) and close the descriptors; the message's buffers with the
    placed ones emptied. ``huge``: through a shared mapping asked to use 2 MiB pages (:func:`huge_pages`), which
    the kernel then fills about five times faster than 4 KiB pages written by ``pwrite``; the mapping is gone before
    the message is sent (the host's write seal would fail on it)."""
    try:
        if huge:
            _copy_through_mappings(fds, buffers, placements)
        else:
            for index, file, offset, length in placements:
                view = memoryview(buffers[index]).cast("B")[:length]
                written = 0
                while written < len(view):
                    written += os.pwrite(fds[file], view[written : written + (1 << 30)], offset + written)
    finally:
        for fd in fds:
            os.close(fd)
    placed = {placement[0] for placement in placements}
    return [b"" if i in placed else buffer for i, buffer in enumerate(buffers)]


def _copy_through_mappings(fds: Sequence[int], buffers: list, placements: list[list[int]]) -> None:
    for file, fd in enumerate(fds):
        mine = [p for p in placements if p[1] == file]
        if not mine:
            continue
        mapping = mmap.mmap(fd, max(offset + length for _, _, offset, length in mine), mmap.MAP_SHARED, _PROT)
        try:
            with contextlib.suppress(OSError):  # a kernel that refuses only makes the copy slower
                mapping.madvise(mmap.MADV_HUGEPAGE)
            for index, _, offset, length in mine:
                mapping[offset : offset + length] = memoryview(buffers[index]).cast("B")[:length]
        finally:
            mapping.close()


def _nbytes(buffer: Any) -> int:
    return buffer.nbytes if isinstance(buffer, memoryview) else len(buffer)


# --- the host's side ---------------------------------------------------------------------------------------------


class Grant:
    """The files the host created for one message of the worker: their descriptors (owned here until :meth:`close`)
    and sizes."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.fds: list[int] = []
        try:
            for size in sizes:
                self.fds.append(_create(size))
        except OSError:
            self.close()
            raise

    @staticmethod
    def check_request(sizes: Any, room: int) -> list[int]:
        """The sizes a worker asked for, checked (a list of 1..MAX_FILES positive ints, at most ``room`` bytes in
        all); :class:`WireError` otherwise."""
        if type(sizes) is not list or not 0 < len(sizes) <= MAX_FILES:
            raise WireError("a request for shared buffers must list 1 to 64 sizes")
        if any(type(size) is not int or size <= 0 for size in sizes):
            raise WireError("a shared buffer's size must be a positive int")
        if sum(sizes) > room:
            raise WireError(f"shared buffers of {sum(sizes):,} bytes asked for, where {room:,} remained of the budget")
        return sizes

    def take(self, placements: Any, buffers: list) -> list:
        """The message's buffers with each placed one mapped from its sealed file; :class:`WireError` for a placement
        that does not fit its file, overlaps another, names a buffer twice or a non-empty one, or a file the worker
        still holds writable."""
        if type(placements) is not list or not placements:
            raise WireError("bad shared buffer list")
        checked = self._check(placements, buffers)
        files = {}
        for file in sorted({file for _, file, _, _ in checked}):
            self._seal(file)
            files[file] = _map_private(self.fds[file], self.sizes[file])  # one mapping per file, whatever its buffers
        taken = list(buffers)
        for index, file, offset, length in checked:
            taken[index] = files[file][offset : offset + length]
        return taken

    def _check(self, placements: list, buffers: list) -> list[tuple[int, int, int, int]]:
        checked: list[tuple[int, int, int, int]] = []
        indexes: set[int] = set()
        for placement in placements:
            if type(placement) is not list or len(placement) != 4 or any(type(n) is not int for n in placement):
                raise WireError("bad shared buffer placement")
            index, file, offset, length = placement
            if not 0 <= index < len(buffers) or len(buffers[index]) != 0 or index in indexes:
                raise WireError("a shared buffer placed in a missing, non-empty or already placed buffer")
            if not 0 <= file < len(self.fds):
                raise WireError("a shared buffer in a file the host did not create")
            if length <= 0 or offset < 0 or offset % PAGE or offset + length > self.sizes[file]:
                raise WireError("a shared buffer outside its file (or not page-aligned)")
            indexes.add(index)
            checked.append((index, file, offset, length))
        ranges = sorted((file, offset, offset + length) for _, file, offset, length in checked)
        for (file, _, end), (next_file, start, _) in zip(ranges, ranges[1:]):
            if file == next_file and start < end:
                raise WireError("two shared buffers overlap in one file")
        return checked

    def _seal(self, file: int) -> None:
        fd = self.fds[file]
        try:
            _seal_write(fd)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                raise WireError(
                    "the worker kept a writable mapping of a shared buffer (it could not be sealed)"
                ) from None
            raise WireError(f"a shared buffer could not be sealed ({exc.strerror})") from None
        if os.fstat(fd).st_size != self.sizes[file]:
            raise WireError("a shared buffer's file changed size")

    def close(self) -> None:
        """Close the host's descriptors (the mappings made from them stay valid)."""
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)


def _create(size: int) -> int:
    fd = os.memfd_create(FILE_NAME, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    except OSError:
        os.close(fd)
        raise
    return fd


def _seal_write(fd: int) -> None:
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)


@functools.lru_cache(maxsize=1)
def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def _map_private(fd: int, length: int) -> Any:
    """The file's ``length`` first bytes, mapped copy-on-write: a writable uint8 array, unmapped when the last array
    using it (a slice, an array built on it) is gone."""
    import numpy

    libc = _libc()
    address = libc.mmap(None, length, _PROT, mmap.MAP_PRIVATE, fd, 0)
    if address in (None, _MAP_FAILED):
        raise WireError(f"a shared buffer could not be mapped ({os.strerror(ctypes.get_errno())})")
    return numpy.asarray(_Mapping(address, length))


class _Mapping:
    """One mapping, as numpy sees memory at an address (``__array_interface__``); the array built on it keeps it
    alive, and it unmaps itself when collected."""

    def __init__(self, address: int, length: int) -> None:
        self.address, self.length = address, length
        self.__array_interface__ = {"data": (address, False), "shape": (length,), "typestr": "|u1", "version": 3}
        self._munmap = _libc().munmap  # held: at interpreter exit the module's globals may be gone first

    def __del__(self) -> None:
        self._munmap(self.address, self.length)
