"""Async runs: the loop's event stream pumped from a worker thread into the caller's event loop.

The loop is synchronous (model clients, the sandbox and the gates block); an async
run starts it in the caller's thread up to `RunStart` (so views, e.g. a notebook
widget, are made where the caller displays them), then drives it on a worker thread
and hands each event to the caller's running event loop. The event loop stays free
while the agent works: top-level `await` in a notebook needs no `nest_asyncio`.
Cancelling the awaiting task stops the run, as `agent.stop()` does. Async tools called
during the run are awaited on the caller's event loop (see nbagent/tools/awaiting.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from nbagent.tools.awaiting import HOST_LOOP

__all__ = ["pump_events"]

_DONE = object()


async def pump_events(events: Iterator[Any], stop: Callable[[str], None]) -> AsyncIterator[Any]:
    """Yield `events` (a run's event stream) in the running event loop while a thread drives them."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[Any, BaseException | None]] = asyncio.Queue()
    first = next(events)  # set-up and RunStart in this thread: views show where the caller is

    def drive() -> None:
        HOST_LOOP.set(loop)  # async tools called during the run are awaited on the caller's loop
        try:
            for event in events:
                loop.call_soon_threadsafe(queue.put_nowait, (event, None))
        except BaseException as failure:  # handed to the awaiting task, raised there
            loop.call_soon_threadsafe(queue.put_nowait, (_DONE, failure))
        else:
            loop.call_soon_threadsafe(queue.put_nowait, (_DONE, None))

    worker = threading.Thread(target=drive, name="nbagent-async-run", daemon=True)
    yield first
    worker.start()
    try:
        while True:
            event, failure = await queue.get()
            if event is _DONE:
                if failure is not None:
                    raise failure
                return
            yield event
    finally:
        if worker.is_alive():  # the consumer left early or was cancelled: stop the run, let it record that
            stop("Stopped: the awaiting task was cancelled.")
            await asyncio.to_thread(worker.join, 30)
