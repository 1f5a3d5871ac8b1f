"""Mask given byte strings wherever they are in this process's private writable memory (Linux; run in the worker).

Clearing a reference does not clear memory: the freed string, the buffer a message arrived in, ``"Bearer <key>"``
built from the key all keep the bytes. :func:`mask` searches each value through every resident page of the private
writable mappings (``/proc/self/maps``, resident runs by ``mincore``, ``memmem`` in place: nothing is copied) and
overwrites each occurrence with ``*`` of the same length (a string object stays a valid string).

Never written: the memory of the data the agent's code can see (:func:`visible_buffers`: each text of its namespace
that holds a searched value, the buffers of its arrays and frames), so the scrub never changes the user's data, only
the places where a secret is held (the freed string, the client's attribute, the message buffer). That walk of the
namespace is bounded (``_MAX_WALKED`` objects, breadth first): past it, what it did not reach is searched and masked
like any memory -- the walk only keeps memory out of the mask, so stopping it can mask more, never less.

Cost: one ``memmem`` pass per value over the resident private writable memory (25-45 ms per value per 100 MB on the
benchmark's busy 2-core machine; none at all without values), less those buffers and the data buffers of the hidden
names' large arrays and frames (:func:`data_buffers`: the user's data, where no secret of the kernel's lives), so that
a kernel holding gigabytes of frames does not pay a pass over them at every worker start (nor ``mincore`` over
them); plus the walk, 5-10 ms at most. A million small objects are searched like the rest: their memory is the
kernel's heap, where freed copies of a secret lie among them (``benchmarks/isolation.py scrub``). What malloc holds
free is first given back in the worker's copy (:func:`_drop_freed_memory`): those pages read as zeros there, so a
secret a freed buffer kept is gone from them without a search (a kernel that freed 1 GB: 320 -> 97 ms). Shared
mappings are never written (they are the kernel's memory too); read-only mappings, swapped-out pages and other
encodings of a value (UTF-16/32 strings) are not searched.

Known pages (:func:`search`): where the kernel's ledger (unchanged.py) says some of its pages held none of the
values at an earlier worker's fork and were not written since, they are not read again -- except those this process
wrote since its own fork (forked_pages.py: no longer shared with the kernel), which may hold what it copied there. A
value across the edge of a known page is found from its other side (each piece is searched ``len(value) - 1`` bytes
wider). The pages searched and found free, and still as forked after the search (what was read of a page this process
wrote is not the kernel's), are reported back with the known ones (``Searched.clean``).
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import re
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import forked_pages
from .mappings import Region, regions
from .spans import Spans, merged, whole_pages, without

_SKIPPED_PATHS = ("/dev/", "[vvar", "[vsyscall]", "[vdso]")
#: Arrays at least this large are the user's data: their buffers are not searched.
LARGE_BUFFER_BYTES = 1 << 20
_RESIDENT = re.compile(rb"[\x01\x03\x05\x07\x09\x0b\x0d\x0f]+")  # mincore's low bit: the page is resident


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.memmem.restype = ctypes.c_void_p
    libc.memmem.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    return libc


def searchable(region: Region) -> bool:
    """Private, readable and writable, not a device's nor the kernel's vDSO pages."""
    return region.perms.startswith("rw") and not region.shared and not region.path.startswith(_SKIPPED_PATHS)


def _pages(span: tuple[int, int], page: int) -> tuple[int, int]:
    """``span`` widened to whole pages (what ``mincore`` is asked about)."""
    return span[0] - span[0] % page, -(-span[1] // page) * page


def _resident_runs(libc: ctypes.CDLL, span: tuple[int, int], page: int) -> list[tuple[int, int]]:
    start, end = span
    pages = (end - start) // page
    vector = (ctypes.c_ubyte * pages)()
    if libc.mincore(start, end - start, vector) != 0:
        return []  # not a mapping mincore knows: not searched (nothing of ours lives there)
    return [(start + m.start() * page, start + m.end() * page) for m in _RESIDENT.finditer(bytes(vector))]


def data_buffers(namespaces: Iterable[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """The address ranges of the large numpy buffers the namespaces' arrays and pandas objects hold (numpy-backed
    columns and blocks, at the top level of each namespace: where a kernel's gigabytes are)."""
    ranges: dict[int, int] = {}
    for namespace in namespaces:
        for value in list(namespace.values()):
            for array in _arrays_of(value):
                start, nbytes = _buffer(array)
                if nbytes >= LARGE_BUFFER_BYTES:
                    ranges[start] = max(ranges.get(start, 0), start + nbytes)
    return sorted(ranges.items())


