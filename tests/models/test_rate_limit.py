"""requests_per_minute: API models pace their requests, as in smolagents (every attempt counts)."""

from __future__ import annotations

import threading
import time

import pytest

from nbagent.models.openai_server import OpenAIServerModel
from nbagent.models.retry import RateLimiter, RetryPolicy

MESSAGES = [{"role": "user", "content": "hi"}]


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def test_slots_are_handed_out_in_order():
    clock = FakeClock()
    limiter = RateLimiter(30, clock=clock, sleep=clock.sleep)  # one request every 2 s
    for _ in range(3):
        limiter.throttle()
    assert clock.waits == [2.0, 4.0]  # the first goes at once; the clock did not move
    clock.now += 10  # idle for a while: the next request goes at once
    limiter.throttle()
    assert clock.waits == [2.0, 4.0]


def test_no_limit_and_bad_values():
    clock = FakeClock()
    limiter = RateLimiter(None, clock=clock, sleep=clock.sleep)
    for _ in range(5):
        limiter.throttle()
    assert clock.waits == []
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(0)


def test_threads_sharing_a_model_are_paced_together():
    limiter = RateLimiter(600)  # 0.1 s apart
    stamps: list[float] = []
    lock = threading.Lock()

    def call() -> None:
        limiter.throttle()
        with lock:
            stamps.append(time.monotonic())

    threads = [threading.Thread(target=call) for _ in range(4)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stamps.sort()
    assert stamps[-1] - start >= 0.29
    assert all(b - a >= 0.08 for a, b in zip(stamps, stamps[1:]))


def test_api_model_paces_calls_and_retries(fault_server):
    model = OpenAIServerModel(
        "fake", api_base=fault_server.url, api_key="x", requests_per_minute=60, retry=RetryPolicy(2, 0.01)
    )
    waits: list[float] = []
    model.sleep = waits.append  # neither pacing nor backoff really sleeps
    fault_server.script = [("status", 503, "busy"), "ok"]
    assert model.generate(MESSAGES).content == "Hello from the fault server."  # 2 requests
    list(model.generate_stream(MESSAGES))  # a 3rd
    pacing = [w for w in waits if w > 0.5]
    assert len(pacing) == 2 and all(w <= 3.0 for w in pacing)  # ~1 s then ~2 s (the clock did not wait)
    assert len(fault_server.requests) == 3
    assert model.requests_per_minute == 60 and model.to_dict()["requests_per_minute"] == 60
