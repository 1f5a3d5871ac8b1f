"""The compatibility pieces the seed examples rely on: their own behaviour and error paths."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from seedkit import OpenAIStub, call, code, needs_sandbox

from nbagent import DuckDuckGoSearchTool, ManagedAgent, ScriptedModel, ToolCallingAgent, WebSearchTool, cli
from nbagent.agents.legacy import StepLog
from nbagent.gradio_ui import GradioUI, gradio_messages, stream_to_gradio
from nbagent.models.spec import model_from_type
from nbagent.views.tree import agent_tree


def agent_answering(*answers, **options) -> ToolCallingAgent:
    return ToolCallingAgent(tools=[], model=ScriptedModel(list(answers)), verbosity_level=-1, **options)


# ------------------------------------------------------------------------------------------------ ManagedAgent


def test_managed_agent_sets_name_and_description_and_returns_the_agent():
    agent = agent_answering(call("final_answer", answer="done"))
    with pytest.warns(DeprecationWarning, match="pass name= and description= to the agent"):
        managed = ManagedAgent(
            agent, "helper", "Does things.", additional_prompting="Be brief.", provide_run_summary=True
        )
    assert managed is agent
    assert (agent.name, agent.description, agent.provide_run_summary) == ("helper", "Does things.", True)
    assert "Be brief." in agent.instructions and "Be brief." in agent.initialize_system_prompt()


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        (("not a name", "d"), ValueError, "valid Python identifier"),
        (("helper", ""), ValueError, "needs a description"),
        (("helper", "d", None, False, "{task}"), TypeError, "prompt_templates="),
    ],
)
def test_managed_agent_bad_arguments(arguments, error, message):
    with pytest.warns(DeprecationWarning), pytest.raises(error, match=message):
        ManagedAgent(agent_answering(), *arguments)


def test_managed_agent_needs_an_agent():
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="takes a CodeAgent or ToolCallingAgent"):
        ManagedAgent(lambda task: task, "helper", "d")


# ------------------------------------------------------------------------------------------------ logs, visualize


def test_step_log_is_a_dict_and_reads_the_step():
    agent = agent_answering(call("final_answer", answer=7))
    agent.run("Seven?")
    step = agent.memory.steps[1]
    log = StepLog(step)
    assert log["step_number"] == 1 and log["output"] == 7 and log["code"] is None
    assert log["observation"] == step.observations and log["duration"] == step.timing.duration
    assert log.model_output_message is step.model_output_message  # attribute access reads the step
    with pytest.raises(AttributeError):
        log.no_such_field  # noqa: B018


def test_visualize_shows_the_team():
    helper = agent_answering(name="helper", description="Finds facts.")
    manager = agent_answering(managed_agents=[helper])
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(agent_tree(manager))
    text = console.export_text()
    assert "ToolCallingAgent | ScriptedModel scripted" in text
    assert "Managed agents:" in text and "helper | ToolCallingAgent" in text and "Finds facts." in text
    assert text.count("final_answer") == 2  # each agent's tool table


# ------------------------------------------------------------------------------------------------ web search


def fake_ddgs(monkeypatch, results=None, failure=None, module="ddgs"):
    calls = []

    class DDGS:
        def __init__(self, **kwargs):
            calls.append(("init", kwargs))

        def text(self, query, **options):
            calls.append(("text", query, options))
            if failure:
                raise failure
            return results

    DDGS.__module__ = f"{module}.ddgs"  # where the real class lives: the backend option depends on the package
    monkeypatch.setitem(sys.modules, module, types.SimpleNamespace(DDGS=DDGS))
    return calls


def test_web_search_formats_results(monkeypatch):
    calls = fake_ddgs(
        monkeypatch, [{"title": "Paris", "href": "https://fr.example/paris", "body": "Capital of France."}]
    )
    out = WebSearchTool(max_results=3)("capital of France")
    assert out == "## Search Results\n\n[Paris](https://fr.example/paris)\nCapital of France."
    assert calls == [("init", {}), ("text", "capital of France", {"max_results": 3, "backend": "duckduckgo"})]


def test_duckduckgo_tool_passes_its_options(monkeypatch):
    calls = fake_ddgs(monkeypatch, [], module="duckduckgo_search")  # the package's former name: no backend option
    monkeypatch.setitem(sys.modules, "ddgs", None)  # not installed
    assert "No results found" in DuckDuckGoSearchTool(max_results=5, timeout=9)("zzzz")
    assert calls == [("init", {"timeout": 9}), ("text", "zzzz", {"max_results": 5})]


def test_web_search_network_failure_is_explained(monkeypatch):
    fake_ddgs(monkeypatch, failure=ConnectionError("Name or service not known"))
    with pytest.raises(RuntimeError, match=r"failed \(ConnectionError: Name or service not known\).*network access"):
        WebSearchTool()("anything")


def test_web_search_engine_is_checked():
    assert WebSearchTool(engine="bing").backend == "bing"
    with pytest.raises(ValueError, match="duckduckgo, bing"):
        WebSearchTool(engine="altavista")


def test_web_search_tools_are_valid_agent_tools():
    agent = ToolCallingAgent(tools=[DuckDuckGoSearchTool()], model=ScriptedModel([]))
    assert "web_search" in agent.tools and "web_search:" in agent.system_prompt


# ------------------------------------------------------------------------------------------------ gradio


@pytest.fixture
def fake_gradio(monkeypatch):
    """A stand-in for the gradio package: its ChatMessage keeps what it is given."""

    class ChatMessage:
        def __init__(self, role, content, metadata=None):
            self.role, self.content, self.metadata = role, content, metadata or {}

    module = types.SimpleNamespace(ChatMessage=ChatMessage)
    monkeypatch.setitem(sys.modules, "gradio", module)
    return module


def test_stream_to_gradio_turns_the_event_stream_into_chat_messages(fake_gradio):
    @__import__("nbagent").tool
    def double(x: int) -> int:
        """Doubles.

        Args:
            x: a number
        """
        return 2 * x

    agent = ToolCallingAgent(tools=[double], model=ScriptedModel([call("double", x=4), call("final_answer", answer=8)]))
    messages = list(stream_to_gradio(agent, "Double 4"))
    assert all(isinstance(m, fake_gradio.ChatMessage) and m.role == "assistant" for m in messages)
    titles = [m.metadata.get("title") for m in messages]
    assert "🛠️ Used tool double" in titles and "📝 Execution Logs" in titles
    logs = messages[titles.index("📝 Execution Logs")].content
    assert "Observation of double:\n8" in logs
    assert messages[-1].content == "**Final answer:** 8"


def test_gradio_messages_for_errors_code_and_plans():
    from nbagent import ActionStep, PlanningStep
    from nbagent.errors import AgentExecutionError

    step = ActionStep(
        step_number=3,
        model_output="Thought: try.\n```python\n1/0\n```",
        code_action="1/0",
        error=AgentExecutionError("ZeroDivisionError: division by zero"),
    )
    messages = gradio_messages(step)
    assert messages[0]["content"] == "**Step 3**" and messages[1]["content"] == "Thought: try."
    assert {
        "content": "```python\n1/0\n```",
        "role": "assistant",
        "metadata": {"title": "🛠️ Used tool python_interpreter"},
    } in messages
    assert messages[-2] == {
        "role": "assistant",
        "content": "ZeroDivisionError: division by zero",
        "metadata": {"title": "💥 Error"},
    }
    plan = gradio_messages(PlanningStep(plan="1. Do it."))
    assert plan[0] == {"role": "assistant", "content": "1. Do it.", "metadata": {"title": "🧠 Planning"}}


def test_gradio_ui_interaction_and_uploads(fake_gradio, tmp_path):
    agent = ToolCallingAgent(
        tools=[], model=ScriptedModel([call("final_answer", answer="one"), call("final_answer", answer="two")])
    )
    ui = GradioUI(agent, file_upload_folder=str(tmp_path / "uploads"))
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    status, log = ui.upload_file(types.SimpleNamespace(name=str(notes)), [])
    assert status.startswith("File uploaded") and Path(log[0]).read_text() == "hello"
    refused, same = ui.upload_file(str(tmp_path / "run.exe"), log)
    assert "not allowed" in refused and same == log
    history = list(ui.interact("First", [], log))[-1]
    assert history[0].role == "user" and history[-1].content == "**Final answer:** one"
    assert "notes.txt" in agent.memory.steps[0].task
    list(ui.interact("Second", history, []))
    assert [s.task for s in agent.memory.steps if type(s).__name__ == "TaskStep"][-1] == "Second"
    assert len([s for s in agent.memory.steps if type(s).__name__ == "TaskStep"]) == 2  # reset=False: one conversation


# ------------------------------------------------------------------------------------------------ CLI


def test_cli_smolagent_style_options_against_a_local_server(capsys):
    script = [
        {"name": "web_search", "arguments": {"query": "Tokyo in March"}},
        {"name": "final_answer", "arguments": {"answer": "Go for the cherry blossoms."}},
    ]
    with OpenAIStub(script) as stub:
        status = cli.main(
            [
                "run",
                "Plan a trip to Tokyo in March",
                "--model-type",
                "OpenAIServerModel",
                "--model-id",
                "stub-model",
                "--api-base",
                stub.url,
                "--api-key",
                "sk-local",
                "--tools",
                "web_search",
                "--action-type",
                "tool_calling",
                "--verbosity-level",
                "0",
            ]
        )
    assert status == 0
    assert capsys.readouterr().out.strip().endswith("Go for the cherry blossoms.")
    assert stub.requests[0]["model"] == "stub-model"
    assert "pip install ddgs" in str(stub.requests[1]["messages"])


@needs_sandbox
def test_cli_code_agent_with_model_type(capsys):
    with OpenAIStub([code("final_answer(2 ** 10)")]) as stub:
        status = cli.main(
            [
                "run",
                "What is 2**10?",
                "--model-type",
                "OpenAIServerModel",
                "--model-id",
                "stub",
                "--api-base",
                stub.url,
                "--api-key",
                "k",
                "--verbosity",
                "-1",
            ]
        )
    assert status == 0 and capsys.readouterr().out.strip() == "1024"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--model-id", "x"], "go with --model-type"),
        (["--model", "default", "--model-type", "OpenAIServerModel"], "not both"),
        (["--model-type", "NoSuchModel"], "Unknown --model-type 'NoSuchModel'"),
        (
            ["--model-type", "TransformersModel", "--model-id", "x", "--api-base", "http://h"],
            "--api-base is for API models",
        ),
        (
            ["--model-type", "OpenAIServerModel", "--model-id", "x", "--provider", "together"],
            "--provider does not apply",
        ),
    ],
)
def test_cli_model_type_errors(arguments, message, capsys):
    assert cli.main(["run", "task", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_model_from_type_maps_api_options():
    model = model_from_type(
        "InferenceClientModel", "org/model", api_base="http://127.0.0.1:1", api_key="k", provider=None
    )
    assert model.model_id == "org/model" and model.base_url == "http://127.0.0.1:1"
    openai_model = model_from_type("OpenAIServerModel", "gpt", api_base="http://127.0.0.1:1/v1", api_key="k")
    assert openai_model.api_base == "http://127.0.0.1:1/v1"
    with pytest.raises(ValueError, match="needs --model-id"):
        model_from_type("TransformersModel")


def test_gradio_ui_with_real_gradio(monkeypatch):
    """Runs only where gradio is installed (not a dependency): a live server answering a gradio client."""
    pytest.importorskip("gradio")
    gradio_client = pytest.importorskip("gradio_client")
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    agent = ToolCallingAgent(tools=[], model=ScriptedModel([call("final_answer", answer="one")]), verbosity_level=-1)
    demo = GradioUI(agent).build()
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        history = gradio_client.Client(demo.local_url, verbose=False).predict("First task", [], api_name="/interact")
    finally:
        demo.close()
    assert history[0]["role"] == "user" and history[-1]["content"][0]["text"] == "**Final answer:** one"
    assert agent.memory.steps[0].task == "First task"
