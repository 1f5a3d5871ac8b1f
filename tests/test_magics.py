"""`%%agent` / `%agent` through a real IPython shell (IPython.testing.globalipapp)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from nbagent import CodeAgent, ScriptedModel
from nbagent.magics import AgentMagics, AgentRunFailed, data_variables, interpolate_task, pointed_variables


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def test_cell_magic_runs_in_the_notebook_namespace(ip):
    ip.run_cell("data = [3, 1, 2]")
    ip.user_ns["m"] = ScriptedModel(
        [code("result = sorted(data)\ndef double(x):\n    return 2 * x\nfinal_answer(result)")]
    )
    ip.user_ns["label"] = "data"
    value = ip.run_cell_magic("agent", "-m m --quiet -o answer", "Sort `{label}` please")
    assert value == [1, 2, 3]
    assert ip.user_ns["answer"] == [1, 2, 3]
    assert ip.user_ns["result"] == [1, 2, 3]  # it holds the answer: it stays
    agent = ip.magics_manager.registry["AgentMagics"].last_agent
    assert "double" not in ip.user_ns and list(agent.scratch) == ["double"]  # a scratch name: the agent's scope
    ip.run_line_magic("agent", "--keep")
    ip.run_cell("doubled = double(21)")
    assert ip.user_ns["doubled"] == 42  # and its functions work from the user's cells
    task = ip.magics_manager.registry["AgentMagics"].last_agent.memory.steps[0].task
    assert task.startswith("Sort `data` please\nThese variables already exist in the notebook")
    assert "- `data`: list of 3 items = [3, 1, 2]" in task  # the variable the task points at is described


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
        ("--bogus", "t", "unknown option --bogus"),
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
        ip.run_cell_magic("agent", "-m m", "t")
    assert info.value._render_traceback_()[0].count("\n") == 0
    ip.user_ns["answer"] = "old"
    assert ip.run_cell_magic("agent", "-m m --quiet -o answer", "t") is None  # --quiet: no error line
    assert ip.user_ns["answer"] is None


def test_only_variables_the_task_points_at_are_described():
    import math

    namespace = {"sales": [1], "region": "North", "math": math, "helper": len, "_private": 1, "unused": 2}
    # a word that happens to be a variable's name is not a pointer (the "revenue by region" leak)
    assert pointed_variables("revenue by region in sales", namespace) == {}
    assert pointed_variables("revenue in `sales` (`math`, `helper`, `_private`, `nope`)", namespace) == {"sales": [1]}
    assert pointed_variables("revenue", namespace, ["unused"]) == {"unused": 2}
    assert pointed_variables("revenue", namespace, ["*"]) == data_variables(namespace)
    assert set(data_variables(namespace)) == {"sales", "region", "unused"}


def test_interpolation_rules():
    assert interpolate_task("a {x} {{x}} {not valid}", {"x": 5}) == "a 5 {x} {not valid}"
    assert (
        interpolate_task("rows of {table} by {col}", {"table": [1, 2], "col": "region"}) == "rows of `table` by region"
    )


def test_a_dataframe_is_described_by_its_schema_never_dumped(ip):
    import pandas as pd

    ip.user_ns["sales"] = pd.DataFrame(
        {"region": ["West", "East"] * 100, "units": range(200), "price": [9.5, 20.0] * 100},
        index=pd.RangeIndex(200),
    )
    text_dtype = ip.user_ns["sales"]["region"].dtype  # "object" before pandas 3, "str" since
    ip.user_ns["region"] = "North"
    ip.user_ns["m"] = ScriptedModel([code("final_answer(sales.units.sum())")])
    try:
        assert ip.run_cell_magic("agent", "-m m --quiet", "Total units in {sales} by region?") == 19900
        task = ip.magics_manager.registry["AgentMagics"].last_agent.memory.steps[0].task
    finally:
        ip.user_ns.pop("sales"), ip.user_ns.pop("region")
    assert task.startswith("Total units in `sales` by region?\nThese variables already exist in the notebook")
    assert "- `sales`: pandas DataFrame, 200 rows × 3 columns" in task
    assert (
        f"columns: region ({text_dtype}), units (int64), price (float64)" in task and "index: RangeIndex 0..199" in task
    )
    assert task.count("West") == 3  # five sample rows, not 100 copies of the data
    assert "North" not in task  # the unrelated `region` variable is not described


def test_vars_option_names_variables_and_refuses_unknown_ones(ip):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(len(data))")])
    ip.user_ns["data"] = [3, 1, 2]
    assert ip.run_cell_magic("agent", "-m m --quiet --vars data", "How many?") == 3
    task = ip.magics_manager.registry["AgentMagics"].last_agent.memory.steps[0].task
    assert "- `data`: list of 3 items" in task
    with pytest.raises(UsageError, match="--vars nope: no such variable"):
        ip.run_cell_magic("agent", "-m m --quiet --vars nope", "How many?")


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


def test_executor_option_and_config_default(ip):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(1)")] * 3)
    magics = ip.magics_manager.registry["AgentMagics"]
    ip.run_cell_magic("agent", "-m m --quiet --executor local", "One?")
    assert magics.last_agent.executor_type == "local"
    ip.run_cell_magic("agent", "-m m --quiet", "One?")
    assert magics.last_agent.executor_type == "isolated"  # the default on Linux
    ip.run_line_magic("config", "AgentMagics.default_executor = 'local'")
    try:
        ip.run_cell_magic("agent", "-m m --quiet", "One?")
        assert magics.last_agent.executor_type == "local"
    finally:
        ip.run_line_magic("config", "AgentMagics.default_executor = ''")
    with pytest.raises(UsageError, match="invalid choice"):
        ip.run_cell_magic("agent", "-m m --quiet --executor docker", "One?")
