"""Stop during a model call: the call is cancelled through its scope (or abandoned if the model ignores it),
the step is recorded as stopped, and the model serves the next run. The real models are in
tests/models/test_stop_real_models.py; here the loop's side, with models whose behaviour is our own logic."""

from __future__ import annotations

import threading
import time

from control_helpers import code, kernel_interrupt, stop_when, wait_until

from nbagent import CodeAgent, ScriptedModel
from nbagent.models.base import ChatMessage
from nbagent.models.cancel import CancelScope, current_scope
from nbagent.record import ActionStep

DEADLINE = 5.0  # generous: the target is 2 s (measured in benchmarks/stop_latency.py)


class SlowModel:
    """A user's own model class: knows nothing of cancel scopes, blocks in `time.sleep`."""

    def __init__(self, seconds: float, then: BaseException | None = None) -> None:
        self.seconds, self.then = seconds, then
        self.calls = 0
        self.started = threading.Event()

    def generate(self, messages, stop_sequences=None, **kwargs):
        self.calls += 1
        self.started.set()
        time.sleep(self.seconds)
        if self.then is not None:
            raise self.then
        return ChatMessage(role="assistant", content=code("final_answer('late')"))


def agent_on(model, **kwargs) -> CodeAgent:
    return CodeAgent(tools=[], model=model, executor_type="local", verbosity_level=-1, show_widget=False, **kwargs)


def last_step(agent) -> ActionStep:
    return [s for s in agent.memory.steps if isinstance(s, ActionStep)][-1]


def test_stop_while_the_model_thinks_ends_the_run_at_once_and_the_model_serves_the_next_run():
    model = ScriptedModel([code("final_answer(1)"), code("final_answer(2)")], latency=60)
    agent = agent_on(model)
    stopped = stop_when(agent, lambda: len(model.calls) == 1)
    result = agent.run("think long", return_full_result=True)
    assert stopped and time.monotonic() - stopped[0] < DEADLINE
    step = last_step(agent)
    assert step.stopped and "Stop" in str(step.error) and "abandoned" not in str(step.error)
    assert result.state == "stopped" and agent.gates.status == "stopped"
    model.latency = 0
    assert agent.run("again") == 2


def test_stop_while_the_model_streams_keeps_what_came_and_records_the_step_as_stopped():
    answer = "Thought: " + "a long thought " * 200 + "\n" + code("final_answer(1)")
    model = ScriptedModel([answer], token_delay=0.01)
    agent = agent_on(model, stream_outputs=True)
    deltas: list[str] = []
    stopped = stop_when(agent, lambda: len(deltas) > 5)
    for event in agent.run("stream", stream=True):
        if getattr(event, "content", None):
            deltas.append(event.content)
    assert stopped and time.monotonic() - stopped[0] < DEADLINE
    assert 5 < len(deltas) < 400  # stopped mid-answer
    assert last_step(agent).stopped and agent.last_result.state == "stopped"


def test_a_model_that_ignores_the_stop_is_abandoned_and_the_step_says_so():
    model = SlowModel(30)
    agent = agent_on(model)
    stopped = stop_when(agent, model.started.is_set)
    result = agent.run("slow", return_full_result=True)
    assert stopped and time.monotonic() - stopped[0] < DEADLINE
    step = last_step(agent)
    assert step.stopped and "Stop" in str(step.error)
    assert "stopped waiting" in str(step.error)
    assert result.state == "stopped"


def test_a_model_error_caused_by_the_stop_is_a_stop_not_a_generation_error():
    model = SlowModel(0.6, then=ConnectionError("connection reset by peer"))
    agent = agent_on(model)
    stop_when(agent, model.started.is_set, delay=0.1)
    result = agent.run("fails when stopped", return_full_result=True)
    step = last_step(agent)
    assert result.state == "stopped" and step.stopped
    assert "generating" not in str(step.error) and "Stop" in str(step.error)


def test_a_kernel_interrupt_during_a_model_call_of_a_blocking_run_stops_it():
    model = ScriptedModel([code("final_answer(1)")], latency=60)
    agent = agent_on(model)

    def interrupt_while_the_model_thinks() -> None:
        wait_until(lambda: len(model.calls) == 1, timeout=30)  # not before the run began (a loaded machine)
        time.sleep(0.3)
        kernel_interrupt()

    threading.Thread(target=interrupt_while_the_model_thinks, daemon=True).start()
    began = time.monotonic()
    result = agent.run("interrupted", return_full_result=True)
    assert time.monotonic() - began < DEADLINE
    assert result.state == "stopped" and last_step(agent).stopped
    assert "interrupt" in str(last_step(agent).error)


def test_the_model_finds_its_own_scope_and_a_call_outside_a_run_is_never_cancelled():
    seen: list[CancelScope] = []

    def answer(messages, **kwargs):
        seen.append(current_scope())
        return code("final_answer(3)")

    agent = agent_on(ScriptedModel(answer))
    assert agent.run("scoped") == 3
    assert not seen[0].cancelled and seen[0] is not current_scope()  # a scope of its own, not the default
    assert not current_scope().cancelled
