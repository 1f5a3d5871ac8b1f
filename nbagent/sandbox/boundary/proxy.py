"""The host's HTTP(S) CONNECT proxy: the only way a worker with a network grant reaches anything (host side).

The worker lives in a network namespace of its own (netns.py); its relay asks for a stream over a control socket and
the proxy answers with one end of a fresh socketpair, serving the other end in a thread of its own. Nothing listens on
a port of the host. Per stream:

1. The request head (at most 8 KiB, within 10 s). Only ``CONNECT host:port``: a plain-HTTP request gets ``405`` (its
   text says why), so a tunnel's contents (TLS) are the client's business and the proxy never parses them.
2. The policy (:class:`Policy`): the port (80/443), the per-agent ``allow_domains`` (``example.com`` covers its
   subdomains; None: any), then the name is **resolved once, here**, and the stream connects to that address (no DNS
   rebinding between check and use). Only public addresses (``ipaddress``'s ``is_global``; v4-mapped IPv6 judged as
   IPv4): never loopback, link-local (cloud metadata at 169.254.169.254), private, multicast, reserved or unspecified.
   ``allow_hosts`` entries (``"127.0.0.1:8080"``) are the user's explicit grant of one host and port, which bypasses
   the public-address rule (and ``allow_domains``) for exactly that pair.
3. A refusal answers ``403 nbagent: <why>`` (the status line is what ``requests``/``urllib`` show the code); a success
   answers ``200`` and copies bytes both ways until both ends close or nothing moves for ``IDLE_SECONDS``.

Every connection and refusal is recorded; the executor drains the records into the step's notes
(``connected to api.example.com:443``), and the policy's refusals also as data (:meth:`ConnectProxy.take_refusals`:
the step may ask a person). A grant (``Policy.granting``) lets one more ``host:port`` past ``allow_domains`` at once,
still only to public addresses. At most ``MAX_STREAMS`` streams at once per executor. The proxy runs in
daemon threads and never blocks the executor's call loop; its threads end with the worker's sockets or :meth:`close`.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .confine import NETWORK_PORTS
from .netns import pipe

#: A host name (ASCII, as IDNA gives it) or an IP address literal: what a note or an answer may quote.
_HOST_NAME = re.compile(r"[a-z0-9_.-]{1,253}|[0-9a-f:.]{2,45}")
MAX_STREAMS = 32
MAX_HEAD_BYTES = 8192
HANDSHAKE_SECONDS = 10.0
CONNECT_SECONDS = 10.0
IDLE_SECONDS = 300.0
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


def literal_not_public(host: str) -> str:
    """Why ``host``, an IP address literal, is not public ("" if it is public or a name)."""
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return ""
    return not_public(host)


def not_public(address: str) -> str:
    """Why ``address`` is not a public address ('' if it is), in words."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for test, words in (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_reserved", "a reserved address"),
        ("is_private", "a private address"),
    ):
        if getattr(ip, test):
            return words
    return "" if ip.is_global else "not a public address"


# --- the proxy -----------------------------------------------------------------------------------------------------


class ConnectProxy:
    """One executor's proxy: :meth:`attach` a worker, :meth:`take_notes` after a call, :meth:`close` at the end."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._lock = threading.Lock()
        self._records: dict[str, int] = {}  # note -> how many times, in first-seen order
        self._refusals: list[tuple[str, int, str, bool]] = []  # the policy's refusals: host, port, why, grantable
        self._sockets: set[socket.socket] = set()
        self._streams = 0
        self._closed = False

    def attach(self) -> socket.socket:
        """A control socket for a new worker (its end; the proxy serves the other in a thread of its own)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._track(mine)
        threading.Thread(target=self._serve_control, args=(mine,), name="nbagent-proxy", daemon=True).start()
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

    def close(self) -> None:
        """Stop: every control socket and stream is shut down (their threads end)."""
        with self._lock:
            self._closed = True
            sockets, self._sockets = list(self._sockets), set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    # -- threads ------------------------------------------------------------------------------------------------------

    def _serve_control(self, control: socket.socket) -> None:
        """Each byte from the relay asks for one stream; the answer is b"y" with the stream's fd, or b"x"."""
        try:
            while True:
                requests = control.recv(64)
                if not requests:
                    return
                for _ in requests:
                    self._hand_out(control)
                    time.sleep(HAND_OUT_INTERVAL_SECONDS)
        except OSError:
            return
        finally:
            self._untrack(control)

    def _hand_out(self, control: socket.socket) -> None:
        with self._lock:
            refuse = self._closed or self._streams >= MAX_STREAMS
            if not refuse:
                self._streams += 1
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
            self._stream_ended()
            raise
        finally:
            theirs.close()
        self._track(mine)
        threading.Thread(target=self._serve_stream, args=(mine,), name="nbagent-proxy-stream", daemon=True).start()

    def _serve_stream(self, client: socket.socket) -> None:
        try:
            self._tunnel(client)
        except OSError:
            pass
        finally:
            self._untrack(client)
            client.close()
            self._stream_ended()

    def _tunnel(self, client: socket.socket) -> None:
        client.settimeout(HANDSHAKE_SECONDS)
        try:
            head, rest = _read_head(client)
            host, port = _connect_target(head)
        except Refused as refusal:
            self._record(f"refused {refusal.short}")
            client.sendall(_refusal(refusal))
            return
        try:
            upstream = self._open(host, port)
        except Refused as refusal:
            client.sendall(_refusal(refusal))
            return
        self._track(upstream)
        try:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            client.settimeout(None)
            upstream.settimeout(None)
            pipe(client, upstream, IDLE_SECONDS)
        finally:
            self._untrack(upstream)
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
            upstream = socket.create_connection((address, port), timeout=CONNECT_SECONDS)
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

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            closed = self._closed
            if not closed:
                self._sockets.add(sock)
        if closed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def _stream_ended(self) -> None:
        with self._lock:
            self._streams -= 1


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """The request head and whatever followed it (a client may send its TLS hello without waiting for the 200)."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD_BYTES:
            raise Refused("the request head is too long", "a request head over 8 KiB", "431")
        chunk = client.recv(4096)
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
