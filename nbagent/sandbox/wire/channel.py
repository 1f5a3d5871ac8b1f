"""Framed messages over a stream socket: a JSON header plus raw buffers, read resumably and with a deadline.

Frame: ``<u32 header length><u32 buffer count><u64 length> * count``, the UTF-8 JSON header, then the buffers.
The reader keeps a partial frame across calls, so a read interrupted by a signal (the worker's timers) or cut short
by a deadline resumes where it stopped. Limits on every length protect the host from a hostile worker: the JSON
header is at most ``MAX_HEADER_BYTES``, and ``caps(kind)`` bounds a frame by its kind (``header["t"]``), checked
after the header is read and before any buffer is allocated (:class:`FrameRefused`).

Descriptors travel only from the host to the worker (the files of shared buffers, shared.py): :meth:`Channel.send`
attaches them to a frame's first bytes (``SCM_RIGHTS``), and :meth:`Channel.recv` collects them when asked to. The
host never asks: descriptors a worker might attach are dropped by the kernel when read without ancillary data.
"""

from __future__ import annotations

import array
import contextlib
import json
import mmap
import select
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

from .budget import MAX_HEADER_BYTES

_PREFIX = struct.Struct("<II")
MAX_BUFFERS = 1_000_000
LARGE_BUFFER_BYTES = 1 << 20
#: Most descriptors one frame carries (the kernel's SCM_MAX_FD is 253).
MAX_FDS = 64


class ChannelClosed(EOFError):
    """The other end closed the connection (or sent something that is not a frame)."""


class FrameRefused(ChannelClosed):
    """The other end sent a frame larger than its kind allows (a protocol anomaly, not a crash)."""


class ChannelTimeout(TimeoutError):
    """No complete frame before the deadline."""


def frame(header: dict, buffers: list | tuple = ()) -> list:
    """The parts of one frame, ready for :meth:`Channel.send_parts`."""
    body = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    views = [memoryview(b).cast("B") if not isinstance(b, memoryview) else b for b in buffers]
    prefix = _PREFIX.pack(len(body), len(views)) + struct.pack(f"<{len(views)}Q", *(v.nbytes for v in views))
    return [prefix, body, *views]


class Channel:
    """One end of the socket pair. ``max_bytes`` bounds a frame's total size (None: unbounded); ``caps(kind)`` the
    size of a frame of that kind. ``last_header_bytes``: the JSON header's length of the last frame received."""

    def __init__(
        self, sock: socket.socket, max_bytes: int | None = None, caps: Callable[[Any], int] | None = None
    ) -> None:
        self.sock = sock
        self.max_bytes = max_bytes
        self.caps = caps
        self.last_header_bytes = 0
        self._partial: _PartialFrame | None = None
        sock.setblocking(True)

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(
        self, header: dict, buffers: list | tuple = (), deadline: float | None = None, fds: list | tuple = ()
    ) -> None:
        """Send one frame (with ``fds`` attached to its first bytes); with a ``deadline``, ChannelTimeout if the other
        end does not take it in time (the frame may then be partly sent: the channel is unusable)."""
        parts = frame(header, buffers)
        if deadline is None:
            self._send(parts, fds)
            return
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            self._send(parts, fds)
        except TimeoutError:
            raise ChannelTimeout("the other end did not read the message before the deadline") from None
        finally:
            self.sock.settimeout(None)

    def _send(self, parts: list, fds: list | tuple) -> None:
        if not fds:
            self.send_parts(parts)
            return
        data = b"".join(bytes(p) for p in parts)
        sent = self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        if sent < len(data):
            self.sock.sendall(data[sent:])

    def send_parts(self, parts: list) -> None:
        small = b"".join(bytes(p) for p in parts if len(p) < 65536)
        if len(small) == sum(len(p) for p in parts):
            self.sock.sendall(small)
            return
        for part in parts:
            self.sock.sendall(part)

    def readable(self, timeout: float | None) -> bool:
        if self._partial is not None and self._partial.complete():
            return True
        ready, _, _ = select.select([self.sock], [], [], timeout)
        return bool(ready)

    def recv(self, deadline: float | None = None, fds: list | None = None) -> tuple[dict, list]:
        """The next frame; ChannelTimeout after ``deadline`` (monotonic), ChannelClosed at end of stream. With ``fds``,
        the descriptors that came with it are appended there (the worker's side)."""
        if self._partial is None:
            self._partial = _PartialFrame(self.max_bytes, self.caps)
        partial = self._partial
        while not partial.complete():
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.readable(remaining):
                    raise ChannelTimeout("no complete message before the deadline")
            view = partial.next_view()
            received = self.sock.recv_into(view) if fds is None else _recv_fds(self.sock, view, fds)
            if received == 0:
                self._partial = None
                raise ChannelClosed("the other end closed the channel")
            partial.advance(received)
        self._partial = None
        self.last_header_bytes = partial.header_length
        return partial.result()


