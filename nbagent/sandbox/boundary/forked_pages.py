"""Which pages of this (forked) process are present, and which are still the kernel's as forked (Linux; the worker).

``/proc/self/pagemap`` gives one entry per page; its last byte holds the flags read here: bit 63 (present) and bit
56 (``PM_MMAP_EXCLUSIVE``: mapped by this process only). Right after a fork every present private page is mapped by
both processes. A page this process writes becomes a copy of its own (exclusive); so does one the kernel writes
(the old content stays with this process alone). A page present and *not* exclusive therefore holds what the kernel's
page held at the fork: what unchanged.py's ledger knows about the kernel's memory is true of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from .spans import Spans

#: the flags byte -> 1 where the page is present
_PRESENT = bytes(int(flags & 0x80 == 0x80) for flags in range(256))
#: the flags byte -> 1 where the page is present and still shared with another process
_AS_FORKED = bytes(int(flags & 0x81 == 0x80) for flags in range(256))
_ONES = re.compile(b"\x01+")
_CHUNK_PAGES = 1 << 16  # pages per read
_GAP = 1 << 16  # ranges closer than this are read in one go


class PageFlags:
    """The flags of the pages of ``spans`` (sorted, page-aligned), read at once: :meth:`present` and
    :meth:`as_forked` then cost no system call."""

    def __init__(self, spans: Spans, page: int) -> None:
        self.page = page
        self._spans: list[tuple[int, int, bytes, bytes]] = []  # start, end, present marks, as-forked marks
        fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
        try:
            for start, end in spans:
                flags = b"".join(_read(fd, start, end, page))
                self._spans.append((start, end, flags.translate(_PRESENT), flags.translate(_AS_FORKED)))
        finally:
            os.close(fd)

    def present(self) -> Spans:
        return [run for start, _, present, _ in self._spans for run in _runs(present, start, self.page)]

    def as_forked(self, ranges: Spans) -> Spans:
        """The pages of ``ranges`` (sorted, page-aligned) still as forked; pages outside the spans read are not."""
        out: Spans = []
        index = 0
        for low, high in ranges:
            while index < len(self._spans) and self._spans[index][1] <= low:
                index += 1
            at = index
            while at < len(self._spans) and self._spans[at][0] < high:
                start, end, _, marks = self._spans[at]
                part = max(low, start), min(high, end)
                window = marks[(part[0] - start) // self.page : (part[1] - start) // self.page]
                if 0 not in window:  # most pages are: no run to look for
                    out.append(part)
                else:
                    out += _runs(window, part[0], self.page)
                at += 1
        return out


def as_forked(ranges: Spans, page: int) -> Spans:
    """The pages of ``ranges`` (sorted, page-aligned) still as forked; none where pagemap cannot be read (a process
    that changed its user)."""
    if not ranges:
        return []
    try:
        return PageFlags(_windows(ranges, page), page).as_forked(ranges)
    except OSError:
        return []


def _read(fd: int, start: int, end: int, page: int) -> Iterator[bytes]:
    for low in range(start, end, _CHUNK_PAGES * page):
        high = min(end, low + _CHUNK_PAGES * page)
        yield os.pread(fd, (high - low) // page * 8, low // page * 8)[7::8]


def _runs(marks: bytes, start: int, page: int) -> Spans:
    """The runs of pages marked 1 in ``marks`` (one byte per page from ``start``)."""
    return [(start + m.start() * page, start + m.end() * page) for m in _ONES.finditer(marks)]


def _windows(ranges: Spans, page: int) -> Spans:
    """Page-aligned spans covering sorted ``ranges``, neighbours closer than :data:`_GAP` in one."""
    windows: Spans = []
    for start, end in ranges:
        start, end = start - start % page, -(-end // page) * page
        if windows and start - windows[-1][1] < _GAP:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows
