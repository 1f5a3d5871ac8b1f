"""`ActionStep.figures` (a summary per figure a step drew) is kept by the memory's JSON save and load."""

from __future__ import annotations

from nbagent import ActionStep, AgentMemory, TaskStep


def test_figure_summaries_survive_save_and_load(tmp_path):
    figures = [
        {"marks": 6, "axes": [{"marks": 6, "kind": "bar", "ticks": ["2024-01", "2024-02"]}]},
        {"marks": 0, "axes": []},
    ]
    memory = AgentMemory("prompt")
    memory.steps = [TaskStep(task="Plot it"), ActionStep(step_number=1, figures=figures), ActionStep(step_number=2)]
    loaded = AgentMemory.load(memory.save(tmp_path / "run.json"))
    assert loaded == memory
    assert loaded.steps[1].figures == figures and loaded.steps[2].figures is None
    assert memory.steps[1].dict()["figures"] == figures
