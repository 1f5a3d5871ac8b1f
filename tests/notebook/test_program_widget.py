"""The run as code in the widget and the saved page (issue 31 item 3): when a run ends, its checked program is part
of the widget's state (saved with the notebook) and of the static HTML; a run without an answer has none."""

from __future__ import annotations

import pytest

from nbagent import CodeAgent, ScriptedModel
from nbagent.notebook.widget import AgentWidget
from nbagent.views.html import run_to_html

pd = pytest.importorskip("pandas")


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def watched_run(steps: list[str], task: str, max_steps: int = 5) -> tuple[CodeAgent, AgentWidget]:
    namespace = {"marks": pd.DataFrame({"name": ["a", "b"], "mark": [12, 17]})}
    agent = CodeAgent(
        model=ScriptedModel(steps), namespace=namespace, additional_authorized_imports=["pandas"],
        verbosity_level=-1, show_widget=False, max_steps=max_steps,
    )  # fmt: skip
    widget = AgentWidget(agent_name="teacher")
    widget.program_of = agent.to_code  # as nbagent/notebook/display.py wires a live widget
    for event in agent.event_stream(task):
        widget.consume(event)
    return agent, widget


def test_a_finished_run_keeps_its_checked_program_in_the_state_and_the_static_html() -> None:
    agent, widget = watched_run(
        [code("print(marks)"), code("top = marks.loc[marks['mark'].idxmax(), 'name']\nfinal_answer(top)")],
        "Who has the best mark in `marks`?",
    )
    program = widget.run["program"]
    assert program == agent.to_code().state() and program["checked"] is True
    assert program["text"].startswith("# checked: reproduces the answer\n# inputs: marks (DataFrame 2×2)")
    assert program["text"].endswith("top = marks.loc[marks['mark'].idxmax(), 'name']\nanswer = top\n")
    html = widget.mimebundle()["text/html"]
    assert '<details class="nba-program" data-checked="true">' in html
    assert "The run as code · checked: reproduces the answer" in html
    assert "idxmax" in html.split("nba-program-code")[1]


def test_a_run_without_an_answer_shows_no_program() -> None:
    agent, widget = watched_run([code("x = 1"), "I stop here."], "Count.", max_steps=1)
    assert widget.run["program"] == {
        "text": "# no program: the last run has no final answer: max steps reached, no answer\n",
        "checked": None,
        "reason": "the last run has no final answer: max steps reached, no answer",
        "inputs": [],
        "tools": [],
    }
    assert '<details class="nba-program"' not in run_to_html(widget.run, [])


def test_the_widgets_program_never_calls_a_tool_again():
    from nbagent import CodeAgent, ScriptedModel, tool

    calls: list[int] = []

    @tool
    def lucky_number() -> int:
        """A number from outside the program."""
        calls.append(1)
        return 7

    agent = CodeAgent(
        tools=[lucky_number],
        model=ScriptedModel(["```python\nfinal_answer(lucky_number() + 1)\n```"]),
        verbosity_level=-1,
        show_widget=False,
    )
    assert agent.run("Lucky?") == 8 and calls == [1]
    program = agent.to_code(call_tools=False)
    assert not program.checked and "lucky_number" in program.reason and calls == [1]
