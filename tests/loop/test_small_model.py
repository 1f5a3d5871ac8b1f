"""What a small local model gets: its own prompt, a token cap per step with a notice when a step is cut,
compact step messages, an answer check; and the hint every model gets after a failed step."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.answers import answer_problem
from nbagent.loop.aids.data_card import NOTEBOOK_VARIABLES_HEADING, describe_variables
from nbagent.loop.aids.history import compact_step_messages
from nbagent.loop.code_step import RETRY_TEMPERATURE, AnswerRefused
from nbagent.loop.prompting import (
    SMALL,
    SMALL_MODEL_STEP_TOKENS,
    STANDARD,
    prompt_profile,
    small_model_templates,
)
from nbagent.models.base import MessageRole
from nbagent.prompts import load_prompt_templates, populate_template


def code(body: str, thought: str = "go.") -> str:
    return f"Thought: {thought}\n```python\n{body}\n```"


def scripted(responses, profile: str | None = SMALL) -> ScriptedModel:
    model = ScriptedModel(responses)
    if profile is not None:
        model.prompt_profile = profile
    return model


def agent_for(model, namespace=None, max_steps=4, **kwargs) -> CodeAgent:
    return CodeAgent(
        tools=[], model=model, namespace=namespace, verbosity_level=-1, show_widget=False, max_steps=max_steps, **kwargs
    )


def actions(agent) -> list[ActionStep]:
    return [s for s in agent.memory.steps if isinstance(s, ActionStep)]


def prompt_text(messages) -> str:
    return "\n".join(m.text for m in messages)


SALES = "What is the revenue of `sales`?\n- `sales`: pandas DataFrame, 2 rows × 2 columns"


def sales_namespace() -> dict:
    return {"sales": pd.DataFrame({"units": [1, 2], "unit_price": [2.0, 3.0]})}


# ---------------------------------------------------------------- which models are small


class LlamaCppModel:  # stands in for the real class: prompt_profile looks at the class name and the file
    def __init__(self, model_path: str) -> None:
        self.model_path = model_path


class TransformersModel:
    def __init__(self, model_id: str, gguf_file: str | None = None) -> None:
        self.model_id, self.gguf_file = model_id, gguf_file


@pytest.mark.parametrize(
    ("model", "profile"),
    [
        (LlamaCppModel("/root/.cache/nbagent/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"), SMALL),
        (LlamaCppModel("/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf"), SMALL),
        (LlamaCppModel("/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf"), STANDARD),
        (LlamaCppModel("/models/tiny.gguf"), STANDARD),  # size unknown: the standard prompt
        (TransformersModel("/root/.cache/nbagent", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"), SMALL),
        (TransformersModel("Qwen/Qwen2.5-0.5B-Instruct"), SMALL),
        (ScriptedModel([]), STANDARD),
    ],
)
def test_small_local_models_are_told_apart_from_the_others(model, profile):
    assert prompt_profile(model) == profile


def test_a_model_can_declare_its_profile():
    model = LlamaCppModel("/models/Qwen2.5-7B-Instruct.gguf")
    model.prompt_profile = SMALL
    assert prompt_profile(model) == SMALL
    api = ScriptedModel([])
    api.prompt_profile = SMALL
    assert prompt_profile(api) == SMALL


# ---------------------------------------------------------------- the prompt


def test_a_small_model_gets_the_short_pandas_prompt_and_an_api_model_the_standard_one():
    small = agent_for(scripted([], SMALL))
    standard = agent_for(scripted([], None))
    assert "Never type their data" in small.system_prompt and 'orders["qty"]' in small.system_prompt
    assert "Never type their data" not in standard.system_prompt
    assert standard.prompt_templates == load_prompt_templates("code_agent")
    assert len(small.system_prompt) < 4200  # about a thousand tokens, with three pandas examples
    assert small.max_tokens_per_step == SMALL_MODEL_STEP_TOKENS and standard.max_tokens_per_step is None


def test_a_small_models_prompt_lists_extra_tools_and_takes_overrides():
    from nbagent import tool

    @tool
    def lookup(city: str) -> str:
        """Looks a city up.

        Args:
            city: the city's name
        """
        return city

    agent = CodeAgent(
        tools=[lookup],
        model=scripted([]),
        prompt_templates={"final_answer": {"post_messages": "Answer: {{task}}"}},
        verbosity_level=-1,
        show_widget=False,
    )
    assert "def lookup(city" in agent.system_prompt
    assert agent.prompt_templates["final_answer"]["post_messages"] == "Answer: {{task}}"
    assert agent.prompt_templates["system_prompt"] == small_model_templates()["system_prompt"]
    plain = agent_for(scripted([]))
    assert "def final_answer" not in plain.system_prompt  # the only tool is explained in words


def test_the_small_templates_render_every_key():
    templates = small_model_templates()
    variables = {
        "tools": {},
        "managed_agents": {},
        "custom_instructions": "Be brief.",
        "authorized_imports": "pandas",
        "code_block_opening_tag": "```python\n",
        "code_block_closing_tag": "\n```",
        "task": "T",
        "remaining_steps": 2,
        "name": "helper",
        "final_answer": "42",
    }
    assert "Be brief." in populate_template(templates["system_prompt"], variables)
    for group in ("planning", "managed_agent", "final_answer"):
        for key, template in templates[group].items():
            assert populate_template(template, variables).strip(), (group, key)


# ---------------------------------------------------------------- the token cap


def test_each_step_of_a_small_model_is_capped_and_api_models_are_not():
    seen: list[dict] = []

    def answer(messages, **kwargs):
        seen.append(kwargs)
        return code("final_answer(1)")

    small = ScriptedModel(answer)
    small.prompt_profile = SMALL
    agent_for(small).run("one")
    assert seen[-1].get("max_new_tokens") == SMALL_MODEL_STEP_TOKENS
    agent_for(ScriptedModel(answer)).run("one")
    assert "max_new_tokens" not in seen[-1]
    capped = agent_for(ScriptedModel(answer))
    capped.max_tokens_per_step = 50
    capped.run("one")
    assert seen[-1]["max_new_tokens"] == 50


def test_a_step_cut_in_its_code_does_not_run_and_the_next_prompt_says_write_shorter_code():
    runaway = "Thought: I type the data.\n```python\nrows = [" + ", ".join(["'West'"] * 40)  # no closing bracket
    model = scripted([runaway, code("final_answer(2)")])
    agent = agent_for(model, namespace={})
    agent.max_tokens_per_step = 30
    assert agent.run("Count.") == 2
    first = actions(agent)[0]
    assert "rows" not in agent.python_executor.state  # the cut code never ran
    assert "cut off after 30 tokens" in str(first.error) and "Write shorter code" in str(first.error)
    assert "cut off after 30 tokens" in prompt_text(model.calls[1])


def test_a_step_cut_at_the_models_own_cap_says_so_for_any_agent():
    runaway = "Thought: I type the data.\n```python\nrows = [" + ", ".join(["'West'"] * 40)
    model = scripted([runaway, code("final_answer(2)")], None)  # a standard agent: no cap of its own
    model.max_new_tokens = 30  # what a local model (LlamaCppModel, TransformersModel) generates at most
    agent = agent_for(model, namespace={})
    assert agent.max_tokens_per_step is None and agent.run("Count.") == 2
    assert "cut off after 30 tokens" in str(actions(agent)[0].error)


def test_a_cut_step_whose_code_is_complete_runs_with_a_notice():
    long_thought = "Thought: " + " ".join(["think"] * 40) + "\n```python\nx = 5\n"
    model = scripted([long_thought, code("final_answer(x)")])
    agent = agent_for(model, namespace={})
    agent.max_tokens_per_step = 30
    assert agent.run("Five.") == 5
    first = actions(agent)[0]
    assert first.error is None and "cut off after 30 tokens" in first.observations
    assert "Its code ran as far as it was written" in prompt_text(model.calls[1])


def test_a_step_under_the_cap_gets_no_notice():
    model = scripted([code("x = 5"), code("final_answer(x)")])
    agent = agent_for(model, namespace={})
    assert agent.run("Five.") == 5
    assert "cut off" not in prompt_text(model.calls[1])


# ---------------------------------------------------------------- compact messages


def test_a_small_model_does_not_read_its_code_twice_nor_call_ids():
    model = scripted([code("y = 1 / 0"), code("final_answer(3)")])
    agent_for(model, namespace={}).run("Divide.")
    second = model.calls[1]
    text = prompt_text(second)
    assert "Calling tools:" not in text and "Call id:" not in text
    assert text.count("y = 1 / 0") == 2  # the model's code and the error's source line, no repr'd copy
    assert "ZeroDivisionError" in text and "Error on line 1" in text
    standard = scripted([code("y = 1 / 0"), code("final_answer(3)")], profile=None)
    agent_for(standard, namespace={}).run("Divide.")
    assert "Calling tools:" in prompt_text(standard.calls[1])


def test_questions_about_the_same_frames_share_the_prompt_start_up_to_the_question():
    # a local model computes a prompt start it saw last once: the card of the frames, read before the question
    model = scripted([code("final_answer(float((sales['units'] * sales['unit_price']).sum()))")] * 2)
    agent = agent_for(model, namespace=sales_namespace())
    for question in ("What is the revenue of `sales`?", "How many units are in `sales`?"):
        card = describe_variables({"sales": sales_namespace()["sales"]}, NOTEBOOK_VARIABLES_HEADING)
        agent.run(question + card)
    first, second = (prompt_text(call) for call in model.calls)
    shared = len(os.path.commonprefix([first, second]))
    assert first[shared:].startswith("What is the revenue") and second[shared:].startswith("How many units")
    assert first.index("- `sales`: pandas DataFrame") < shared  # the card is in the shared start


def test_compact_step_messages_keeps_task_outputs_and_observations():
    model = scripted([code("print('hi')"), code("final_answer(3)")])
    agent = agent_for(model, namespace={})
    agent.run("Greet.")
    full = agent.write_memory_to_messages()
    compact = compact_step_messages(full)
    roles = [m.role for m in compact]
    assert MessageRole.TOOL_CALL not in roles and roles[0] == MessageRole.SYSTEM
    assert "hi" in prompt_text(compact) and "Greet." in prompt_text(compact)


def test_a_long_observation_loses_its_middle_and_keeps_its_start_and_end():
    """The messy run printed a dict of dicts as a refused answer's output: 14,590 tokens, past the 8,192 window."""
    model = scripted([code("print('START' + 'x' * 50_000 + 'END')"), code("final_answer(3)")])
    agent_for(model, namespace={}).run("Print a lot.")
    text = prompt_text(model.calls[1])
    assert "START" in text and "END" in text and "characters left out" in text
    assert len(text) < 12_000
    standard = scripted([code("print('START' + 'x' * 50_000 + 'END')"), code("final_answer(3)")], profile=None)
    agent_for(standard, namespace={}).run("Print a lot.")
    assert "characters left out" not in prompt_text(standard.calls[1])


