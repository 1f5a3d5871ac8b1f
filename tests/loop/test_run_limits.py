"""Runs that cannot get stuck: the time limit (`max_time`), failing code not run again (twice in a row, or the
code of any earlier failure: a cycle), and the same failure in other code named a loop, then ended."""

from __future__ import annotations

import time

import pandas as pd
import pytest
from control_helpers import stop_when

from nbagent import CodeAgent, RunStart, ScriptedModel
from nbagent.errors import AgentRepeatedCodeError, AgentStuckError, AgentTimedOutError
from nbagent.loop.aids.repeats import failure_signature, same_code
from nbagent.loop.deadline import describe_limit, parse_max_time
from nbagent.models.default import DEFAULT_MODEL_MAX_TIME, default_gguf_path
from nbagent.record.status import answered, outcome_message, run_outcome
from nbagent.views.html import run_to_html
from nbagent.views.state import RunStateBuilder, memory_to_state


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def make_agent(model, **kwargs) -> CodeAgent:
    kwargs.setdefault("share_variables", "*")  # the tests' spies (`ran`) are read by code the tasks do not name
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
    # a step takes well under the limit even on a loaded machine (a worker starts); the pause is longer than it
    agent = make_agent(ScriptedModel([code("x = 1"), code("final_answer(x + 1)")]), max_time=5)
    driver = agent.start("two steps")
    time.sleep(6)  # paused before its first step, longer than the limit
    driver.step(timeout=10)
    assert agent.gates.status == "paused"  # not timed out: the paused time was not counted
    driver.run(timeout=10)
    assert driver.join(30)
    assert agent.last_result.state == "success" and agent.last_result.output == 2


def test_a_stop_by_a_person_stays_a_stop():
    model = ScriptedModel([code("import time\ntime.sleep(30)")])
    agent = make_agent(model, max_time=60)
    stop_when(agent, lambda: len(model.calls) == 1, delay=0.5)
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


def test_different_code_in_between_does_not_make_a_failure_worth_running_again():
    # changed on purpose (issue 27): A, B, A used to run A a second time; now the third step repeats step 1
    same, other = code("print(sales['value'])"), code("print(sales['valu'])")
    namespace = {"sales": pd.DataFrame({"units": [1]})}
    agent = make_agent(ScriptedModel([same, other, same, code("final_answer(1)")]), namespace=namespace)
    assert agent.run("t") == 1
    first, second, third = (str(step.error) for step in agent.memory.action_steps()[:3])
    assert "Not run" not in first + second and "same code as your last step" not in first + second
    assert third.startswith("Not run: this code is the same as the code of your step 1, which failed with KeyError")


# ---------------------------------------------------------------- cycles of failing attempts


def cycle_agent(responses: list[str], max_steps: int = 8) -> tuple[CodeAgent, dict]:
    namespace = {"orders": pd.DataFrame({"rep": [1, 2], "amount": [3.0, 4.0]}), "people": pd.DataFrame(
        {"name": ["a", "b"], "id": [1, 2]})}  # fmt: skip
    return make_agent(ScriptedModel(responses), namespace=namespace, max_steps=max_steps), namespace


def ran(agent: CodeAgent) -> list[str]:
    """What each step's code printed before it failed ("" for a step whose code was not run)."""
    return [(step.observations or "").replace("Execution logs:", "").strip() for step in agent.memory.action_steps()]


# a step's code that changed `ran` (a list it uses) would be worth running again: the steps print instead
MERGE_REP = code("print('rep')\nmerged = orders.merge(people, on='rep')")
MERGE_NAME = code("print('name')\nmerged = orders.merge(people, on='name')")


