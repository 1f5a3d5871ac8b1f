"""A step's badge says what happened (issue 33 item 2): stopped and timed out are no errors, a rejected step is marked
"rejected", in the state the widget gets, the static HTML and the console; the saved plain text says "no answer"."""

from __future__ import annotations

import io

import pytest
from bs4 import BeautifulSoup
from rich.console import Console

from nbagent import AgentMemory, TaskStep
from nbagent.errors import AgentExecutionError, AgentStoppedError, AgentStuckError, AgentTimedOutError
from nbagent.loop.gates import CodeRejected
from nbagent.record import ActionStep
from nbagent.record.status import step_mark
from nbagent.views.console import replay_memory
from nbagent.views.html import memory_to_html
from nbagent.views.state import memory_to_state

TIME_LIMIT = "Stopped: the run reached its time limit of 4 s (max_time)."
CASES = [  # (the step's error, stopped, observations) -> its mark, the chip's text, the block's label
    (AgentStoppedError("Stopped by the user."), True, None, "stopped", "stopped", "Stopped"),
    (AgentTimedOutError(TIME_LIMIT), True, None, "timed_out", "timed out", "Timed out"),
    (AgentStuckError("The model sent the same failing code again."), False, None, "stuck", "stuck", "Stuck"),
    (AgentExecutionError("ZeroDivisionError: division by zero"), False, None, "error", "error", "Error"),
    (None, False, CodeRejected("use the cache").observation, "rejected", "rejected", None),
    (None, False, "Last output: 3", None, None, None),
]


def memory_with(error, stopped, observations) -> AgentMemory:
    memory = AgentMemory("system")
    step = ActionStep(step_number=1, code_action="x = 1", error=error, stopped=stopped, observations=observations)
    memory.steps = [TaskStep(task="Do it."), step]
    return memory


@pytest.mark.parametrize(("error", "stopped", "observations", "mark", "chip", "label"), CASES)
def test_every_view_marks_the_step_by_what_ended_it(error, stopped, observations, mark, chip, label):
    memory = memory_with(error, stopped, observations)
    assert step_mark(error, stopped, observations) == mark
    run, _ = memory_to_state(memory)
    (action,) = [s for s in run["steps"] if s["kind"] == "action"]
    assert action["mark"] == mark

    page = BeautifulSoup(memory_to_html(memory), "html.parser")
    chips = [c.text for c in page.select(".nba-step-head .nba-mark")]
    assert chips == ([chip] if chip else [])
    classes = page.select_one(".nba-step-action")["class"]
    assert ("nba-step-error" in classes) == (mark == "error")  # red only for an error
    assert page.select(".nba-chip-error") == [] or mark == "error"
    if label == "Error":
        assert page.select_one(".nba-error .nba-label").text == "Error"
    elif label:
        assert page.select(".nba-error") == []
        assert page.select_one(f".nba-ended-{mark} .nba-label").text == label

    out = io.StringIO()
    replay_memory(memory, Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    if label:
        assert f"{label}: {error}" in text
        assert ("Error:" in text) == (mark == "error")
    if mark == "rejected":
        assert "Rejected: a person rejected this code" in text


def test_the_saved_plain_text_says_no_answer_when_the_run_had_none():
    from nbagent import CodeAgent, ScriptedModel
    from nbagent.notebook.widget import AgentWidget

    never = CodeAgent(
        tools=[],
        model=ScriptedModel(["Thought: look.\n```py\nprint(1)\n```", "It is probably 3"]),
        max_steps=1,
        executor_type="local",
        show_widget=False,
        verbosity_level=-1,
    )
    never.run("What is 1 + 2?")
    text = AgentWidget.from_memory(never.memory, agent_name="never").summary()
    assert text.endswith("· no answer)") and "final answer" not in text  # the closing reply is no answer
    assert "· 1 step ·" in text
