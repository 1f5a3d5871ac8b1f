"""Changes you can see and undo, and scratch names kept in the agent's scope (issue 28 items 2 and 3), through the real
`%%agent` magic and `CodeAgent` with a `ScriptedModel`, for both executors."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from nbagent import CodeAgent, ScriptedModel

pd = pytest.importorskip("pandas")

EXECUTORS = ["isolated", "local"]


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def orders() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "category": ["Toys", "BOOKS", "toys", "Books"] * 100,
            "price": ["1.5", "2", "3.25", "x"] * 100,
            "qty": list(range(400)),
        }
    )


def last_agent(ip):
    return ip.magics_manager.registry["AgentMagics"].last_agent


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_run_that_rewrites_your_frame_says_what_changed_and_undo_puts_it_back(ip, executor: str, capsys) -> None:
    ip.user_ns["orders"] = original = orders()
    ip.user_ns["m"] = ScriptedModel(
        [
            code("orders['category'] = orders['category'].str.lower()\nn = orders['category'].nunique()"),
            code(
                "tmp = orders[orders.qty > 47]\ntmp = tmp[tmp.price != 'x'].copy()\n"
                "tmp['price'] = tmp['price'].astype(float)\norders = tmp\nresult2 = len(orders)"
            ),
            code("final_answer(n)"),
        ]
    )
    answer = ip.run_cell_magic(
        "agent", f"-m m --quiet --executor {executor} -o best", "How many categories in `orders`?"
    )
    assert answer == 2
    agent = last_agent(ip)
    first, second = (step.namespace_changes for step in agent.memory.action_steps()[:2])
    category = next(c for c in first if c["name"] == "orders")
    assert category["yours"] is True and category["detail"] == "column category changed"
    rebound = next(c for c in second if c["name"] == "orders")
    assert rebound["change"] == "rebound" and rebound["yours"] is True
    before = str(original["price"].dtype)  # "str" or "object", by the pandas version
    assert rebound["detail"] == f"column price {before} → float64; rows 400 → 264"

    # the scratch names went to the agent's scope; `n` holds the answer: it came back
    assert set(agent.scratch) == {"tmp", "result2"}
    assert not {"tmp", "result2"} & set(ip.user_ns) and ip.user_ns["n"] == 2
    assert agent.last_result.scratch == list(agent.scratch)
    assert ip.user_ns["best"] == 2

    ip.run_line_magic("agent", "--undo")
    said = capsys.readouterr().out
    assert "Undone" in said and "orders" in said and "Not undone: files the code wrote" in said
    assert "best (-o) is removed" in said
    assert ip.user_ns["orders"] is original and len(original) == 400  # her frame, not the 264-row copy
    assert not {"best", "n"} & set(ip.user_ns) and not agent.scratch  # the run's names are gone everywhere
    assert agent.session.undone and not agent.session.undoable
    if executor == "isolated":  # the worker never changed her object: the snapshot's frame is the frame as it was
        assert list(original["category"][:2]) == ["Toys", "BOOKS"] and original["price"].dtype != float
    else:  # the local executor changed the frame itself: the undo says it could not restore it
        assert "Not restorable: orders (later steps may have changed it in place" in said


@pytest.mark.parametrize("executor", EXECUTORS)
def test_scratch_names_stay_the_agents_and_its_next_run_still_sees_them(ip, executor: str, capsys) -> None:
    ip.user_ns["m"] = ScriptedModel(
        [
            code("filtered = [1, 2, 3]\ntmp = 5"),
            code("final_answer(sum(filtered))"),
            code("final_answer(sum(filtered) + tmp)"),  # the next run of the same agent
        ]
    )
    assert ip.run_cell_magic("agent", f"-m m --quiet --executor {executor}", "Sum them") == 6
    agent = last_agent(ip)
    assert set(agent.scratch) == {"filtered", "tmp"} and "filtered" not in ip.user_ns
    assert ip.run_cell_magic("agent", "--continue --quiet", "And with tmp?") == 11  # its scope came back for it
    assert "tmp" not in ip.user_ns and set(agent.scratch) == {"filtered", "tmp"}

    ip.run_line_magic("agent", "--keep=tmp")
    assert "Brought into your namespace: tmp" in capsys.readouterr().out
    assert ip.user_ns["tmp"] == 5 and set(agent.scratch) == {"filtered"}
    with pytest.raises(UsageError, match="not in the agent's scope: nope"):
        ip.run_line_magic("agent", "--keep=nope")
    ip.run_line_magic("agent", "--keep")
    assert ip.user_ns["filtered"] == [1, 2, 3] and agent.scratch == {}


@pytest.mark.parametrize("executor", EXECUTORS)
def test_names_that_hold_the_answer_come_back_and_keep_keeps_all(ip, executor: str) -> None:
    ip.user_ns["m"] = ScriptedModel(
        [code("top = ['a', 'b']\ncounts = {'a': 2}\nscratch = 1\nfinal_answer((top, counts))")]
    )
    ip.run_cell_magic("agent", f"-m m --quiet --executor {executor}", "Top labels and counts")
    assert ip.user_ns["top"] == ["a", "b"] and ip.user_ns["counts"] == {"a": 2}  # parts of the answer
    assert "scratch" not in ip.user_ns and last_agent(ip).scratch == {"scratch": 1}

    ip.user_ns["m"] = ScriptedModel([code("table = [1]\nother = 2\nfinal_answer('done')")])
    ip.run_cell_magic("agent", f"-m m --quiet --executor {executor} --keep", "Make a table")
    assert ip.user_ns["table"] == [1] and ip.user_ns["other"] == 2  # --keep: all stay


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_name_the_task_asks_for_comes_back(executor: str) -> None:
    namespace = {"__name__": "__main__"}
    model = ScriptedModel([code("table = [1]\nhelper = 2\nfinal_answer('done')")])
    agent = CodeAgent(model=model, namespace=namespace, executor_type=executor, verbosity_level=-1, show_widget=False)
    try:
        agent.run("Put the rows in `table`")
    finally:
        getattr(agent.python_executor, "close", lambda: None)()
    assert namespace["table"] == [1] and "helper" not in namespace and agent.scratch == {"helper": 2}


@pytest.mark.parametrize("executor", EXECUTORS)
def test_your_function_is_never_replaced(ip, executor: str) -> None:
    ip.run_cell("def clean(text):\n    return text.strip()")
    mine = ip.user_ns["clean"]
    ip.user_ns["m"] = ScriptedModel(
        [code("def clean(text):\n    return 'agent:' + text\nfinal_answer(clean(' x '))"), code("final_answer(1)")]
    )
    ip.run_cell_magic("agent", f"-m m --quiet --executor {executor}", "Use `clean` on ' x '")
    assert ip.user_ns["clean"] is mine and mine(" y ") == "y"
    step = last_agent(ip).memory.action_steps()[0]
    said = (step.observations or "") + (str(step.error) if step.error else "")
    assert "your" in said and "clean" in said  # kept in the worker, or refused: said either way


def test_undo_through_code_agent_on_the_isolated_worker_puts_back_a_rebound_dict() -> None:
    namespace = {"config": {"a": 1, "b": 2}, "__name__": "__main__"}
    mine = namespace["config"]
    model = ScriptedModel([code("config = {'a': 1, 'c': 3}\nfinal_answer(len(config))")])
    agent = CodeAgent(model=model, namespace=namespace, verbosity_level=-1, show_widget=False)
    try:
        assert agent.run("Rework `config`") == 2
        change = agent.memory.action_steps()[0].namespace_changes[0]
        assert change["yours"] and change["detail"] == "+1 key 'c'; −1 key 'b'"
        note = agent.undo()
        assert namespace["config"] is mine and "restored config" in note
        assert agent.undo() == note  # a second undo changes nothing
    finally:
        agent.python_executor.close()


def test_undo_before_any_run_is_a_clear_error(ip) -> None:
    with pytest.raises(UsageError, match="no agent run"):
        ip.run_line_magic("agent", "--undo")
    with pytest.raises(UsageError, match="--undo takes no task"):
        ip.run_cell_magic("agent", "--undo", "do something")
