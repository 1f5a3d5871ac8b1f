"""Limits: how a running call is stopped, in the kernel's main thread or in any other thread.

The agent's code runs natively, so nothing *evaluates* it step by step; instead four mechanisms reach into it.

1. **Counters at loop heads and function entries.** The rewrite (rewrite.py) turns every ``for`` loop into
   ``for x in compress(iterable, R)`` and puts ``next(R)`` at the top of every ``while`` body and of every function
   that calls something. ``R`` is a per-call C iterator (``chain(repeat(True, max_operations), raiser)``) stored in the
   namespace under a name agent code cannot spell, so counting costs a few nanoseconds and cannot be reset. When the
   budget is used up, ``raiser`` raises. When the call must end for another reason (timeout, stop, final answer),
   ``R`` is swapped for ``raiser`` itself, so the code stops at its next loop start or function call.
2. **A watchdog thread per call** waits for the deadline or :meth:`CallState.request_stop`. It then interrupts the
   running thread: in the **main thread** by sending it ``SIGUSR2`` (our handler raises :class:`SandboxInterrupt`;
   the signal also breaks blocking system calls, so ``time.sleep``, lock waits and the ``re`` engine stop promptly);
   in **any other thread** by ``PyThreadState_SetAsyncExc``, which raises at the next bytecode boundary. It repeats
   every 0.1 s until the call has ended, so code that swallows one interrupt (``except BaseException: pass``, a
   context manager returning True) gets the next one.
3. **Interruptible sleeps.** The ``time`` module agent code imports has a ``sleep`` that waits on the call's stop
   event, so it ends at once in any thread; ``asyncio.sleep`` likewise.
4. **Every ``except`` handler** in the agent code starts with a check that re-raises a pending control exception.

A real ``KeyboardInterrupt`` (a kernel interrupt) arriving in the main thread while a call runs is caught by our
``SIGINT`` handler, marked as a user interrupt, and re-raised as ``KeyboardInterrupt`` by the executor after cleanup.
Not stoppable: a long single C call outside the main thread or a C call that never checks for signals (e.g.
``sum(range(10**12))``); the deadline is still enforced as soon as it returns.

Process-wide limits applied for the duration of a call: the recursion limit (``max_recursion`` frames below the
call) and, on Linux, the address-space limit ``RLIMIT_AS`` (``max_memory_bytes`` more than at the start).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .errors import FinalAnswerException, SandboxInterrupt

REINTERRUPT_SECONDS = 0.1
FINAL_ANSWER_GRACE_SECONDS = 0.05

_INTERRUPT_SIGNAL = getattr(signal, "SIGUSR2", None)


class CallState:
    """Everything the limits know about one running call."""

    def __init__(self, *, timeout: float | None, max_operations: int | None, namespace: dict, budget_key: str) -> None:
        self.started = time.monotonic()
        self.deadline = self.started + timeout if timeout else None
        self.timeout = timeout
        self.max_operations = max_operations
        self.namespace = namespace
        self.budget_key = budget_key
        self.thread_ident = threading.get_ident()
        self.in_main_thread = threading.current_thread() is threading.main_thread()
        self.pending: str | None = None  # "final", "timeout", "stop", "operations", "interrupt"
        self.final_value: Any = None
        self.user_interrupted = False
        self.armed = False
        self.stop_event = threading.Event()  # set when the call must end; wakes sandboxed sleeps
        self._wake = threading.Event()  # wakes the watchdog
        self._next_interrupt = 0.0
        self.raiser = _Raiser(self)
        self.uses_signals = False

    # -- what the code and the watchdog call --------------------------------------------------------------------

    def budget(self) -> Iterator[bool]:
        if self.max_operations is None:
            return itertools.repeat(True)
        return itertools.chain(itertools.repeat(True, max(0, int(self.max_operations))), self.raiser)

    def set_pending(self, reason: str, value: Any = None) -> None:
        if self.pending is not None and reason != "interrupt":
            return
        self.pending = reason
        if reason == "final":
            self.final_value = value
        delay = FINAL_ANSWER_GRACE_SECONDS if reason == "final" else 0.0
        self._next_interrupt = time.monotonic() + delay
        self.namespace[self.budget_key] = self.raiser
        self.stop_event.set()
        self._wake.set()

    def control_exception(self) -> BaseException:
        if self.pending == "final":
            return FinalAnswerException(self.final_value)
        return SandboxInterrupt(self.pending or "interrupt")

    def raise_if_pending(self) -> None:
        if self.pending is not None and self.armed:
            raise self.control_exception()

    def request_stop(self) -> None:
        """Thread-safe: end the call as soon as possible (the call raises ExecutionStopped)."""
        if self.armed:
            self.set_pending("stop")

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class _Raiser:
    """Iterator that raises the pending control exception (or marks the operation budget as exhausted)."""

    def __init__(self, call: CallState) -> None:
        self._call = call

    def __iter__(self) -> _Raiser:
        return self

    def __next__(self) -> bool:
        call = self._call
        if not call.armed:
            return True
        if call.pending is None:
            call.set_pending("operations")
        raise call.control_exception()


# --- interrupting a thread ---------------------------------------------------------------------------------------


def _async_raise(thread_ident: int, exc_type: type[BaseException] | None) -> None:
    try:
        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except AttributeError:  # not CPython
        return
    set_async_exc(ctypes.c_ulong(thread_ident), ctypes.py_object(exc_type) if exc_type else None)


class Watchdog:
    """Enforces the deadline and stop requests of one call from a helper thread."""

    def __init__(self, call: CallState) -> None:
        self.call = call
        self.thread = threading.Thread(target=self._run, name="nbagent-sandbox-watchdog", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        call = self.call
        while call.armed:
            now = time.monotonic()
            if call.pending is None and call.deadline is not None and now >= call.deadline:
                call.set_pending("timeout")
            if call.pending is not None:
                if now >= call._next_interrupt:
                    self._interrupt()
                    call._next_interrupt = now + REINTERRUPT_SECONDS
                wait: float | None = max(0.0, call._next_interrupt - now)
            elif call.deadline is not None:
                wait = max(0.0, call.deadline - now)
            else:
                wait = None
            call._wake.wait(wait)
            call._wake.clear()

    def _interrupt(self) -> None:
        call = self.call
        if not call.armed:
            return
        if call.uses_signals and _INTERRUPT_SIGNAL is not None:
            signal.pthread_kill(call.thread_ident, _INTERRUPT_SIGNAL)
        else:
            _async_raise(call.thread_ident, SandboxInterrupt)

    def stop(self) -> None:
        """Called from the running thread when the code has finished: no interrupt arrives after this returns."""
        call = self.call
        for _ in range(1000):
            try:
                call.armed = False
                call._wake.set()
                self.thread.join(5.0)
                if not call.uses_signals:
                    _async_raise(call.thread_ident, None)
                return
            except SandboxInterrupt:
                continue


# --- signals (main thread only) ----------------------------------------------------------------------------------

_main_calls: list[CallState] = []


def _on_interrupt_signal(signum: int, frame: Any) -> None:
    call = _main_calls[-1] if _main_calls else None
    if call is not None and call.armed and call.pending is not None:
        raise call.control_exception()


def _on_alarm(signum: int, frame: Any) -> None:
    call = _main_calls[-1] if _main_calls else None
    if call is None or not call.armed:
        return
    if call.pending is None and call.deadline is not None and time.monotonic() >= call.deadline - 0.005:
        call.set_pending("timeout")
    if call.pending is not None:
        raise call.control_exception()


def _on_sigint(signum: int, frame: Any) -> None:
    call = _main_calls[-1] if _main_calls else None
    if call is not None and call.armed:
        call.user_interrupted = True
        call.set_pending("interrupt")
        raise SandboxInterrupt("interrupt")
    raise KeyboardInterrupt


@contextmanager
def signal_handlers(call: CallState) -> Iterator[None]:
    """In the main thread, route SIGINT, SIGALRM and our interrupt signal to the call; elsewhere do nothing.

    The deadline is armed with ``setitimer(ITIMER_REAL)`` because the kernel delivers that signal even when a C
    function holds the GIL (e.g. a catastrophic regular expression), when the watchdog thread cannot run; the C
    function then sees the signal at its next ``PyErr_CheckSignals``.
    """
    if not call.in_main_thread or _INTERRUPT_SIGNAL is None:
        yield
        return
    signals = (signal.SIGINT, _INTERRUPT_SIGNAL, signal.SIGALRM)
    previous = {sig: signal.getsignal(sig) for sig in signals}
    try:
        signal.signal(_INTERRUPT_SIGNAL, _on_interrupt_signal)
        signal.signal(signal.SIGINT, _on_sigint)
        signal.signal(signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main interpreter
        yield
        return
    call.uses_signals = True
    _main_calls.append(call)
    old_timer = (0.0, 0.0)
    if call.deadline is not None:
        remaining = max(0.001, call.deadline - time.monotonic())
        old_timer = signal.setitimer(signal.ITIMER_REAL, remaining, REINTERRUPT_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _main_calls.remove(call)
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        delay, interval = old_timer
        if delay:  # someone else's timer (e.g. pytest-timeout): give it back, minus the time we took
            signal.setitimer(signal.ITIMER_REAL, max(0.001, delay - call.elapsed()), interval)


# --- process-wide limits -----------------------------------------------------------------------------------------

_process_lock = threading.Lock()
_process_state: dict[str, Any] = {"active": 0, "recursion": None, "rlimit": None}


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _address_space_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextmanager
def process_limits(max_recursion: int | None, max_memory_bytes: int | None) -> Iterator[None]:
    """Recursion limit and address-space limit for the duration of the call (shared by concurrent calls)."""
    with _process_lock:
        first = _process_state["active"] == 0
        _process_state["active"] += 1
        if max_recursion is not None:
            needed = _stack_depth() + int(max_recursion) + 50
            current = sys.getrecursionlimit()
            if first:
                _process_state["recursion"] = current
                sys.setrecursionlimit(needed)
            elif needed > current:
                sys.setrecursionlimit(needed)
        if first and max_memory_bytes is not None:
            _process_state["rlimit"] = _set_memory_limit(int(max_memory_bytes))
    try:
        yield
    finally:
        with _process_lock:
            _process_state["active"] -= 1
            if _process_state["active"] == 0:
                if _process_state["recursion"] is not None:
                    sys.setrecursionlimit(_process_state["recursion"])
                    _process_state["recursion"] = None
                if _process_state["rlimit"] is not None:
                    _restore_memory_limit(_process_state["rlimit"])
                    _process_state["rlimit"] = None


def _set_memory_limit(extra: int) -> tuple[int, int] | None:
    try:
        import resource
    except ImportError:
        return None
    used = _address_space_bytes()
    if used is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    new = used + extra
    if hard != resource.RLIM_INFINITY:
        new = min(new, hard)
    if soft != resource.RLIM_INFINITY and soft <= new:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_AS, (new, hard))
    except (ValueError, OSError):
        return None
    return soft, hard


def _restore_memory_limit(previous: tuple[int, int]) -> None:
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, previous)
    except (ValueError, OSError):
        pass
