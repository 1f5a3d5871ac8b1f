"""Copy bytes both ways between two sockets without ever blocking: the host proxy's tunnels and the worker's relay.

A blocking ``sendall`` to a peer that stops reading waits forever: a tunnel to a server that accepts and never reads
held a kernel thread (and a stream slot) for the rest of the run. Here both sockets are non-blocking and one ``poll``
loop serves both directions, each with at most one chunk in flight (what was read is written before more is read, so
memory stays bounded and a slow side slows the other, as TCP would). Two deadlines end the stream (both sockets
closed): ``send_seconds``, a side that has accepted none of the bytes waiting for it for that long, and
``idle_seconds``, nothing read from either side for that long. A half-close is passed on (TLS and HTTP/1.0 clients
expect it); the copy ends when both directions have ended, a socket fails, or either deadline passes.
"""

from __future__ import annotations

import contextlib
import select
import socket
import time
from dataclasses import dataclass

CHUNK = 65536
_FAILED = select.POLLERR | select.POLLHUP | select.POLLNVAL


@dataclass
class _Direction:
    """Bytes from ``source`` to ``sink``: what was read and not yet written, since when it waits, whether it ended."""

    source: socket.socket
    sink: socket.socket
    waiting: bytes = b""
    since: float = 0.0
    ended: bool = False  # the source closed its side
    done: bool = False  # ... and everything it sent was written, and the sink's side shut


def pipe(
    a: socket.socket,
    b: socket.socket,
    *,
    idle_seconds: float | None,
    send_seconds: float | None,
    first: bytes = b"",
) -> None:
    """Copy between ``a`` and ``b`` (``first``: bytes already read from ``a``) until both directions have ended, a
    socket fails, or a deadline passes (None: no such deadline); then close both. Never blocks on a peer."""
    now = time.monotonic()
    directions = (_Direction(a, b, first, now), _Direction(b, a))
    last_read = now
    try:
        a.setblocking(False)
        b.setblocking(False)
        while not all(d.done for d in directions):
            now = time.monotonic()
            timeout = _timeout(directions, now, last_read, idle_seconds, send_seconds)
            if timeout is not None and timeout <= 0:
                return
            interest = _interest(directions)
            poller = select.poll()
            for fd, events in interest.items():
                poller.register(fd, events)
            ready = dict(poller.poll(None if timeout is None else max(1, int(timeout * 1000) + 1)))
            moved = False
            for direction in directions:
                moved |= _write(direction, ready)
                read = _read(direction, ready)
                if read:
                    last_read = time.monotonic()
                moved |= read
            if not moved and any(events & _FAILED for events in ready.values()):
                return  # a socket failed and nothing can move any more
    except OSError:
        pass
    finally:
        a.close()
        b.close()


def _interest(directions: tuple[_Direction, ...]) -> dict[int, int]:
    """What to wait for on each socket: readable where a direction can take a chunk, writable where one waits."""
    interest: dict[int, int] = {}
    for d in directions:
        if d.waiting:
            interest[d.sink.fileno()] = interest.get(d.sink.fileno(), 0) | select.POLLOUT
        elif not d.ended:
            interest[d.source.fileno()] = interest.get(d.source.fileno(), 0) | select.POLLIN
    return interest


def _timeout(
    directions: tuple[_Direction, ...], now: float, last_read: float, idle: float | None, send: float | None
) -> float | None:
    """Seconds until the nearest deadline (<= 0: passed), or None without one."""
    limits = []
    if idle is not None:
        limits.append(last_read + idle - now)
    if send is not None:
        limits += [d.since + send - now for d in directions if d.waiting]
    return min(limits) if limits else None


def _write(d: _Direction, ready: dict[int, int]) -> bool:
    """Write what waits for the sink, as much as it takes now; True if any byte moved."""
    if not d.waiting or d.sink.fileno() not in ready:
        return False
    try:
        sent = d.sink.send(d.waiting)
    except BlockingIOError:
        return False
    d.waiting = d.waiting[sent:]
    d.since = time.monotonic()
    if not d.waiting and d.ended:
        _finish(d)
    return sent > 0


def _read(d: _Direction, ready: dict[int, int]) -> bool:
    """Read one chunk from the source if it is ready and nothing waits; True if it gave bytes or ended."""
    if d.waiting or d.ended or d.source.fileno() not in ready:
        return False
    try:
        data = d.source.recv(CHUNK)
    except BlockingIOError:
        return False
    if not data:
        d.ended = True
        _finish(d)
        return True
    d.waiting, d.since = data, time.monotonic()
    return True


def _finish(d: _Direction) -> None:
    d.done = True
    with contextlib.suppress(OSError):
        d.sink.shutdown(socket.SHUT_WR)
