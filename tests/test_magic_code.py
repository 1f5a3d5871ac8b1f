"""`%agent --code` prints the last run's program (issue 31 item 3), through the real magic and a ScriptedModel."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from nbagent import ScriptedModel

pd = pytest.importorskip("pandas")


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def test_the_magic_prints_the_checked_program_of_the_last_run(ip, capsys) -> None:
    with pytest.raises(UsageError, match="no agent run"):
        ip.run_line_magic("agent", "--code")
    ip.user_ns["marks"] = pd.DataFrame({"name": ["a", "b"], "mark": [12, 17]})
    ip.user_ns["m"] = ScriptedModel(
        [code("print(marks.describe())"), code("top = marks.loc[marks['mark'].idxmax(), 'name']\nfinal_answer(top)")]
    )
    assert ip.run_cell_magic("agent", "-m m --quiet -o best", "Who has the best mark in `marks`?") == "b"
    capsys.readouterr()
    ip.run_line_magic("agent", "--code")
    printed = capsys.readouterr().out
    assert printed.splitlines() == [
        "# checked: reproduces the answer",
        "# inputs: marks (DataFrame 2×2) — notebook variables the run read",
        "top = marks.loc[marks['mark'].idxmax(), 'name']",
        "answer = top",
    ]
    cell = {"marks": ip.user_ns["marks"].copy()}
    exec(printed, cell)
    assert cell["answer"] == "b"
    with pytest.raises(UsageError, match="takes no task"):
        ip.run_cell_magic("agent", "--code", "a task")
