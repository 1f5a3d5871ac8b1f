"""`%%agent` / `%agent` through a real IPython shell (IPython.testing.globalipapp)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.testing.globalipapp import start_ipython

from nbagent import CodeAgent, ScriptedModel
from nbagent.magics import AgentMagics, AgentRunFailed, interpolate_task, mentioned_variables


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


@pytest.fixture
def ip():
    start_ipython()  # the global test shell: started once per process, then a builtin
    from IPython import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "nbagent")
    magics = shell.magics_manager.registry["AgentMagics"]
    magics.show_widget = False
    yield shell
    for name in ("m", "data", "answer", "shout", "my_agent", "result", "double", "label"):
        shell.user_ns.pop(name, None)
    magics.last_agent = None


def test_cell_magic_runs_in_the_notebook_namespace(ip):
    ip.run_cell("data = [3, 1, 2]")
    ip.user_ns["m"] = ScriptedModel([code("result = sorted(data)\ndef double(x):\n    return 2 * x\nfinal_answer(result)")])
    ip.user_ns["label"] = "data"
    value = ip.run_cell_magic("agent", "-m m --quiet -o answer", "Sort {label} please")
    assert value == [1, 2, 3]
    assert ip.user_ns["answer"] == [1, 2, 3]
    assert ip.user_ns["result"] == [1, 2, 3]  # what the agent defined stays
    ip.run_cell("doubled = double(21)")
    assert ip.user_ns["doubled"] == 42  # and its functions work from the user's cells
    task = ip.magics_manager.registry["AgentMagics"].last_agent.memory.steps[0].task
    assert task.startswith("Sort data please\nThese variables of the notebook are already defined")
    assert "- data: list = [3, 1, 2]" in task  # the variables the task names are described to the model


def test_line_magic_and_tools_and_max_steps(ip):
    ip.run_cell('''
from nbagent import tool
@tool
def shout(text: str) -> str:
    """Shout.

    Args:
        text: what to shout
    """
    return text.upper()
''')
    ip.user_ns["m"] = ScriptedModel([code("final_answer(shout('hey'))")])
    assert ip.run_line_magic("agent", "-m m --tools shout --max-steps 2 --quiet make noise") == "HEY"
    agent = ip.magics_manager.registry["AgentMagics"].last_agent
    assert agent.max_steps == 2 and "shout" in agent.tools


def test_continue_and_existing_agent(ip):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(1)"), code("final_answer(2)")])
    ip.run_cell_magic("agent", "-m m --quiet", "first")
    assert ip.run_cell_magic("agent", "--continue --quiet", "second") == 2
    agent = ip.magics_manager.registry["AgentMagics"].last_agent
    assert [s.task for s in agent.memory.steps if hasattr(s, "task")] == ["first", "second"]
    ip.user_ns["my_agent"] = CodeAgent(tools=[], model=ScriptedModel([code("final_answer('mine')")]), show_widget=False)
    assert ip.run_cell_magic("agent", "--agent my_agent --quiet", "whose?") == "mine"
    assert ip.user_ns["my_agent"].show_widget is False and ip.user_ns["my_agent"].verbosity_level == 1  # restored


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("--max-steps zero", "t", "invalid int"),
        ("--max-steps 0", "t", "at least 1"),
        ("--bogus", "t", "unrecognized"),
        ("--tools nothing_here", "t", "not defined"),
        ("--tools data", "t", "not a tool"),
        ("--agent data", "t", "no agent variable"),
        ("--continue", "t", "no earlier"),
        ("-m m", "", "cell body is empty"),
        ("-m m", "use {undefined_thing}", "undefined_thing"),
        ('-m "unclosed', "t", "quotation"),
    ],
)
def test_bad_options_raise_usage_errors(ip, line, cell, message):
    ip.user_ns["data"] = [1]
    ip.user_ns["m"] = ScriptedModel([])
    with pytest.raises(UsageError, match=message):
        ip.run_cell_magic("agent", line, cell)


def test_line_magic_without_a_task_is_a_usage_error(ip):
    ip.user_ns["m"] = ScriptedModel([])
    with pytest.raises(UsageError, match="needs a task"):
        ip.run_line_magic("agent", "-m m --quiet")


def test_quoted_arguments_keep_their_meaning(ip, tmp_path):
    path = tmp_path / "my model.gguf"
    with pytest.raises(UsageError, match="my model.gguf"):
        ip.run_cell_magic("agent", f'-m "{path}" --quiet', "t")


def test_model_failure_is_one_clear_error(ip):
    def broken(messages, **kwargs):
        raise ConnectionError("no route to host")

    ip.user_ns["m"] = ScriptedModel(broken)
    with pytest.raises(AgentRunFailed, match="no route to host") as info:
        ip.run_cell_magic("agent", "-m m --quiet", "t")
    assert info.value._render_traceback_()[0].count("\n") == 0


def test_only_data_variables_named_in_the_task_are_described():
    import math

    namespace = {"sales": [1], "math": math, "helper": len, "_private": 1, "unused": 2}
    assert mentioned_variables("use sales with math and helper and _private", namespace) == {"sales": [1]}


def test_interpolation_rules():
    assert interpolate_task("a {x} {{x}} {not valid}", {"x": 5}) == "a 5 {x} {not valid}"


def test_config_traits_set_defaults(ip):
    ip.run_line_magic("config", "AgentMagics.default_max_steps = 3")
    ip.user_ns["m"] = ScriptedModel([code("final_answer(0)")])
    ip.run_line_magic("config", "AgentMagics.default_model = 'm'")
    try:
        ip.run_cell_magic("agent", "--quiet", "t")
        assert ip.magics_manager.registry["AgentMagics"].last_agent.max_steps == 3
    finally:
        ip.run_line_magic("config", "AgentMagics.default_max_steps = 10")
        ip.run_line_magic("config", "AgentMagics.default_model = 'default'")
    assert isinstance(ip.magics_manager.registry["AgentMagics"], AgentMagics)