# ---------------------------------------------------------------- hints after a failed step


def test_a_missing_column_is_answered_with_the_frames_columns():
    model = scripted([code("total = sales['revenue'].sum()"), code("final_answer(8.0)")], profile=None)
    agent = agent_for(model, namespace=sales_namespace())
    agent.run(SALES)
    error = str(actions(agent)[0].error)
    assert "Error on line 1" in error and "KeyError: 'revenue'" in error
    assert "`sales` has the columns: units, unit_price" in error and "There is no column 'revenue'" in error
    assert "`sales` has the columns" in prompt_text(model.calls[1])


def test_a_missing_attribute_column_gets_the_same_hint():
    model = scripted([code("total = sales.revenue.sum()"), code("final_answer(float(sales['units'].sum()) + 5)")])
    agent = agent_for(model, namespace=sales_namespace())
    agent.run(SALES)
    assert "`sales` has the columns: units, unit_price" in str(actions(agent)[0].error)


def test_an_unknown_name_is_answered_with_the_tasks_variables():
    model = scripted([code("total = df['units'].sum()"), code("final_answer(sales['units'].sum())")])
    agent = agent_for(model, namespace=sales_namespace())
    agent.run(SALES)
    error = str(actions(agent)[0].error)
    assert "NameError" in error and "the variables of the task are `sales`" in error


