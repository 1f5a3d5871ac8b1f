"""The host's HTTP(S) CONNECT proxy: the only way a worker with a network grant reaches anything (host side).

The worker lives in a network namespace of its own (netns.py); its relay asks for a stream over a control socket and
the proxy answers with one end of a fresh socketpair, serving the other end in a thread of its own. Nothing listens on
a port of the host. Per stream:

1. The request head (at most 8 KiB, all of it within ``Deadlines.head``, 10 s: a head that drips in is cut then). Only
   ``CONNECT host:port``: a plain-HTTP request gets ``405`` (its text says why), so a tunnel's contents (TLS) are the
   client's business and the proxy never parses them.
2. The policy (:class:`Policy`): the port (80/443), the per-agent ``allow_domains`` (``example.com`` covers its
   subdomains; None: any), then the name is **resolved once, here**, and the stream connects to that address (no DNS
   rebinding between check and use). Only public addresses, by the reviewed ranges of addresses.py (not by the Python
   version's ``is_global``): never loopback, link-local (cloud metadata at 169.254.169.254), private, multicast,
   reserved or unspecified, nor 6to4, Teredo or NAT64 forms of anything. ``allow_hosts`` entries
   (``"127.0.0.1:8080"``) are the user's explicit grant of one host and port, which bypasses the public-address rule
   (and ``allow_domains``) for exactly that pair.
3. A refusal answers ``403 nbagent: <why>`` (the status line is what ``requests``/``urllib`` show the code); a success
   answers ``200`` and copies bytes both ways without ever blocking (streams.py) until both ends close, a side takes
   none of the bytes waiting for it for ``Deadlines.send`` (30 s), or nothing moves for ``Deadlines.idle`` (300 s).

Every connection and refusal is recorded; the executor drains the records into the step's notes
(``connected to api.example.com:443``), and the policy's refusals also as data (:meth:`ConnectProxy.take_refusals`:
the step may ask a person). A grant (``Policy.granting``) lets one more ``host:port`` past ``allow_domains`` at once,
still only to public addresses. At most ``MAX_STREAMS`` streams at once per worker; they belong to it and are shut
when it is gone (a restart frees every slot). The proxy runs in daemon threads, none of which waits on a peer
without a deadline, and never blocks the executor's call loop; they end with the worker, a deadline or :meth:`close`.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .addresses import literal_not_public, not_public
from .confine import NETWORK_PORTS
from .streams import pipe

#: A host name (ASCII, as IDNA gives it) or an IP address literal: what a note or an answer may quote.
_HOST_NAME = re.compile(r"[a-z0-9_.-]{1,253}|[0-9a-f:.]{2,45}")
MAX_STREAMS = 32
MAX_HEAD_BYTES = 8192
MAX_RECORDS = 200
MAX_REFUSAL_RECORDS = 20
REFUSAL_PAUSE_SECONDS = 0.05
#: The least time between two streams handed to the worker: a relay asking for streams it drops at once (each costs
#: the kernel a socketpair and a thread) gets at most 200 a second, a few percent of a core, not a spinning thread.
HAND_OUT_INTERVAL_SECONDS = 0.005


class Refused(Exception):
    """A connection the policy does not allow: ``str()`` is the reason the code sees, ``short`` the step's note;
    ``grantable``: a person may let it through (a domain outside ``allow_domains``; never a non-public address)."""

    def __init__(self, reason: str, short: str = "", status: str = "403", grantable: bool = False) -> None:
        super().__init__(reason)
        self.short = short or reason
        self.status = status
        self.grantable = grantable


@dataclass(frozen=True)
class Policy:
    """Where a worker may connect: public addresses on ``ports``, within ``allow_domains`` (None: any), plus
    ``allow_hosts``, the user's explicit (host, port) grants (loopback and private ones included), plus ``granted``,
    the (host, port) pairs a person let past ``allow_domains`` when asked (public addresses only, like the rest)."""

    allow_domains: tuple[str, ...] | None = None
    allow_hosts: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    ports: tuple[int, ...] = NETWORK_PORTS
    granted: frozenset[tuple[str, int]] = field(default_factory=frozenset)

    @classmethod
    def make(cls, allow_domains: Iterable[str] | str | None = None, allow_hosts: Iterable[str] | str = ()) -> Policy:
        """From the executor's parameters; a clear ValueError for a malformed entry."""
        if isinstance(allow_domains, str):
            allow_domains = [allow_domains]
        if isinstance(allow_hosts, str):
            allow_hosts = [allow_hosts]
        domains = None if allow_domains is None else tuple(_domain(d) for d in allow_domains)
        return cls(domains, frozenset(_host_port(entry, "allow_hosts") for entry in allow_hosts))

    def granting(self, target: str, on: bool = True) -> Policy:
        """This policy with ``target`` (``"host:port"``) let past ``allow_domains`` (``on``) or no longer."""
        pair = parse_target(target)
        return replace(self, granted=self.granted | {pair} if on else self.granted - {pair})

    def resolve(self, host: str, port: int) -> str:
        """The address to connect to (resolved once, here), or :class:`Refused`."""
        if (host, port) in self.allow_hosts:
            return _addresses(host, port)[0][0]
        if port not in self.ports:
            allowed = "/".join(map(str, self.ports))
            raise Refused(f"port {port} is not allowed (only {allowed})", f"port {port} not allowed")
        if (
            self.allow_domains is not None
            and (host, port) not in self.granted
            and not any(host == d or host.endswith("." + d) for d in self.allow_domains)
        ):
            grantable = not literal_not_public(host)  # a loopback or private address: allow_hosts is the explicit way
            raise Refused(f"{host} is not in this agent's allow_domains", "not in allow_domains", grantable=grantable)
        addresses = _addresses(host, port)
        for address, reason in addresses:
            if not reason:
                return address
        address, reason = addresses[0]
        said = f"{host} is {reason}" if address == host else f"{host} resolves to {address}, {reason}"
        raise Refused(said, reason.removeprefix("a ").removeprefix("an "))


