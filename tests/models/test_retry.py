"""RetryPolicy: exponential backoff, Retry-After, and the single final error."""

from __future__ import annotations

import pytest

from nbagent.models import ModelError
from nbagent.models.openai_server import OpenAIServerModel
from nbagent.models.retry import ErrorInfo, RetryPolicy, call_with_retries


def test_delays_grow_exponentially_and_are_capped():
    policy = RetryPolicy(max_retries=6, initial_delay=1.0, backoff=2.0, max_delay=10.0, jitter=0.0)
    assert list(policy.delays()) == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_retry_after_lengthens_the_wait_up_to_the_cap():
    policy = RetryPolicy(max_delay=5.0)
    assert policy.wait(1.0, None) == 1.0
    assert policy.wait(1.0, 3.0) == 3.0
    assert policy.wait(1.0, 600.0) == 5.0


def test_call_with_retries_sleeps_between_attempts_and_stops_at_success():
    slept, calls = [], []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("down")
        return "ok"

    policy = RetryPolicy(max_retries=5, initial_delay=0.5, backoff=3.0, jitter=0.0)
    result = call_with_retries(flaky, policy, lambda e: ErrorInfo(True, str(e)), "P", "http://x", sleep=slept.append)
    assert result == "ok" and slept == [0.5, 1.5]


def test_not_retryable_fails_at_once_with_the_hint():
    def broken():
        raise ValueError("bad")

    with pytest.raises(ModelError, match=r"\(not retried\): HTTP 404: bad\. Check the model id and the base URL"):
        call_with_retries(
            broken, RetryPolicy(), lambda e: ErrorInfo(False, str(e), status=404), "P", "http://x", sleep=lambda s: None
        )


def test_api_model_backoff_sequence_against_a_failing_server(fault_server):
    fault_server.script = [("status", 503, "overloaded")]
    model = OpenAIServerModel(
        "fake",
        api_base=fault_server.url,
        api_key="k",
        retry=RetryPolicy(max_retries=3, initial_delay=0.2, backoff=2.0, jitter=0.0),
    )
    slept: list[float] = []
    model.sleep = slept.append
    with pytest.raises(ModelError, match="after 4 attempts: HTTP 503: overloaded"):
        model.generate([{"role": "user", "content": "hi"}])
    assert slept == [0.2, 0.4, 0.8]
    assert len(fault_server.requests) == 4