def test_errors_without_a_useful_hint_are_left_as_they_are():
    model = scripted([code("x = 1 / 0"), code("final_answer(3)")])
    agent = agent_for(model, namespace={})
    agent.run("Divide.")
    assert "Hint" not in str(actions(agent)[0].error)


# ---------------------------------------------------------------- the final-answer check


@pytest.mark.parametrize(
    "answer",
    [None, "Error: no such column", "KeyError: 'revenue'", "An error occurred", "Unable to compute", "Traceback ..."],
)
def test_error_like_answers_are_recognised(answer):
    assert answer_problem(answer) in ("it gives no value (None)", "it reads like an error message, not an answer")


@pytest.mark.parametrize(
    "answer",
    [
        "Axes(0.125,0.11;0.775x0.77)",
        "Figure(640x480)",
        "[<matplotlib.lines.Line2D object at 0x7f>]",
        "Text(0.5, 1.0, 'x')",
    ],
)
def test_the_text_of_a_plotting_object_is_no_answer(answer):
    """The messy run answered a chart question with str(series.plot(kind='bar')): 'Axes(0.125,0.11;0.775x0.77)'."""
    assert answer_problem(answer).startswith("it is the text of a matplotlib object, not data")
    assert answer_problem("Axes per region: 4") is None


def test_a_dict_of_series_is_no_answer():
    per_region = {"North": pd.Series([1.0, 2.0]), "South": pd.Series([3.0])}
    assert "whole pandas Series" in answer_problem(per_region)
    assert "whole pandas Series" in answer_problem([pd.DataFrame({"a": [1]})])
    assert answer_problem({"North": 3.0, "South": 4}) is None


