"""OS confinement of the worker process: what it may read, write, reach and inherit (Linux; elsewhere a notice).

The host computes a :class:`Plan` before ``fork`` (:func:`plan`); the worker applies it to itself at once
(:func:`apply`), before any agent code runs, in this order:

1. **Environment**: ``os.environ`` is emptied but for a few harmless variables (locale, thread counts) and ``HOME``,
   ``TMPDIR`` pointing at the scratch directory; the kernel's original environment block in memory is zeroed (it is
   what ``/proc/<pid>/environ`` shows); the kernel's secrets held in memory are cleared (secrets.py: session key,
   connection info, history, API clients' credentials, ``sys.argv``) and inherited shared file mappings made
   private (mappings.py).
2. **Limits**: ``RLIMIT_AS`` (the kernel's address space at fork + ``memory_limit_bytes``), ``RLIMIT_FSIZE``,
   ``RLIMIT_CORE`` = 0 and not dumpable (no core file holding a copy of the kernel's memory).
3. **Privileges**: ``no_new_privs``; the worker enters a network namespace of its own (netns.py: only its loopback,
   and with a network grant a relay to the host's CONNECT proxy); as root, every capability is dropped.
4. **Landlock**: read-only access to the Python installation, the system libraries, the working directory and
   ``allow_read``; read-write access to the scratch directory and ``allow_write``; nothing else, no ``execve``. The home
   directory's dotfiles, other dot-entries of the working directory and the kernel's connection file are carved out
   of any granted hierarchy. TCP ``connect`` only to the relay's port when the network is granted (80/443 where no
   namespace could be made), never ``bind``.
5. **seccomp**: an allow-list (syscalls.py, seccomp.py): no process spawn, no other process, no IPC, no session
   or process group of its own, TCP sockets only with a network grant; anything else is ``EPERM``.

:func:`apply` returns a report (what is enforced, what is not and why); the executor shows it once.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from . import landlock, lifetime, mappings, netns, rlimits, seccomp, secrets, wipe
from .unchanged import Known

#: Environment variables the worker keeps (none of them is a secret).
KEPT_ENVIRONMENT = ("LANG", "LANGUAGE", "TZ", "TERM", "PYTHONIOENCODING", "PYTHONUTF8")
KEPT_ENVIRONMENT_PREFIXES = ("LC_",)
KEPT_ENVIRONMENT_SUFFIXES = ("_NUM_THREADS",)

#: System files and directories the worker may read (beyond the Python installation).
SYSTEM_READ = (
    "/usr", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/timezone", "/etc/fonts", "/etc/mime.types", "/etc/matplotlibrc", "/sys/devices/system/cpu",
    "/proc/cpuinfo", "/proc/meminfo", "/dev/urandom", "/dev/random", "/dev/zero",
)  # fmt: skip
NETWORK_READ = ("/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
                "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/run/systemd/resolve/stub-resolv.conf")  # fmt: skip
DEVICE_WRITE = ("/dev/null",)
NETWORK_PORTS = (80, 443)
MAX_EXPANDED_ENTRIES = 4000


@dataclass
class Plan:
    scratch: str
    read: list[str] = field(default_factory=list)
    write: list[str] = field(default_factory=list)
    allow_network: bool = False
    memory_limit_bytes: int | None = None
    file_limit_bytes: int | None = None
    confine: bool = True
    environment: dict[str, str] = field(default_factory=dict)
    network_namespace: bool = False  # the worker enters a network namespace of its own (netns.py)
    relay_fd: int | None = None  # the worker's end of the host proxy's control socket (set by the executor)


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(str(path)))


def _python_roots() -> list[str]:
    roots = set(_interpreter_roots())
    roots.update(_real(p) for p in sys.path if p and os.path.isdir(p) and p != os.getcwd())
    return sorted(roots)


def _interpreter_roots() -> list[str]:
    """The interpreter's own folders: its prefixes, standard library and site-packages (not a project's folder that
    an editable install or PYTHONPATH put on ``sys.path``)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(path)
    roots.update(p for p in sys.path if p and os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages"))
    if sys.executable:
        roots.add(os.path.dirname(os.path.realpath(sys.executable)))
    return sorted(_real(r) for r in roots)


def _connection_file() -> str | None:
    kernel_app = sys.modules.get("ipykernel.kernelapp")
    try:
        app = kernel_app.IPKernelApp.instance() if kernel_app and kernel_app.IPKernelApp.initialized() else None
        path = getattr(app, "abs_connection_file", None) or getattr(app, "connection_file", None)
    except Exception:
        return None
    return _real(path) if path else None


#: Never granted as part of a larger hierarchy (a working directory of "/", say); SYSTEM_READ names the few files
#: of these the worker needs.
NEVER_EXPANDED = ("/proc", "/sys", "/dev", "/run", "/var/run", "/etc/shadow", "/etc/gshadow", "/etc/sudoers",
                  "/etc/ssh", "/root")  # fmt: skip


def _excluded() -> list[str]:
    """Paths never readable, even inside a granted hierarchy: home dotfiles, the kernel's connection file, the
    process and device trees, the system's secrets."""
    home = _real("~")
    out = [path for path in NEVER_EXPANDED if path != home and not _inside(home, path)]
    try:
        out += [os.path.join(home, name) for name in os.listdir(home) if name.startswith(".")]
    except OSError:
        pass
    connection = _connection_file()
    if connection:
        out.append(connection)
        out += _key_files(os.path.dirname(connection))
    return out


def _key_files(folder: str) -> list[str]:
    """What of the connection file's folder is closed: all of a runtime folder (other kernels' keys live there);
    in a shared temporary folder (nbclient puts connection files straight into /tmp), its ``*.json`` files only,
    so that a working directory or a granted folder elsewhere in /tmp is not closed with them."""
    if folder != _shared_connection_folder():
        return [folder]
    try:
        return [os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".json")]
    except OSError:
        return []


