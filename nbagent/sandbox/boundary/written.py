"""Which pages of its memory the kernel wrote since it last looked (Linux >= 6.7; the kernel's side).

The kernel registers its private anonymous memory with a userfaultfd for *asynchronous* write-protection
(``UFFD_FEATURE_WP_ASYNC``, unprivileged with ``UFFD_USER_MODE_ONLY``): no thread ever waits, the first write to a
protected page only clears its mark (a minor fault, about a microsecond). ``PAGEMAP_SCAN`` with
``PM_SCAN_WP_MATCHING`` then returns the pages written since the last scan and protects them again in one step, page
by page under the page-table lock, so a write by another thread lands either in this scan or in the next: none is
lost. (Soft-dirty bits cannot promise that: reading and clearing them are two calls.) ``PM_SCAN_CHECK_WPASYNC`` makes
a scan fail when part of its range is no longer registered (unmapped and mapped again, moved by ``mremap``): the
caller then counts the whole range written.

The descriptor is the kernel's: a forked worker replaces every inherited descriptor before any agent code runs
(worker._detach), so the worker can neither unprotect nor re-protect the kernel's pages.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

from .spans import without

_SYSCALL = {"x86_64": 323, "aarch64": 282}  # userfaultfd(2)
_USER_MODE_ONLY = 1  # needs no privilege (vm.unprivileged_userfaultfd may be 0)
_API = 0xAA
_FEATURE_WP_ASYNC = 1 << 15
_UFFDIO_API = 0xC018AA3F  # _IOWR(0xAA, 0x3F, struct uffdio_api)
_UFFDIO_REGISTER = 0xC020AA00  # _IOWR(0xAA, 0x00, struct uffdio_register)
_UFFDIO_UNREGISTER = 0x8010AA01  # _IOR(0xAA, 0x01, struct uffdio_range)
_MODE_WP = 2
_PAGEMAP_SCAN = 0xC0606610  # _IOWR('f', 16, struct pm_scan_arg)
_WP_MATCHING = 1 << 0
_CHECK_WPASYNC = 1 << 1
_PAGE_IS_WRITTEN = 1 << 1
_PAGE_IS_HUGE = 1 << 6
_VECTOR = 4096  # regions per scan call


class _Api(ctypes.Structure):
    _fields_ = [("api", ctypes.c_uint64), ("features", ctypes.c_uint64), ("ioctls", ctypes.c_uint64)]


class _Register(ctypes.Structure):
    _fields_ = [
        ("start", ctypes.c_uint64),
        ("length", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("ioctls", ctypes.c_uint64),
    ]


class _Scan(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "size",
            "flags",
            "start",
            "end",
            "walk_end",
            "vec",
            "vec_len",
            "max_pages",
            "category_inverted",
            "category_mask",
            "category_anyof_mask",
            "return_mask",
        )
    ]


class _Region(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint64), ("end", ctypes.c_uint64), ("categories", ctypes.c_uint64)]


class Unsupported(OSError):
    """This system cannot say which pages were written (not Linux >= 6.7, or userfaultfd refused)."""


class WriteWatch:
    """The kernel's write-protection registry. :meth:`watch` a range, then :meth:`written` says which of its pages
    were written since the last call (or since :meth:`watch`)."""

    def __init__(self) -> None:
        number = _SYSCALL.get(platform.machine())
        if not sys.platform.startswith("linux") or number is None:
            raise Unsupported("not Linux on x86_64 or aarch64")
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.syscall.restype = ctypes.c_long
        self._libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
        fd = self._libc.syscall(number, os.O_CLOEXEC | os.O_NONBLOCK | _USER_MODE_ONLY)
        if fd < 0:
            raise Unsupported(f"userfaultfd: {os.strerror(ctypes.get_errno())}")
        self.fd = int(fd)
        api = _Api(_API, _FEATURE_WP_ASYNC, 0)
        if self._libc.ioctl(self.fd, _UFFDIO_API, ctypes.byref(api)) != 0 or not api.features & _FEATURE_WP_ASYNC:
            os.close(self.fd)
            raise Unsupported("no asynchronous write-protection (Linux < 6.7)")
        self._vector = (_Region * _VECTOR)()
        self._pagemap: int | None = None

    def close(self) -> None:
        os.close(self.fd)

    def watch(self, start: int, end: int) -> list[tuple[int, int]]:
        """Register the parts of ``[start, end)`` (whole pages) not mapped in huge pages and protect what they hold
        now; returns the parts registered (none if the kernel refused). Memory in 2 MiB pages is left alone: its first
        write would split the huge page for good (the worker does not search a namespace's large arrays anyway)."""
        registered = []
        for low, high in without([(start, end)], self.huge(start, end)):
            register = _Register(low, high - low, _MODE_WP, 0)
            if self._libc.ioctl(self.fd, _UFFDIO_REGISTER, ctypes.byref(register)) == 0:
                if self.written(low, high) is not None:
                    registered.append((low, high))
        return registered

    def unwatch(self, start: int, end: int) -> None:
        """Stop watching ``[start, end)`` (whole pages): its writes cost nothing again."""
        span = (ctypes.c_uint64 * 2)(start, end - start)
        self._libc.ioctl(self.fd, _UFFDIO_UNREGISTER, span)

    def __enter__(self) -> WriteWatch:
        self._pagemap = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pagemap is not None:
            os.close(self._pagemap)
            self._pagemap = None

    def huge(self, start: int, end: int) -> list[tuple[int, int]]:
        """The runs of ``[start, end)`` mapped in huge pages (nothing changed)."""
        found = self._scan(start, end, 0, _PAGE_IS_HUGE)
        return [(low, high) for low, high, _ in found or ()]

    def written(self, start: int, end: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
        """The runs of pages of ``[start, end)`` written since the last call (protected again), and the runs now in
        huge pages (to unwatch); None when part of the range is not registered (count it all written). Call inside
        ``with watch:``."""
        found = self._scan(start, end, _WP_MATCHING | _CHECK_WPASYNC, _PAGE_IS_WRITTEN | _PAGE_IS_HUGE)
        if found is None:
            return None
        written = [(low, high) for low, high, kinds in found if kinds & _PAGE_IS_WRITTEN]
        return written, [(low, high) for low, high, kinds in found if kinds & _PAGE_IS_HUGE]

    def _scan(self, start: int, end: int, flags: int, kinds: int) -> list[tuple[int, int, int]] | None:
        """``PAGEMAP_SCAN`` of the pages of any of ``kinds``, with their kinds; None if the kernel refused."""
        assert self._pagemap is not None, "a scan outside `with watch:`"
        found: list[tuple[int, int, int]] = []
        vector = self._vector
        while start < end:
            scan = _Scan(ctypes.sizeof(_Scan), flags, start, end, 0)
            scan.vec, scan.vec_len = ctypes.addressof(vector), _VECTOR
            scan.category_anyof_mask = scan.return_mask = kinds
            count = self._libc.ioctl(self._pagemap, _PAGEMAP_SCAN, ctypes.byref(scan))
            if count < 0:
                return None
            found.extend((vector[i].start, vector[i].end, vector[i].categories) for i in range(count))
            if scan.walk_end <= start:
                break
            start = scan.walk_end
        return found
