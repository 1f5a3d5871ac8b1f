"""Every example of the smolagents documents in /work/shared/seeds/ that needs no network, run with nbagent.

Each test runs the example's exact text (tests/seeds/snippets.py) through `run_snippet`, which swaps
`smolagents` for `nbagent` and applies only the listed replacements, all of them of a model that would
need a network (-> a ScriptedModel whose answers make the example meaningful, or a loopback server).
The audit of every example and API name is tests/seeds/AUDIT.md.
"""

from __future__ import annotations

import functools
import re
import sys
import time
import types
from io import BytesIO

import pytest
import snippets as S
from seedkit import SEEDS_DIR, OpenAIStub, adapt, call, code, fibonacci, needs_sandbox, normalize, run_snippet

from nbagent import (
    ActionStep,
    CodeAgent,
    ScriptedModel,
    TaskStep,
    ToolCallingAgent,
    tool,
)

SCRIPTED = "MODEL"  # the name a network model is replaced by in the examples


def scripted(*answers) -> ScriptedModel:
    return ScriptedModel(list(answers))


def fib_code(n: int) -> str:
    return f"fib = [0, 1]\nwhile len(fib) <= {n}:\n    fib.append(fib[-1] + fib[-2])\nprint(fib[{n}])"


# ------------------------------------------------------------------------------------------------ the snippets


def test_snippets_are_verbatim_from_the_seed_files():
    if not SEEDS_DIR.is_dir():
        pytest.skip("the seed documents are not on this machine")
    seeds = normalize(" ".join(path.read_text(encoding="utf-8") for path in SEEDS_DIR.glob("0*.txt")))
    assert len(S.ALL) == 33
    for name, text in S.ALL.items():
        assert normalize(text) in seeds, f"{name} is not verbatim from the seeds"


def test_adapt_refuses_a_replacement_that_does_not_match():
    with pytest.raises(AssertionError, match="not in the example"):
        adapt(S.S001_RUN, [("InferenceClientModel()", SCRIPTED)])


# ------------------------------------------------------------------------------------------------ 000: memory


def stepwise_fib_model() -> ScriptedModel:
    return scripted(code(fib_code(20)), code("final_answer(fib[20])", "fib is computed; I return it."))


@needs_sandbox
def test_000_replay_after_a_run(capsys):
    scope = run_snippet(S.S000_RUN, [("InferenceClientModel()", SCRIPTED)], MODEL=stepwise_fib_model())
    assert scope["result"] == fibonacci(20)
    assert capsys.readouterr().out == ""  # verbosity_level=0: the run itself prints nothing
    run_snippet(S.S000_REPLAY, agent=scope["agent"])
    replay = capsys.readouterr().out
    assert "What's the 20th Fibonacci number?" in replay
    assert "fib.append(fib[-1] + fib[-2])" in replay and "final_answer(fib[20])" in replay
    assert str(fibonacci(20)) in replay
    assert replay.index("Step 1") < replay.index("Step 2")


@needs_sandbox
def test_000_memory_inspection_prints_errors_and_observations(capsys):
    model = scripted(
        code("print(fibonacci_table[20])", "Let me use a table."),  # NameError: recorded on step 1
        code(fib_code(20)),
        code("final_answer(fib[20])"),
    )
    scope = run_snippet(S.S000_RUN, [("InferenceClientModel()", SCRIPTED)], MODEL=model)
    # verbosity_level=0 is silent in nbagent (smolagents prints errors at 0; docs/smolagents-compat.md names it)
    assert capsys.readouterr().out == ""
    run_snippet(S.S000_INSPECT, agent=scope["agent"])
    out = capsys.readouterr().out
    system_prompt = scope["agent"].memory.system_prompt.system_prompt
    assert out.startswith("The system prompt given to the agent was:\n" + system_prompt)
    assert "The first task step was:\nWhat's the 20th Fibonacci number?" in out
    error_part = out.split("Step 1 got this error:\n")[1].split("Step 2")[0]
    assert "fibonacci_table" in error_part
    observations = out.split("Step 2 got these observations:\n")[1]
    assert str(fibonacci(20)) in observations
    assert "Step 3 got these observations:" in out
    full = scope["agent"].memory.get_full_steps()
    assert [type(s).__name__ for s in scope["agent"].memory.steps] == [
        "TaskStep",
        "ActionStep",
        "ActionStep",
        "ActionStep",
    ]
    assert full[2]["code_action"] == fib_code(20) and full[3]["action_output"] == fibonacci(20)


