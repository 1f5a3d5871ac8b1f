"""HTTP connections that a Stop cuts: a blocked read of an API model's call ends when its scope is cancelled.

An API call waits in a socket read: for a non-streaming answer until the server has written all of it
(minutes for a long answer of a local server), for a stream until the next chunk. Closing a socket from
another thread does not wake a read blocked on it; shutting it down does (the read sees the end of the
stream, the server sees the client leave and stops generating). So the reads of an httpx client's
connections run with `CancelScope.while_running(shutdown)`.

`cut_on_cancel(http_client)` wraps the network backend of an httpx (or openai's httpx2) client's
connection pool: a pass-through outside a cancel scope. `shutdown_stream(stream)` does the same for one
provider stream object whose response is at hand.
"""

from __future__ import annotations

import socket
from typing import Any

from .cancel import current_scope

__all__ = ["cut_on_cancel", "shutdown_stream"]


def cut_on_cancel(http_client: Any) -> bool:
    """Make the reads of `http_client`'s connections end when the current call is cancelled.

    Reaches the pool's network backend through httpx's private `_transport._pool._network_backend`
    (the same in httpx and httpx2); returns False, changing nothing, where that is not there (then a
    stopped call is left to finish in the background: the run does not wait for it).
    """
    pool = getattr(getattr(http_client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        return False
    if not isinstance(backend, _CancellableBackend):
        pool._network_backend = _CancellableBackend(backend)
    return True


def shutdown_stream(stream: Any) -> bool:
    """Shut down the connection under a provider's stream (an openai `Stream`, LiteLLM's wrapper of one)."""
    for holder in (stream, getattr(stream, "completion_stream", None)):
        response = getattr(holder, "response", None)
        extensions = getattr(response, "extensions", None)
        network = extensions.get("network_stream") if isinstance(extensions, dict) else None
        if network is not None:
            return _shutdown(network.get_extra_info("socket"))
    return False


def _shutdown(sock: Any) -> bool:
    """Shut `sock` down for both directions through a duplicate of its descriptor (an SSL socket's own
    `shutdown` would also drop its TLS state under the reading thread's feet)."""
    if not isinstance(sock, socket.socket) or sock.fileno() < 0:
        return False
    try:
        with socket.socket(fileno=socket.dup(sock.fileno())) as twin:
            twin.shutdown(socket.SHUT_RDWR)
    except OSError:
        return False
    return True


class _CancellableBackend:
    """A network backend whose connections are `_CancellableStream`s (httpcore duck-types backends)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(self, *args: Any, **kwargs: Any) -> _CancellableStream:
        return _CancellableStream(self._inner.connect_tcp(*args, **kwargs))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> _CancellableStream:
        return _CancellableStream(self._inner.connect_unix_socket(*args, **kwargs))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _CancellableStream:
    """A connection whose reads and writes end when the call they serve is cancelled."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        scope = current_scope()
        with scope.while_running(self._shutdown):
            return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        scope = current_scope()
        with scope.while_running(self._shutdown):
            self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, *args: Any, **kwargs: Any) -> _CancellableStream:
        return _CancellableStream(self._inner.start_tls(*args, **kwargs))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)

    def _shutdown(self) -> None:
        _shutdown(self._inner.get_extra_info("socket"))