#: Temporary folders many programs share: a kernel's connection file may lie directly in one (nbclient's do).
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")


def never_granted() -> list[str]:
    """What no grant reaches (refusals.py): the paths :func:`_excluded` carves out of every granted hierarchy (and
    key files made since: :func:`is_key_file`)."""
    return _excluded()


def connection_file() -> str | None:
    """The kernel's connection file (its keys), resolved; None outside a kernel."""
    return _connection_file()


def is_key_file(path: str) -> bool:
    """A connection file's sibling in the shared temporary folder that holds the kernel's: another kernel's keys."""
    shared = _shared_connection_folder()
    return bool(shared) and os.path.dirname(path) == shared and path.endswith(".json")


def _shared_connection_folder() -> str:
    connection = _connection_file()
    folder = os.path.dirname(connection) if connection else ""
    temp = {_real(p) for p in (*SHARED_TEMP, tempfile.gettempdir())}
    return folder if folder in temp else ""


def python_roots() -> list[str]:
    """The folders Python imports from (the worker reads them): the interpreter's and those on ``sys.path``."""
    return _python_roots()


def interpreter_roots() -> list[str]:
    """The interpreter's own folders (nothing grants writing there)."""
    return _interpreter_roots()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _expand(root: str, excluded: list[str], skip_dots: bool, budget: list[int], *, python: bool = False) -> list[str]:
    """``root`` itself, or its entries minus the excluded ones when an excluded path lies inside it (a Python
    installation root is granted even inside an excluded directory, e.g. ``~/.pyenv``)."""
    if not python and any(_inside(root, ex) for ex in excluded):
        return []
    if not any(_inside(ex, root) and ex != root for ex in excluded) and not skip_dots:
        return [root]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out: list[str] = []
    for name in names:
        if budget[0] <= 0:
            break
        budget[0] -= 1
        if skip_dots and name.startswith("."):
            continue
        out.extend(_expand(os.path.join(root, name), excluded, False, budget))
    return out