@pytest.mark.parametrize("answer", [float("nan"), np.float64("nan")])
def test_a_nan_answer_is_no_number(answer):
    """The messy run summed `.unique()` amounts that held a gap with Python's sum(): NaN was kept as the answer."""
    assert answer_problem(answer).startswith("it is NaN, no number: a missing value went into the arithmetic")


@pytest.mark.parametrize("answer", [0, "West", "Errol Flynn", ["Error"], 3.5, "The error rate is 3%"])
def test_plain_answers_are_not_errors(answer):
    assert answer_problem(answer) is None


def test_a_small_models_error_answer_is_refused_twice_then_the_run_ends_without_an_answer():
    model = scripted(
        [
            code("final_answer('KeyError: revenue')"),
            code("final_answer('Error: still failing')"),
            code("final_answer('Error: still failing')"),  # the same answer again: sure of it, still no answer
        ]
    )
    agent = agent_for(model, namespace={})
    assert agent.run("Revenue?") is None
    first, second, third = actions(agent)
    assert isinstance(first.error, AnswerRefused) and isinstance(second.error, AnswerRefused)
    assert "was refused: it reads like an error message" in prompt_text(model.calls[1])
    assert not third.is_final_answer and "The run ended without an answer" in str(third.error)
    assert "final_answer('Error: still failing') cannot be right" in str(third.error)
    assert agent.last_result.state == "stuck" and len(model.calls) == 3


def test_a_proved_doubt_is_said_past_the_refusal_budget(monkeypatch):
    """A guess used the budget (one refusal here); labels counted apart are still said before the run may end."""
    from nbagent.loop import code_step

    monkeypatch.setattr(code_step, "_MAX_REFUSALS", 1)
    orders = pd.DataFrame({"region": ["North", "north ", " NORTH", "South", "South"], "amount": [1.0, 2, 3, 4, 5]})
    unused = code("final_answer({'North': 1.0})")  # `orders` never used: a guess
    apart = code("final_answer(orders.groupby('region')['amount'].sum().to_dict())")
    tidy = code("final_answer(orders.groupby(orders['region'].str.strip().str.title())['amount'].sum().to_dict())")
    agent = agent_for(scripted([unused, apart, tidy]), namespace={"orders": orders})
    task = "What is the total amount of each region in `orders`? Give a dict.\n- `orders`: pandas DataFrame"
    assert agent.run(task) == {"North": 6.0, "South": 9.0}
    first, second, _ = actions(agent)
    assert isinstance(first.error, AnswerRefused) and "never uses it" in str(first.error)
    assert isinstance(second.error, AnswerRefused) and "one label written several ways" in str(second.error)


def test_an_answer_the_data_proves_wrong_never_stands_though_the_model_is_sure():
    """Labels written several ways, counted apart: told twice, the third same answer ends the run with none."""
    orders = pd.DataFrame({"region": ["North", "north ", " NORTH", "South", "South"], "amount": [1.0, 2, 3, 4, 5]})
    counted_apart = code("final_answer(orders.groupby('region')['amount'].sum().to_dict())")
    model = scripted([counted_apart, counted_apart, counted_apart, code("final_answer(1)")])
    agent = agent_for(model, namespace={"orders": orders})
    assert agent.run("What is the total amount of each region in `orders`? Give a dict.") is None
    refused = [step for step in actions(agent) if isinstance(step.error, AnswerRefused)]
    assert len(refused) == 2 and "one label written several ways" in str(refused[0].error)
    assert "without an answer" in str(actions(agent)[-1].error) and len(model.calls) == 3


