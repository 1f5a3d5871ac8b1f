"""The run becomes code (issue 31): `agent.to_code()` / `to_function()` over ScriptedModel runs, both executors.

The program drops failed steps, exploration and prints, keeps what the answer uses, and is checked by running it
once on copies of the run's inputs; these tests run the program themselves too (a cell's text, a function on new
data), so a program that only looks right fails here.
"""

from __future__ import annotations

import copy

import pytest

from nbagent import CodeAgent, ScriptedModel, tool
from nbagent.loop.program import same_value

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")

EXECUTORS = ["isolated", "local"]


def code(body: str) -> str:
    return f"Thought: go on.\n```python\n{body}\n```"


def sales_frame(regions=("N", "S", "N", "E"), units=(1, 2, 3, 4), price=(2.0, 3.0, 4.0, 1.0)) -> pd.DataFrame:
    return pd.DataFrame({"region": list(regions), "units": list(units), "price": list(price)})


MESSY_RUN = [
    code("print(sales.head())\nsales.describe()\nsales.info()"),  # exploring
    code("sales['revenue'] = sales.units * sales.price\ntotals = sales.groupby('region')['revenue'].sum()\n"
         "print(totals)\nwest = totals['West']"),  # fails at its last line: KeyError
    code("import numpy as np\nbest = totals.idxmax()\nspread = np.std(totals)\nprint(best, spread)"),
    code("best = totals.loc['West']\nprint(best)"),  # fails at once: it made nothing, it is dropped whole
    code("final_answer(best)\nprint('never runs')"),
]  # fmt: skip

EXPECTED = """\
# inputs: sales (DataFrame 4×{columns}) — notebook variables the run read
sales['revenue'] = sales.units * sales.price
totals = sales.groupby('region')['revenue'].sum()
best = totals.idxmax()
answer = best
"""


def agent_for(steps, namespace, executor_type="isolated", **kwargs) -> CodeAgent:
    return CodeAgent(
        model=ScriptedModel(list(steps)),
        namespace=namespace,
        executor_type=executor_type,
        additional_authorized_imports=["pandas", "numpy"],
        verbosity_level=-1,
        show_widget=False,
        **kwargs,
    )


@pytest.fixture(scope="module", params=EXECUTORS)
def messy(request):
    """One messy run per executor (explores, fails, answers), shared by the tests that only read it."""
    namespace = {"sales": sales_frame()}
    agent = agent_for(MESSY_RUN, namespace, request.param)
    answer = agent.run("Which region in `sales` has the highest revenue?")
    return agent, answer, request.param


def test_the_program_drops_failed_and_exploring_code_and_reproduces_the_answer(messy) -> None:
    agent, answer, executor = messy
    program = agent.to_code()
    assert answer == "N"
    assert program.checked, program.reason
    if executor == "isolated":  # the input as the run read it (its snapshot): before the run added a column
        assert program.code == EXPECTED.format(columns=3)
        assert str(program) == "# checked: reproduces the answer\n" + program.code
    else:  # the local executor changed the frame in place: the check used it as it is, and says so
        assert program.code == EXPECTED.format(columns=4)
        assert program.reason.endswith("(on sales as the run left it: the local executor changed it in place)")
    assert program.inputs == ["sales"] and program.tools == [] and program.steps == [2, 3, 5]
    cell: dict = {"sales": sales_frame()}  # the cell run on a fresh copy of the input, as a person would
    exec(str(program), cell)
    assert cell["answer"] == answer and "revenue" in cell["sales"]


def test_a_function_of_the_inputs_answers_on_new_data(messy) -> None:
    agent = messy[0]
    program = agent.to_function("best_region")
    assert program.checked, program.reason
    assert program.code.startswith("def best_region(sales):\n") and program.code.endswith("    return answer\n")
    scope: dict = {}
    exec(program.code, scope)
    other = sales_frame(regions=("W", "S", "W", "S"), units=(1, 5, 1, 5), price=(1.0, 2.0, 1.0, 2.0))
    expected = (other.units * other.price).groupby(other.region).sum().idxmax()
    assert scope["best_region"](other.copy()) == expected == "S"
    with pytest.raises(ValueError, match="a Python name"):
        agent.to_function("not a name")


