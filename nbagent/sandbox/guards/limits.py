"""Limits: how a running call is stopped, in the kernel's main thread or in any other thread.

The agent's code runs natively, so nothing *evaluates* it step by step; instead these mechanisms reach into it.

1. **Counters at loop heads and function entries.** The rewrite (rewrite.py) turns every ``for`` loop into
   ``for x in compress(iterable, R)`` and puts ``next(R)`` at the top of every ``while`` body and of every function
   that calls something. ``R`` is a per-call C iterator (``chain(repeat(True, max_operations), raiser)``) stored in the
   namespace under a name agent code cannot spell, so counting costs a few nanoseconds and cannot be reset. When the
   budget is used up, ``raiser`` raises. When the call must end for another reason (timeout, stop, final answer),
   ``R`` is swapped for ``raiser`` itself, so the code also stops at its next loop start or function call.
2. **In the main thread: signals.** The deadline is a kernel timer (``setitimer(ITIMER_REAL)``, ``SIGALRM``), which
   fires even while a C function holds the GIL (a catastrophic regular expression sees it at its next
   ``PyErr_CheckSignals``); :meth:`CallState.request_stop`, called from any thread, sends ``SIGUSR2`` to the main
   thread. Both handlers raise :class:`SandboxInterrupt`, and the signals break blocking calls (``time.sleep``,
   lock and queue waits). After the first interrupt the timer repeats every 0.1 s until the call has ended, so code
   that swallows one interrupt (``except BaseException: pass``, a context manager returning True) gets the next one.
3. **In any other thread: a watchdog thread** waits for the deadline or a stop request and raises
   :class:`SandboxInterrupt` in the running thread with ``PyThreadState_SetAsyncExc`` (at the next bytecode
   boundary), repeating every 0.1 s likewise.
4. **Interruptible sleeps.** The ``time`` module agent code imports has a ``sleep`` that waits on the call's stop
   event, so it ends at once in any thread; ``asyncio.sleep`` likewise.
5. **Every ``except`` handler** in the agent code starts with a check that re-raises a pending control exception.

A real ``KeyboardInterrupt`` (a kernel interrupt) arriving in the main thread while a call runs is caught by our
``SIGINT`` handler, marked as a user interrupt, and re-raised as ``KeyboardInterrupt`` by the executor after cleanup.
Not stoppable before it returns: a C call that never checks for signals (``sum(range(10**12))``), any long C call
outside the main thread, and -- for ``request_stop`` -- a C call holding the GIL (no other thread can run Python).

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

from ..errors import FinalAnswerException, SandboxInterrupt

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
        self.watching = False
        self.uses_signals = False  # main thread: signals; otherwise the watchdog thread
        self.stop_event = threading.Event()  # set when the call must end; wakes sandboxed sleeps
        self.raiser = _Raiser(self)
        self._lock = threading.RLock()  # orders interrupts against disarm()
        self._wake = threading.Event()  # wakes the watchdog
        self._next_interrupt = 0.0
        self._counter: Any = None

    def budget(self) -> Iterator[Any]:
        """The operation budget: truthy values, then the raiser. Its counter is a range iterator that
        :meth:`set_pending` exhausts in place, so a ``for`` loop holding this very iterator (its ``compress``)
        raises at its next iteration too: a swallowed interrupt (``finally: continue``) cannot keep it going."""
        limit = sys.maxsize if self.max_operations is None else max(0, int(self.max_operations))
        self._counter = iter(range(1, limit + 1))
        return itertools.chain(self._counter, self.raiser)

    def set_pending(self, reason: str, value: Any = None) -> None:
        """Thread-safe: the call must end (first reason wins, except a user interrupt)."""
        with self._lock:
            if self.pending is not None and reason != "interrupt":
                return
            self.pending = reason
            if reason == "final":
                self.final_value = value
            self.namespace[self.budget_key] = self.raiser
            if self._counter is not None:
                self._counter.__setstate__(sys.maxsize)  # every holder of the budget reaches the raiser
            self.stop_event.set()
            if self.armed:
                self._interrupt(FINAL_ANSWER_GRACE_SECONDS if reason in ("final", "operations") else 0.0)

    def _interrupt(self, delay: float) -> None:
        if not self.uses_signals:
            self._next_interrupt = time.monotonic() + delay
            self._wake.set()
            return
        if threading.get_ident() != self.thread_ident:
            signal.pthread_kill(self.thread_ident, _INTERRUPT_SIGNAL)
        signal.setitimer(signal.ITIMER_REAL, max(delay, REINTERRUPT_SECONDS), REINTERRUPT_SECONDS)

    def arm(self) -> None:
        self.armed = True
        if self.uses_signals and self.deadline is not None:
            remaining = max(0.001, self.deadline - time.monotonic())
            signal.setitimer(signal.ITIMER_REAL, remaining, REINTERRUPT_SECONDS)

    def disarm(self) -> None:
        """Called by the running thread when the code has finished: no interrupt is raised after this returns."""
        for _ in range(1000):
            try:
                with self._lock:
                    self.armed = False
                    if self.uses_signals:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                    else:
                        self._wake.set()
                return
            except SandboxInterrupt:
                continue

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


# --- outside the main thread: the watchdog -----------------------------------------------------------------------


def _async_raise(thread_ident: int, exc_type: type[BaseException] | None) -> None:
    try:
        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except AttributeError:  # not CPython
        return
    set_async_exc(ctypes.c_ulong(thread_ident), ctypes.py_object(exc_type) if exc_type else None)


class Watchdog:
    """Enforces the deadline and stop requests of a call running outside the main thread."""

    def __init__(self, call: CallState) -> None:
        self.call = call
        self.thread = threading.Thread(target=self._run, name="nbagent-sandbox-watchdog", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        call = self.call
        while call.watching:
            now = time.monotonic()
            if call.pending is None and call.deadline is not None and now >= call.deadline:
                call.set_pending("timeout")
            if call.pending is not None:
                if now >= call._next_interrupt:
                    with call._lock:
                        if call.armed:
                            _async_raise(call.thread_ident, SandboxInterrupt)
                    call._next_interrupt = now + REINTERRUPT_SECONDS
                wait: float | None = max(0.0, call._next_interrupt - now)
            elif call.deadline is not None:
                wait = max(0.0, call.deadline - now)
            else:
                wait = None
            call._wake.wait(wait)
            call._wake.clear()

    def stop(self) -> None:
        """After ``call.disarm()``: wait for the thread and drop an exception it may have queued meanwhile."""
        for _ in range(1000):
            try:
                self.thread.join(5.0)
                _async_raise(self.call.thread_ident, None)
                return
            except SandboxInterrupt:
                continue


# --- in the main thread: signals ---------------------------------------------------------------------------------

_main_calls: list[CallState] = []
#: Code objects of the executor's own frames around the agent code: an interrupt arriving while one of them runs
#: (the code has just returned, disarm() is next) is not raised there; the repeating timer delivers it later, if at all.
PROTECTED_CODES: set[Any] = set()


def _protected(frame: Any) -> bool:
    return frame is not None and frame.f_code in PROTECTED_CODES


def _on_interrupt_signal(signum: int, frame: Any) -> None:
    call = _main_calls[-1] if _main_calls else None
    if call is not None and call.armed and call.pending is not None:
        if _protected(frame):
            signal.setitimer(signal.ITIMER_REAL, REINTERRUPT_SECONDS, REINTERRUPT_SECONDS)
            return
        raise call.control_exception()


def _on_alarm(signum: int, frame: Any) -> None:
    call = _main_calls[-1] if _main_calls else None
    if call is None or not call.armed:
        return
    if call.pending is None and call.deadline is not None:
        remaining = call.deadline - time.monotonic()
        if remaining > 0.02:  # early (the timer's clock is not ours): wait for the rest
            signal.setitimer(signal.ITIMER_REAL, remaining, REINTERRUPT_SECONDS)
            return
        call.set_pending("timeout")
    if call.pending is not None and not _protected(frame):
        raise call.control_exception()


def _on_sigint(signum: int, frame: Any) -> None:
    call = _main_calls[-1] if _main_calls else None
    if call is not None and call.armed:
        call.user_interrupted = True
        call.set_pending("interrupt")
        raise SandboxInterrupt("interrupt")
    raise KeyboardInterrupt


@contextmanager
def interrupts(call: CallState) -> Iterator[None]:
    """Set up how ``call`` is interrupted: signal handlers in the main thread, a watchdog thread elsewhere."""
    if not call.in_main_thread or _INTERRUPT_SIGNAL is None:
        yield from _watched(call)
        return
    handlers = {signal.SIGINT: _on_sigint, _INTERRUPT_SIGNAL: _on_interrupt_signal, signal.SIGALRM: _on_alarm}
    if signal.getsignal(signal.SIGINT) is None:  # installed from C: we could not put it back
        del handlers[signal.SIGINT]
    previous = {sig: signal.getsignal(sig) for sig in handlers}
    try:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    except ValueError:  # not the main interpreter
        yield from _watched(call)
        return
    call.uses_signals = True
    _main_calls.append(call)
    old_timer = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _main_calls.remove(call)
        for sig, handler in previous.items():
            if sig != signal.SIGINT and handler in (signal.SIG_DFL, None):
                continue  # ours is a no-op outside calls; SIG_DFL would let a late signal terminate the kernel
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        delay, interval = old_timer
        if delay:  # someone else's timer (e.g. pytest-timeout): give it back, minus the time we took
            signal.setitimer(signal.ITIMER_REAL, max(0.001, delay - call.elapsed()), interval)


def _watched(call: CallState) -> Iterator[None]:
    watchdog = Watchdog(call)
    call.watching = True  # the watchdog runs while watching, and raises only while the code runs (armed)
    watchdog.start()
    try:
        yield
    finally:
        call.disarm()
        call.watching = False
        call._wake.set()
        watchdog.stop()


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


def _available_memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _set_memory_limit(extra: int) -> tuple[int, int] | None:
    try:
        import resource
    except ImportError:
        return None
    available = _available_memory_bytes()
    if available is not None:  # never let one call push the machine into swapping or the OOM killer
        extra = min(extra, max(256 * 2**20, available * 3 // 4))
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