def private_memory(size: int) -> mmap.mmap:
    """Memory for one large received buffer: private and anonymous (no other process can ever write it, a worker
    forked later gets it copy-on-write), zeroed lazily by the kernel as recv fills it (no memset), in 2 MiB pages
    where Linux allows them to anonymous memory that asks (``MADV_HUGEPAGE``; transparent_hugepage ``madvise``, the
    default, or ``always``): recv then fills it at about memcpy's speed, and the first read costs no page faults
    beyond a native array's. (A shared mapping, ``mmap.mmap(-1, n)``'s default, is shared memory: 4 KiB pages where
    ``shmem_enabled`` is ``never``, faulted one by one by recv and again by the first read.)"""
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)  # (-1: anonymous)
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is not None:
        with contextlib.suppress(OSError):  # a kernel without transparent huge pages: 4 KiB pages, still correct
            memory.madvise(advice)
    return memory


def _recv_fds(sock: socket.socket, view: memoryview, fds: list) -> int:
    """``recv_into`` that keeps the descriptors attached to the bytes it reads (close-on-exec)."""
    received, ancillary, flags, _ = sock.recvmsg_into(
        [view], socket.CMSG_SPACE(MAX_FDS * 4), getattr(socket, "MSG_CMSG_CLOEXEC", 0)
    )
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(array.array("i", data[: len(data) - len(data) % 4]))
    if flags & socket.MSG_CTRUNC:
        fds.append(-1)  # some were lost: -1 makes the count wrong, so the caller closes them all and goes without
    return received


class _PartialFrame:
    def __init__(self, max_bytes: int | None, caps: Callable[[Any], int] | None) -> None:
        self.max_bytes = max_bytes
        self.caps = caps
        self.header_length = 0
        self.stage = 0  # 0 prefix, 1 lengths, 2 header, 3.. buffers
        self.target: bytearray | mmap.mmap = bytearray(_PREFIX.size)
        self.filled = 0
        self.lengths: list[int] = []
        self.header: dict | None = None
        self.buffers: list[bytearray | mmap.mmap] = []

    def complete(self) -> bool:
        return self.header is not None and len(self.buffers) == len(self.lengths) and self.filled == len(self.target)

    def next_view(self) -> memoryview:
        return memoryview(self.target)[self.filled :]

    def advance(self, count: int) -> None:
        self.filled += count
        while self.filled == len(self.target) and not self.complete():
            self._next_stage()

    def _next_stage(self) -> None:
        data = self.target
        if self.stage == 0:
            self.header_length, self.count = _PREFIX.unpack(data)
            if self.header_length > MAX_HEADER_BYTES or self.count > MAX_BUFFERS:
                raise FrameRefused(f"a frame header of {self.header_length:,} bytes or {self.count:,} buffers")
            self._expect(1, 8 * self.count)
        elif self.stage == 1:
            self.lengths = list(struct.unpack(f"<{self.count}Q", data)) if self.count else []
            total = self.header_length + sum(self.lengths)
            if self.max_bytes is not None and total > self.max_bytes:
                raise FrameRefused(f"frame of {total:,} bytes exceeds the limit of {self.max_bytes:,}")
            self._expect(2, self.header_length)
        elif self.stage == 2:
            try:
                header = json.loads(bytes(data))
            except (ValueError, RecursionError):
                raise ChannelClosed("malformed frame header") from None
            if type(header) is not dict:
                raise ChannelClosed("malformed frame header")
            self._check_cap(header.get("t"))
            self.header = header
            self._start_buffer()
        else:
            self.buffers.append(data)
            self._start_buffer()

    def _check_cap(self, kind: Any) -> None:
        if self.caps is None:
            return
        total, cap = self.header_length + sum(self.lengths), self.caps(kind)
        if total > cap:
            name = kind if isinstance(kind, str) and len(kind) < 20 else "unknown"
            raise FrameRefused(f"a {name!r} frame of {total:,} bytes (at most {cap:,} allowed)")

    def _start_buffer(self) -> None:
        index = len(self.buffers)
        if index < len(self.lengths):
            self._expect(3 + index, self.lengths[index])
        else:
            self.target, self.filled, self.stage = self.target, len(self.target), -1

    def _expect(self, stage: int, size: int) -> None:
        target = private_memory(size) if size >= LARGE_BUFFER_BYTES else bytearray(size)
        self.stage, self.target, self.filled = stage, target, 0

    def result(self) -> tuple[dict, list]:
        assert self.header is not None
        return self.header, self.buffers