def _arrays_of(value: Any) -> list:
    module = type(value).__module__ or ""
    if module.startswith("numpy") and hasattr(value, "__array_interface__"):
        return [value]
    if not module.startswith("pandas"):
        return []
    manager = getattr(value, "_mgr", None)  # a DataFrame's or Series' blocks (pandas' internal manager)
    if manager is None:  # an extension array over numpy (an index's strings, a categorical's codes): stored
        stored = getattr(value, "_ndarray", None) if hasattr(type(value), "_ndarray") else None
        return [stored] if stored is not None else []
    try:
        arrays = list(manager.arrays) if manager is not None else []
    except Exception:
        return []
    return [getattr(a, "_ndarray", getattr(a, "_data", a)) for a in arrays]


def _buffer(array: Any) -> tuple[int, int]:
    try:
        while getattr(array, "base", None) is not None and hasattr(array.base, "__array_interface__"):
            array = array.base  # the owner's whole buffer, not a view's part
        return int(array.__array_interface__["data"][0]), int(array.nbytes)
    except Exception:
        return 0, 0


def visible_buffers(namespace: Mapping[str, Any], needles: Iterable[bytes]) -> list[tuple[int, int]]:
    """The memory of the data the agent's code can see, which the memory pass never writes: every numpy buffer its
    arrays and pandas objects hold (any size), and each text object that holds one of ``needles`` (a secret equal to
    the user's data is the user's data there). Found by walking the namespace's values breadth first (what the names
    hold, then what that holds): containers, object arrays, pandas columns and indexes, the attributes of instances
    of the notebook's own classes, ``_MAX_DEPTH`` deep; numbers are not visited.

    The walk stops after ``_MAX_WALKED`` objects (issue 32: a namespace of a million objects would cost seconds at
    every worker start). What it did not reach is searched and masked like any other memory: the walk only keeps
    memory *out* of the mask, so stopping it early can only mask more, never leave a secret readable. The price, in
    a namespace that large: a copy of a kernel secret deep inside the user's data is masked in the worker's copy (the
    kernel's own data is never written), and a frame reached late has its buffers searched (time, not safety)."""
    texts = [n.decode("latin-1") for n in needles]
    ranges: list[tuple[int, int]] = []
    seen: set[int] = set()
    queue = deque((value, 0) for value in list(namespace.values()))
    while queue and len(seen) < _MAX_WALKED:
        value, depth = queue.popleft()
        kind = type(value)
        if kind in _ATOMS or id(value) in seen or depth > _MAX_DEPTH:
            continue
        seen.add(id(value))
        if kind is str or kind is bytes:
            text = value if kind is str else value.decode("latin-1")
            if any(t in text for t in texts):
                ranges.append((id(value), id(value) + sys.getsizeof(value)))
            continue
        if kind is bytearray:
            if value and any(n in value for n in needles):
                start = ctypes.addressof((ctypes.c_char * len(value)).from_buffer(value))
                ranges.append((start, start + len(value)))
            continue
        held = _held_by(value, kind, ranges)  # (an array's buffer is recorded here)
        room = _MAX_WALKED - len(seen) - len(queue)  # what the walk can still reach: no queue of a million items
        if room > 0:
            queue.extend(zip(itertools.islice(held, room), itertools.repeat(depth + 1)))
    return ranges


def _held_by(value: Any, kind: type, ranges: list[tuple[int, int]]) -> Iterable[Any]:
    if kind in (list, tuple, set, frozenset):
        return value
    if kind is dict:
        return itertools.chain.from_iterable(value.items())
    return _parts(value, ranges)