def plan(
    scratch: str,
    *,
    allow_read: tuple[str, ...] = (),
    allow_write: tuple[str, ...] = (),
    allow_network: bool = False,
    memory_limit_bytes: int | None = None,
    file_limit_bytes: int | None = None,
    confine: bool = True,
) -> Plan:
    """What the worker will be allowed (computed in the host, before ``fork``)."""
    excluded = _excluded()
    budget = [MAX_EXPANDED_ENTRIES]
    read = [path for root in _python_roots() for path in _expand(root, excluded, False, budget, python=True)]
    system = list(SYSTEM_READ) + (list(NETWORK_READ) if allow_network else [])
    read += [p for p in system if os.path.exists(p)]
    read += _expand(_real(os.getcwd()), excluded, True, budget)
    for path in allow_read:
        read += _expand(_real(path), excluded, False, budget)
    write = [_real(scratch)]
    for path in allow_write:
        write += _expand(_real(path), excluded, False, budget)
    namespace = confine and sys.platform == "linux" and netns.wanted()
    environment = _worker_environment(scratch) | (netns.proxy_environment() if namespace and allow_network else {})
    return Plan(
        scratch=scratch,
        read=read,
        write=write,
        allow_network=allow_network,
        memory_limit_bytes=memory_limit_bytes,
        file_limit_bytes=file_limit_bytes,
        confine=confine,
        environment=environment,
        network_namespace=namespace,
    )


def _worker_environment(scratch: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key in KEPT_ENVIRONMENT
        or key.startswith(KEPT_ENVIRONMENT_PREFIXES)
        or key.endswith(KEPT_ENVIRONMENT_SUFFIXES)
    }
    mpl = os.path.join(scratch, ".matplotlib")
    env.update(
        PATH="/usr/bin:/bin", HOME=scratch, TMPDIR=scratch, MPLCONFIGDIR=mpl, MPLBACKEND="Agg", NBAGENT_SCRATCH=scratch
    )
    return env


# --- in the worker -------------------------------------------------------------------------------------------------


def apply(
    p: Plan,
    namespace: dict | None = None,
    hidden: dict | None = None,
    credentials: list | None = None,
    known: Known | None = None,
    tell: Callable[[frozenset[bytes]], None] | None = None,
) -> dict[str, object]:
    """Confine the calling (single-threaded, freshly forked) process; returns the report. ``namespace``: the names
    the agent's code will see (what they hold is the user's data: the memory pass of secrets.py never writes it);
    ``hidden``: the values of the names taken out of it; ``credentials``: the texts of the user's credentials taken
    out of it, removed from memory with the kernel's secrets; ``known``, ``tell``: see secrets.scrub."""
    report: dict[str, object] = {"platform": sys.platform}
    report["kernel_secrets"] = _scrub_environment(p, namespace, hidden, credentials, known, tell)
    report["environment"] = "scrubbed"
    report["shared_mappings"] = mappings.make_private(p.write) if sys.platform == "linux" else []
    report["memory_limit"] = _set_limits(p, report)
    if not p.confine:
        report["confined"] = False
        rlimits.add_notice(report, "confinement disabled (confine=False): only the process boundary applies")
        return report
    if sys.platform != "linux":
        report["confined"] = False
        rlimits.add_notice(
            report,
            f"no OS confinement on {sys.platform}: the worker can read and write your files, use the network and "
            "start processes; only the process boundary (timeouts, memory, crashes) applies",
        )
        return report
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
    ports = NETWORK_PORTS if p.allow_network else ()
    network = netns.enter(namespace=p.network_namespace, relay_fd=p.relay_fd, fallback_ports=ports)  # caps needed
    report["capabilities"] = _drop_capabilities(libc, held=network.user_namespace)
    missing = [network.notice] if network.notice else []
    try:
        report["landlock_abi"] = _landlock(p, network.ports)
    except landlock.LandlockError as exc:
        missing.append(f"filesystem and network rules (Landlock unavailable: {exc})")
    if seccomp.supported():
        lifetime.tie_again()  # the parent-death signal, re-armed last (a user namespace's credentials clear it)
        seccomp.install(seccomp.build(os.getpid(), allow_network=p.allow_network, accept_fd=network.accept_fd))
        report["seccomp"] = True
    else:
        missing.append(f"system-call filter (seccomp: no table for {platform.machine()})")
    network.start()
    report["network"] = network.mode
    report["confined"] = not missing
    if missing:
        rlimits.add_notice(report, "not enforced: " + "; ".join(missing))
    return report


