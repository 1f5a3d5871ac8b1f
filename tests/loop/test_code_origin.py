"""A step keeps who changed the model's code before it ran: nbagent's own rewrite and a person's edit, apart.

The record holds all three versions (what the model wrote, nbagent's rewrite, the person's edit); the views say
"rewritten by nbagent" and "edited by you", each with its diff; a saved run keeps them, and a run saved before
the step kept them still loads (its change is of unknown origin).
"""

from __future__ import annotations

import json
import threading

import pandas as pd
from control_helpers import wait_until
from rich.console import Console

from nbagent import ActionStep, AgentMemory, CodeAgent, ScriptedModel
from nbagent.loop.prompting import SMALL
from nbagent.views.code_diff import code_changes
from nbagent.views.console import replay_memory
from nbagent.views.html import memory_to_html
from nbagent.views.state import memory_to_state

QUESTION = "What is the revenue of `sales`?\n- `sales`: pandas DataFrame, 3 rows × 3 columns"
WRITTEN = "r = sales['units'] * sales['unit_price'].sum()"
REWRITTEN = "r = (sales['units'] * sales['unit_price']).sum()"
EDITED = REWRITTEN + "\nprint('checked by a person')"


def agent(small: bool) -> CodeAgent:
    sales = pd.DataFrame({"units": [1, 2, 3], "unit_price": [2.0, 3.0, 4.0]})
    model = ScriptedModel(
        [f"Thought: go.\n```python\n{WRITTEN}\n```", "Thought: done.\n```python\nfinal_answer(r)\n```"]
    )
    if small:
        model.prompt_profile = SMALL
    return CodeAgent(tools=[], model=model, namespace={"sales": sales}, verbosity_level=-1, show_widget=False)


def run_approving(agent: CodeAgent, edit: str | None) -> ActionStep:
    """Run with approval on for the first step, approved with `edit` (None: as shown); the others run freely."""
    agent.gates.approve_code = True
    thread = threading.Thread(target=agent.run, args=(QUESTION,), daemon=True)
    thread.start()
    wait_until(lambda: agent.gates.status == "awaiting_approval")
    shown = agent.gates.pending_code
    agent.gates.approve_code = False
    agent.gates.approve(edit)
    thread.join(10)
    assert not thread.is_alive()
    step = agent.memory.action_steps()[0]
    assert shown == (step.rewritten_code_action or step.model_code_action)  # the person saw nbagent's version
    return step


def test_nbagents_rewrite_and_the_persons_edit_are_kept_apart_and_labelled():
    step = run_approving(agent(small=True), EDITED)
    assert (step.model_code_action, step.rewritten_code_action, step.edited_code_action) == (WRITTEN, REWRITTEN, EDITED)
    assert step.code_action == EDITED and "checked by a person" in step.observations
    rewrite, edit = code_changes(step)
    assert (rewrite["by"], rewrite["label"]) == ("nbagent", "rewritten by nbagent")
    assert rewrite["diff"] == [["-", WRITTEN], ["+", REWRITTEN]]
    assert (edit["by"], edit["label"]) == ("you", "edited by you")
    assert edit["diff"] == [[" ", REWRITTEN], ["+", "print('checked by a person')"]]


def test_only_nbagents_rewrite_says_only_rewritten_by_nbagent():
    step = run_approving(agent(small=True), None)
    assert step.edited_code_action is None and step.code_action == REWRITTEN
    assert [change["label"] for change in code_changes(step)] == ["rewritten by nbagent"]


def test_only_a_persons_edit_says_only_edited_by_you():
    step = run_approving(agent(small=False), "r = 7")  # an API model's code is not rewritten
    assert step.rewritten_code_action is None and step.code_action == "r = 7"
    assert [change["label"] for change in code_changes(step)] == ["edited by you"]
    assert code_changes(step)[0]["diff"] == [["-", WRITTEN], ["+", "r = 7"]]


def test_code_that_ran_as_written_has_no_label():
    runner = agent(small=False)
    runner.run(QUESTION)
    assert code_changes(runner.memory.action_steps()[0]) == []


def test_the_labels_survive_save_load_and_every_view_says_the_same(tmp_path):
    runner = agent(small=True)
    run_approving(runner, EDITED)
    loaded = AgentMemory.load(runner.memory.save(tmp_path / "run.json"))
    step = loaded.action_steps()[0]
    assert (step.model_code_action, step.rewritten_code_action, step.edited_code_action) == (WRITTEN, REWRITTEN, EDITED)
    state = memory_to_state(loaded)[0]["steps"][1]
    assert [change["label"] for change in state["code_changes"]] == ["rewritten by nbagent", "edited by you"]
    html = memory_to_html(loaded)
    assert html.index("rewritten by nbagent") < html.index("edited by you")
    assert 'class="nba-block nba-block-diff" data-by="nbagent"' in html and 'data-by="you"' in html
    console = Console(record=True, width=120)
    replay_memory(loaded, console=console)
    text = console.export_text()
    assert "Executing this code (rewritten by nbagent, edited by you):" in text
    assert f"Rewritten by nbagent:\n- {WRITTEN}\n+ {REWRITTEN}" in text
    assert "Edited by you:\n+ print('checked by a person')" in text


def test_a_run_saved_before_steps_said_who_changed_the_code_still_loads(tmp_path):
    runner = agent(small=True)
    run_approving(runner, EDITED)
    path = runner.memory.save(tmp_path / "run.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    for saved in data["steps"]:  # as an earlier nbagent wrote it: no such keys
        for key in ("rewritten_code_action", "edited_code_action", "warnings"):
            saved.pop(key, None)
    path.write_text(json.dumps(data), encoding="utf-8")
    step = AgentMemory.load(path).action_steps()[0]
    assert step.code_action == EDITED and step.rewritten_code_action is None and step.edited_code_action is None
    (change,) = code_changes(step)
    assert (change["by"], change["label"]) == ("unknown", "changed before it ran")
    assert change["diff"][0] == ["-", WRITTEN]