def test_the_check_runs_on_copies_and_is_cached(messy) -> None:
    agent = messy[0]
    assert agent.to_code() is agent.to_code()  # one check per memory state
    assert "revenue" in agent.python_executor.state["sales"]  # the run's change stays; the check added nothing
    assert "answer" not in agent.python_executor.state
    unchecked = agent.to_code(verify=False)
    assert not unchecked.checked and unchecked.status == "# unchecked: not checked (verify=False)"


@pytest.mark.parametrize("executor", EXECUTORS)
def test_nondeterministic_code_is_given_but_marked_unchecked(executor: str) -> None:
    steps = [code("import datetime\nstamp = datetime.datetime.now().isoformat()\nfinal_answer(stamp)")]
    agent = agent_for(steps, {}, executor)
    agent.run("What time is it?")
    program = agent.to_code()
    assert program.code is not None and not program.checked
    assert program.reason.startswith("run again it gives '") and "not the run's" in program.reason
    assert str(program).startswith("# unchecked: run again it gives")
    assert "answer = stamp" in program.code


def test_tool_calls_are_kept_and_said() -> None:
    calls = []

    @tool
    def exchange_rate(currency: str) -> float:
        """The rate of a currency to the dollar.

        Args:
            currency: its ISO code
        """
        calls.append(currency)
        return 1.25

    steps = [
        code("rate = exchange_rate('EUR')\nprint(rate)"),
        code("total = float((sales.units * sales.price).sum())\nfinal_answer(round(total * rate, 2))"),
    ]
    agent = agent_for(steps, {"sales": sales_frame()}, tools=[exchange_rate])
    assert agent.run("What is the revenue of `sales` in euros?") == 30.0
    program = agent.to_code()
    assert program.tools == ["exchange_rate"] and program.checked, program.reason
    assert "rate = exchange_rate('EUR')" in program.code
    assert "# tools: exchange_rate — called as in the run" in program.code
    assert "it calls exchange_rate again" in program.reason and calls == ["EUR", "EUR"]


def test_a_run_without_a_final_answer_has_no_program() -> None:
    agent = agent_for([code("x = 1"), code("y = 2"), "I could not finish."], {}, max_steps=2)
    agent.run("Count.")
    program = agent.to_code()
    assert program.code is None and not program and not program.checked
    assert str(program) == "# no program: the last run has no final answer: max steps reached, no answer\n"
    with pytest.raises(ValueError, match="no program"):
        agent.to_function("count")


def test_a_rerun_from_a_step_gives_the_program_of_the_new_path() -> None:
    steps = [
        code("gain = scores['test2'] - scores['test1']"),
        code("final_answer(scores.loc[gain.idxmax(), 'student'])"),
        code("gain = scores['test2'] / scores['test1']"),  # the re-run's step 1: relative gains
        code("final_answer(scores.loc[gain.idxmax(), 'student'])"),
    ]
    scores = pd.DataFrame({"student": ["Ana", "Ben"], "test1": [10, 80], "test2": [30, 110]})
    agent = agent_for(steps, {"scores": scores})
    assert agent.run("Who in `scores` improved most?") == "Ben"
    for _ in agent.session.continue_from(1):
        pass
    assert agent.last_result.output == "Ana"
    program = agent.to_code()
    assert program.checked, program.reason
    assert "scores['test2'] / scores['test1']" in program.code and " - " not in program.code


def test_a_continued_run_keeps_what_the_earlier_run_made() -> None:
    steps = [
        code("clean = sales[sales.units > 1]\nfinal_answer(len(clean))"),
        code("print(clean)"),
        code("final_answer(float(clean.price.mean()))"),
    ]
    agent = agent_for(steps, {"sales": sales_frame()})
    assert agent.run("How many rows of `sales` sold more than one unit?") == 3
    assert agent.run("And their mean price?", reset=False) == pytest.approx(8 / 3)
    program = agent.to_code()
    assert program.checked, program.reason
    assert program.code.splitlines()[1:] == ["clean = sales[sales.units > 1]", "answer = float(clean.price.mean())"]


