"""How API models pace and retry calls: `RateLimiter` (requests per minute) and retries with exponential
backoff ending in one clear `ModelError`."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from .base import ModelError
from .cancel import CallCancelled, current_scope

__all__ = ["RetryPolicy", "RateLimiter", "ErrorInfo", "call_with_retries", "acall_with_retries", "HINTS"]

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})

HINTS = {
    400: "the request: model id, message format and generation parameters",
    401: "the API key / token (is it set and valid for this endpoint?)",
    403: "that your key has access to this model",
    404: "the model id and the base URL",
    413: "the conversation length (the request is too large)",
    422: "the request: model id, message format and generation parameters",
    429: "your rate limit or quota; wait and retry, or raise RetryPolicy.max_retries",
}


@dataclass
class RetryPolicy:
    """How an API model retries: `max_retries` retries after the first attempt, delays growing
    `initial_delay * backoff**n` (capped at `max_delay`, a `Retry-After` header is honoured up to that cap)."""

    max_retries: int = 4
    initial_delay: float = 1.0
    backoff: float = 2.0
    max_delay: float = 30.0
    jitter: float = 0.1

    def delays(self) -> Iterator[float]:
        for attempt in range(self.max_retries):
            delay = min(self.max_delay, self.initial_delay * self.backoff**attempt)
            yield delay * (1 + random.uniform(-self.jitter, self.jitter))

    def wait(self, delay: float, retry_after: float | None) -> float:
        """The backoff delay, lengthened to the server's `Retry-After` (both capped at `max_delay`)."""
        return delay if retry_after is None else min(self.max_delay, max(delay, retry_after))

    def dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in ("max_retries", "initial_delay", "backoff", "max_delay", "jitter")}


class RateLimiter:
    """At most `requests_per_minute` requests a minute: each request waits for its slot (None: no limit).

    Slots are handed out in order under a lock and waited for outside it, so threads sharing one model
    (parallel evaluation) are paced together, and none sleeps while holding the lock.
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Any] = time.sleep,
    ) -> None:
        if requests_per_minute is not None and not requests_per_minute > 0:
            raise ValueError(f"requests_per_minute must be a positive number or None, got {requests_per_minute!r}")
        self.requests_per_minute = requests_per_minute
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self.clock = clock
        self.sleep = sleep
        self._next_slot = float("-inf")
        self._lock = threading.Lock()

    def throttle(self) -> None:
        """Wait until this request may go."""
        wait = self._reserve()
        if wait > 0:
            self.sleep(wait)

    async def athrottle(self) -> None:
        """`throttle()` for async callers: the event loop stays free while waiting."""
        wait = self._reserve()
        if wait > 0:
            await asyncio.sleep(wait)

    def _reserve(self) -> float:
        """Take the next slot; how long to wait for it."""
        if not self.interval:
            return 0.0
        with self._lock:
            now = self.clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self.interval
        return slot - now


@dataclass
class ErrorInfo:
    """What went wrong with one attempt, as the model class understands its provider's exception."""

    retryable: bool
    message: str
    status: int | None = None
    retry_after: float | None = None
    hint: str | None = None


def hint_for(status: int | None, endpoint: str, timeout: float | None) -> str:
    if status is None:
        return f"that the server at {endpoint} is running and reachable (timeout={timeout}s)"
    if status in HINTS:
        return HINTS[status]
    if status >= 500:
        return f"the provider's status; the server at {endpoint} failed to answer"
    return "the request and the provider's documentation"


def final_error(provider: str, endpoint: str, info: ErrorInfo, attempts: int, timeout: float | None) -> ModelError:
    status = f"HTTP {info.status}" if info.status else "no HTTP response"
    tries = f"after {attempts} attempts" if attempts > 1 else "(not retried)"
    check = info.hint or hint_for(info.status, endpoint, timeout)
    message = info.message if len(info.message) <= 1500 else info.message[:1500] + " [...]"
    error = ModelError(f"{provider} call to {endpoint} failed {tries}: {status}: {message}. Check {check}.")
    error.status = info.status  # type: ignore[attr-defined]
    return error


def call_with_retries(
    fn: Callable[[], T],
    policy: RetryPolicy,
    describe: Callable[[BaseException], ErrorInfo],
    provider: str,
    endpoint: str,
    timeout: float | None = None,
    sleep: Callable[[float], Any] = time.sleep,
) -> T:
    """Call `fn` until it succeeds, retrying what `describe` calls retryable; then one `ModelError`.

    A cancelled call (Stop) is not retried: the failure it caused (a cut connection) is `CallCancelled`.
    """
    delays = policy.delays()
    attempts = 0
    scope = current_scope()
    while True:
        attempts += 1
        scope.check()
        try:
            return fn()
        except ModelError:
            raise
        except Exception as err:
            if scope.cancelled:
                raise CallCancelled(f"{provider} call stopped: {scope.reason}") from err
            info = describe(err)
            delay = next(delays, None) if info.retryable else None
            if delay is None:
                raise final_error(provider, endpoint, info, attempts, timeout) from err
            sleep(policy.wait(delay, info.retry_after))


async def acall_with_retries(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    describe: Callable[[BaseException], ErrorInfo],
    provider: str,
    endpoint: str,
    timeout: float | None = None,
) -> T:
    """`call_with_retries` for a coroutine function: the waits between attempts are `asyncio.sleep`s."""
    delays = policy.delays()
    attempts = 0
    while True:
        attempts += 1
        try:
            return await fn()
        except ModelError:
            raise
        except Exception as err:
            info = describe(err)
            delay = next(delays, None) if info.retryable else None
            if delay is None:
                raise final_error(provider, endpoint, info, attempts, timeout) from err
            await asyncio.sleep(policy.wait(delay, info.retry_after))
