"""`evaluate(..., reproducible=True)`: a column saying whether each answer's program reproduces it without the model
(issue 31 item 5): a deterministic answer does, one read from the clock does not, a run without an answer is NA."""

from __future__ import annotations

from typing import Any

from evalkit import task_text

from nbagent import CodeAgent, ScriptedModel
from nbagent.eval import evaluate

TASKS = [
    {"id": "sum", "task": "What is 2 + 3?", "answer": 5},
    {"id": "clock", "task": "What is the time now?", "answer": "now"},
    {"id": "none", "task": "Never answer.", "answer": 0},
]


def reply(messages: list[Any], **_: Any) -> str:
    text = " ".join(str(getattr(m, "content", "")) for m in messages[1:])
    if "What is 2 + 3" in (task_text(messages) or text):
        body = "a = 2\nprint(a)\nfinal_answer(a + 3)"
    elif "time now" in text:
        body = "import datetime\nfinal_answer(str(datetime.datetime.now()))"
    else:
        body = "print('thinking')"
    return f"Thought: go.\n```python\n{body}\n```"


def agent() -> CodeAgent:
    return CodeAgent(tools=[], model=ScriptedModel(reply), max_steps=1)


def test_each_answer_says_whether_its_program_reproduces_it() -> None:
    results = evaluate(agent, TASKS, progress=False, max_workers=1, reproducible=True)
    column = results.df.set_index("id")["reproducible"]
    assert column.loc[["sum", "clock"]].tolist() == [True, False]
    assert column.isna()["none"] and str(column.dtype) == "boolean"  # no answer: no program
    assert "reproducible" not in evaluate(agent, TASKS[:1], progress=False, max_workers=1).df