def test_a_refused_answer_can_be_followed_by_the_right_one():
    model = scripted([code("final_answer(None)"), code("final_answer(8.0)")])
    agent = agent_for(model, namespace={})
    assert agent.run("Revenue?") == 8.0


def test_each_task_gets_its_own_refusal():
    model = scripted(
        [
            code("final_answer('Error: a')"),
            code("final_answer(1)"),
            code("final_answer('Error: b')"),
            code("final_answer(2)"),
        ]
    )
    agent = agent_for(model, namespace={})
    assert agent.run("First?") == 1
    assert agent.run("Second?", reset=False) == 2


def test_api_models_answers_are_taken_as_they_are():
    model = scripted([code("final_answer('Error: the file is missing')")], profile=None)
    assert agent_for(model, namespace={}).run("What does it say?") == "Error: the file is missing"


def test_a_tuple_of_columns_gets_the_list_hint():
    model = scripted(
        [code("s = sales.groupby('units')['units', 'unit_price'].sum()"), code("final_answer(sales['units'].sum())")]
    )
    agent = agent_for(model, namespace=sales_namespace())
    agent.run(SALES)
    assert "frame[['a', 'b']]" in str(actions(agent)[0].error)


def test_a_missing_module_alias_gets_its_import():
    model = scripted([code("print(pd.__version__)"), code("final_answer(1)")])
    agent = agent_for(model, namespace={})
    agent.run("Version?")
    assert "Hint: import it first: import pandas as pd" in str(actions(agent)[0].error)


def test_the_same_failing_code_twice_is_pointed_out():
    model = scripted([code("x = sales['revenue']"), code("x = sales['rev']"), code("x  =  sales[ 'rev' ]"), "final"])
    agent = agent_for(model, namespace=sales_namespace(), max_steps=3)
    agent.run(SALES)
    first, second, third = actions(agent)[:3]
    assert "same code as your last step" not in str(first.error) + str(second.error)  # step 1 differs from 2
    assert "same code as your last step, and it failed again" in str(third.error)  # same but for whitespace
    assert "will not be run a third time" in str(third.error) and "`sales` has the columns" in str(third.error)


def test_a_whole_column_is_no_answer():
    column = pd.Series(range(200), dtype=float)
    assert "it has 200 rows" in answer_problem(column) and "(a * b).sum()" in answer_problem(column)
    assert "(a * b).sum()" in answer_problem(column, "r = s['a'] * s['b'].sum()")
    assert "(a * b).sum()" not in answer_problem(column, "r = s['a'].cumsum()")
    assert answer_problem(pd.Series({"North": 1.0, "South": 2.0})) is None  # one value per group is fine


def test_a_small_model_retries_a_failed_step_with_some_temperature():
    seen: list = []
    answers = iter([code("x = 1 / 0"), code("y = 2"), code("final_answer(y)")])

    def answer(messages, **kwargs):
        seen.append(kwargs.get("temperature"))
        return next(answers)

    model = ScriptedModel(answer)
    model.prompt_profile = SMALL
    assert agent_for(model, namespace={}).run("Go.") == 2
    assert seen == [None, RETRY_TEMPERATURE, None]


def test_earlier_failed_steps_shrink_to_one_line_and_the_latest_stays_whole():
    # a step that worked in between: two failures in a row would start a clean slate (tests/loop/test_clean_slate.py)
    steps = [
        code("a = sales['revenue']"),
        code("n = sales['units'].sum()"),
        code("b = sales['income']"),
        code("final_answer(n)"),
    ]
    model = scripted(steps)
    agent_for(model, namespace=sales_namespace()).run(SALES)
    fourth = prompt_text(model.calls[3])
    assert "Your step 1 failed: `a = sales['revenue']` raised KeyError: 'revenue'" in fourth
    assert fourth.count("sales['revenue']") == 1  # the failed block is not shown again
    assert "```python\nb = sales['income']\n```" in fourth and "KeyError: 'income'" in fourth


def test_standard_models_keep_every_step_whole():
    model = scripted([code("a = sales['revenue']"), code("b = sales['income']"), code("final_answer(1)")], None)
    agent_for(model, namespace=sales_namespace()).run(SALES)
    assert "```python\na = sales['revenue']\n```" in prompt_text(model.calls[2])


def test_multiplying_a_groupby_gets_the_product_first_hint():
    model = scripted(
        [
            code("r = sales.groupby('units')['units'] / sales['unit_price'].max()"),
            code("final_answer(sales['units'].sum())"),
        ]
    )
    agent = agent_for(model, namespace=sales_namespace())
    agent.run(SALES)
    assert "a groupby(...) cannot be multiplied" in str(actions(agent)[0].error)


