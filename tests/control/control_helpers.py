"""Helpers of the control tests: scripted code, a real kernel-style interrupt, waiting."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any


def code(body: str, thought: str = "I will run code.") -> str:
    return f"Thought: {thought}\n```python\n{body}\n```"


def long_sleep(seconds: float = 30) -> str:
    """Code that blocks in `time.sleep` for `seconds`."""
    return code(f"import time\ntime.sleep({seconds})", "This will take a while.")


def kernel_interrupt() -> None:
    """What the kernel's ■ does: SIGINT to the main thread (interrupts blocking waits, unlike interrupt_main)."""
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)
