"""The task's frames keep their rows and columns: code that would take some out is not run (aids/kept_data.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.errors import AgentExecutionError
from nbagent.loop.aids.kept_data import frame_losses
from nbagent.loop.prompting import SMALL

pytestmark = pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")


def clients() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": ["Ada", "Bo", "Cy", "Di"],
            "segment": ["Consumer", None, "consumer ", "Business"],
            "spent": [1.0, 2.0, np.nan, 4.0],
        }
    )


def losses(code: str, question: str = "Which segment in `clients` has the most clients?") -> str:
    return frame_losses(code, question, {"clients": clients(), "other": clients()}, ["clients"])


@pytest.mark.parametrize(
    "code, taken",
    [
        ("clients.dropna(inplace=True)", "the 2 rows with a gap (segment 1, spent 1)"),
        ("clients.dropna(subset=['segment'], inplace=True)", "the 1 rows with a gap (segment 1)"),
        ("clients = clients.dropna()", "the 2 rows with a gap"),
        ("clients = clients.drop('segment', axis=1)", "columns"),
        ("clients = clients.drop(columns=['segment'])", "columns"),
        ("clients.drop([0, 1], inplace=True)", "rows"),
        ("clients = clients[clients['spent'] > 1]", "rows or columns"),
        ("clients = clients.loc[:, ['name']]", "rows or columns"),
        ("del clients['segment']", "a column"),
        ("clients.pop('segment')", "a column"),
        ("if True:\n    clients = clients.query('spent > 1')", "rows"),
    ],
)
def test_code_that_takes_rows_or_columns_out_of_a_task_frame_is_not_run(code, taken):
    said = losses(code)
    assert said.startswith("Line ") and f"would take {taken}" in said, said
    assert "out of `clients`, the data the task gave" in said and said.endswith("The code did not run.")
    assert "final_answer" not in said  # no line to paste as an answer


@pytest.mark.parametrize(
    "code, question",
    [
        ("kept = clients.dropna()", "Which segment has the most clients?"),  # a new variable
        ("other.dropna(inplace=True)", "Which segment has the most clients?"),  # not a frame the task named
        ("clients.drop_duplicates(inplace=True)", "Which segment has the most clients? Count each once."),
        ("clients['segment'] = clients['segment'].str.strip().str.title()", "Which segment has the most clients?"),
        ("clients = clients.assign(s=clients['segment'].str.strip())", "Which segment has the most clients?"),
        ("clients.dropna(inplace=True)", "Drop the clients with gaps from `clients`."),  # asked for
        ("clients = clients[clients['spent'] > 1]", "Clean `clients`: keep only those who spent more than 1."),
        ("clients.dropna(subset=['name'], inplace=True)", "Which segment has the most clients?"),  # no gap there
    ],
)
def test_new_variables_changes_of_values_and_asked_for_changes_run(code, question):
    assert losses(code, question) == ""


def test_dropping_the_repeats_in_place_is_refused_only_when_the_question_is_about_them():
    assert "its repeated rows" in losses(
        "clients.drop_duplicates(inplace=True)", "How many rows repeat an earlier one?"
    )


def test_the_small_model_is_told_before_it_runs_and_the_frame_stays_whole():
    model = ScriptedModel(
        [
            "Thought: drop it.\n```python\nclients = clients.drop('segment', axis=1)\nprint(len(clients.columns))\n```",
            "Thought: keep it.\n```python\n"
            "counts = clients['segment'].str.strip().str.title().value_counts()\nfinal_answer(counts.idxmax())\n```",
        ]
    )
    model.prompt_profile = SMALL
    frame = clients()
    agent = CodeAgent(
        tools=[],
        model=model,
        executor_type="local",
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=3,
    )
    task = "Which segment in `clients` has the most clients?"
    assert agent.run(task, additional_args={"clients": frame}) == "Consumer"
    first = next(step for step in agent.memory.steps if isinstance(step, ActionStep))
    assert isinstance(first.error, AgentExecutionError) and "would take columns out of `clients`" in str(first.error)
    assert not first.observations  # it never ran
    assert list(agent.python_executor.state["clients"].columns) == ["name", "segment", "spent"]


def test_a_dropna_before_a_total_is_told_the_total_skips_the_gaps():
    said = losses("clients.dropna(inplace=True)\nfinal_answer(clients['spent'].sum())", "What is the total spent?")
    assert "or leave the line out: .sum() skips the gaps on its own. The code did not run." in said
    assert "skips the gaps" not in losses("clients.dropna(inplace=True)\nprint(len(clients))")