def test_code_a_person_edited_is_the_code_kept_and_rejected_code_is_not() -> None:
    from nbagent import ActionStep, AgentMemory, TaskStep, ToolCall

    def ran(number: int, body: str, **fields) -> ActionStep:
        call = [ToolCall("python_interpreter", body, f"call_{number}")]
        return ActionStep(step_number=number, code_action=body, tool_calls=call, namespace_changes=[], **fields)

    agent = agent_for([], {"rate": 3})
    agent.memory = AgentMemory("system")
    agent.memory.steps = [
        TaskStep(task="Triple `rate`"),
        ActionStep(step_number=1, code_action="rate = 0"),  # rejected at approval: it never ran
        ran(2, "tripled = rate * 3", model_code_action="tripled = rate * 2", edited_code_action="tripled = rate * 3"),
        ran(3, "final_answer(tripled)", is_final_answer=True, action_output=9),
    ]
    program = agent.to_code()
    assert program.code.splitlines()[1:] == ["tripled = rate * 3", "answer = tripled"]
    assert program.checked, program.reason


def test_same_value_reads_frames_arrays_and_floats_by_value() -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": [0.1 + 0.2, np.nan]})
    assert same_value(frame, copy.deepcopy(frame).astype({"a": "int32"}))
    assert not same_value(frame, frame.assign(a=[1, 3]))
    assert same_value(np.array([0.3, np.nan]), np.array([0.1 + 0.2, np.nan]))
    assert same_value(np.float64(0.1 + 0.2), 0.3) and not same_value(0.3, 0.31)
    assert same_value({"n": [1, 2.0]}, {"n": [1, 2]}) and not same_value((1, 2), [1, 2])
    assert not same_value("1", 1)


def test_the_code_an_answer_comes_from_keeps_its_path_and_the_call():
    from nbagent.loop.program.slicing import answer_code

    earlier = ["orders['d'] = pd.to_datetime(orders['d'])\nmarch = orders[orders['d'].dt.month == 3]\nprint(march)"]
    answering = "orders.drop_duplicates(inplace=True)\ncount = orders.shape[0]\nfinal_answer(count)"
    assert answer_code(earlier, answering) == (
        "orders['d'] = pd.to_datetime(orders['d'])\norders.drop_duplicates(inplace=True)\n"
        "count = orders.shape[0]\nfinal_answer(count)"
    )
    assert answer_code(earlier, "count = 3") is None  # no answer: the checks read all the code
    assert answer_code(["x = ("], "final_answer(1)") is None


def test_an_answer_written_out_comes_from_the_code_of_the_variable_that_holds_it():
    from nbagent.loop.program.slicing import answer_code

    earlier = ["west = orders[orders['region'] == 'West']\ntotal = west['amount'].sum()", "print(total)"]
    namespace = {"west": pd.DataFrame({"amount": [1.5]}), "total": np.float64(116286.42)}
    assert answer_code(earlier, "final_answer(116286.42)", namespace) == (
        "west = orders[orders['region'] == 'West']\ntotal = west['amount'].sum()\nfinal_answer(total)"
    )
    assert answer_code(earlier, "final_answer(5.0)", namespace) is not None  # no variable holds it: as written
    assert "total" not in answer_code(earlier, "final_answer(5.0)", namespace)
    assert "total" not in answer_code(earlier, "final_answer('116286.42')", namespace)  # text is no number
    # one an earlier step printed, held by no variable (`print(orders.duplicated().sum())`): all the code is read
    shown = ["d = orders.duplicated()\nprint(d.sum())"]
    assert answer_code(shown, "final_answer(16)", {}, ["Execution logs:\n16\n"]) is None
    assert answer_code(shown, "final_answer(16)", {}, ["Execution logs:\n160 1.16 16.5\n"]) == "final_answer(16)"
    assert answer_code(shown, "final_answer(6.2)", {}, ["6.2%"]) is None
