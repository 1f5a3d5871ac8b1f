"""Warnings raised while a step's code runs are kept on the step for a person, never in what the model reads."""

from __future__ import annotations

import pandas as pd
from bs4 import BeautifulSoup

from nbagent import AgentMemory, CodeAgent, ScriptedModel
from nbagent.views.html import memory_to_html
from nbagent.views.state import memory_to_state

DEPRECATED = "same = sales.astype(int, copy=False)\nprint(len(same))"  # pandas 3: the copy keyword is deprecated


def run(*bodies: str) -> tuple[CodeAgent, ScriptedModel]:
    model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```" for body in bodies])
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"sales": pd.DataFrame({"units": [1, 2]})},
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=len(bodies),
    )
    agent.run("How many rows has `sales`?")
    return agent, model


def test_a_library_warning_is_on_the_step_and_not_in_the_observation():
    agent, model = run(DEPRECATED, "final_answer(2)")
    step = agent.memory.action_steps()[0]
    assert step.observations.strip() == "Execution logs:\n2"
    (warning,) = step.warnings
    assert warning.startswith("Pandas4Warning: The copy keyword is deprecated") and warning.endswith("(line 1)")
    told = "\n".join(message.text for message in model.calls[1])
    assert "Execution logs:\n2" in told and "copy keyword" not in told


def test_a_failing_steps_warnings_are_kept_too():
    agent, model = run(DEPRECATED + "\n1 / 0", "final_answer(2)")
    step = agent.memory.action_steps()[0]
    assert step.error is not None and step.warnings and "copy keyword" not in str(step.error)
    assert "copy keyword" not in "\n".join(message.text for message in model.calls[1])


def test_the_warnings_are_saved_and_shown_folded(tmp_path):
    agent, _ = run(DEPRECATED, "final_answer(2)")
    loaded = AgentMemory.load(agent.memory.save(tmp_path / "run.json"))
    assert loaded.action_steps()[0].warnings == agent.memory.action_steps()[0].warnings
    step = memory_to_state(loaded)[0]["steps"][1]
    assert step["warnings"][0].startswith("Pandas4Warning") and "copy keyword" not in step["observations"]
    folded = BeautifulSoup(memory_to_html(loaded), "html.parser").select_one(".nba-step details.nba-warnings")
    assert folded is not None and not folded.has_attr("open")
    assert folded.select_one("summary").text == "1 warning (not shown to the model)"
    assert "copy keyword is deprecated" in folded.select_one("pre").text
