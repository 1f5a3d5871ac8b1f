"""Runs that cannot get stuck: the time limit (`max_time`) and the same failing code not run a third time."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

from nbagent import CodeAgent, RunStart, ScriptedModel
from nbagent.errors import AgentRepeatedCodeError, AgentStuckError, AgentTimedOutError
from nbagent.loop.aids.repeats import same_code
from nbagent.loop.deadline import describe_limit, parse_max_time
from nbagent.models.default import DEFAULT_MODEL_MAX_TIME, default_gguf_path
from nbagent.record.status import answered, outcome_message, run_outcome
from nbagent.views.html import run_to_html
from nbagent.views.state import RunStateBuilder, memory_to_state


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def make_agent(model, **kwargs) -> CodeAgent:
    return CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False, **kwargs)


# ---------------------------------------------------------------- reading a limit


@pytest.mark.parametrize(
    ("given", "seconds"),
    [(90, 90.0), (2.5, 2.5), ("90", 90.0), ("90s", 90.0), ("10m", 600.0), ("10 min", 600.0), ("1h", 3600.0),
     ("1h30m", 5400.0), ("1.5h", 5400.0), (0, None), ("0", None), ("none", None)],
)  # fmt: skip
def test_a_limit_is_read_as_seconds(given, seconds):
    assert parse_max_time(given) == seconds


@pytest.mark.parametrize("given", ["ten minutes", "10q", "1h30", "-5", -1, "", True, [10]])
def test_a_limit_that_is_no_duration_is_one_clear_error(given):
    with pytest.raises(ValueError, match=r"max_time .*90s, 10m, 1h"):
        parse_max_time(given)


def test_a_limit_is_said_in_its_largest_whole_unit():
    assert [describe_limit(s) for s in (600, 90, 60, 3600, 5400, 0.5)] == [
        "10 min", "90 s", "1 min", "1 h", "1 h 30 min", "0.5 s",
    ]  # fmt: skip


def test_the_offline_model_has_a_limit_by_default_and_other_models_none():
    class OfflineModel(ScriptedModel):  # any model whose weights are the default GGUF is the offline model
        model_path = str(default_gguf_path())

    assert make_agent(OfflineModel([])).max_time == DEFAULT_MODEL_MAX_TIME == 600
    assert make_agent(ScriptedModel([])).max_time is None
    assert make_agent(OfflineModel([]), max_time=0).max_time is None  # 0: no limit, said on purpose
    assert make_agent(ScriptedModel([]), max_time="2m").max_time == 120
    with pytest.raises(ValueError, match="max_time"):
        make_agent(ScriptedModel([]), max_time="soon")


# ---------------------------------------------------------------- the limit stops a run


def test_the_limit_stops_running_code_and_the_run_ends_timed_out():
    agent = make_agent(ScriptedModel([code("import time\ntime.sleep(30)")]), max_time=1)
    started = time.monotonic()
    result = agent.run("sleep", return_full_result=True)
    assert time.monotonic() - started < 10  # a generous functional deadline (the limit is 1 s)
    assert result.state == "timed_out" and result.output is None
    assert "time limit of 1 s (max_time)" in result.error
    step = agent.memory.action_steps()[-1]
    assert step.stopped and isinstance(step.error, AgentTimedOutError)
    outcome = run_outcome(result.state, result.output, result.error)
    assert not answered(outcome) and "timed out" in outcome_message(outcome)


def test_the_limit_stops_a_model_call_between_tokens():
    slow = ScriptedModel([code("final_answer(1)")], token_delay=0.5)  # ~12 tokens: 6 s to write
    agent = make_agent(slow, stream_outputs=True)
    started = time.monotonic()
    events = list(agent.run("t", stream=True, max_time="1s"))
    assert time.monotonic() - started < 5
    assert agent.last_result.state == "timed_out"
    assert not any(getattr(event, "is_final_answer", False) for event in events)


def test_a_run_limit_overrides_the_agent_limit_for_that_run_only():
    agent = make_agent(ScriptedModel([code("import time\ntime.sleep(30)"), code("final_answer(2)")]), max_time=1)
    assert agent.run("sleep", return_full_result=True).state == "timed_out"
    assert agent.run("answer", max_time=0) == 2  # no limit for this run
    assert agent.max_time == 1


def test_time_paused_for_a_person_does_not_count():
    agent = make_agent(ScriptedModel([code("x = 1"), code("final_answer(x + 1)")]), max_time=1)
    driver = agent.start("two steps")
    time.sleep(1.5)  # paused before its first step, longer than the limit
    driver.step(timeout=10)
    assert agent.gates.status == "paused"  # not timed out: the paused time was not counted
    driver.run(timeout=10)
    assert driver.join(10)
    assert agent.last_result.state == "success" and agent.last_result.output == 2


def test_a_stop_by_a_person_stays_a_stop():
    agent = make_agent(ScriptedModel([code("import time\ntime.sleep(30)")]), max_time=60)
    threading.Timer(0.5, agent.stop).start()
    assert agent.run("sleep", return_full_result=True).state == "stopped"
    assert not isinstance(agent.memory.action_steps()[-1].error, AgentTimedOutError)


def test_the_views_say_the_limit_and_a_timed_out_run():
    agent = make_agent(ScriptedModel([code("import time\ntime.sleep(30)")]), max_time=1)
    builder = RunStateBuilder("agent")
    for event in agent.event_stream("sleep"):
        builder.apply(event)
        if isinstance(event, RunStart):
            assert event.max_time == 1 and builder.run["max_time"] == 1
    assert (builder.run["status"], builder.run["outcome"]) == ("timed_out", "timed_out")
    assert builder.run["steps"][-1]["stopped"] is True
    rebuilt, _ = memory_to_state(agent.memory)  # the memory alone tells the same
    assert (rebuilt["status"], rebuilt["outcome"]) == ("timed_out", "timed_out")
    page = run_to_html(builder.run, [])
    assert "stops after 1 s" in page and ">timed out<" in page


# ---------------------------------------------------------------- the same failing code


def test_code_is_the_same_whatever_its_whitespace():
    assert same_code("x = df[ 'a' ]\n\n", "x=df['a']")
    assert not same_code("x = df['a']", "x = df['b']")


def failing_loop(times: int, then: list[str] | None = None) -> tuple[CodeAgent, dict]:
    namespace = {"sales": pd.DataFrame({"units": [1, 2], "unit_price": [2.0, 3.0]}), "ran": []}
    same = code("ran.append(1)\nprint(sales['value'].sum())")
    agent = make_agent(ScriptedModel([same] * times + (then or [])), namespace=namespace, max_steps=6)
    return agent, namespace


def test_the_same_code_failing_twice_in_a_row_is_not_run_a_third_time():
    agent, namespace = failing_loop(3, then=[code("final_answer(sales['units'].sum())")])
    assert agent.run("Total value of `sales`?") == 3
    first, second, third, fourth = agent.memory.action_steps()
    assert namespace["ran"] == [1, 1]  # the third copy never ran
    assert "same code as your last step" in str(second.error)
    refused = third.error
    assert isinstance(refused, AgentRepeatedCodeError) and str(refused).startswith("Not run:")
    assert "KeyError: 'value'" in str(refused)  # the error it got both times
    assert "`sales` has the columns: units, unit_price" in str(refused)  # what exists instead
    assert "change the line that fails (`print(sales['value'].sum())`)" in str(refused)
    assert "the run ends" in str(refused)
    assert third.code_action and fourth.error is None


def test_sending_the_refused_code_again_ends_the_run_as_stuck():
    agent, namespace = failing_loop(5)
    result = agent.run("Total value of `sales`?", return_full_result=True)
    assert result.state == "stuck" and result.output is None
    assert len(agent.memory.action_steps()) == 4 and namespace["ran"] == [1, 1]
    last = agent.memory.action_steps()[-1]
    assert isinstance(last.error, AgentStuckError) and "KeyError: 'value'" in str(last.error)
    assert not answered(run_outcome(result.state, result.output, result.error))
    rebuilt, _ = memory_to_state(agent.memory)
    assert rebuilt["status"] == "stuck"


def test_different_code_in_between_starts_the_count_again():
    same, other = code("print(sales['value'])"), code("print(sales['valu'])")
    namespace = {"sales": pd.DataFrame({"units": [1]})}
    agent = make_agent(ScriptedModel([same, other, same, code("final_answer(1)")]), namespace=namespace)
    assert agent.run("t") == 1
    errors = [str(step.error) for step in agent.memory.action_steps()[:3]]
    assert all("Not run" not in error and "same code as your last step" not in error for error in errors)
