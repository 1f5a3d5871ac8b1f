"""How many threads and processes a worker may have: a bound set from the host, outside the worker's code.

A worker that starts threads without end takes every pid of the machine (or of a container's pid namespace), and
the kernel can then start neither a thread nor a process. The seccomp filter already refuses new processes
(syscalls.py), but threads are allowed, so the count is bounded here, in the host, right after ``fork`` and before
any agent code runs (the worker runs agent code only when the host sends it a call):

* **a pids cgroup** where the machine lets this process make one (cgroup v2 with the pids controller delegated to
  the kernel's cgroup or its parent, or a cgroup v1 ``pids`` hierarchy; as root it usually works, as a user it
  usually does not): the host makes ``nbagent-<kernel pid>-<worker pid>``, writes ``pids.max`` and moves the worker
  in. The OS refuses the task past the bound (``RuntimeError: can't start new thread``); the worker cannot leave
  the cgroup (Landlock keeps ``/sys`` unwritable) nor raise the limit. Removed when the worker is reaped.
* **otherwise, the host counts**: it reads ``/proc/<worker>/task`` while a call runs and after it, and kills a
  worker over the bound (a burst between two looks, 50 ms apart, can exceed it until the kill). For a user other
  than root it also clamps the worker's ``RLIMIT_NPROC`` (hard, set by the host: the worker cannot raise it) to the
  tasks the user has now plus the bound — a per-user count, so a bound on the total, not on the worker alone.

``nbagent doctor`` says which applies (:meth:`TaskBound.describe`, in the executor's ``confinement`` report).
"""

from __future__ import annotations

import contextlib
import os
import resource
import time
from dataclasses import dataclass

#: Threads and processes a worker may have at once (its own main thread and nbagent's threads included).
DEFAULT_MAX_TASKS = 256
_PREFIX = "nbagent-"
_found: dict[int, str | None] = {}  # this process's pid -> the folder its workers' cgroups go in (None: none)


@dataclass
class TaskBound:
    """One worker's bound: ``cgroup`` (its folder) when the OS enforces it, else the host counts."""

    pid: int
    limit: int
    cgroup: str = ""
    nproc: int = 0  # the RLIMIT_NPROC the host set (0: none)

    @property
    def mode(self) -> str:
        return "pids cgroup" if self.cgroup else "host count" if os.path.isdir("/proc/self/task") else "none"

    def describe(self) -> str:
        """What bounds this worker's threads and processes, in a sentence."""
        if self.cgroup:
            return f"at most {self.limit}, by a pids cgroup the OS enforces ({os.path.dirname(self.cgroup)})"
        if self.mode == "none":
            return "not bounded here (no cgroups, no /proc); the seccomp filter still refuses new processes"
        rlimit = f"; RLIMIT_NPROC {self.nproc} for the user's tasks together" if self.nproc else ""
        return (
            f"at most {self.limit}, counted by the kernel in /proc/<worker>/task (a worker over it is killed; "
            f"no pids cgroup can be made here{rlimit})"
        )

    def over(self) -> bool:
        """True when the host counts and the worker has more tasks than its bound (the caller kills it)."""
        return not self.cgroup and count(self.pid) > self.limit

    def release(self) -> None:
        """Remove the cgroup (the worker is reaped: it is empty, or about to be)."""
        if not self.cgroup:
            return
        for _ in range(20):
            try:
                os.rmdir(self.cgroup)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)  # the last threads are still leaving


def bound(pid: int, limit: int = DEFAULT_MAX_TASKS) -> TaskBound:
    """Bound the worker ``pid`` (just forked, no agent code run yet) to ``limit`` tasks: a pids cgroup if this
    machine allows it, else a host-set ``RLIMIT_NPROC`` where it means something, and the host's count."""
    folder = _cgroup_folder()
    if folder is not None:
        path = os.path.join(folder, f"{_PREFIX}{os.getpid()}-{pid}")
        try:
            os.mkdir(path)
            _write(os.path.join(path, "pids.max"), str(limit))
            _write(os.path.join(path, "cgroup.procs"), str(pid))
            return TaskBound(pid, limit, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(path)
    result = TaskBound(pid, limit)
    if os.geteuid() != 0 and os.path.isdir("/proc/self/task"):  # root ignores RLIMIT_NPROC
        with contextlib.suppress(OSError, ValueError, AttributeError):
            room = _user_tasks(os.getuid()) + limit
            resource.prlimit(pid, resource.RLIMIT_NPROC, (room, room))
            result.nproc = room
    return result


def count(pid: int) -> int:
    """The worker's threads (0 once it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


def _user_tasks(uid: int) -> int:
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{name}").st_uid == uid:
                    total += len(os.listdir(f"/proc/{name}/task"))
    return total


# --- finding where this process may make a pids cgroup --------------------------------------------------------------


def _cgroup_folder() -> str | None:
    """The folder this process's workers' cgroups go in (found once per process), or None."""
    me = os.getpid()
    if me not in _found:
        try:
            folder = _v2_folder() or _v1_folder()
        except (OSError, ValueError):
            folder = None
        if folder is not None:
            _sweep(folder)
        _found[me] = folder
    return _found[me]


def _mounts() -> list[tuple[str, str, str, str]]:
    """(root inside the hierarchy, mount point, file system type, super options) of each cgroup mount."""
    found = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            fields = line.split()
            tail = fields[fields.index("-") + 1 :]
            if tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[3], fields[4], tail[0], tail[2] if len(tail) > 2 else ""))
    return found


def _own_cgroups() -> dict[str, str]:
    """controllers (``""`` for v2) -> this process's cgroup path."""
    with open("/proc/self/cgroup") as lines:
        return {parts[1]: parts[2] for parts in (line.rstrip("\n").split(":", 2) for line in lines) if len(parts) == 3}


def _on_disk(mount_root: str, mount_point: str, path: str) -> str:
    if mount_root != "/" and (path == mount_root or path.startswith(mount_root + "/")):
        path = path[len(mount_root) :]
    return os.path.join(mount_point, path.lstrip("/"))


def _v2_folder() -> str | None:
    path = _own_cgroups().get("")
    for root, point, kind, _ in _mounts():
        if kind != "cgroup2" or path is None:
            continue
        own = _on_disk(root, point, path)
        if not os.path.isdir(own) or "pids" not in _read(os.path.join(own, "cgroup.controllers")).split():
            continue
        if os.path.realpath(own) == os.path.realpath(point):  # the hierarchy's root may hold processes
            enabled = "pids" in _read(os.path.join(own, "cgroup.subtree_control")).split()  # (never changed here)
            return own if enabled and os.access(own, os.W_OK) else None
        parent = os.path.dirname(own)  # a sibling: our own cgroup holds the kernel, so it can have no children
        if os.access(parent, os.W_OK) and os.access(os.path.join(parent, "cgroup.procs"), os.W_OK):
            return parent
    return None


def _v1_folder() -> str | None:
    own = _own_cgroups()
    path = next((p for controllers, p in own.items() if "pids" in controllers.split(",")), None)
    for root, point, kind, options in _mounts():
        if kind == "cgroup" and path is not None and "pids" in options.split(","):
            folder = _on_disk(root, point, path)
            if os.access(folder, os.W_OK):
                return folder
    return None


def _read(path: str) -> str:
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return ""


def _sweep(folder: str) -> None:
    """Remove the empty cgroups of kernels that died without removing theirs."""
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            kernel = name[len(_PREFIX) :].split("-")[0] if name.startswith(_PREFIX) else ""
            if kernel.isdigit() and not os.path.exists(f"/proc/{kernel}"):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(folder, name))