def test_a_to_b_and_back_to_a_is_refused_at_the_third_step_naming_the_step_it_repeats():
    agent, _ = cycle_agent([MERGE_REP, MERGE_NAME, MERGE_REP, code("final_answer(len(people))")])
    assert agent.run("Join `orders` to `people`.") == 2  # a run can still answer after a refused repeat
    first, second, third, fourth = agent.memory.action_steps()
    assert ran(agent)[:3] == ["rep", "name", ""]  # the third step never ran
    refused = str(third.error)
    assert isinstance(third.error, AgentRepeatedCodeError)
    assert refused.startswith(
        "Not run: this code is the same as the code of your step 1, which failed with KeyError: 'rep'"
    )
    assert "`orders` has the columns: rep, amount" in refused and "`people` has the columns: name, id" in refused
    assert "change the line that fails (`merged = orders.merge(people, on='rep')`)" in refused
    assert "If you send this same code again, the run ends." in refused
    assert fourth.error is None


def test_a_b_a_b_is_refused_twice_then_the_run_ends_as_stuck():
    agent, _ = cycle_agent([MERGE_REP, MERGE_NAME] * 3)
    result = agent.run("Join `orders` to `people`.", return_full_result=True)
    steps = agent.memory.action_steps()
    assert result.state == "stuck" and len(steps) == 5 and ran(agent) == ["rep", "name", "", "", ""]
    assert "the code of your step 1, which failed with KeyError: 'rep'" in str(steps[2].error)
    assert "the code of your step 2, which failed with KeyError: 'name'" in str(steps[3].error)
    assert isinstance(steps[4].error, AgentStuckError) and "KeyError: 'rep'" in str(steps[4].error)


def test_refused_code_sent_again_later_still_ends_the_run():
    other = code("print('x')\nprint(orders['nope'])")
    agent, _ = cycle_agent([MERGE_REP, MERGE_NAME, MERGE_REP, other, MERGE_REP])
    assert agent.run("t", return_full_result=True).state == "stuck"
    assert ran(agent) == ["rep", "name", "", "x", ""]


def test_an_earlier_failure_no_longer_holds_once_a_step_changed_a_name_its_code_uses():
    show = code("print(total + 1)")
    agent, _ = cycle_agent([show, code("total = 41"), show, code("final_answer(total)")])
    assert agent.run("t") == 41
    assert agent.memory.action_steps()[2].error is None  # `total` exists now: the same code ran, and worked


def test_a_change_to_another_name_keeps_the_earlier_failure():
    unrelated = code("y = 1\nprint(orders['nope'])")  # binds `y` before it fails
    agent, _ = cycle_agent([MERGE_REP, unrelated, MERGE_REP, code("final_answer(0)")])
    agent.run("t")
    assert "your step 1" in str(agent.memory.action_steps()[2].error)


def test_a_step_that_changed_a_name_the_failing_code_uses_makes_it_worth_running_again():
    fix = code("people['rep'] = people['id']\nprint(orders['nope'])")  # changes `people`, then fails
    agent, _ = cycle_agent([MERGE_REP, fix, MERGE_REP, code("final_answer(len(merged))")])
    assert agent.run("t") == 2 and agent.memory.action_steps()[2].error is None


def test_the_code_that_just_failed_once_still_runs_once_more():
    agent, _ = cycle_agent([MERGE_REP, MERGE_NAME, MERGE_NAME, code("final_answer(0)")])
    agent.run("t")
    assert ran(agent)[:3] == ["rep", "name", "name"]
    assert "same code as your last step" in str(agent.memory.action_steps()[2].error)


# ---------------------------------------------------------------- the same failure in other shapes


@pytest.mark.parametrize(
    ("message", "signature"),
    [
        ("Error on line 1 of the code:\n    x = orders['amount'].astype(float)\n"
         "ValueError: could not convert string to float: '-$18.46'\nHint: strip '$'", "ValueError: '-$18.46'"),
        ('ValueError: Unable to parse string "-$18.46" at position 3', "ValueError: '-$18.46'"),
        ("KeyError: 'rep'", "KeyError: 'rep'"),
        ("InterpreterError: Could not index orders with 'rep': KeyError: 'rep'", "KeyError: 'rep'"),
        ("ZeroDivisionError: division by  Zero", "ZeroDivisionError: division by zero"),
        ("pandas.errors.MergeError: No common columns to perform merge on.",
         "MergeError: no common columns to perform merge on."),
        ("Not run: this code is the same as the code of your step 1, which failed with KeyError: 'a'.", None),
        ("Error in code parsing: no code block", None),
    ],
)  # fmt: skip
def test_a_failure_is_its_exception_and_the_key_or_value_it_names(message, signature):
    assert failure_signature(message) == signature


