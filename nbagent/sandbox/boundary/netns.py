"""The worker's own network namespace, and the relay that is its only way out (Linux; worker side).

Right after ``fork``, before Landlock and seccomp, :func:`enter` moves the worker into a network namespace of its own
(``unshare(CLONE_NEWNET)``; unprivileged, together with ``CLONE_NEWUSER``). Nothing but its own loopback exists there:
whatever socket the code opens (MPTCP, UDP, raw, IPv6, v4-mapped), it reaches no interface of the machine, not the
kernel's ports on 127.0.0.1, not 169.254.169.254.

With a network grant the loopback is brought up and a relay listens on ``127.0.0.1:RELAY_PORT`` *inside* the
namespace (bound and listening now, since Landlock and seccomp forbid ``bind``/``listen`` later). For each connection
it accepts, the relay asks the host for a fresh stream over a pre-made AF_UNIX control socket (the host answers with
one end of a new socketpair, passed with ``SCM_RIGHTS``), then copies bytes both ways (streams.py). The host's end is served by the
CONNECT proxy (proxy.py), which holds the policy. The relay is Python the code can tamper with; that is fine: it only
ever reaches the same host proxy.

``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` (and lower-case) point at the relay (:func:`proxy_environment`), so
``requests``, ``httpx`` and ``urllib`` use it unchanged.

Where ``unshare`` fails (some containers) the worker stays in the host's namespace: :class:`Network` says so, and the
confinement falls back to the seccomp filter and Landlock's ports (see confine.py). ``NBAGENT_NETWORK_NAMESPACE=0``
in the kernel's environment forces that fallback (for tests, or a platform where namespaces misbehave).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import threading
from dataclasses import dataclass

from .streams import pipe

RELAY_PORT = 3128  # inside the worker's own namespace, where nothing else listens
RELAY_URL = f"http://127.0.0.1:{RELAY_PORT}"
FORCE_FALLBACK_VARIABLE = "NBAGENT_NETWORK_NAMESPACE"
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_PR_SET_DUMPABLE = 4


def wanted() -> bool:
    """Whether workers should get their own namespace (read in the host, where the environment is the user's)."""
    return os.environ.get(FORCE_FALLBACK_VARIABLE, "1").strip().lower() not in ("0", "false", "no", "off")


def proxy_environment() -> dict[str, str]:
    """The variables that make HTTP libraries in the worker go through the relay."""
    names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
    return {name: RELAY_URL for name in names} | {name.lower(): RELAY_URL for name in names}


@dataclass
class Network:
    """What :func:`enter` did: the mode in force, the ports Landlock should allow, the relay to start."""

    mode: str
    ports: tuple[int, ...] = ()
    notice: str = ""
    listener: socket.socket | None = None
    control: socket.socket | None = None
    user_namespace: bool = False  # entered one too: the process holds its (full) capabilities there, to drop

    @property
    def accept_fd(self) -> int | None:
        """The one descriptor the relay accepts on (for a seccomp filter that allows ``accept4`` on it alone)."""
        return self.listener.fileno() if self.listener is not None else None

    def start(self) -> None:
        """Start the relay (after Landlock and seccomp: the thread inherits both)."""
        if self.listener is not None and self.control is not None:
            threading.Thread(
                target=_relay, args=(self.listener, self.control), name="nbagent-relay", daemon=True
            ).start()


def enter(*, namespace: bool, relay_fd: int | None, fallback_ports: tuple[int, ...]) -> Network:
    """Enter a network namespace of our own (if ``namespace``) and, given the relay's control socket, set up the relay;
    ``fallback_ports`` are the ports a granted worker may reach directly where it stays in the kernel's namespace.

    Called in the single-threaded worker, before capabilities are dropped. Never raises: a failure is a mode and a
    notice (the caller decides what is enforced instead).
    """
    if not namespace:
        return _host_network(relay_fd, fallback_ports, f"{FORCE_FALLBACK_VARIABLE}=0")
    error, user_namespace = _unshare()
    if error:
        return _host_network(relay_fd, fallback_ports, f"unshare failed: {error}")
    network = _own_network(relay_fd)
    network.user_namespace = user_namespace
    return network


def _own_network(relay_fd: int | None) -> Network:
    """In our own namespace: nothing (no grant), or the loopback up and the relay's listener bound."""
    if relay_fd is None:
        return Network("own namespace: no network")
    control = socket.socket(fileno=relay_fd)
    try:
        _loopback_up()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", RELAY_PORT))
        listener.listen(64)
    except OSError as exc:
        control.close()
        _forget_proxy()
        return Network("own namespace: no network", notice=f"the network relay could not start ({exc}); no network")
    return Network(
        f"own namespace: HTTPS through the kernel's proxy ({RELAY_URL})", (RELAY_PORT,), "", listener, control
    )


def _host_network(relay_fd: int | None, ports: tuple[int, ...], why: str) -> Network:
    """No namespace of our own: ``ports`` (empty without a network grant) are reached directly, without the proxy."""
    if relay_fd is not None:
        os.close(relay_fd)
    _forget_proxy()  # no relay: the libraries connect directly
    where = f"the kernel's namespace ({why})"
    if ports:
        listed = "/".join(map(str, ports))
        notice = (
            f"a network namespace of its own ({why}): a granted network module connects directly to ports {listed} "
            "of any address, without the proxy's policy (private networks included)"
        )
        return Network(f"{where}: TCP ports {listed}", ports, notice)
    return Network(f"{where}: no sockets")


def _forget_proxy() -> None:
    for name in proxy_environment():
        os.environ.pop(name, None)


def _unshare() -> tuple[str, bool]:
    """('', whether a user namespace was needed too) once in a network namespace of our own; else (why not, False)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "unshare"):
        return "no unshare(2) on this platform", False
    if os.geteuid() == 0 and libc.unshare(_CLONE_NEWNET) == 0:
        return "", False
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return os.strerror(ctypes.get_errno()), False
    _map_ids(libc, uid, gid)
    return "", True


def _map_ids(libc: ctypes.CDLL, uid: int, gid: int) -> None:
    """Keep our own ids inside the new user namespace (else they show as 65534). /proc/self/*_map is writable only
    while the process is dumpable: set for these three writes, then cleared again (confine.py clears it first)."""
    libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        for path, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            try:
                with open(f"/proc/self/{path}", "w") as fh:
                    fh.write(text)
            except OSError:
                pass
    finally:
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


# --- the relay (a thread in the worker) ----------------------------------------------------------------------------


def _relay(listener: socket.socket, control: socket.socket) -> None:
    """Accept on the namespace's loopback; for each client, a fresh stream from the host, copied both ways."""
    while True:
        try:
            client, _ = listener.accept()
        except ConnectionAbortedError:  # the client left before it was accepted
            continue
        except OSError:
            return
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # pass small writes on at once (no Nagle)
        try:
            upstream = _ask_host(control)
        except OSError:  # the host is gone: nothing more can be reached
            client.close()
            return
        if upstream is None:  # the host refused (too many connections)
            client.close()
            continue
        threading.Thread(
            target=_copy_both_ways, args=(client, upstream), name="nbagent-relay-pipe", daemon=True
        ).start()


def _ask_host(control: socket.socket) -> socket.socket | None:
    control.sendall(b"c")
    message, fds, _, _ = socket.recv_fds(control, 1, 1)
    if not message:
        raise ConnectionError("the host closed the relay's control socket")
    if not fds:
        return None
    return socket.socket(fileno=fds[0])


def _copy_both_ways(a: socket.socket, b: socket.socket) -> None:
    """Until both directions have ended (the worker's own streams: no deadline here, the host's proxy has them)."""
    pipe(a, b, idle_seconds=None, send_seconds=None)
