"""One run outcome drives every view: the badge, the final box, the step count, the memory text, the static HTML.

Real CodeAgent runs (a ScriptedModel plays the model) that answer, run out of steps, answer with an
apology, and fail in the model; each is checked in the live builder (events), in `memory_to_state`
(a reopened memory) and in the static HTML, which must agree.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from nbagent import CodeAgent, ScriptedModel
from nbagent.notebook.bundle import memory_text
from nbagent.record.status import OUTCOMES, RunOutcome, answered, looks_like_error, outcome_message, run_outcome
from nbagent.views.html import ANSWER_LABELS, run_to_html
from nbagent.views.state import RunStateBuilder, memory_to_state

ROOT = Path(__file__).resolve().parents[2]
F = "`" * 3


def code(source: str) -> str:
    return f"Thought: go\n{F}py\n{source}\n{F}"


def run_agent(responses: Any, max_steps: int = 5) -> tuple[CodeAgent, dict[str, Any]]:
    """Run a scripted CodeAgent; the run dict its live builder made from the events."""
    agent = CodeAgent(
        model=ScriptedModel(responses),
        executor_type="local",
        max_steps=max_steps,
        show_widget=False,
        verbosity_level=-1,
    )
    builder = RunStateBuilder("agent", "scripted")
    try:
        for event in agent.event_stream("What is 6*7?"):
            builder.apply(event)
    except Exception:  # a model error ends the stream by raising, after RunEnd
        pass
    return agent, builder.run


def action_count(run: dict[str, Any]) -> int:
    return sum(1 for step in run["steps"] if step["kind"] == "action")


def test_an_answered_run_is_done_with_a_plain_final_answer() -> None:
    agent, live = run_agent([code("final_answer(6 * 7)")])
    reopened, _ = memory_to_state(agent.memory)
    for run in (live, reopened):
        assert (run["status"], run["outcome"], action_count(run)) == ("done", "success", 1)
        assert run["final_answer"]["outcome"] == "success"
    html = run_to_html(live, [], css=False)
    assert 'class="nba-final"' in html and "nba-final-warn" not in html and ">done<" in html


def test_max_steps_is_not_done_not_an_extra_step_and_not_an_answer() -> None:
    agent, live = run_agent([code("x = 1"), code("y = 2"), code("z = 3"), "Sorry, I could not finish."], max_steps=3)
    reopened, _ = memory_to_state(agent.memory)
    assert agent.last_result.state == "max_steps_error"
    for run in (live, reopened):
        assert run["status"] == "max_steps" and run["outcome"] == "max_steps_error"
        assert action_count(run) == 3  # the forced closing reply is not a 4th step
        assert [s["kind"] for s in run["steps"]][-1] == "final"
        assert run["final_answer"] == {**run["final_answer"], "outcome": "max_steps_error"}
        assert "Sorry" in run["final_answer"]["text"]
    assert live["steps"] == reopened["steps"]
    html = run_to_html(live, [])
    assert "nba-final nba-final-warn" in html and "No answer: max steps reached" in html
    assert 'nba-status-max_steps" role="status">max steps<' in html
    assert "3 steps" in html and "4 steps" not in html
    assert memory_text(agent.memory) == "AgentMemory(3 steps, max steps reached, no answer)"


def test_an_answer_that_reads_as_an_error_is_flagged() -> None:
    agent, live = run_agent([code("final_answer('Error: the column revenue does not exist')")])
    reopened, _ = memory_to_state(agent.memory)
    for run in (live, reopened):
        assert (run["status"], run["outcome"]) == ("no_answer", "error_answer")
    assert "No answer: the final answer reads as an error" in run_to_html(live, [])


def test_a_model_error_fails_the_run_and_says_so_once() -> None:
    def broken(_messages: Any, **_kwargs: Any) -> str:
        raise ConnectionError("is the server running?")

    agent, live = run_agent(broken)
    reopened, _ = memory_to_state(agent.memory)
    for run in (live, reopened):
        assert (run["status"], run["outcome"]) == ("error", "model_error")
        assert run["final_answer"] is None
    html = run_to_html(live, [], css=False)
    assert ">failed<" in html and "nba-final" not in html
    assert html.count("is the server running?") == 1  # on the step that failed, not again as the run's error


def test_the_memory_text_names_the_outcome_never_null() -> None:
    agent, _ = run_agent([code("final_answer(42)")])
    text = memory_text(agent.memory)
    assert text == "AgentMemory(1 step, answered): 42"
    assert "null" not in text and "None" not in text


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        ("Error: division by zero", True),
        ("KeyError: 'revenue'", True),
        ("I'm sorry, I cannot access the data.", True),
        ("Unfortunately, I was unable to compute it.", True),
        ("Paris", False),
        ("Errors fell by 3% in the North", False),
        ("The error rate is 5%", False),
        (42, False),
    ],
)
def test_looks_like_error(answer: Any, flagged: bool) -> None:
    assert looks_like_error(answer) is flagged


def test_run_outcome_refines_the_result_state() -> None:
    assert run_outcome("success", "Paris") is RunOutcome.SUCCESS
    assert run_outcome("success", "Error: no data") is RunOutcome.ERROR_ANSWER
    assert run_outcome("error", error="Error while generating output with the model: 500") is RunOutcome.MODEL_ERROR
    assert run_outcome("error", error="the worker crashed") is RunOutcome.ERROR
    assert run_outcome("bogus") is RunOutcome.ERROR
    assert [answered(o) for o in OUTCOMES] == [o == "success" for o in OUTCOMES]
    assert all(outcome_message(o) for o in OUTCOMES)


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the JS side")
def test_outcomes_and_answer_labels_are_the_same_in_js() -> None:
    script = (
        "import { RunOutcome } from './js/status.js'; import { ANSWER_LABELS } from './js/final.js';"
        "console.log(JSON.stringify({outcomes: Object.values(RunOutcome), labels: ANSWER_LABELS}));"
    )
    out = subprocess.run(["node", "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    js = json.loads(out.stdout)
    assert js["outcomes"] == list(OUTCOMES)
    assert js["labels"] == ANSWER_LABELS


def console_output(responses: Any, verbosity_level: int, max_steps: int = 5) -> tuple[str, Exception | None]:
    """What a ConsoleView prints for a scripted run (and the error the run raised, if any)."""
    from rich.console import Console

    from nbagent.views.console import ConsoleView

    console = Console(file=io.StringIO(), width=300, highlight=False)
    agent = CodeAgent(
        model=ScriptedModel(responses),
        executor_type="local",
        max_steps=max_steps,
        show_widget=False,
        verbosity_level=-1,
    )
    agent._views_for_run = lambda: [ConsoleView(verbosity_level, console=console)]
    try:
        agent.run("What is 6*7?")
    except Exception as error:
        return console.file.getvalue(), error
    return console.file.getvalue(), None


def test_console_says_max_steps_and_prints_nothing_at_verbosity_0() -> None:
    script = [code("x = 1/0"), code("y = 2"), "Sorry, I could not."]
    text, _ = console_output(script, verbosity_level=1, max_steps=2)
    assert "Max steps reached: no answer. The model's closing reply:\nSorry, I could not." in text
    assert text.rstrip().endswith("Run ended: max steps reached, no answer")
    assert "Final answer" not in text and "Step 3" not in text
    assert console_output(script, verbosity_level=0, max_steps=2)[0] == ""


def test_console_shows_a_model_error_once() -> None:
    def broken(_messages: Any, **_kwargs: Any) -> str:
        raise ConnectionError("is the server running?")

    text, error = console_output(broken, verbosity_level=1)
    assert text.count("is the server running?") == 1 and "Run ended: the model failed" in text
    assert error is not None  # the caller (e.g. %%agent) says it once more, as the cell's one-line error