def test_a_failure_naming_another_value_is_another_failure():
    first = failure_signature("ValueError: could not convert string to float: '$1,234.50'")
    assert first != failure_signature("ValueError: could not convert string to float: '1,234.50'")
    assert failure_signature("KeyError: 'rep'") != failure_signature("KeyError: 'name'")


MONEY = ["orders['amount'].astype(float)", "orders['amount'].apply(float)", "orders['amount'].map(float)",
         "float(orders['amount'][0])", "[float(v) for v in orders['amount']]"]  # fmt: skip


def money_agent(bodies: list[str], then: list[str] | None = None) -> CodeAgent:
    namespace = {"orders": pd.DataFrame({"amount": ["-$18.46", "$5.00"]})}
    responses = [code(body) for body in bodies] + (then or [])
    return make_agent(ScriptedModel(responses), namespace=namespace, max_steps=8)


def test_the_same_failure_in_three_shapes_is_named_a_loop():
    agent = money_agent(MONEY[:3], then=[code("final_answer(1)")])
    assert agent.run("Total of `orders` amount?") == 1
    first, second, third, _ = agent.memory.action_steps()
    assert "same error" not in str(first.error) + str(second.error)
    loop = str(third.error)
    assert "ValueError: could not convert string to float: '-$18.46'" in loop
    assert "Your steps 1, 2 failed with this same error" in loop and "writing the code another way" in loop
    assert "If your next step fails this same way, the run ends." in loop


def test_the_same_failure_once_more_after_it_was_named_a_loop_ends_the_run():
    agent = money_agent(MONEY[:5])
    result = agent.run("Total of `orders` amount?", return_full_result=True)
    steps = agent.memory.action_steps()
    assert result.state == "stuck" and len(steps) == 4
    assert isinstance(steps[-1].error, AgentStuckError)
    assert "4 steps in a row failed with ValueError: could not convert string to float: '-$18.46'" in str(
        steps[-1].error
    )


def test_refused_repeats_are_passed_over_in_a_row_of_the_same_failure():
    bodies = [MONEY[0], MONEY[1], MONEY[0], MONEY[2]]  # the third is refused (it repeats step 1)
    agent = money_agent(bodies, then=[code("final_answer(1)")])
    agent.run("t")
    assert "Your steps 1, 2 failed with this same error" in str(agent.memory.action_steps()[3].error)


def test_a_failure_that_moves_on_is_no_loop():
    bodies = ["orders['amount'].astype(float)", "orders['amount'].str.replace('$', '').astype(float)",
              "orders['amount'].str.replace('-', '').astype(float)"]  # fmt: skip
    agent = money_agent(bodies, then=[code("final_answer(1)")])
    assert agent.run("t") == 1
    assert all("same error" not in str(step.error) for step in agent.memory.action_steps())


# ---------------------------------------------------------------- code that already ran, sent again


def test_code_that_just_ran_without_error_is_not_run_again_and_the_model_is_told_what_it_made():
    convert = code("orders['day'] = pd.to_datetime(orders['day'])\nruns.append(1)")
    orders = pd.DataFrame({"day": ["2024-03-05", "2024-04-01"]})
    namespace = {"orders": orders, "pd": pd, "runs": []}
    agent = make_agent(
        ScriptedModel([convert, convert, code("final_answer(int((orders['day'].dt.month == 3).sum()))")]),
        namespace=namespace,
        additional_authorized_imports=["pandas"],
    )
    assert agent.run("How many days of `orders` in March?") == 1
    second = str(agent.memory.action_steps()[1].error)
    assert second.startswith("Not run: this code is the same as the code of your step 1, which already ran without")
    assert "`orders`" in second and "final_answer" in second
    assert namespace["runs"] == [1]  # the repeat was not run