def _domain(entry: object) -> str:
    if not isinstance(entry, str) or not entry.strip(" .") or any(c in entry for c in "/:@ "):
        raise ValueError(f"allow_domains: {entry!r} is not a domain name (write 'example.com')")
    return entry.strip(".").lower().removeprefix("*.")


def parse_target(target: object) -> tuple[str, int]:
    """``"host:port"`` (``"[::1]:443"``) as (host, port); a clear ValueError otherwise."""
    return _host_port(target, "target")


def _host_port(entry: object, what: str) -> tuple[str, int]:
    text = entry if isinstance(entry, str) else ""
    host, _, port = text.rpartition(":")
    host = host.strip("[]").rstrip(".").lower()
    if not _HOST_NAME.fullmatch(host) or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what}: {entry!r} is not 'host:port' (write '127.0.0.1:8080' or '[::1]:8080')")
    return host, int(port)


def _addresses(host: str, port: int) -> list[tuple[str, str]]:
    """Each address ``host`` resolves to, with why it is not public ('' if it is)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Refused(f"{host} does not resolve ({exc})", "does not resolve", "502") from None
    seen: dict[str, str] = {}
    for _family, _type, _proto, _name, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]), not_public(str(sockaddr[0])))
    return list(seen.items())


# --- the proxy -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Deadlines:
    """The proxy's time limits, in seconds (parameters so tests can make them short)."""

    head: float = 10.0  #: the whole CONNECT head, however slowly it drips in
    connect: float = 10.0  #: opening the connection to the target
    send: float = 30.0  #: a side that accepts none of the bytes waiting for it (a peer that stopped reading)
    idle: float = 300.0  #: nothing read from either side (a peer that stopped sending)


class _Worker:
    """One attached worker: its control socket and the streams it opened, shut together when it is gone."""

    def __init__(self) -> None:
        self.sockets: set[socket.socket] = set()
        self.streams = 0
        self.closed = False