def fake_helium(sizes: list[tuple[int, int]]) -> types.ModuleType:
    """A `helium` module whose driver returns a new PNG screenshot at each call (the browser needs a network)."""
    from PIL import Image

    module = types.ModuleType("helium")
    shots = iter(sizes)

    class Driver:
        def get_screenshot_as_png(self) -> bytes:
            buffer = BytesIO()
            Image.new("RGB", next(shots), "white").save(buffer, format="PNG")
            return buffer.getvalue()

    module.get_driver = Driver
    return module


@needs_sandbox
def test_000_step_callback_keeps_only_the_latest_screenshots(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "helium", fake_helium([(10, 10), (20, 20), (30, 30), (40, 40)]))
    sleeps = []
    monkeypatch.setattr(time, "sleep", sleeps.append)  # the callback waits 1 s per step for animations

    @tool
    def go_back() -> None:
        """Goes back to the previous page."""

    @tool
    def close_popups() -> str:
        """Closes any visible modal or pop-up on the page."""
        return "closed"

    @tool
    def search_item_ctrl_f(text: str, nth_result: int = 1) -> str:
        """Searches for text on the current page via Ctrl + F and jumps to the nth occurrence.

        Args:
            text: The text to search for
            nth_result: Which occurrence to jump to (default: 1)
        """
        return f"Found {text!r}"

    model = scripted(
        code("close_popups()"),
        code('search_item_ctrl_f(text="price")'),
        code("go_back()"),
        code('final_answer("done")'),
    )
    scope = run_snippet(
        S.S000_CALLBACK + "\nagent = " + S.S000_CALLBACK_AGENT + '\nresult = agent.run("Find the price on the page")',
        ActionStep=ActionStep,
        CodeAgent=CodeAgent,
        DuckDuckGoSearchTool=__import__("nbagent").DuckDuckGoSearchTool,
        go_back=go_back,
        close_popups=close_popups,
        search_item_ctrl_f=search_item_ctrl_f,
        model=model,
    )
    assert scope["result"] == "done"
    steps = [s for s in scope["agent"].memory.steps if isinstance(s, ActionStep)]
    assert sleeps.count(1.0) == 4  # one wait per step
    sizes = [[image.size for image in s.observations_images] if s.observations_images else None for s in steps]
    assert sizes == [None, None, [(30, 30)], [(40, 40)]]  # steps <= latest - 2 lost their screenshots
    assert "Found 'price'" in capsys.readouterr().out  # verbosity_level=2 prints the run


@needs_sandbox
def test_000_run_one_step_at_a_time(capsys):
    model = scripted(code(fib_code(20)), code("final_answer(fib[20])"))
    scope = run_snippet(S.S000_STEPWISE, [("InferenceClientModel()", SCRIPTED)], MODEL=model)
    out = capsys.readouterr().out
    agent = scope["agent"]
    assert out.startswith(agent.memory.system_prompt.system_prompt)  # print(agent.memory.system_prompt)
    assert out.rstrip().endswith(f"The final answer is: {fibonacci(20)}")
    assert out.index("Step 1") < out.index("fib.append(fib[-1] + fib[-2])") < out.index("Step 2")  # verbosity_level=1
    assert scope["step_number"] == 3  # the loop stopped at the final answer, not after 10 steps
    assert [type(s) for s in agent.memory.steps] == [TaskStep, ActionStep, ActionStep]
    observations = agent.memory.steps[1].observations
    assert str(fibonacci(20)) in observations and "Last output" not in observations  # printed logs, no "None"
    assert len(model.calls) == 2 and "What is the 20th Fibonacci number?" in model.calls[1][1].text


# ------------------------------------------------------------------------------------------------ 001: API reference


@needs_sandbox
def test_001_codeagent_without_a_model_uses_the_offline_default(monkeypatch):
    model = scripted(code("result = 2 ** 3.7384\nfinal_answer(result)"))
    monkeypatch.setattr("nbagent.models.default.default_model", lambda: model)
    scope = run_snippet(S.S001_RUN.replace("agent.run(", "result = agent.run("))
    assert scope["result"] == pytest.approx(2**3.7384)
    assert scope["agent"].model is model


@pytest.mark.slow
@pytest.mark.model
@needs_sandbox
def test_001_example_verbatim_with_the_real_offline_default_model():
    """No replacement at all: the offline default model writes the code (about 2.5 min on 2 shared cores)."""
    scope = run_snippet(S.S001_RUN.replace("agent.run(", "result = agent.run("))
    assert scope["result"] == pytest.approx(2**3.7384, rel=1e-6)


