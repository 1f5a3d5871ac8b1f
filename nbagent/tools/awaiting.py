"""Async tools: a tool whose `forward` is `async def` (or returns an awaitable) is awaited where it is called.

A tool call is synchronous for the loop and for the agent's code. Its awaitable is run:

* on the event loop of an async run (`agent.arun` / `agent.astream` set `HOST_LOOP` on the thread
  that drives the run): the loop the caller awaits on, e.g. a notebook's top-level `await`, so a
  tool may use clients bound to it; the run's thread waits for the result;
* otherwise on a fresh event loop: in this thread when none runs here, or, when one does (a sync
  `agent.run()` inside a notebook cell, where the kernel's loop is running), on a short-lived
  helper thread. No `nest_asyncio`: no loop is ever re-entered.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any

__all__ = ["HOST_LOOP", "resolve_awaitable"]

# The event loop of the async run this thread works for (None: a sync run).
HOST_LOOP: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar("nbagent_host_loop", default=None)


def resolve_awaitable(value: Any) -> Any:
    """`value`, or what it gives once awaited if it is awaitable (a coroutine, task or future)."""
    if not inspect.isawaitable(value):
        return value
    host = HOST_LOOP.get()
    if host is not None and host.is_running() and not _runs_here(host):
        return asyncio.run_coroutine_threadsafe(_awaited(value), host).result()
    if _a_loop_runs_here():
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="nbagent-async-tool") as helper:
            return helper.submit(asyncio.run, _awaited(value)).result()
    return asyncio.run(_awaited(value))


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _runs_here(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _a_loop_runs_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