class ConnectProxy:
    """One executor's proxy: :meth:`attach` a worker, :meth:`take_notes` after a call, :meth:`close` at the end.

    Streams belong to the worker that opened them. A worker's end of its control socket is its alone (the fork
    replaces every other inherited descriptor), so when it dies (replaced, restarted, stopped, crashed) the control
    thread sees the end of that socket and shuts the worker's streams; the next worker has its own ``MAX_STREAMS``."""

    def __init__(self, policy: Policy, deadlines: Deadlines | None = None) -> None:
        self.policy = policy
        self.deadlines = deadlines or Deadlines()
        self._lock = threading.Lock()
        self._records: dict[str, int] = {}  # note -> how many times, in first-seen order
        self._refusals: list[tuple[str, int, str, bool]] = []  # the policy's refusals: host, port, why, grantable
        self._workers: list[_Worker] = []
        self._closed = False

    def attach(self) -> socket.socket:
        """A control socket for a new worker (its end; the proxy serves the other in a thread of its own)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        worker = _Worker()
        with self._lock:
            self._workers.append(worker)
        self._track(worker, mine)
        threading.Thread(target=self._serve_control, args=(worker, mine), name="nbagent-proxy", daemon=True).start()
        return theirs

    def take_notes(self) -> list[str]:
        """What happened since the last call: "connected to host:443" (with a count when more than once)."""
        with self._lock:
            records, self._records = self._records, {}
        return [text if count == 1 else f"{text} ({count} times)" for text, count in records.items()]

    def take_refusals(self) -> list[tuple[str, int, str, bool]]:
        """The policy's refusals since the last time (each once): (host, port, why, grantable)."""
        with self._lock:
            refusals, self._refusals = self._refusals, []
        return refusals

    def release(self) -> None:
        """Shut every worker attached so far: its control socket and every stream it opened (their threads end)."""
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            self._release(worker)

    def close(self) -> None:
        """Stop: every control socket and stream is shut down (their threads end); no worker is served again."""
        with self._lock:
            self._closed = True
        self.release()

    # -- threads ------------------------------------------------------------------------------------------------------

    def _serve_control(self, worker: _Worker, control: socket.socket) -> None:
        """Each byte from the relay asks for one stream; the answer is b"y" with the stream's fd, or b"x". An answer
        the worker does not take within the send deadline ends its control socket (no thread waits on it forever)."""
        control.settimeout(self.deadlines.send)
        try:
            while True:
                try:
                    requests = control.recv(64)
                except TimeoutError:
                    continue
                if not requests:
                    return
                for _ in requests:
                    self._hand_out(worker, control)
                    time.sleep(HAND_OUT_INTERVAL_SECONDS)
        except OSError:
            return
        finally:
            self._release(worker)  # the worker is gone (its end closed when it died) or misbehaved: so are its streams
            control.close()

    def _hand_out(self, worker: _Worker, control: socket.socket) -> None:
        with self._lock:
            refuse = self._closed or worker.closed or worker.streams >= MAX_STREAMS
            if not refuse:
                worker.streams += 1
        if refuse:
            self._record(f"refused a connection ({MAX_STREAMS} already open)")
            control.sendall(b"x")
            time.sleep(REFUSAL_PAUSE_SECONDS)  # a worker asking in a loop must not keep a kernel thread busy
            return
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(control, [b"y"], [theirs.fileno()])
        except OSError:
            mine.close()
            self._stream_ended(worker)
            raise
        finally:
            theirs.close()
        self._track(worker, mine)
        args = (worker, mine)
        threading.Thread(target=self._serve_stream, args=args, name="nbagent-proxy-stream", daemon=True).start()

    def _serve_stream(self, worker: _Worker, client: socket.socket) -> None:
        try:
            self._tunnel(worker, client)
        except OSError:
            pass
        finally:
            self._untrack(worker, client)
            client.close()
            self._stream_ended(worker)

    def _tunnel(self, worker: _Worker, client: socket.socket) -> None:
        try:
            head, rest = _read_head(client, self.deadlines.head)
            host, port = _connect_target(head)
        except Refused as refusal:
            self._record(f"refused {refusal.short}")
            _answer(client, _refusal(refusal), self.deadlines.send)
            return
        try:
            upstream = self._open(host, port)
        except Refused as refusal:
            _answer(client, _refusal(refusal), self.deadlines.send)
            return
        self._track(worker, upstream)
        try:
            _answer(client, b"HTTP/1.1 200 Connection established\r\n\r\n", self.deadlines.send)
            pipe(client, upstream, idle_seconds=self.deadlines.idle, send_seconds=self.deadlines.send, first=rest)
        finally:
            self._untrack(worker, upstream)
            upstream.close()

    def _open(self, host: str, port: int) -> socket.socket:
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            address = self.policy.resolve(host, port)
        except Refused as refusal:
            self._record(f"refused a connection to {target} ({refusal.short})")
            if refusal.status == "403":  # the policy's answer (a name that does not resolve is no refusal of it)
                self._record_refusal((host, port, str(refusal), refusal.grantable))
            raise
        try:
            upstream = socket.create_connection((address, port), timeout=self.deadlines.connect)
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a relay adds no delay of its own
        except OSError as exc:
            self._record(f"could not connect to {target} ({exc.strerror or exc})")
            raise Refused(f"could not connect to {target} ({exc.strerror or exc})", status="502") from None
        self._record(f"connected to {target}")
        return upstream

    # -- bookkeeping --------------------------------------------------------------------------------------------------

    def _record(self, text: str) -> None:
        with self._lock:
            if text in self._records or len(self._records) < MAX_RECORDS:
                self._records[text] = self._records.get(text, 0) + 1

    def _record_refusal(self, refusal: tuple[str, int, str, bool]) -> None:
        with self._lock:
            if refusal not in self._refusals and len(self._refusals) < MAX_REFUSAL_RECORDS:
                self._refusals.append(refusal)

    def _track(self, worker: _Worker, sock: socket.socket) -> None:
        """``sock`` belongs to ``worker``: shut with it (at once if it is already gone)."""
        with self._lock:
            gone = worker.closed
            if not gone:
                worker.sockets.add(sock)
        if gone:
            _shut([sock])

    def _release(self, worker: _Worker) -> None:
        """``worker`` is gone: its streams are shut now, and its slots no longer count."""
        with self._lock:
            worker.closed = True
            if worker in self._workers:
                self._workers.remove(worker)
            sockets, worker.sockets = list(worker.sockets), set()
        _shut(sockets)

    def _untrack(self, worker: _Worker, sock: socket.socket) -> None:
        with self._lock:
            worker.sockets.discard(sock)

    def _stream_ended(self, worker: _Worker) -> None:
        with self._lock:
            worker.streams -= 1