def test_001_documented_constructor_parameters(tmp_path):
    from nbagent import LogLevel, PromptTemplates

    seen = []
    checks = []
    helper = ToolCallingAgent(
        tools=[], model=scripted(call("final_answer", answer="helped")), name="helper", description="Helps."
    )
    agent = ToolCallingAgent(
        tools=[],
        model=scripted(call("final_answer", answer="too short"), call("final_answer", answer="a long enough answer")),
        prompt_templates=PromptTemplates(
            final_answer={"pre_messages": "Answer now.", "post_messages": "Task: {{task}}"}
        ),
        max_steps=6,
        add_base_tools=True,
        verbosity_level=LogLevel.OFF,
        managed_agents=[helper],
        step_callbacks=[lambda step, agent: seen.append(step.step_number)],
        planning_interval=None,
        name="main",
        description="The main agent.",
        provide_run_summary=True,
        final_answer_checks=[lambda answer, memory: checks.append(answer) or len(answer) > 10],
    )
    assert agent.run("Say something long") == "a long enough answer"
    assert checks == ["too short", "a long enough answer"] and seen == [1, 2]
    assert "too short" in str(agent.memory.steps[1].error)
    assert set(agent.tools) == {"final_answer", "python_interpreter", "visit_webpage"}
    assert agent.managed_agents == {"helper": helper} and agent.max_steps == 6
    assert agent.prompt_templates["final_answer"]["pre_messages"] == "Answer now."


def test_001_removed_options_are_accepted_when_off_and_refused_when_on():
    with pytest.warns(DeprecationWarning) as record:
        agent = ToolCallingAgent(tools=[], model=scripted(), grammar=None, tool_parser=None)
    assert [str(w.message).split("(")[1].split("=")[0] for w in record] == ["grammar", "tool_parser"]
    assert all(w.filename == __file__ for w in record)  # the warning points at the caller's line
    assert agent.max_steps == 20
    with pytest.raises(TypeError, match=r"grammar=\{.*response_format"):
        ToolCallingAgent(tools=[], model=scripted(), grammar={"type": "regex", "value": ".*"})
    with pytest.raises(TypeError, match="parse_tool_calls"):
        ToolCallingAgent(tools=[], model=scripted(), tool_parser=lambda text: text)


def test_001_agent_methods(tmp_path, capsys):
    from nbagent import MultiStepAgent, from_hub

    @tool
    def shout(text: str) -> str:
        """Uppercases a text.

        Args:
            text: the text
        """
        return text.upper()

    agent = ToolCallingAgent(
        tools=[shout], model=scripted(call("shout", text="hi"), call("final_answer", answer="HI")), verbosity_level=-1
    )
    assert agent.run("Shout hi") == "HI"
    assert agent.execute_tool_call("shout", {"text": "abc"}) == "ABC"
    assert agent.extract_action("Thought: think\nAction: {'a': 1}", "Action:") == ("Thought: think", "{'a': 1}")
    assert "shout" in agent.initialize_system_prompt()
    agent.model = scripted("From memory: HI")
    message = agent.provide_final_answer("Shout hi", images=None)
    assert message.content == "From memory: HI"
    summary = agent.write_memory_to_messages(summary_mode=True)
    assert all(m.role.value != "system" for m in summary) and len(summary) < len(agent.write_memory_to_messages())
    agent.replay(detailed=True)
    replay = capsys.readouterr().out
    assert "Shout hi" in replay and "Observation of shout:\nHI" in replay
    agent.visualize()
    tree = capsys.readouterr().out
    assert "ToolCallingAgent" in tree and "shout" in tree and "Uppercases a text." in tree and "text (string)" in tree
    assert agent.to_dict()["tools"][0]["name"] == "shout"
    agent.save(str(tmp_path / "saved"), relative_path=None)
    loaded = ToolCallingAgent.from_folder(str(tmp_path / "saved"), model=scripted())
    assert set(loaded.tools) == {"shout", "final_answer"} and loaded.tools["shout"]("x") == "X"
    assert isinstance(MultiStepAgent.from_dict(agent.to_dict(), model=scripted()), ToolCallingAgent)
    assert type(from_hub(str(tmp_path / "saved"), trust_remote_code=True, model=scripted())) is ToolCallingAgent
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        from_hub(str(tmp_path / "saved"))


