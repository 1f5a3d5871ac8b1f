"""How much decoded data a worker may hand the host: per call (tool calls and write-back together) and over steps.

The host cannot trust the worker's word for a value's size, so it counts what decoding really allocates (buffers,
string characters, the JSON header, a fixed overhead per node: :data:`NODE_COST`) and gives up past the budget it
announced. The worker is told the remaining budget in each request and each tool result; an honest worker keeps a
larger value as a handle itself, so the host refusing a message means the worker broke the protocol.

Two limits:

* **per call**: ``max_transfer_bytes`` of the executor (1 GiB by default), shared by every message of the call (a
  value sent to ``final_answer`` and bound to a name costs once: the write-back refers to it);
* **over steps**: the values the agent bound in the notebook and still bound there, recounted at each call as names
  are rebound or deleted. Default: a quarter of the machine's physical memory, between 512 MiB and 16 GiB
  (:func:`default_held_bytes`), so that a run of steps cannot fill the kernel's memory.

A buffer that comes in a shared memory file (shared.py) counts what the host maps, as one read from the socket counts
what it allocates; the files a worker asks for are checked against the remaining budget before the host creates any.
"""

from __future__ import annotations

import os
from typing import Any

#: What one decoded node costs the host beyond its data (a small Python object and its reference in a container).
NODE_COST = 64
#: Slack the host allows over the announced budget: the worker's estimate leaves out the header's small fields
#: (logs, capped to the print limit; an error's message, to 100,000 characters).
SLACK_BYTES = 4 << 20
#: Largest JSON header a frame may carry (the worker keeps its estimate under half of it).
MAX_HEADER_BYTES = 64 * 2**20
#: Frame caps of the small kinds (printed text is streamed in chunks of at most ``OUT_CHUNK_CHARS`` characters).
OUT_CHUNK_CHARS = 8192
SMALL_FRAME_CAPS = {"out": 128 * 2**10, "ran": 4096, "ready": 256 * 2**10}
OTHER_FRAME_CAP = 4096
#: What the worker may send beyond a spent budget, so that a small answer (``42``) still comes back as itself; kept
#: small so that ``max_transfer_bytes`` stays the limit a person set.
SMALL_VALUE_BYTES = 64 * 2**10


class OverBudget(Exception):
    """The host's side: a message carried more than the budget the worker was told."""


def default_held_bytes() -> int:
    """A quarter of the physical memory, clamped to [512 MiB, 16 GiB] (1 GiB when the size is unknown)."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 2**30
    return max(512 * 2**20, min(16 * 2**30, physical // 4))


def human(size: float) -> str:
    """``1.8 GB``, ``320 MB``, ``12 kB``: for messages."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{int(size)} bytes"


class CallBudget:
    """The budget of one call, as the host counts it: ``remaining`` shrinks with each decoded message."""

    def __init__(self, per_call: int, held: int, max_held: int) -> None:
        self.per_call = max(0, int(per_call))
        self.room = max(0, max_held - held)
        self.remaining = min(self.per_call, self.room)
        self.limited_by_steps = self.room < self.per_call

    def told(self) -> int:
        """What the worker is told it may still send: the remaining budget and a small allowance (so that a small
        answer, ``42``, still comes back as itself when the budget is spent)."""
        return self.remaining + SMALL_VALUE_BYTES

    def charge(self, cost: int) -> None:
        """Take ``cost`` off; :class:`OverBudget` if it exceeds what the worker was told (plus a small slack)."""
        if cost > self.remaining + SLACK_BYTES:
            raise OverBudget(
                f"the worker sent {human(cost)} where it was told {human(self.remaining)} remained of the transfer "
                "budget"
            )
        self.remaining = max(0, self.remaining - cost)

    def frame_cap(self, kind: Any) -> int:
        """Largest frame of ``kind`` the host reads now (checked before any buffer is allocated)."""
        if kind in ("tool", "done"):
            return self.remaining + SLACK_BYTES + MAX_HEADER_BYTES
        return SMALL_FRAME_CAPS.get(kind, OTHER_FRAME_CAP)

    def describe(self) -> str:
        """The budget in words, for the note that keeps a value in the worker."""
        if self.limited_by_steps:
            return (
                f"the {human(self.remaining)} left of what the agent's values may hold in the notebook "
                "(earlier steps' values count until they are deleted or rebound)"
            )
        return f"the transfer budget of {human(self.per_call)} per call (max_transfer_bytes)"


class HeldValues:
    """The bytes each name the agent bound holds in the notebook, recounted as names are rebound or deleted."""

    def __init__(self) -> None:
        self._costs: dict[str, tuple[Any, int]] = {}

    def record(self, name: str, value: Any, cost: int) -> None:
        self._costs[name] = (value, cost)

    def total(self, state: dict) -> int:
        """The bytes still held: names rebound or deleted since (by the notebook or the agent) no longer count."""
        missing = object()
        for name in [n for n, (value, _) in self._costs.items() if state.get(n, missing) is not value]:
            del self._costs[name]
        return sum(cost for _, cost in self._costs.values())
