"""A run's wall-time limit (`max_time`): reading it ("90s", "10m", "1h") and stopping the run when it passes.

`RunDeadline` counts the time a run spends running — not the time it waits for a person (paused,
awaiting approval of code, awaiting an answer to a permission ask) — and when the limit passes it stops the
run the way Stop does (`gates.request_stop`): the model call or the code under way is cancelled and the step
is recorded as stopped. The loop then ends the run as timed out (`RunOutcome.TIMED_OUT`), not as stopped by a person.
"""

from __future__ import annotations

import math
import re
import threading
import time
from typing import Any

from nbagent.record.status import RunStatus

from .gates import RunGates

__all__ = ["RunDeadline", "parse_max_time", "describe_limit", "MAX_TIME_HELP"]

MAX_TIME_HELP = "seconds, or a duration such as 90s, 10m, 1h or 1h30m (0: no limit)"
_UNIT_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(hr|h|min|m|sec|s)?", re.IGNORECASE)
_NO_LIMIT = {"0", "none", "off", "no"}
_WAITING = {RunStatus.PAUSED.value, RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_PERMISSION.value}


def parse_max_time(value: Any) -> float | None:
    """Seconds from `value` (a number of seconds or a text such as "90s", "10m", "1h30m"); None: no limit (0).

    Raises `ValueError` with one line naming what is accepted.
    """
    if isinstance(value, bool):
        raise ValueError(f"max_time takes {MAX_TIME_HELP}, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        seconds = _seconds_of_text(value)
    else:
        raise ValueError(f"max_time takes {MAX_TIME_HELP}, got {type(value).__name__} {value!r}")
    if math.isnan(seconds) or seconds < 0:
        raise ValueError(f"max_time must be positive ({MAX_TIME_HELP}), got {value!r}")
    return None if seconds == 0 or math.isinf(seconds) else seconds


def _seconds_of_text(text: str) -> float:
    spoken = text.strip().lower()
    if spoken in _NO_LIMIT:
        return 0.0
    compact = spoken.replace(" ", "")
    parts = list(_PART.finditer(compact))
    if not compact or not parts or "".join(part.group(0) for part in parts) != compact:
        raise ValueError(f"max_time takes {MAX_TIME_HELP}, got {text!r}")
    if len(parts) > 1 and any(part.group(2) is None for part in parts):  # "1h30": unit of the 30 unknown
        raise ValueError(f"max_time takes {MAX_TIME_HELP}, got {text!r}")
    return sum(float(part.group(1)) * _UNIT_SECONDS[(part.group(2) or "s").lower()] for part in parts)


def describe_limit(seconds: float) -> str:
    """600 -> "10 min", 90 -> "90 s", 5400 -> "1 h 30 min" (as js/meta.js's formatLimit)."""
    if seconds < 1:
        return f"{seconds:g} s"
    whole = int(seconds + 0.5)  # half up, as JS's Math.round
    if whole % 60 and whole < 600:
        return f"{whole} s"
    hours, minutes = divmod(int(whole / 60 + 0.5), 60)
    if not hours:
        return f"{minutes} min"
    return f"{hours} h" + (f" {minutes} min" if minutes else "")


class RunDeadline:
    """Stops the run through `gates` once it has been running for `seconds` (paused time does not count).

    Use it around a run: `with RunDeadline(seconds, gates) as deadline: ...`; then `deadline.passed`
    tells whether it stopped the run (it never overrides a stop a person asked for first).
    """

    def __init__(self, seconds: float | None, gates: RunGates) -> None:
        self.seconds = seconds
        self.gates = gates
        self.passed = False
        self._left = seconds
        self._since: float | None = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    @property
    def reason(self) -> str:
        return f"Stopped: the run reached its time limit of {describe_limit(self.seconds or 0)} (max_time)."

    def __enter__(self) -> RunDeadline:
        if self.seconds is not None:
            self.gates.add_listener(self._on_change)
            self._on_change({"status": self.gates.status})
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.seconds is None:
            return
        self.gates.remove_listener(self._on_change)
        with self._lock:
            self._cancel()

    def _on_change(self, snapshot: dict[str, Any]) -> None:
        """Count while the run runs; hold the count while it waits for a person."""
        with self._lock:
            if snapshot.get("status") in _WAITING:
                self._hold()
            elif snapshot.get("status") == RunStatus.RUNNING.value and self._timer is None:
                self._since = time.monotonic()
                self._timer = threading.Timer(max(self._left or 0.0, 0.0), self._expire)
                self._timer.daemon = True
                self._timer.name = "nbagent-max-time"
                self._timer.start()

    def _hold(self) -> None:
        if self._timer is not None and self._since is not None:
            self._left = (self._left or 0.0) - (time.monotonic() - self._since)
        self._cancel()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._since = None

    def _expire(self) -> None:
        with self._lock:
            if self._timer is not threading.current_thread() or self.gates.stopping:
                return  # held (or held and restarted) meanwhile, or someone stopped the run first
            self.passed = True
        self.gates.request_stop(self.reason)