def test_001_prompt_template_types():
    from nbagent import FinalAnswerPromptTemplate, ManagedAgentPromptTemplate, PlanningPromptTemplate, PromptTemplates
    from nbagent.prompts import PromptTemplateError

    assert set(ManagedAgentPromptTemplate.__annotations__) == {"task", "report"}
    assert set(FinalAnswerPromptTemplate.__annotations__) == {"pre_messages", "post_messages"}
    assert {"initial_plan", "update_plan_pre_messages", "update_plan_post_messages"} == set(
        PlanningPromptTemplate.__annotations__
    )
    templates = PromptTemplates(
        managed_agent=ManagedAgentPromptTemplate(task="Do: {{task}}", report="{{final_answer}}!")
    )
    helper = ToolCallingAgent(
        tools=[],
        model=scripted(call("final_answer", answer="ok")),
        prompt_templates=templates,
        name="helper",
        description="Helps.",
        verbosity_level=-1,
    )
    assert helper("the dishes") == "ok!"
    assert helper.memory.steps[0].task == "Do: the dishes"
    # smolagents 1.9's separate "facts" templates were merged into the plan (as in smolagents >= 1.10)
    with pytest.raises(PromptTemplateError, match="initial_facts"):
        ToolCallingAgent(tools=[], model=scripted(), prompt_templates={"planning": {"initial_facts": "x"}})


def test_001_gradio_ui_without_gradio_points_to_the_widget(monkeypatch):
    from nbagent import GradioUI, stream_to_gradio

    monkeypatch.setitem(sys.modules, "gradio", None)  # as where gradio is not installed (the test extra has it)
    agent = ToolCallingAgent(tools=[], model=scripted())
    with pytest.raises(ImportError, match=r"pip install gradio.*agent\.widget.*%%agent.*nbagent run"):
        GradioUI(agent)
    with pytest.raises(ImportError, match="pip install gradio"):
        next(stream_to_gradio(agent, "a task"))


# ------------------------------------------------------------------------------------------------ 002: deep dive


@needs_sandbox
def test_002_litellm_example_agent_part():
    """The example's LiteLLMModel needs litellm and an Ollama server: the agent runs with a ScriptedModel."""
    model_call = S.S002_LITELLM[S.S002_LITELLM.index("LiteLLMModel(\n") : S.S002_LITELLM.index("\n)\n") + 2]
    model = scripted(code(fib_code(118)), code("final_answer(fib[118])"))
    scope = run_snippet(
        S.S002_LITELLM.replace("agent.run(", "result = agent.run("), [(model_call, SCRIPTED)], MODEL=model
    )
    assert scope["result"] == fibonacci(118)
    assert {"final_answer", "visit_webpage"} <= set(scope["agent"].tools) and "python_interpreter" not in scope[
        "agent"
    ].tools


def test_002_openai_example_against_a_local_server(monkeypatch):
    """The example runs as written, with the API base pointed at a loopback OpenAI-compatible server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    script = [
        {"name": "web_search", "arguments": {"query": "distance Detroit Chicago"}},
        {"name": "final_answer", "arguments": {"answer": "About 280 miles (450 km) by road."}},
    ]
    with OpenAIStub(script) as stub:
        source = S.S002_OPENAI.replace('agent.run("What', 'result = agent.run("What')
        scope = run_snippet(source, [('"https://api.openai.com/v1"', repr(stub.url))])
    assert scope["result"] == "About 280 miles (450 km) by road."
    first = scope["agent"].memory.steps[1]
    assert "web_search" in str(first.error) and "pip install ddgs" in str(first.error)
    assert len(stub.requests) == 2 and stub.requests[0]["model"] == "gpt-4o-mini"
    assert {t["function"]["name"] for t in stub.requests[0]["tools"]} == {"web_search", "final_answer"}
    assert "pip install ddgs" in str(stub.requests[1]["messages"])  # the model was shown the error


def test_002_model_is_called_with_messages_and_options():
    model = scripted("Thought: done")
    message = model([{"role": "user", "content": "hi"}], stop_sequences=["<end_code>", "Observation:"])
    assert message.content == "Thought: done" and message.role.value == "assistant"


@needs_sandbox
def test_002_code_in_the_v19_prompt_format_runs():
    """smolagents 1.9's format: 'Code:' then a ```py block closed by <end_code>."""
    answer = "Thought: I will compute it.\nCode:\n```py\nresult = sum(range(10))\nfinal_answer(result)\n```<end_code>"
    agent = CodeAgent(tools=[], model=scripted(answer), verbosity_level=-1)
    assert agent.run("Sum 0..9") == 45


def test_002_tool_calling_final_answer_names_a_state_variable():
    agent = ToolCallingAgent(tools=[], model=scripted(call("final_answer", answer="report")), verbosity_level=-1)
    assert agent.run("Return the report", additional_args={"report": {"rows": 3}}) == {"rows": 3}


