"""Re-run from step k with the namespace as it was (issue 23, item 1), through the agent and its driver.

The agent runs in a notebook-like namespace with the default (isolated) executor; the model is scripted, so a re-run
gets new code. A re-run must see the variables as they were before step k, exactly as a clean run would, and the
run it replaced must be restorable, variables included.
"""

from __future__ import annotations

import pandas as pd
from control_helpers import code

from nbagent import ScriptedModel


def sales() -> pd.DataFrame:
    return pd.DataFrame({"before": [10.0, 20.0], "after": [12.0, 30.0]})


FIRST_TRY = [
    code("df['gain'] = df['after'] - df['before']\nbest = df['gain'].max()"),
    code("df['gain'] = df['gain'] * 100\nfinal_answer(df['gain'].max())"),
]
RELATIVE = code("df['rel'] = (df['after'] - df['before']) / df['before']\nfinal_answer(round(df['rel'].max(), 2))")


def agent_on(make_agent, namespace: dict, answers: list[str], **kwargs):
    return make_agent(ScriptedModel(answers), namespace=namespace, additional_authorized_imports=["pandas"], **kwargs)


def test_a_rerun_from_step_1_sees_the_notebook_as_it_was_and_equals_a_clean_run(make_agent):
    clean_ns = {"df": sales()}
    clean = agent_on(make_agent, clean_ns, [RELATIVE])
    assert clean.run("Which row of `df` improved most, relatively?") == 0.5

    namespace = {"df": sales()}
    agent = agent_on(make_agent, namespace, FIRST_TRY + [RELATIVE])
    assert agent.run("Which row of `df` improved most?") == 1000.0
    assert "gain" in namespace["df"] and agent.scratch["best"] == 10.0  # a scratch name: in the agent's scope
    agent.driver.rerun(1)
    assert agent.driver.join(30)
    assert agent.last_result.output == 0.5
    assert "gain" not in namespace["df"] and "best" not in namespace  # step 1 and 2's effects are gone
    assert "best" not in agent.scratch
    assert namespace["df"].equals(clean_ns["df"])  # the same frame a clean run leaves
    assert "Variables are as they were before step 1" in agent.driver.message


def test_the_replaced_run_can_be_made_live_again_with_its_variables(make_agent):
    namespace = {"df": sales()}
    agent = agent_on(make_agent, namespace, FIRST_TRY + [RELATIVE])
    agent.run("Which row of `df` improved most?")
    agent.driver.rerun(1)
    assert agent.driver.join(30)
    assert "rel" in namespace["df"]
    note = agent.restore_fork(0)
    assert "agent.forks[0] is the live run again" in note and "as that run left them" in note
    assert "rel" not in namespace["df"] and list(namespace["df"]["gain"]) == [200.0, 1000.0]
    assert agent.scratch["best"] == 10.0 and "best" not in namespace  # back, in the agent's scope
    assert [s.code_action for s in agent.memory.action_steps()][0].startswith("df['gain']")
    assert agent.forks[0].action_steps()[0].code_action.startswith("df['rel']")  # the other line, kept
    agent.driver.handle_command({"action": "restore_fork", "index": 0})  # and back, from the widget's button
    assert "rel" in namespace["df"] and "best" not in namespace and "best" not in agent.scratch


def test_a_rerun_past_the_snapshot_limit_says_the_variables_were_not_restored(make_agent):
    namespace: dict = {}
    answers = [code("a = 1"), code("b = 2"), code("final_answer(a + b)"), code("final_answer(-1)")]
    agent = make_agent(ScriptedModel(answers), namespace=namespace)
    agent.python_executor.timeline.max_snapshots = 1
    assert agent.run("add") == 3
    agent.driver.rerun(1)
    assert agent.driver.join(30)
    assert "could not be restored to before step 1" in agent.driver.message
    assert agent.scratch == {"a": 1, "b": 2}  # kept (in the agent's scope), and said so
