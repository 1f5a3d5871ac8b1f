"""The worker process as the host sees it: fork it (tied to the kernel's life), poll it, stop it between calls, kill
and reap it, and say how it ended."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from typing import NoReturn

from ..wire.channel import Channel
from . import lifetime
from .scratch import Scratch
from .tasks import TaskBound


class WorkerProcess:
    """A running worker: its pid, the host's end of the channel and the bound on its threads (tasks.py)."""

    def __init__(self, pid: int, channel: Channel, generation: int, tasks: TaskBound | None = None) -> None:
        self.pid = pid
        self.channel = channel
        self.generation = generation
        self.tasks = tasks
        self.status: int | None = None

    def pause(self) -> None:
        """SIGSTOP between calls: no thread of the worker runs outside a call's deadline. Its code cannot catch,
        block or undo it (nothing of it runs while stopped, and it can signal no other process); SIGKILL still ends
        a stopped worker, and the parent-death signal too."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT before a call."""
        self._signal(signal.SIGCONT)

    def _signal(self, number: int) -> None:
        if self.status is None:  # never a reaped pid: it may belong to another process by then
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def poll(self) -> int | None:
        if self.status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return -1
            if pid:
                self.status = status
        return self.status

    def kill(self) -> int | None:
        """SIGKILL (unless already reaped: the pid may belong to another process by then) and reap."""
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            try:
                _, self.status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self.status = -1
        with contextlib.suppress(OSError):
            self.channel.sock.close()
        if self.tasks is not None:
            self.tasks.release()
        return self.status


def shutdown(holder: list, scratch: Scratch) -> None:
    process = holder[0]
    if process is not None:
        with contextlib.suppress(OSError):
            process.channel.send({"t": "shutdown"})
        process.kill()
        holder[0] = None
    scratch.remove()


def fork(child: Callable[[], NoReturn], held: frozenset[int] = frozenset()) -> int:
    """Fork a worker that runs ``child`` (never returning) and dies with this process, whichever thread asks
    (lifetime.py: the fork happens on one long-lived thread; the child's parent-death signal is SIGKILL; ``held``
    signals start blocked in the child)."""
    return lifetime.fork(child, held)


def _signal_text(number: int) -> str:
    """``"SIGSEGV: Segmentation fault"``."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return f"{name}: {signal.strsignal(number) or name}"


def describe_status(status: int | None) -> str:
    if status is None or status < 0:
        return "the worker process ended"
    crash = crash_signal(status)
    if crash is not None:
        return f"the code crashed the worker process ({crash})"
    if os.WIFSIGNALED(status):  # SIGKILL
        return f"the worker process was killed ({_signal_text(signal.SIGKILL)}; out of memory, or killed from outside)"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return f"the worker process exited with status {code} (os._exit or a fatal error)"


def crash_signal(status: int | None) -> str | None:
    """The signal that crashed the process (``"SIGSEGV: Segmentation fault"``); None for an exit or a kill (SIGKILL:
    out of memory or on purpose, where starting again would meet the same)."""
    if status is None or status < 0 or not os.WIFSIGNALED(status) or os.WTERMSIG(status) == signal.SIGKILL:
        return None
    return _signal_text(os.WTERMSIG(status))


def lost_note(lost: list[str], why: str) -> str:
    if why in ("replaced", "start"):
        return ""
    names = ", ".join(lost[:20]) + (", ..." if len(lost) > 20 else "")
    if why == "grants":  # a grant changed the OS rules, which a worker fixes at its start
        gone = f"; lost: {names} (they lived only in the old worker; their notebook handles are dead)" if lost else ""
        return f"a fresh worker started with the changed grants{gone}"
    kept = "Plain data from earlier steps is kept in the notebook; what this step changed is lost."
    objects = (
        f" Lost: {names} (objects and functions that lived only in the worker; their notebook handles are dead)."
        if lost
        else ""
    )
    return f"A fresh worker starts at the next call. {kept}{objects}"