def _parts(value: Any, ranges: list[tuple[int, int]]) -> list:
    """What a value holds: an array's elements (object dtype) or its buffer (recorded in ``ranges``), a pandas object's
    columns and index, the attributes of an instance of a class the notebook defined; nothing else."""
    module = type(value).__module__ or ""
    if module.startswith("numpy") and hasattr(value, "__array_interface__"):
        if getattr(getattr(value, "dtype", None), "hasobject", False):
            return value.ravel(order="K")[:_MAX_WALKED].tolist()
        start, nbytes = _buffer(value)
        if nbytes:
            ranges.append((start, start + nbytes))
        return []
    if module.startswith("pandas"):
        # the columns' buffers are recorded now, not when the walk reaches them: a frame met after a long list
        # keeps its gigabytes out of the search even when the walk stops before its columns
        parts = [item for array in _arrays_of(value) for item in _parts(array, ranges)]  # (objects' columns' items)
        parts += list(getattr(getattr(value, "_mgr", None), "axes", None) or ())  # a frame's index and columns
        # attributes as stored, never computed: a RangeIndex's ``_data`` would build the whole range as an array
        stored = getattr(value, "__dict__", None) or {}
        parts += [stored.get("_data"), stored.get("_mask"), *stored.get("_levels", ())]
        return [p for p in parts if p is not None and p is not value]
    if isinstance(value, type) or type(value).__module__ != "__main__":
        return []  # a library's object (a client, an executor) is no data of the user's: it reaches the kernel's state
    attributes = getattr(value, "__dict__", None)
    return list(attributes.values()) if type(attributes) is dict else []


def overwrite_unheld(texts: Iterable[Any]) -> int:
    """Overwrite in place the ASCII str and bytes objects of ``texts`` that nothing else holds (the name that held
    them was just removed): a short credential the memory pass does not search. Returns how many."""
    count = 0
    for text in list(texts):
        if type(text) not in (str, bytes) or not text or sys.getrefcount(text) > _OUR_REFERENCES:
            continue
        if type(text) is str and not text.isascii():
            continue
        size = len(text)
        ctypes.memset(id(text) + sys.getsizeof(text) - size - 1, ord("*"), size)
        count += 1
    return count


_MAX_WALKED = 5_000  # objects: 5-10 ms of walking on the benchmark's machine (benchmarks/isolation.py scrub)
_MAX_DEPTH = 12
_ATOMS = frozenset({int, float, complex, bool, type(None)})  # hold no text and no buffer: not visited
_OUR_REFERENCES = 4  # the caller's list, this function's list, the loop variable, getrefcount's argument


def mask(values: Iterable[bytes], skip: list[tuple[int, int]] = ()) -> int:  # type: ignore[assignment]
    """Overwrite every occurrence of each value (none shorter than 4 bytes) outside the ``skip`` ranges (sorted);
    returns how many were overwritten."""
    return search(values, skip).masked


@dataclass
class Searched:
    """What :func:`search` did: ``masked`` occurrences; ``clean``: the whole pages (searched, or ``known``) that hold
    none of the values and are still the kernel's as they were at the fork (this process has not written them);
    ``searched_bytes`` read, ``known_bytes`` not read because known free of the values."""

    masked: int = 0
    clean: Spans = field(default_factory=list)
    searched_bytes: int = 0
    known_bytes: int = 0


def search(values: Iterable[bytes], skip: Spans = (), known: Spans | None = None) -> Searched:  # type: ignore[assignment]
    """:func:`mask`, reading only what ``known`` (page ranges of the kernel's memory free of every value since this
    process's fork: unchanged.py) does not cover, and saying which pages are now known free (``Searched.clean``).
    ``known=None``: no ledger to tell (everything is searched, nothing reported: no pagemap read)."""
    needles = [ctypes.create_string_buffer(v, len(v)) for v in sorted(set(values)) if len(v) >= 4]
    if not needles:
        return Searched()
    libc = _libc()
    _drop_freed_memory(libc)
    page = os.sysconf("SC_PAGE_SIZE")
    skip = merged(list(skip))
    pieces = without([(r.start, r.end) for r in regions() if searchable(r)], skip)  # (a frame's buffers: not asked)
    spans = merged([_pages(piece, page) for piece in pieces])
    told = known is not None
    present, known = _present_and_known(libc, spans, merged(list(known or ())), page)
    runs = without(present, skip)
    todo = without(runs, known)
    reach = max(len(n) for n in needles) - 1  # a value across the edge of a known page is found from its other side
    own = [(ctypes.addressof(n), ctypes.addressof(n) + len(n)) for n in needles]
    searched_bytes = sum(b - a for a, b in todo)
    result = Searched(searched_bytes=searched_bytes, known_bytes=sum(b - a for a, b in runs) - searched_bytes)
    found: list[tuple[int, int]] = []
    for piece in _widened(todo, runs, reach):
        for needle in needles:
            result.masked += _mask_one(libc, [piece], needle, own, found)
    for needle in needles:
        ctypes.memset(needle, 0, len(needle))
    if told:  # what it read of a page it wrote (before or during the search) is not the kernel's: not reported
        searched = forked_pages.as_forked(whole_pages(todo, page), page)
        result.clean = without(merged(known + searched), [_pages(span, page) for span in found])
    return result


