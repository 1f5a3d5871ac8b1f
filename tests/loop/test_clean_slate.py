"""A small model that failed twice in a row reads a clean slate: the task with its data card, the variables its
steps that worked made, and one line on what failed and why — not its failed attempts (issue 27)."""

from __future__ import annotations

import pandas as pd

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.data_card import card_first
from nbagent.loop.aids.history import slate_note
from nbagent.loop.prompting import SMALL
from nbagent.models.base import MessageRole

TASK = (
    "What is the total amount in `orders`?\n"
    "These variables already exist in the notebook. Use them by name in your code; do not re-create them or "
    "copy their data:\n- `orders`: pandas DataFrame, 2 rows × 1 columns\n    columns: amount (str)"
)


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def run(bodies: list[str], max_steps: int = 6) -> tuple[CodeAgent, ScriptedModel]:
    model = ScriptedModel([code(body) for body in bodies])
    model.prompt_profile = SMALL
    namespace = {"orders": pd.DataFrame({"amount": ["-$18.46", "$5.00"]})}
    agent = CodeAgent(
        tools=[], model=model, namespace=namespace, verbosity_level=-1, show_widget=False, max_steps=max_steps
    )
    agent.run(TASK)
    return agent, model


def text(messages) -> str:
    return "\n".join(message.text for message in messages)


CLEAN = "cleaned = orders['amount'].str.replace('$', '', regex=False)"
FAIL_1 = "total = orders['amount'].astype(float).sum()"
FAIL_2 = "total = orders['amount'].str.strip().astype(float).sum()"
ANSWER = "final_answer(cleaned.astype(float).sum())"


def test_after_two_failures_the_model_reads_the_task_what_holds_and_one_line_not_its_attempts():
    agent, model = run([CLEAN, FAIL_1, FAIL_2, ANSWER])
    assert agent.memory.action_steps()[-1].is_final_answer
    read = model.calls[3]
    said = text(read)
    assert read[0].role == MessageRole.SYSTEM
    assert card_first(TASK) in said  # the task, with its data card
    assert FAIL_1 not in said and f"```python\n{FAIL_2}" not in said  # the attempts are not shown (the last
    assert said.count(FAIL_2) == 1  # one's failing line is named once, in the note)
    assert "Error:\n" not in said and "Now let's retry" not in said
    assert "Your last 2 attempts at this task failed; they are not shown again" in said
    assert "Variables your steps that worked made, which you can use: `cleaned` (Series 2)" in said
    assert CLEAN not in said  # named, not shown again
    note = [line for line in said.splitlines() if line.startswith("The last failure:")]
    assert len(note) == 1  # one line: what failed and why
    assert "step 3: `total = orders['amount'].str.strip().astype(float).sum()` raised ValueError" in note[0]
    assert "'-$18.46'" in note[0] and "2 times in a row with other code" in note[0]


def test_after_one_failure_the_model_still_reads_its_last_attempt_whole():
    _, model = run([FAIL_1, ANSWER.replace("cleaned", "orders['amount'].str.replace('$', '')")])
    said = text(model.calls[1])
    assert FAIL_1 in said and "could not convert string to float" in said
    assert "not shown again. Start afresh" not in said


def test_a_step_that_works_after_the_clean_slate_is_read_whole_again():
    _, model = run([FAIL_1, FAIL_2, CLEAN, ANSWER])
    said = text(model.calls[3])
    assert CLEAN in said and "Start afresh" not in said  # the step that worked, whole
    assert said.count("Your step") == 2  # the two failures before it, one line each


def test_a_refused_repeat_is_said_by_the_step_it_repeated():
    agent, model = run([FAIL_1, FAIL_2, FAIL_1, ANSWER.replace("cleaned", "orders['amount'].str.replace('$', '')")])
    assert str(agent.memory.action_steps()[2].error).startswith("Not run:")
    said = text(model.calls[3])
    assert "Your last 3 attempts" in said and FAIL_2 not in said and said.count(FAIL_1) == 1
    assert "The last failure: step 1: `total = orders['amount'].astype(float).sum()` raised ValueError" in said
    assert "(step 3 sent that same code again; it was not run)" in said


def test_the_note_without_steps_that_worked_names_no_variables():
    step = ActionStep(step_number=1, code_action="x", error="Error on line 1 of the code:\n    x\nNameError: name 'x'")
    second = ActionStep(
        step_number=2, code_action="y", error="Error on line 1 of the code:\n    y\nNameError: name 'y'"
    )
    note = slate_note([step, second], lambda s: s.error is not None)
    assert "Variables" not in note and "step 2: `y` raised NameError: name 'y'" in note
    assert len(note.splitlines()) == 3
    assert note.endswith("Now write your next step for this task: your reasoning after 'Thought:', then the code.")