@pytest.mark.parametrize(
    "line",
    [
        "r = sales.loc[:, 'units'].mean() * sales.units",
        "r = sales.groupby('units')['units'] * sales['unit_price'].sum().round(2).to_dict()",
        "r = sales['units'] * other['unit_price'].sum()",
    ],
)
def test_a_column_times_a_total_that_cannot_be_fixed_surely_is_not_run(line):
    model = scripted([code(f"{line}\nfinal_answer(r)"), code("final_answer(float(sales['units'].sum()) + 5)")])
    agent = agent_for(model, namespace={**sales_namespace(), "other": sales_namespace()["sales"]})
    assert agent.run(SALES) == 8.0
    first = actions(agent)[0]
    assert "multiplies every value of one column by the total" in str(first.error) and "Line 1" in str(first.error)
    assert "r" not in agent.python_executor.state and first.code_action.startswith(line[:10])


@pytest.mark.parametrize(
    "line",
    [
        "r = (sales['units'] * sales['unit_price']).sum()",
        "r = sales['units'] / sales['units'].sum()",
        "r = sales['units'].sum() * 100",
        "r = 2 * sales['units'].sum()",
    ],
)
def test_right_totals_and_shares_run(line):
    model = scripted([code(f"{line}\nfinal_answer(1 if r is not None else 0)")])  # the answer reads r
    assert agent_for(model, namespace=sales_namespace()).run(SALES) == 1


def test_api_models_run_a_column_times_a_total():
    model = scripted([code("final_answer(float((sales['units'] * sales['unit_price'].sum()).sum()))")], None)
    assert agent_for(model, namespace=sales_namespace()).run(SALES) == 15.0


def test_a_silent_step_tells_a_small_model_it_printed_nothing():
    model = scripted([code("x = 5"), code("final_answer(x)")])
    agent = agent_for(model, namespace={})
    assert agent.run("Five.") == 5
    assert actions(agent)[0].observations.startswith("The code ran and printed nothing.")
    standard = scripted([code("x = 5"), code("final_answer(x)")], None)
    agent = agent_for(standard, namespace={})
    agent.run("Five.")
    assert "Last output from code snippet:\nNone" in actions(agent)[0].observations


def test_a_silent_step_shows_a_small_model_the_variable_it_made():
    merge = 'merged = sales.merge(shops, on="shop")'
    model = scripted([code(merge), code("final_answer(len(merged))")])
    namespace = {**sales_namespace(), "shops": pd.DataFrame({"shop": ["a"], "city": ["Graz"]})}
    namespace["sales"]["shop"] = "a"
    agent = agent_for(model, namespace=namespace)
    assert agent.run("How many rows after merging `sales` with `shops`?") == 2
    seen = actions(agent)[0].observations
    assert seen.startswith("The code ran and printed nothing. `merged` is now:\n- `merged`: pandas DataFrame, 2 rows")
    assert "columns: units (int64), unit_price (float64), shop (" in seen and "city (" in seen


@pytest.mark.parametrize(
    "merge",
    ["merged = sales.merge(shops, on='shop')", "merged = pd.merge(sales, shops, on='shop')"],
)
def test_a_silent_merge_says_which_frame_each_suffixed_column_came_from(merge):
    namespace = {**sales_namespace(), "shops": pd.DataFrame({"shop": ["a"], "units": [7]})}
    namespace["sales"]["shop"] = "a"
    model = scripted([code(merge), code("final_answer(1)")])
    agent = agent_for(model, namespace={**namespace, "pd": pd}, additional_authorized_imports=["pandas"])
    agent.run("One from `sales` and `shops`.")
    seen = actions(agent)[0].observations
    assert "(`units_x` is `sales`'s 'units', `units_y` is `shops`'s: the merge's suffixes)" in seen


def test_a_silent_total_of_every_column_per_group_gets_the_line_that_picks_the_column():
    frame = pd.DataFrame({"segment": ["a", "b", "a"], "name": ["x", "y", "z"], "amount": [1.0, 2.0, 3.0]})
    body = "per = frame.groupby(frame['segment'].str.strip()).sum().round(2).to_dict()"
    model = scripted([code(body), code("final_answer(frame['amount'].sum())")])
    agent = agent_for(model, namespace={}, max_steps=2)
    agent.run("What was the total amount of each segment in `frame`?", additional_args={"frame": frame})
    seen = actions(agent)[0].observations
    assert (
        "(that is the total of every column, the text ones joined: pick the column first: "
        "frame.groupby(frame['segment'].str.strip())['amount'].sum().round(2).to_dict())" in seen
    ), seen