def _shut(sockets: Iterable[socket.socket]) -> None:
    """Shut both directions: a thread polling, reading or sending on the socket wakes and ends."""
    for sock in list(sockets):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _answer(client: socket.socket, data: bytes, seconds: float) -> None:
    """Send the proxy's answer; a client that does not take it within ``seconds`` loses its stream (an OSError)."""
    client.settimeout(seconds)
    client.sendall(data)


def _read_head(client: socket.socket, seconds: float) -> tuple[bytes, bytes]:
    """The request head and whatever followed it (a client may send its TLS hello without waiting for the 200), all
    within ``seconds`` in total: a head that drips in a byte at a time is cut at the deadline, not at each ``recv``."""
    deadline = time.monotonic() + seconds
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD_BYTES:
            raise Refused("the request head is too long", "a request head over 8 KiB", "431")
        left = deadline - time.monotonic()
        if left <= 0:
            raise Refused(f"the request head did not arrive within {seconds:g} s", "a request head too slow", "408")
        client.settimeout(left)
        try:
            chunk = client.recv(4096)
        except TimeoutError:
            continue
        if not chunk:
            raise ConnectionError("the client left before its request")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _connect_target(head: bytes) -> tuple[str, int]:
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split()
    method = parts[0].upper() if parts else ""
    if method != "CONNECT" or len(parts) != 3:
        raise Refused(
            "only HTTPS goes through this proxy (CONNECT); a plain-HTTP request is refused",
            f"a plain-HTTP {method[:10]} request" if method else "an empty request",
            "405",
        )
    try:
        return _host_port(parts[1], "CONNECT")
    except ValueError:
        raise Refused(f"{parts[1][:100]!r} is not host:port", "a malformed CONNECT request", "400") from None


def _refusal(refusal: Refused) -> bytes:
    text = f"nbagent: {refusal}".replace("\r", " ").replace("\n", " ")
    body = (text + "\n").encode()
    head = f"HTTP/1.1 {refusal.status} {text}\r\nContent-Type: text/plain; charset=utf-8\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode("utf-8", "replace") + body
