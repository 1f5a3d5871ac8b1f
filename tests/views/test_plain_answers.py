"""Answers are shown as plain values (25124.05, not np.float64(25124.05)) everywhere; the value stays what it is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from nbagent import ActionStep, AgentMemory, CodeAgent, FinalAnswerStep, ScriptedModel, TaskStep, Timing
from nbagent.text import plain_repr, plain_text
from nbagent.views.console import final_answer_text, replay_memory
from nbagent.views.html import memory_to_html
from nbagent.views.state import memory_to_state


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.float64(25124.05), "25124.05"),
        (np.int64(7), "7"),
        (np.bool_(True), "True"),
        (("Consumer", np.float64(25124.05)), "('Consumer', 25124.05)"),
        ({"North": np.int64(3), np.str_("South"): [np.float32(0.5)]}, "{'North': 3, 'South': [0.5]}"),
        ({np.int64(2)}, "{2}"),
        (pd.Timestamp("2024-10-01"), "2024-10-01"),
        (pd.Timestamp("2024-10-01 12:30"), "2024-10-01 12:30:00"),
        ([pd.Period("2024-10", "M")], "[2024-10]"),
        ("Consumer", "Consumer"),
        (None, "None"),
    ],
)
def test_numpy_and_pandas_scalars_read_as_plain_values(value, text):
    assert plain_text(value) == text


def test_the_plain_repr_quotes_text_and_leaves_other_objects_alone():
    assert plain_repr("West") == "'West'" and plain_repr(np.str_("West")) == "'West'"
    assert plain_repr(np.float64(1.5)) == "1.5"
    frame = pd.DataFrame({"a": [np.float64(1.0)]})
    assert plain_repr(frame) == repr(frame) and plain_text(frame) == str(frame)
    deep = [[[[[[[[np.float64(1.0)]]]]]]]]  # deeper than anyone writes an answer: as Python shows it
    assert plain_text(deep) == str(deep)


def answered(value) -> AgentMemory:
    memory = AgentMemory("system")
    memory.steps = [
        TaskStep(task="Which segment, and how much?"),
        ActionStep(step_number=1, timing=Timing(0.0, 1.0), action_output=value, is_final_answer=True),
        FinalAnswerStep(output=value),
    ]
    return memory


def test_every_view_shows_the_answer_plainly():
    answer = ("Consumer", np.float64(25124.05))
    run, _ = memory_to_state(answered(answer))
    assert run["final_answer"]["text"] == "('Consumer', 25124.05)" and run["final_answer"]["type"] == "tuple"
    html = memory_to_html(answered(answer))
    assert "(&#39;Consumer&#39;, 25124.05)" in html and "np.float64" not in html
    assert final_answer_text(np.float64(25124.05)).plain == "Final answer: 25124.05"
    console = Console(record=True, width=100)
    replay_memory(answered(answer), console=console)
    assert "Final answer: ('Consumer', 25124.05)" in console.export_text()


def test_the_run_keeps_the_value_itself():
    model = ScriptedModel(["Thought: go.\n```python\nfinal_answer(np.float64(25124.05))\n```"])
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"np": np},
        additional_authorized_imports=["numpy"],
        verbosity_level=-1,
        show_widget=False,
    )
    answer = agent.run("How much?")
    assert type(answer) is np.float64 and answer == 25124.05


def test_the_quiet_cells_answer_shows_plainly_and_stays_the_value(ip, capsys):
    ip.user_ns["np"] = np
    ip.user_ns["m"] = ScriptedModel(["Thought: go.\n```python\nfinal_answer(('Consumer', np.float64(25124.05)))\n```"])
    ip.run_cell("%%agent -m m --quiet -o best --imports numpy\nWhich segment, and how much?")
    shown = capsys.readouterr().out
    assert "('Consumer', 25124.05)" in shown and "np.float64" not in shown
    best = ip.user_ns["best"]
    assert type(best[1]) is np.float64 and ip.user_ns["_"] is best  # Out[n] and -o hold the value itself
    ip.run_cell("(1, np.float64(2.5))")  # the next cell: IPython shows values as it always does
    assert "np.float64(2.5)" in capsys.readouterr().out