def _scrub_environment(
    p: Plan,
    namespace: dict | None,
    hidden: dict | None = None,
    credentials: list | None = None,
    known: Known | None = None,
    tell: Callable[[frozenset[bytes]], None] | None = None,
) -> dict[str, object]:
    """The environment, then the kernel's secrets held in memory (secrets.py: it masks the environment's secret
    values wherever else they were copied)."""
    environment = dict(os.environ)
    _zero_initial_environment()
    os.environ.clear()
    posix = sys.modules.get("posix")
    if posix is not None and isinstance(getattr(posix, "environ", None), dict):
        posix.environ.clear()
    os.environ.update(p.environment)
    _forget_http_openers()
    os.makedirs(p.environment.get("MPLCONFIGDIR", p.scratch), exist_ok=True)
    import tempfile

    tempfile.tempdir = p.scratch
    return secrets.scrub(environment, namespace, hidden, credentials, known, tell)


def _forget_http_openers() -> None:
    """urllib keeps the opener of the kernel's first `urlopen` (pandas' `read_csv(url)` too), built with the kernel's
    proxies: without this the worker's HTTP went around the relay its environment now names, and failed to resolve
    the host, once any code in the kernel had opened a URL."""
    request = sys.modules.get("urllib.request")
    if request is not None:
        request.install_opener(None)


def _zero_initial_environment() -> None:
    """Overwrite the environment strings the process started with (a copy of the kernel's, after fork)."""
    wipe.overwrite_startup_block("environment")


def _address_space() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _set_limits(p: Plan, report: dict[str, object]) -> int | None:
    """Core dumps off; file size and address space capped (at most at the hard limits; a lower one is noticed)."""
    import resource  # POSIX only: the worker exists only where fork does

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    if p.file_limit_bytes:
        rlimits.add_notice(report, rlimits.cap("RLIMIT_FSIZE", int(p.file_limit_bytes))[1])
    if not p.memory_limit_bytes or not hasattr(resource, "RLIMIT_AS"):
        return None
    try:
        limit = _address_space() + int(p.memory_limit_bytes)
    except (OSError, ValueError):
        return None
    limit, notice = rlimits.cap("RLIMIT_AS", limit)  # clamped to the inherited hard limit (containers, CI)
    rlimits.add_notice(report, notice)
    return limit


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities(libc: ctypes.CDLL, held: bool = False) -> str:
    """``held``: the process holds capabilities although not root (those of a user namespace of its own)."""
    if os.geteuid() != 0 and not held:
        return "none held"
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            last = int(fh.read())
    except (OSError, ValueError):
        last = 40
    for cap in range(last + 1):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    number = {"x86_64": 126, "aarch64": 91}.get(platform.machine())
    if number is None:
        return "kept (unknown architecture)"
    header = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(number, ctypes.byref(header), data) != 0:
        return f"kept (capset failed: errno {ctypes.get_errno()})"
    return "dropped"


def _landlock(p: Plan, ports: tuple[int, ...]) -> int:
    rules = landlock.Ruleset(restrict_network=True)
    for path in p.read:
        rules.allow_path(path, landlock.READ)
    for path in DEVICE_WRITE:
        rules.allow_path(path, landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE)
    for path in p.write:
        rules.allow_path(path, landlock.WRITE)
    rules.allow_ports(ports)  # the relay's port in a namespace of its own; 80/443 without one; none ungranted
    rules.restrict_self()
    return rules.abi
