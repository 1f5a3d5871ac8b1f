"""How memories and agents show themselves: widget view + static HTML + text."""

from __future__ import annotations

from nbagent import AgentMemory, ScriptedModel, ToolCallingAgent
from nbagent.notebook.bundle import memory_mimebundle, memory_text
from nbagent.notebook.widget import WIDGET_VIEW_MIMETYPE, AgentWidget


def test_memory_displays_in_ipython_as_widget_html_and_text(memory: AgentMemory) -> None:
    # registered by type name from the package root: the record layer never imports the notebook layer
    from IPython.testing import globalipapp

    import nbagent

    shell = globalipapp.start_ipython() or globalipapp.get_ipython()  # the one test shell of this process
    nbagent.load_ipython_extension(shell)
    bundle, _ = shell.display_formatter.format(memory)
    assert set(bundle) == {WIDGET_VIEW_MIMETYPE, "text/html", "text/plain"}
    assert 'data-status="done"' in bundle["text/html"] and "ZeroDivisionError" in bundle["text/html"]
    assert bundle["text/plain"] == "AgentMemory(3 steps, answered): 1, 4, 9"  # how the run ended, never "null"


def test_loaded_memory_displays_the_same(memory: AgentMemory, tmp_path) -> None:
    memory.save(tmp_path / "m.json")
    loaded = AgentMemory.load(tmp_path / "m.json")
    assert memory_mimebundle(loaded)["text/html"] == memory_mimebundle(memory)["text/html"]


def test_a_widget_with_a_run_is_shown_as_it_is(memory: AgentMemory) -> None:
    live = AgentWidget(run={"steps": [], "status": "running", "agent_name": "busy"})
    bundle = memory_mimebundle(memory, widget=live)
    assert bundle[WIDGET_VIEW_MIMETYPE]["model_id"] == live.model_id
    idle = AgentWidget()
    assert memory_mimebundle(memory, widget=idle)[WIDGET_VIEW_MIMETYPE]["model_id"] != idle.model_id


def test_agent_as_last_expression_shows_its_latest_run() -> None:
    model = ScriptedModel(
        [{"content": "", "tool_calls": [{"function": {"name": "final_answer", "arguments": {"answer": "42"}}}]}]
    )
    agent = ToolCallingAgent(tools=[], model=model, show_widget=False, verbosity_level=0)
    agent.run("The answer?")
    bundle = agent._repr_mimebundle_()
    assert "42" in bundle["text/plain"] and 'data-status="done"' in bundle["text/html"]


def test_memory_text(memory: AgentMemory) -> None:
    assert memory_text(memory) == "AgentMemory(3 steps, answered): 1, 4, 9"
    assert memory_text(AgentMemory()) == "AgentMemory(0 steps, nothing ran yet)"