@needs_sandbox
def test_002_python_executor_runs_code():
    agent = CodeAgent(tools=[], model=scripted())
    result = agent.python_executor("x = 2\nprint('x is', x)\nx * 21")
    assert result.output == 42 and "x is 2" in result.logs and result.is_final_answer is False


# ------------------------------------------------------------------------------------------------ 003: complete guide


@needs_sandbox
def test_003_first_agent_with_default_tools():
    model = scripted(code(fib_code(118)), code("final_answer(fib[118])"))
    scope = run_snippet(
        S.S003_FIRST, [('InferenceClientModel(model_id="meta-llama/Llama-3.3-70B-Instruct")', SCRIPTED)], MODEL=model
    )
    assert scope["result"] == fibonacci(118)


@needs_sandbox
def test_003_local_transformers_example_agent_part():
    model_call = S.S003_TRANSFORMERS[
        S.S003_TRANSFORMERS.index("TransformersModel(\n") : S.S003_TRANSFORMERS.index("\n)\n") + 2
    ]
    primes = (
        "primes = []\nn = 2\nwhile len(primes) < 1000:\n"
        "    if all(n % p for p in primes if p * p <= n):\n        primes.append(n)\n    n += 1\nfinal_answer(sum(primes))"
    )
    scope = run_snippet(S.S003_TRANSFORMERS, [(model_call, SCRIPTED)], MODEL=scripted(code(primes)))
    expected, n, found = 0, 2, 0
    while found < 1000:
        if all(n % d for d in range(2, int(n**0.5) + 1)):
            expected, found = expected + n, found + 1
        n += 1
    assert scope["result"] == expected