@pytest.mark.parametrize(
    "body, then",
    [
        ("per = {'N': 1.5, 'S': 2.0}", "If `per` is what the task asks for, call final_answer(per); if not, compute"),
        ("per = 42", "If `per` is what the task asks for"),
        ("per = ('N', 3)", "If `per` is what the task asks for"),
        ("per = sales['units'].sum()", "If `per` is what the task asks for"),
        ("per = sales.groupby('units').sum()", "Now compute what the task asks from `per`."),
        ("per = {'N': [1, 2]}", "Now compute what the task asks from `per`."),
        ("per = list(range(50))", "Now compute what the task asks from `per`."),
    ],
)
def test_a_silent_step_that_made_an_answer_shaped_value_names_final_answer(body, then):
    agent = agent_for(scripted([code(body), code("final_answer(1)")]), namespace=sales_namespace())
    agent.run("One from `sales`.")
    assert then in actions(agent)[0].observations


@pytest.mark.parametrize(
    "change",
    [
        "sales['revenue'] = sales['units'] * sales['unit_price']",
        "sales.drop_duplicates(inplace=True)",
        "sales.loc[sales['units'] > 1, 'units'] += 1",
    ],
)
def test_a_silent_step_shows_a_small_model_the_frame_it_changed_in_place(change):
    model = scripted([code(change), code("final_answer(1)")])
    agent = agent_for(model, namespace=sales_namespace())
    agent.run("One from `sales`.")
    seen = actions(agent)[0].observations
    assert seen.startswith("The code ran and printed nothing. `sales` is now:\n- `sales`: pandas DataFrame, 2 rows")


@pytest.mark.parametrize("body", ["print_me = None\ndel print_me", "for i in range(2):\n    total = i", "x, y = 1, 2"])
def test_a_silent_step_without_one_new_variable_says_only_that_it_printed_nothing(body):
    agent = agent_for(scripted([code(body), code("final_answer(1)")]), namespace={})
    agent.run("One.")
    assert actions(agent)[0].observations.startswith("The code ran and printed nothing. Print the values")


def test_grouping_a_series_by_a_column_name_gets_the_owner_frames_column():
    sales = pd.DataFrame({"region": ["N", "S", "N"], "units": [1, 2, 3], "unit_price": [2.0, 3.0, 4.0]})
    june = sales[sales["units"] > 1]
    value = june["units"] * june["unit_price"]
    failing = 'total = value.groupby("region").sum()'
    model = scripted(
        [code(failing), code("total = value.groupby(june['region']).sum()\nfinal_answer(total.to_dict())")]
    )
    agent = agent_for(model, namespace={"sales": sales, "june": june, "value": value})
    assert agent.run("Revenue of `june` by region (`value` holds it)?") == {"N": 12.0, "S": 6.0}
    hint = str(actions(agent)[0].error)
    assert "`value` is a Series, not a table, so it has no column 'region'" in hint
    assert "value.groupby(june['region'])" in hint  # june has value's rows; sales has the column too


def test_a_date_attribute_of_row_numbers_gets_the_use_a_column_hint():
    targets = pd.DataFrame({"month": ["2024-04", "2024-05"], "target": [10.0, 20.0]})
    failing = "may = targets.loc[targets.index.month == 5]"
    model = scripted(
        [code(failing), code("final_answer(float(targets.loc[targets['month'] == '2024-05', 'target'].iloc[0]))")]
    )
    agent = agent_for(model, namespace={"targets": targets})
    assert agent.run("May's target in `targets`?") == 20.0
    hint = str(actions(agent)[0].error)
    assert "that index holds row numbers (0, 1, 2, …), not dates or labels; use a column instead." in hint
    assert "`targets` has month, target" in hint


def test_totalling_a_whole_grouped_table_gets_the_pick_a_column_hint():
    sales = pd.DataFrame({"day": pd.to_datetime(["2024-01-01", "2024-01-02"]), "product": ["a", "b"], "units": [1, 2]})
    model = scripted([code("top = sales.groupby('product').sum()['units']"), code("final_answer(1)")])
    agent = agent_for(model, namespace={"sales": sales})
    agent.run("Units per product in `sales`?")
    assert "pick the column before the total: write `top = sales.groupby('product')['units'].sum()`" in str(
        actions(agent)[0].error
    )