def _present_and_known(libc: ctypes.CDLL, spans: Spans, known: Spans, page: int) -> tuple[Spans, Spans]:
    """The resident pages of ``spans``, and the pages of ``known`` this process has not written since the fork (one it
    wrote may hold what it copied there: searched; known pages hold none in the kernel, whatever this process writes
    to its copies later). Nothing known: ``mincore`` says what is resident (no pagemap to read)."""
    if known:
        with contextlib.suppress(OSError):  # (a process that changed its user cannot read its pagemap)
            flags = forked_pages.PageFlags(spans, page)
            return flags.present(), flags.as_forked(known)
    return [run for span in spans for run in _resident_runs(libc, span, page)], []


_BRIDGED_BYTES = 1 << 16  # known pages read anyway between two pieces to search: one memmem call instead of two


def _widened(todo: Spans, runs: Spans, reach: int) -> Spans:
    """The pieces to search, each ``reach`` bytes wider on both sides within its resident run, neighbours closer than
    :data:`_BRIDGED_BYTES` joined."""
    out: Spans = []
    index = 0
    for start, end in todo:
        while runs[index][1] < end:
            index += 1
        low, high = max(start - reach, runs[index][0]), min(end + reach, runs[index][1])
        if out and low - out[-1][1] <= _BRIDGED_BYTES and out[-1][1] >= runs[index][0]:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def _drop_freed_memory(libc: ctypes.CDLL) -> None:
    """Give back the whole pages of memory malloc holds free (``malloc_trim``): in this forked copy they become
    zero-filled and unmapped, so no secret a freed buffer kept is left in them and :func:`mask` has none of them to
    search (a kernel's heap keeps what it freed until its top is free). The kernel's own memory is untouched (the
    pages are private to each process). Without glibc (musl), they are searched."""
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim.argtypes = [ctypes.c_size_t]
        trim(0)


def _mask_one(libc: ctypes.CDLL, runs: Spans, needle: ctypes.Array, own: Spans, found: Spans | None = None) -> int:
    size = len(needle)
    star = b"*" * size
    count = 0
    for start, end in runs:
        at = start
        while end - at >= size:
            at_found = libc.memmem(at, end - at, needle, size)
            if not at_found:
                break
            if not any(low <= at_found < high for low, high in own):
                ctypes.memmove(at_found, star, size)
                count += 1
                if found is not None:
                    found.append((at_found, at_found + size))
            at = at_found + 1
    return count


#: Fields of ``/proc/self/stat`` (counted after the command name, i.e. proc(5)'s field n - 3) that bound the blocks
#: a process started with: a forked worker's are copies of the kernel's.
_STARTUP_BLOCKS = {"command line": (45, 46), "environment": (47, 48)}


def overwrite_startup_block(block: str, text: bytes = b"") -> None:
    """Zero the ``block`` ("command line" or "environment") the process started with, then write ``text`` at its
    start (what ``/proc/<pid>/cmdline`` or ``environ`` show)."""
    first, last = _STARTUP_BLOCKS[block]
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[first]), int(fields[last])
    except (OSError, ValueError, IndexError):
        return
    if 0 < start < end and end - start < 1 << 24:
        ctypes.memset(start, 0, end - start)
        text = text[: end - start - 1]
        ctypes.memmove(start, text, len(text))