def test_code_that_already_ran_sent_again_after_the_refusal_ends_the_run():
    same = code("total = 1 + 1")
    agent = make_agent(ScriptedModel([same, same, same, code("final_answer(2)")]), max_steps=4)
    result = agent.run("t", return_full_result=True)
    assert result.state == "stuck" and len(agent.memory.action_steps()) == 3
    assert "which had already run" in str(agent.memory.action_steps()[-1].error)


def test_code_that_printed_the_same_twice_is_not_run_a_third_time():
    look = code("print(len(orders[orders['month'] == 'June']))")
    namespace = {"orders": pd.DataFrame({"month": ["2024-06", "2024-05"]})}
    agent = make_agent(ScriptedModel([look, look, look, code("final_answer(1)")]), namespace=namespace, max_steps=4)
    assert agent.run("How many orders in June?") == 1
    steps = agent.memory.action_steps()
    assert [step.error is None for step in steps[:2]] == [True, True]  # printed code may be looked at again, once
    assert str(steps[2].error).startswith("Not run: this code is the same as the code of your step 2")
    assert "printed the same twice" in str(steps[2].error)


def test_two_printing_steps_alternating_are_each_refused_at_their_third_run():
    # the messy run: the model's code and nbagent's offer, each printing what it printed two steps before
    month = code("monthly = orders.groupby('month')['amount'].sum()\nprint(monthly.idxmax())")
    clean = code(
        "once = orders.drop_duplicates()\nmonthly = once.groupby('month')['amount'].sum()\nprint(monthly.idxmax())"
    )
    orders = pd.DataFrame({"month": ["2024-01", "2024-02", "2024-02"], "amount": [5, 3, 3]})
    script = [month, clean, month, clean, month, code("final_answer(monthly.idxmax())")]
    agent = make_agent(ScriptedModel(script), namespace={"orders": orders}, max_steps=6)
    assert agent.run("Which month of `orders` had the most amount? Count each order once.") == "2024-01"
    steps = agent.memory.action_steps()
    assert [step.error is None for step in steps[:4]] == [True] * 4  # each looked at twice
    assert str(steps[4].error).startswith("Not run: this code is the same as the code of your step 3")


def test_code_run_apart_runs_again_when_a_step_between_changed_what_it_reads():
    look = code("print(len(seen))")
    grow = code("seen.append(1)")
    agent = make_agent(
        ScriptedModel([look, grow, look, grow, look, code("final_answer(len(seen))")]),
        namespace={"seen": []},
        max_steps=6,
    )
    assert agent.run("Look and grow.") == 2
    assert all(step.error is None for step in agent.memory.action_steps())


def test_printed_code_runs_again_when_what_it_printed_changed():
    look = code("print(len(seen)); seen.append(1)")
    agent = make_agent(ScriptedModel([look, look, look, code("final_answer(len(seen))")]), namespace={"seen": []})
    assert agent.run("Look three times.") == 3


def test_code_that_moves_a_value_on_runs_again():
    step = code("count += 1")
    namespace = {"count": 0}
    agent = make_agent(ScriptedModel([step, step, code("final_answer(count)")]), namespace=namespace)
    assert agent.run("Count to two with `count`.") == 2


def test_code_that_makes_its_value_afresh_before_moving_it_on_is_not_run_again():
    step = code("total = sum(values)\ntotal = total * 2\nruns.append(1)")
    namespace = {"values": [1, 2], "runs": []}
    agent = make_agent(ScriptedModel([step, step, code("final_answer(total)")]), namespace=namespace)
    assert agent.run("Twice the sum of `values`.") == 6
    assert str(agent.memory.action_steps()[1].error).startswith("Not run: this code is the same as the code of your")
    assert namespace["runs"] == [1]
    moving = code("total = total * 2")  # reads the last run's value: each run is new work
    agent = make_agent(ScriptedModel([moving, moving, code("final_answer(total)")]), namespace={"total": 1})
    assert agent.run("Double `total` twice.") == 4
