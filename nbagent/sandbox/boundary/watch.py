"""One call seen from the host: what the worker may still send, until when, and which answers are real.

The worker is hostile, so the host keeps its own account of a call:

* **time**: the code's deadline (timeout + grace); one ``ran`` moves it to an encoding allowance, never past an
  absolute deadline (timeout + grace + allowance + the time the host's tools took); a second ``ran`` is an anomaly.
  Decoding checks the deadline and a stop request every few thousand nodes (:meth:`CallWatch.check`).
* **size**: the call's :class:`~nbagent.sandbox.wire.budget.CallBudget`, charged by every decoded message, and the
  decoding table shared by the messages (the write-back may name a value a tool call already carried).
* **the final answer**: the calls of the host's own ``final_answer`` tool (``answers``, by call id); the worker's
  ``done`` may only point at one of them, and the first one wins (no tool runs after it).
* **shared buffers**: the memory files granted for the next message (wire/shared.py), checked against what remains
  of the budget, used by that message or closed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..wire import codec as wire
from ..wire import shared
from ..wire.budget import SLACK_BYTES, SMALL_FRAME_CAPS, CallBudget
from ..wire.channel import Channel, ChannelClosed, ChannelTimeout

#: No final answer in this call (``None`` is a value ``final_answer`` may be given).
NO_ANSWER = object()

#: The least time the host gives the worker to encode and send its answer after ``ran``.
MIN_ENCODING_SECONDS = 10.0
#: Printed text a thread of the agent's code may send between calls (dropped) before the worker is replaced.
MAX_LATE_OUTPUT_FRAMES = 64


def only_late_output(channel: Channel) -> bool:
    """Between calls: drop printed text that arrived late (a thread the code started); False if anything else
    arrived (a frame forged for a later call), or too much of it, or a frame cut short."""
    caps = channel.caps
    channel.caps = lambda kind: SMALL_FRAME_CAPS["out"] if kind == "out" else 0
    try:
        for _ in range(MAX_LATE_OUTPUT_FRAMES):
            if not channel.readable(0):
                return True
            header, _ = channel.recv(deadline=time.monotonic() + 0.2)
            if header.get("t") != "out":
                return False
        return False
    except (ChannelClosed, ChannelTimeout, OSError):
        return False
    finally:
        channel.caps = caps


class CallWatch:
    """Deadlines, budget, decoding table and final answers of one call (see the module docstring)."""

    def __init__(
        self,
        call_id: int,
        timeout: float | None,
        grace: float,
        budget: CallBudget,
        stop_deadline: Callable[[], float | None],
        shared_buffers: bool = False,
    ) -> None:
        self.call_id = call_id
        self.shared_buffers = shared_buffers
        self.granted: shared.Grant | None = None
        self.started = time.monotonic()
        self.allowance = max(MIN_ENCODING_SECONDS, timeout or 0.0)
        self.deadline = self.started + timeout + grace if timeout else None
        self.absolute = self.deadline + self.allowance if self.deadline is not None else None
        self.budget = budget
        self.table: dict[int, Any] = {}
        self.answers: dict[int, Any] = {}
        self.ran = False
        self._stop_deadline = stop_deadline

    def on_ran(self) -> None:
        """The worker says its code ended: the encoding allowance starts (once per call)."""
        if self.ran:
            raise wire.WireError("a second 'ran' in one call")
        self.ran = True
        if self.deadline is not None and self.absolute is not None:
            self.deadline = min(time.monotonic() + self.allowance, self.absolute)

    def add_tool_time(self, seconds: float) -> None:
        """A tool ran in the host for ``seconds``: the absolute deadline moves by as much."""
        if self.absolute is not None:
            self.absolute += seconds

    def limit(self) -> float | None:
        """When the host stops waiting: the deadline, or the grace after a stop request, whichever is first."""
        stop = self._stop_deadline()
        limits = [x for x in (self.deadline, stop) if x is not None]
        return min(limits) if limits else None

    def expired(self) -> str | None:
        """ "stop" or "timeout" once the limit has passed, else None."""
        limit = self.limit()
        if limit is None or time.monotonic() < limit:
            return None
        return "stop" if self._stop_deadline() is not None else "timeout"

    def check(self) -> None:
        """For the decoder: :class:`~nbagent.sandbox.wire.codec.DecodeAbandoned` once the limit has passed."""
        reason = self.expired()
        if reason:
            raise wire.DecodeAbandoned(reason)

    def decoder(self, buffers: list, remote: Callable, host: Callable, header_bytes: int) -> wire.Decoder:
        """A decoder for one message, bounded by what remains of the budget (the header counts too)."""
        limit = self.budget.remaining + SLACK_BYTES - header_bytes
        if limit < 0:
            raise wire.WireError("a message header larger than the transfer budget the worker was told")
        return wire.Decoder(buffers, remote, host, table=self.table, limit=limit, check=self.check)

    def settle(self, decoder: wire.Decoder, header_bytes: int) -> None:
        """Charge the budget with what the message cost."""
        self.budget.charge(decoder.cost + header_bytes)

    def grant(self, header: dict) -> shared.Grant | None:
        """Memory files for the worker's next message, as it asked (``shm``): checked against what remains of the
        budget; None when they cannot be made now (the worker then sends inline). An anomaly: a request the host did
        not offer, or a second one before the first was used."""
        if not self.shared_buffers:
            raise wire.WireError("a request for shared buffers the host did not offer")
        if self.granted is not None:
            raise wire.WireError("a second request for shared buffers before the first was used")
        sizes = shared.Grant.check_request(header.get("sizes"), self.budget.remaining + SLACK_BYTES)
        try:
            self.granted = shared.Grant(sizes)
        except OSError:  # out of memory or descriptors: inline is slower, not wrong
            return None
        return self.granted

    def take_shared(self, header: dict, buffers: list) -> list:
        """A message's buffers with its shared ones mapped from the files granted for it (then closed)."""
        grant, self.granted = self.granted, None
        placements = header.get("shm")
        try:
            if placements is None:
                return buffers
            if grant is None:
                raise wire.WireError("shared buffers the host never created")
            return grant.take(placements, buffers)
        finally:
            if grant is not None:
                grant.close()

    def close(self) -> None:
        """The call is over: files granted and never used are closed, and the decoding table lets go of its values."""
        self.table.clear()
        grant, self.granted = self.granted, None
        if grant is not None:
            grant.close()

    def final_answer(self, header: dict) -> Any:
        """The call's final answer: the first value the host's own ``final_answer`` tool gave in this call (the
        first answer wins, whatever the code did after it: a ``finally`` that swallowed it, a later error), else
        :data:`NO_ANSWER`. The worker's ``done`` may only point at an answer the host gave: a ``final`` claim or a
        ``host_final`` the host never answered is an anomaly."""
        cid = header.get("host_final")
        claimed = cid is not None or bool(header.get("final"))
        if claimed and (type(cid) is not int or cid not in self.answers):
            raise wire.WireError("a final answer the host's final_answer tool never gave")
        return next(iter(self.answers.values())) if self.answers else NO_ANSWER
