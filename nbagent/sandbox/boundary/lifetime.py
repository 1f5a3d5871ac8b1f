"""The worker's lifetime, tied to the kernel process by the OS: the worker dies when the kernel dies, whatever its code.

Linux's parent-death signal (``PR_SET_PDEATHSIG``) is delivered when the *thread* that forked the child ends, not
the process. The executor runs on whatever thread runs the agent (an async run's, a prepared run's), so every fork
goes through one long-lived daemon thread of the kernel process, the forker (:func:`fork`): the caller hands it the
child's entry function and gets the pid back. That thread ends only with the process.

In the child, before anything else, :func:`_tie_to_parent` asks for ``SIGKILL`` at the parent's death and checks
that the parent is still the kernel (it may have died between ``fork`` and ``prctl``). The seccomp filter then refuses
``prctl(PR_SET_PDEATHSIG)``, ``setsid`` and ``setpgid`` (syscalls.py), so agent code cannot undo it: no Python in the
worker takes part (patching ``os._exit`` or ignoring every signal changes nothing; SIGKILL cannot be caught).
:func:`tie_again` re-arms the signal just before the filter is installed (a credentials change, such as entering a
user namespace, clears it). Where the OS has no parent-death signal (macOS) :data:`TIED` stays False and the worker
falls back to watching its parent from a thread (worker.watch_parent).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from queue import SimpleQueue
from typing import NoReturn

_PR_SET_PDEATHSIG = 1
#: In the worker: whether the parent-death signal is set (False before the fork, and where the OS has none).
TIED = [False]
_PARENT = [0]  # in the worker: the kernel's pid


class _Forker:
    """One daemon thread that makes every fork of the process, so the children's parent thread lives as long as the
    process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: SimpleQueue = SimpleQueue()
        self._owner = 0  # the pid whose thread this is (a forked kernel needs a thread of its own)

    def fork(self, child: Callable[[], NoReturn], held: frozenset[int] = frozenset()) -> int:
        with self._lock:  # one fork at a time: answers come back in order
            if self._owner != os.getpid():
                self._requests = SimpleQueue()
                threading.Thread(target=self._serve, args=(self._requests,), name="nbagent-forker", daemon=True).start()
                self._owner = os.getpid()
            answer: SimpleQueue = SimpleQueue()
            self._requests.put((child, held, answer))
            result = answer.get()
        if isinstance(result, BaseException):
            raise result
        return result

    @staticmethod
    def _serve(requests: SimpleQueue) -> None:
        parent = os.getpid()
        while True:
            child, held, answer = requests.get()
            before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)  # forking a multi-threaded process: handled
                    pid = os.fork()
            except BaseException as exc:
                answer.put(exc)
                continue
            finally:
                if os.getpid() == parent:
                    signal.pthread_sigmask(signal.SIG_SETMASK, before)
            if pid == 0:
                _run_child(parent, child)
            answer.put(pid)


def _run_child(parent: int, child: Callable[[], NoReturn]) -> NoReturn:
    status = 70
    try:
        _PARENT[0] = parent
        TIED[0] = _tie_to_parent()
        child()
    finally:
        os._exit(status)  # the entry function never returns; if it does, or raises, the child ends here


def _tie_to_parent() -> bool:
    """SIGKILL at the parent thread's death; exits at once if the kernel is already gone. False where unsupported."""
    if sys.platform != "linux":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    tied = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != _PARENT[0]:
        os._exit(0)  # the kernel died before the signal was armed (we were re-parented)
    return tied


def tie_again() -> None:
    """Re-arm the parent-death signal (in the worker, right before the seccomp filter forbids it)."""
    if TIED[0]:
        TIED[0] = _tie_to_parent()


_FORKER = _Forker()


def fork(child: Callable[[], NoReturn], held: frozenset[int] = frozenset()) -> int:
    """Fork on the forker thread; the child runs ``child`` (which must not return) tied to this process's life.
    ``held``: signals the child starts with blocked (it unblocks them once it handles them: a signal sent between
    ``fork`` and the child's ``signal.signal`` would otherwise take its default action and kill it).
    Returns the child's pid (in the parent only)."""
    return _FORKER.fork(child, held)