def test_totalling_a_grouped_table_gets_the_column_the_code_just_made():
    sales = pd.DataFrame({"day": pd.to_datetime(["2024-01-01", "2024-01-02"]), "units": [1, 2], "price": [2.0, 3.0]})
    body = "sales['revenue'] = sales['units'] * sales['price']\nm = sales.groupby(sales['day'].dt.month).sum()"
    model = scripted([code(body), code("final_answer(sales['units'].sum())")])
    agent = agent_for(model, namespace={"sales": sales})
    agent.run("Revenue per month of `sales`?")
    assert "write `m = sales.groupby(sales['day'].dt.month)['revenue'].sum()`" in str(actions(agent)[0].error)


def test_a_grouped_total_without_a_clear_column_gets_the_general_hint():
    sales = pd.DataFrame({"day": pd.to_datetime(["2024-01-01", "2024-01-02"]), "units": [1, 2], "price": [2.0, 3.0]})
    model = scripted(
        [code("m = sales.groupby(sales['day'].dt.month).sum()"), code("final_answer(sales['units'].sum())")]
    )
    agent = agent_for(model, namespace={"sales": sales})
    agent.run("Totals per month of `sales`?")
    assert 'pick the column before the total: df.groupby("key")["column"].sum()' in str(actions(agent)[0].error)


def test_totalling_a_whole_table_with_text_columns_gets_the_column_to_total():
    """The messy run's `west_refunds.sum()` failed with "can only concatenate str" and no hint."""
    refunds = pd.DataFrame({"day": pd.Series(["2024-01-02", np.nan], dtype=object), "amount": ["-$1.50", "-$2.00"]})
    convert = "refunds['amount'] = refunds['amount'].str.replace(r'[$,]', '', regex=True).astype(float)\n"
    for total in ("t = refunds.sum()", "t = refunds.sum().round(2)"):  # 'a' + nan; a text total rounded
        agent = agent_for(scripted([code(convert + total), code("final_answer(1)")]), namespace={"refunds": refunds})
        agent.run("How much was refunded in `refunds`?")
        said = str(actions(agent)[0].error)
        assert "Hint: refunds.sum() totals every column of the table, its text columns too" in said, total
        assert "pick the column first, refunds['amount'].sum()." in said


def test_comparisons_joined_without_parentheses_get_the_precedence_hint():
    sales = pd.DataFrame({"region": ["East", "West"], "units": [1, 2]})
    model = scripted([code("east = sales[sales['region'] == 'East' & sales['units'] > 0]"), code("final_answer(1)")])
    agent = agent_for(model, namespace={"sales": sales})
    agent.run("East rows of `sales`?")
    assert "& and | bind before == and <: put each comparison in parentheses" in str(actions(agent)[0].error)


def test_a_name_an_earlier_step_failed_to_define_gets_assign_it_again():
    first = "march = sales[sales['units'] > 1]\nr = march['units'] * march['unit_price'].mean()"  # refused: never ran
    second = "print(march['units'].sum())"
    model = scripted([code(first), code(second), code("final_answer(sales['units'].sum())")])
    agent = agent_for(model, namespace=sales_namespace())
    agent.run(SALES)
    hint = str(actions(agent)[1].error)
    assert "`march` was never defined: the earlier code that assigns it did not run" in hint


def test_a_name_used_before_its_own_assignment_gets_the_usual_hint():
    model = scripted([code("print(total)\ntotal = 1"), code("final_answer(sales['units'].sum())")])
    agent = agent_for(model, namespace=sales_namespace())
    agent.run(SALES)
    assert "the variables of the task are `sales`" in str(actions(agent)[0].error)


def test_an_answer_copied_from_what_an_earlier_step_printed_uses_that_steps_code():
    """The messy run printed `orders.duplicated().sum()`, answered the 16 it saw, and was told it never used orders."""
    orders = pd.DataFrame({"id": [1, 1, 2, 3, 3, 3]})
    agent = agent_for(
        scripted([code("duplicates = orders.duplicated()\nprint(duplicates.sum())"), code("final_answer(3)")]),
        namespace={"orders": orders},
    )
    assert agent.run("How many rows of `orders` repeat an earlier row exactly?\n- `orders`: pandas DataFrame") == 3
    assert [step.error for step in actions(agent)] == [None, None]