@needs_sandbox
def test_003_api_model_example_agent_part(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
    model_call = S.S003_LITELLM[S.S003_LITELLM.index("LiteLLMModel(\n") : S.S003_LITELLM.index("\n)\n") + 2]
    answer = code(
        "def is_palindrome(text):\n    letters = [c.lower() for c in text if c.isalnum()]\n    return letters == letters[::-1]\n"
        "final_answer([is_palindrome('A man, a plan, a canal: Panama'), is_palindrome('nbagent')])"
    )
    scope = run_snippet(S.S003_LITELLM, [(model_call, SCRIPTED)], MODEL=scripted(answer))
    assert scope["result"] == [True, False]


def test_003_web_search_tool_offline_gives_a_clear_error():
    before, _, _ = S.S003_WEBSEARCH.partition("# Create agent with tools")
    with pytest.raises(
        ImportError, match=r"web_search needs the `ddgs` package \(`pip install ddgs`\) and network access"
    ):
        run_snippet(before)


@needs_sandbox
def test_003_agent_with_web_search_tool_reports_the_error_and_goes_on():
    _, _, agent_part = S.S003_WEBSEARCH.partition("# Create agent with tools")
    model = scripted(code('print(web_search("tallest NBA player"))'), code('final_answer("Gheorghe Muresan (2.31 m)")'))
    scope = run_snippet(
        agent_part,
        [("InferenceClientModel()", SCRIPTED)],
        MODEL=model,
        search_tool=__import__("nbagent").WebSearchTool(),
        CodeAgent=CodeAgent,
    )
    assert scope["result"] == "Gheorghe Muresan (2.31 m)"
    assert "pip install ddgs" in str(scope["agent"].memory.steps[1].error)


@needs_sandbox
def test_003_tool_decorator_example(fake_list_models):
    model = scripted(code('final_answer(model_download_tool(task="text-to-image"))'))
    scope = run_snippet(
        S.S003_TOOL_DECORATOR.replace("agent.run(", "result = agent.run("),
        [("InferenceClientModel()", SCRIPTED)],
        MODEL=model,
    )
    assert scope["result"] == "black-forest-labs/FLUX.1-dev"
    assert fake_list_models == [{"filter": "text-to-image", "sort": "downloads", "direction": -1}]


def test_003_tool_subclass_without_inputs_reads_them_from_forward():
    source = S.S003_TOOL_SUBCLASS.split("# Create agent with custom tool class")[0]
    scope = run_snippet(source)
    weather = scope["WeatherTool"](api_key="your_api_key")
    assert weather.inputs == {"location": {"type": "string", "description": 'City and country (e.g., "Paris, France")'}}
    assert weather.output_type == "object"
    assert weather("Paris, France") == {"location": "Paris, France", "temperature": 22.5, "conditions": "Partly cloudy"}


@needs_sandbox
def test_003_tool_subclass_example_builds_the_agent():
    scope = run_snippet(S.S003_TOOL_SUBCLASS, [("InferenceClientModel()", SCRIPTED)], MODEL=scripted())
    # the tool is shown as smolagents 1.26 shows it: JSON-schema type names
    assert "def weather_tool(location: string) -> object:" in scope["agent"].system_prompt


@needs_sandbox
def test_003_authorized_imports():
    answer = code(
        "import numpy as np\nimport pandas as pd\nframe = pd.DataFrame({'x': np.arange(4)})\nfinal_answer(int(frame.x.sum()))"
    )
    scope = run_snippet(
        S.S003_IMPORTS + '\nresult = agent.run("Sum 0..3 with pandas")',
        [("InferenceClientModel()", SCRIPTED)],
        MODEL=scripted(code("import subprocess"), answer),
    )
    assert scope["result"] == 6
    assert "subprocess" in str(scope["agent"].memory.steps[1].error)


@needs_sandbox
@pytest.mark.parametrize("name", ["S003_E2B", "S003_DOCKER"])
def test_003_remote_executors_are_refused_clearly(name):
    with pytest.raises(ValueError, match="not supported"):
        run_snippet(getattr(S, name), [("InferenceClientModel()", SCRIPTED)], MODEL=scripted())


@needs_sandbox
def test_003_multi_agent_system():
    model = scripted(
        code('notes = web_search(task="impact of climate change on coral reefs")\nprint(notes)'),  # manager
        code('final_answer("Warming seas bleach corals; acidification slows their growth.")'),  # web agent
        code("final_answer(notes)"),  # manager
    )
    source = S.S003_MULTI_AGENT.replace("InferenceClientModel()", SCRIPTED)
    scope = run_snippet(source, MODEL=model)
    manager, web_agent = scope["manager_agent"], scope["web_agent"]
    assert "Warming seas bleach corals" in scope["result"]
    assert "impact of climate change on coral reefs" in web_agent.memory.steps[0].task
    assert "web_search" in manager.system_prompt and "Runs web searches for you." in manager.system_prompt


@needs_sandbox
def test_003_inspecting_runs(capsys):
    agent = CodeAgent(
        tools=[], model=scripted(code("x = 6 * 7\nprint(x)"), code("final_answer(x)")), verbosity_level=-1
    )
    with pytest.warns(DeprecationWarning, match="agent.logs is deprecated"):
        run_snippet(S.S003_INSPECT, agent=agent)
    out = capsys.readouterr().out
    assert "Step 1:\nCode executed: x = 6 * 7\nprint(x)\nOutput: None\nDuration: " in out
    assert "Step 2:\nCode executed: final_answer(x)\nOutput: 42\n" in out
    assert re.search(r"Duration: \d+\.\d+(e-\d+)? seconds", out)
    assert "system: " in out and "user: [{'type': 'text', 'text': 'New task:\\nYour task here'}]" in out


@needs_sandbox
def test_003_additional_args():
    url = "https://example.com/image.jpg"
    agent = CodeAgent(tools=[], model=scripted(code("final_answer(image_url)")), verbosity_level=-1)
    scope = run_snippet("result = " + S.S003_ADDITIONAL_ARGS, agent=agent)
    assert scope["result"] == url
    assert agent.task == agent.memory.steps[0].task and "image_url" in agent.task and url in agent.task


@needs_sandbox
def test_003_planning_interval():
    answers = ["1. Count.", code("x = 1"), code("x += 1"), code("x += 1"), "1. Return x.", code("final_answer(x + 1)")]
    scope = run_snippet(
        S.S003_PLANNING + '\nresult = agent.run("Count to four")',
        [("InferenceClientModel()", SCRIPTED)],
        MODEL=scripted(*answers),
        CodeAgent=CodeAgent,
    )
    assert scope["result"] == 4
    kinds = [type(s).__name__ for s in scope["agent"].memory.steps]
    assert kinds == ["TaskStep", "PlanningStep", "ActionStep", "ActionStep", "ActionStep", "PlanningStep", "ActionStep"]
    assert "1. Return x." in scope["agent"].memory.steps[5].plan


@needs_sandbox
def test_003_gradio_example_without_gradio(monkeypatch):
    monkeypatch.setitem(sys.modules, "gradio", None)  # as where gradio is not installed (the test extra has it)
    with pytest.raises(ImportError, match="agent.widget"):
        run_snippet(S.S003_GRADIO, [("InferenceClientModel()", SCRIPTED)], MODEL=scripted())


@needs_sandbox
def test_003_sharing_and_loading_agents(tmp_path, monkeypatch):
    import huggingface_hub

    uploads = []

    class LocalHub:
        """Records what would be uploaded to the Hub (a network service)."""

        def __init__(self, token=None):
            pass

        def create_repo(self, repo_id, **kwargs):
            return repo_id

        def upload_folder(self, repo_id, folder_path, **kwargs):
            target = tmp_path / "hub" / repo_id
            __import__("shutil").copytree(folder_path, target)
            uploads.append((repo_id, kwargs.get("repo_type")))
            return f"uploaded {repo_id}"

    monkeypatch.setattr(huggingface_hub, "HfApi", LocalHub)
    agent = CodeAgent(
        tools=[], model=ScriptedModel([code("final_answer(1)")]), name="my_agent", description="Answers 1."
    )
    run_snippet(S.S003_PUSH, agent=agent)
    assert uploads == [("username/my-agent", "space")]
    folder = tmp_path / "hub" / "username/my-agent"
    assert (folder / "agent.json").is_file()
    scope = run_snippet(S.S003_FROM_HUB, [('"username/my-agent"', repr(str(folder)))])
    loaded = scope["agent"]
    assert type(loaded) is CodeAgent and loaded.name == "my_agent" and loaded.run("one?") == 1


# ------------------------------------------------------------------------------------------------ 004: guided tour


@needs_sandbox
def test_004_first_agent():
    model = scripted(code(fib_code(118)), code("final_answer(fib[118])"))
    source = S.S004_FIRST.replace("agent.run(", "result = agent.run(")
    with pytest.warns(DeprecationWarning, match="HfApiModel is deprecated"):
        scope = run_snippet(
            source,
            [("agent = CodeAgent(tools=[], model=model", "agent = CodeAgent(tools=[], model=MODEL")],
            MODEL=model,
        )
    assert scope["model"].model_id == "meta-llama/Llama-3.3-70B-Instruct"  # constructed offline, never called
    assert scope["result"] == fibonacci(118)


@needs_sandbox
def test_004_authorized_imports_requests_and_bs4():
    pytest.importorskip("bs4")
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    class Blog(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<html><head><title>Hugging Face - Blog</title></head><body>posts</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Blog)
    Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/blog"
    answer = code(
        f"import requests\nfrom bs4 import BeautifulSoup\npage = requests.get('{url}', timeout=5)\n"
        "final_answer(BeautifulSoup(page.text, 'html.parser').title.string)"
    )
    try:
        scope = run_snippet(
            S.S004_IMPORTS.replace("agent.run(", "result = agent.run("),
            [("HfApiModel()", SCRIPTED), ("https://huggingface.co/blog", url)],
            MODEL=scripted(answer),
            # the isolated executor, granted the network by the `requests` import, connects to ports 80/443
            # only: this test's loopback server listens on a free port, so the example runs locally here
            CodeAgent=functools.partial(CodeAgent, executor_type="local"),
        )
    finally:
        server.shutdown()
    assert scope["result"] == "Hugging Face - Blog"


@needs_sandbox
def test_004_e2b_executor_option():
    with pytest.raises(TypeError, match="use_e2b_executor=True.*local sandbox"):
        CodeAgent(tools=[], model=scripted(), use_e2b_executor=True)
    with pytest.warns(DeprecationWarning, match="use_e2b_executor"):
        CodeAgent(tools=[], model=scripted(), use_e2b_executor=False)


def test_004_tool_calling_agent():
    model = scripted(call("final_answer", answer="I have no tool to open web pages."))
    scope = run_snippet(S.S004_TOOLCALLING.replace("agent.run(", "result = agent.run("), model=model)
    assert scope["result"] == "I have no tool to open web pages."
    assert set(scope["agent"].tools) == {"final_answer"}
    assert "https://huggingface.co/blog" in model.calls[0][1].text


def test_004_inspecting_logs_and_messages():
    agent = ToolCallingAgent(tools=[], model=scripted(call("final_answer", answer="42")), verbosity_level=-1)
    agent.run("What is 6 * 7?")
    with pytest.warns(DeprecationWarning):
        logs = agent.logs
    assert len(logs) == 1 and logs[0]["step_number"] == 1 and logs[0]["output"] == "42"
    assert logs[0].tool_calls[0].name == "final_answer" and logs[0]["duration"] >= 0
    messages = agent.write_memory_to_messages()
    assert [m["role"] for m in messages][:2] == ["system", "user"] and "What is 6 * 7?" in messages[1]["content"][0][
        "text"
    ]


def test_004_python_interpreter_tool_attributes():
    from nbagent.tools import PythonInterpreterTool

    interpreter = PythonInterpreterTool()
    assert interpreter.name == "python_interpreter" and "python code" in interpreter.description
    assert list(interpreter.inputs) == ["code"] and interpreter.output_type == "string"
    assert callable(interpreter.forward)


def test_004_duckduckgo_search_tool_offline_gives_a_clear_error():
    with pytest.raises(ImportError, match=r"pip install ddgs"):
        run_snippet(S.S004_DDG)


def test_004_tool_without_decorator_is_refused_clearly(fake_list_models):
    from huggingface_hub import list_models

    scope = run_snippet(S.S004_TOOL_DEF, list_models=list_models)
    with pytest.raises(TypeError, match="use the @tool decorator"):
        ToolCallingAgent(tools=[scope["model_download_tool"]], model=scripted())


@needs_sandbox
def test_004_model_download_tool_run_and_its_logs(fake_list_models, capsys):
    from huggingface_hub import list_models

    definition = S.S004_TOOL_DEF.replace("\n\n\ndef model_download_tool", "\n\n\n@tool\ndef model_download_tool")
    model = scripted(
        code('model_name = model_download_tool(task="text-to-video")\nprint(model_name)'),
        code('final_answer("ByteDance/AnimateDiff-Lightning")'),
    )
    scope = run_snippet(
        definition + "\n" + S.S004_TOOL_AGENT.replace("agent.run(", "result = agent.run("),
        [("HfApiModel()", SCRIPTED)],
        MODEL=model,
        list_models=list_models,
    )
    assert scope["result"] == "ByteDance/AnimateDiff-Lightning"
    out = capsys.readouterr().out
    for expected in (
        "New run",
        "Can you give me the name of the model",
        "'text-to-video'",
        "Step 1",
        "Executing this code",
        'model_name = model_download_tool(task="text-to-video")',
        "Execution logs:",
        "ByteDance/AnimateDiff-Lightning",
        "Step 2",
        "Final answer: ByteDance/AnimateDiff-Lightning",
    ):
        assert expected in out, expected
    assert re.search(r"Input tokens: [\d,]+ \| Output tokens: [\d,]+", out)


@needs_sandbox
def test_004_managed_agent_example():
    model = scripted(
        code('ceo = web_search(task="Who is the CEO of Hugging Face?")\nprint(ceo)'),  # manager
        code('final_answer("Clément Delangue")'),  # web agent
        code("final_answer(ceo)"),  # manager
    )
    source = S.S004_MANAGED.replace("manager_agent.run(", "result = manager_agent.run(")
    with pytest.warns(DeprecationWarning, match="ManagedAgent is deprecated"):
        scope = run_snippet(source, [("model = HfApiModel()", "model = MODEL")], MODEL=model)
    assert scope["managed_web_agent"] is scope["web_agent"] and scope["web_agent"].name == "web_search"
    assert "Clément Delangue" in scope["result"]
    assert "Who is the CEO of Hugging Face?" in scope["web_agent"].memory.steps[0].task


@needs_sandbox
def test_004_gradio_example_offline(monkeypatch):
    monkeypatch.setitem(sys.modules, "gradio", None)  # as where gradio is not installed (the test extra has it)

    @tool
    def image_generator(prompt: str) -> str:
        """Stands for the Hub's text-to-image tool (loading it needs a network).

        Args:
            prompt: what to draw
        """
        return prompt

    source = S.S004_GRADIO.replace("model = HfApiModel(model_id)", "model = MODEL")
    with pytest.raises(ImportError, match="agent.widget"):
        run_snippet(
            source,
            [('load_tool("m-ric/text-to-image", trust_remote_code=True)', "image_generator")],
            MODEL=scripted(),
            image_generator=image_generator,
        )


def test_004_load_tool_requires_trust_before_any_download():
    from nbagent import load_tool

    with pytest.raises(ValueError, match="trust_remote_code=True"):
        load_tool("m-ric/text-to-image")


@needs_sandbox
def test_004_reset_false_keeps_the_conversation():
    model = scripted(code("final_answer(7)"), code("final_answer(7 * 2)"))
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1)
    assert agent.run("Pick a number") == 7
    assert agent.run("Double it", reset=False) == 14
    second_call = "\n".join(m.text for m in model.calls[1])
    assert "Pick a number" in second_call and "final_answer(7)" in second_call
    assert [s.task for s in agent.memory.steps if isinstance(s, TaskStep)] == ["Pick a number", "Double it"]
