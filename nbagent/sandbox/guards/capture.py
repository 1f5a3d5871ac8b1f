"""Print capture: everything the running code writes to ``sys.stdout``/``sys.stderr`` lands in a capped buffer;
the warnings it raises land in a :class:`WarningLog` instead (a person sees them on the step, the model does not).

``print`` is not replaced: during a call ``sys.stdout`` and ``sys.stderr`` are a :class:`_Router` that sends writes
*from the thread running the agent code* to that call's :class:`CappedBuffer` and everything else (the kernel's other
threads, a concurrent user cell) to the original stream. So output of tools, of library code and of functions defined
in earlier calls is captured too, and calls running in several threads at once each get their own output.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class CappedBuffer:
    """Keeps the first and last ``max_chars // 2`` characters written; the middle is counted, not stored."""

    def __init__(self, max_chars: int, on_write: Callable[[str], None] | None = None) -> None:
        self.max_chars = max(0, int(max_chars))
        self.on_write = on_write
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total = 0

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        written = len(text)
        if self.on_write is not None and text:
            try:
                self.on_write(text)
            except Exception:
                pass
        self.total += written
        half = self.max_chars // 2
        head_room = self.max_chars - half - self._head_len
        if head_room > 0:
            kept = text[:head_room]
            self._head.append(kept)
            self._head_len += len(kept)
            text = text[len(kept) :]
        if text and half:
            text = text[-half:]
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail_len - len(self._tail[0]) >= half:
                self._tail_len -= len(self._tail.popleft())
        return written

    def getvalue(self) -> str:
        head = "".join(self._head)
        tail = "".join(self._tail)
        kept = len(head) + len(tail)
        if self.total <= self.max_chars or kept >= self.total:
            return head + tail
        half = self.max_chars // 2
        tail = tail[-half:] if half else ""
        omitted = self.total - len(head) - len(tail)
        return (
            f"{head}\n..._Print output truncated: {omitted:,} characters omitted "
            f"(max_print_outputs_length={self.max_chars})_...\n{tail}"
        )


class _Router:
    """A text stream that dispatches writes by thread; unknown attributes are those of the original stream."""

    def __init__(self, original: Any, targets: dict[int, list[CappedBuffer]]) -> None:
        self._original = original
        self._targets = targets

    def _target(self) -> Any:
        stack = self._targets.get(threading.get_ident())
        return stack[-1] if stack else self._original

    def write(self, text: str) -> int:
        return self._target().write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        target = self._target()
        if target is self._original and hasattr(target, "flush"):
            target.flush()

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        """Agent code must not close the kernel's stream."""

    def detach(self) -> None:
        raise OSError("the sandbox's output stream cannot be detached")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


_lock = threading.Lock()
_targets: dict[int, list[CappedBuffer]] = {}
_installed: dict[str, _Router] = {}


def _install_locked() -> None:
    for name in ("stdout", "stderr"):
        current = getattr(sys, name)
        router = _installed.get(name)
        if router is None or current is not router:
            router = _Router(current, _targets)
            _installed[name] = router
            setattr(sys, name, router)


def _uninstall_locked() -> None:
    for name, router in list(_installed.items()):
        if getattr(sys, name) is router:
            setattr(sys, name, router._original)
        del _installed[name]


@contextmanager
def capture_output(buffer: CappedBuffer) -> Iterator[CappedBuffer]:
    """Route this thread's stdout/stderr writes to ``buffer`` while the block runs (nestable, thread-safe)."""
    ident = threading.get_ident()
    with _lock:
        _targets.setdefault(ident, []).append(buffer)
        _install_locked()
    try:
        yield buffer
    finally:
        with _lock:
            stack = _targets.get(ident, [])
            if stack and stack[-1] is buffer:
                stack.pop()
            elif buffer in stack:
                stack.remove(buffer)
            if not stack:
                _targets.pop(ident, None)
            if not _targets:
                _uninstall_locked()


# --- warnings -----------------------------------------------------------------------------------------------------

MAX_WARNINGS = 20  # distinct warnings kept per call; more are counted
MAX_WARNING_CHARS = 500  # one warning's line


class WarningLog:
    """The warnings one call raised, one line each ("FutureWarning: … (line 3)"): the first ``MAX_WARNINGS``
    distinct ones in order, a repeat counted on its line, the rest counted at the end."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self.dropped = 0

    def add(self, message: Any, category: Any, filename: str, lineno: int) -> None:
        where = f"line {lineno}" if str(filename).startswith("<") else f"{_base_name(filename)}:{lineno}"
        name = getattr(category, "__name__", "Warning")
        line = f"{name}: {str(message).strip()} ({where})"
        line = line if len(line) <= MAX_WARNING_CHARS else line[: MAX_WARNING_CHARS - 1] + "…"
        if line in self._counts:
            self._counts[line] += 1
        elif len(self._counts) < MAX_WARNINGS:
            self._counts[line] = 1
        else:
            self.dropped += 1

    def lines(self) -> list[str]:
        lines = [line if count == 1 else f"{line} (×{count})" for line, count in self._counts.items()]
        return lines + ([f"[… {self.dropped} more warnings]"] if self.dropped else [])


def _base_name(filename: Any) -> str:
    text = str(filename).replace("\\", "/")
    parts = [part for part in text.split("/") if part]
    return "/".join(parts[-3:]) if parts else text  # "pandas/core/frame.py": enough to tell the library


_warning_lock = threading.Lock()
_warning_targets: dict[int, list[WarningLog]] = {}
_warning_original: list[Callable[..., Any]] = []  # showwarning before ours, while ours is installed


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    """``warnings.showwarning`` while a call runs: the running call's warnings go to its log, others' pass on."""
    stack = _warning_targets.get(threading.get_ident())
    if stack:
        stack[-1].add(message, category, filename, lineno)
        return
    original = _warning_original[0] if _warning_original else warnings._showwarning_orig  # type: ignore[attr-defined]
    original(message, category, filename, lineno, file, line)


@contextmanager
def capture_warnings(log: WarningLog) -> Iterator[WarningLog]:
    """Keep the warnings this thread raises in ``log`` while the block runs (out of its printed output; nestable).

    Other threads' warnings are shown as before. Code that installs its own ``showwarning`` (``catch_warnings``)
    sees its own.
    """
    ident = threading.get_ident()
    with _warning_lock:
        _warning_targets.setdefault(ident, []).append(log)
        if warnings.showwarning is not _show_warning:
            _warning_original[:] = [warnings.showwarning]
            warnings.showwarning = _show_warning
    try:
        yield log
    finally:
        with _warning_lock:
            stack = _warning_targets.get(ident, [])
            if log in stack:
                stack.remove(log)
            if not stack:
                _warning_targets.pop(ident, None)
            if not _warning_targets and warnings.showwarning is _show_warning and _warning_original:
                warnings.showwarning = _warning_original.pop()
