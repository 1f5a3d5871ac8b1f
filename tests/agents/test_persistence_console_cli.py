"""Agent persistence (folder, dict, hub code path), the console view, and the CLI."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from nbagent import AgentMemory, CodeAgent, ScriptedModel, ToolCallingAgent, cli, tool
from nbagent.loop.monitoring import AgentLogger


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


@tool
def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: the text to shout
    """
    return text.upper() + "!"


def make_agent(responses=("x",), **kwargs) -> CodeAgent:
    return CodeAgent(
        tools=[shout],
        model=ScriptedModel(list(responses)),
        verbosity_level=-1,
        show_widget=False,
        additional_authorized_imports=["math"],
        max_steps=7,
        name="loud",
        description="Shouts.",
        **kwargs,
    )


def test_save_and_from_folder_round_trip(tmp_path):
    agent = make_agent(instructions="Always shout.", planning_interval=3)
    agent.save(tmp_path / "agent")
    files = {p.relative_to(tmp_path / "agent").as_posix() for p in (tmp_path / "agent").rglob("*") if p.is_file()}
    assert {"agent.json", "prompts.yaml", "tools/shout.py", "requirements.txt"} <= files
    loaded = CodeAgent.from_folder(tmp_path / "agent")
    assert loaded.tools["shout"]("hi") == "HI!"
    assert (loaded.max_steps, loaded.planning_interval, loaded.instructions, loaded.name) == (
        7,
        3,
        "Always shout.",
        "loud",
    )
    assert "math" in loaded.authorized_imports
    assert loaded.prompt_templates == agent.prompt_templates
    assert isinstance(loaded.model, ScriptedModel) and loaded.model.responses == ["x"]


def test_saved_agent_runs_after_loading(tmp_path):
    make_agent([code("final_answer(shout('ok'))")]).save(tmp_path / "a")
    loaded = CodeAgent.from_folder(
        tmp_path / "a", verbosity_level=-1, show_widget=False, model=ScriptedModel([code("final_answer(shout('ok'))")])
    )
    assert loaded.run("shout ok") == "OK!"


def test_to_dict_from_dict_and_no_secrets():
    agent = make_agent()
    data = agent.to_dict()
    json.dumps(data)
    again = CodeAgent.from_dict(data, verbosity_level=-1, show_widget=False)
    assert again.to_dict()["tools"] == data["tools"]
    assert type(again) is CodeAgent


def test_managed_agents_are_saved_in_their_own_folder(tmp_path):
    helper = ToolCallingAgent(
        tools=[], model=ScriptedModel([]), name="helper", description="Helps.", verbosity_level=-1
    )
    boss = make_agent(managed_agents=[helper])
    boss.save(tmp_path / "boss")
    assert (tmp_path / "boss/managed_agents/helper/agent.json").exists()
    loaded = CodeAgent.from_folder(tmp_path / "boss")
    assert isinstance(loaded.managed_agents["helper"], ToolCallingAgent)


def test_hub_code_path_against_a_local_folder_repo(tmp_path):
    remote = tmp_path / "remote"

    class LocalApi:
        def create_repo(self, repo_id, **kwargs):
            (remote / repo_id).mkdir(parents=True, exist_ok=True)

        def upload_folder(self, repo_id, folder_path, **kwargs):
            shutil.copytree(folder_path, remote / repo_id, dirs_exist_ok=True)
            return f"uploaded {repo_id}"

    def download(repo_id, local_dir, **kwargs):
        shutil.copytree(remote / repo_id, local_dir, dirs_exist_ok=True)
        return local_dir

    agent = make_agent()
    assert agent.push_to_hub("me/loud", api=LocalApi()) == "uploaded me/loud"
    with pytest.raises(ValueError, match="trust_remote_code"):
        CodeAgent.from_hub("me/loud")
    loaded = CodeAgent.from_hub("me/loud", trust_remote_code=True, download=download)
    assert loaded.tools["shout"]("a") == "A!"


def test_load_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="no agent.json"):
        CodeAgent.from_folder(tmp_path)


def console_output(level, responses) -> str:
    """What a run prints at `level`, caught on the agent's logger console (smolagents' `agent.logger`)."""
    console = Console(record=True, width=100, file=io.StringIO())
    logger = AgentLogger(level, console=console)
    agent = CodeAgent(tools=[], model=ScriptedModel(responses), logger=logger, show_widget=False)
    assert agent.verbosity_level == level and agent.logger is logger
    agent.run("say hi")
    return console.export_text()


def test_console_info_shows_steps_code_logs_and_answer():
    text = console_output(1, [code("print('hello there')"), code("final_answer('bye')")])
    for expected in ("say hi", "Step 1", "print('hello there')", "hello there", "Final answer: bye", "Input tokens"):
        assert expected in text


def test_console_error_level_and_off_print_nothing(capsys):
    # level 0 is silent (a failed step is the model's business; a failed run raises), -1 too
    assert console_output(0, [code("1/0"), code("final_answer(1)")]) == ""
    assert "ZeroDivisionError" in console_output(1, [code("1/0"), code("final_answer(1)")])
    agent = CodeAgent(
        tools=[],
        model=ScriptedModel([code("print('x')"), code("final_answer(1)")], token_delay=0),
        verbosity_level=-1,
        show_widget=False,
    )
    assert list(agent.run("quiet", stream=True))
    assert capsys.readouterr().out == ""


def test_console_debug_streams_tokens():
    text = console_output(2, [code("final_answer(2)")])
    assert text.count("Thought: go.") == 1  # each streamed token reaches the view once


def test_cli_run_prints_the_answer_and_exits_zero(monkeypatch, capsys):
    monkeypatch.setattr(
        "nbagent.models.spec.model_from_spec", lambda spec: ScriptedModel([code("final_answer(17 * 23)")])
    )
    assert cli.main(["run", "What is 17*23?", "--max-steps", "2", "--verbosity", "-1"]) == 0
    assert capsys.readouterr().out.strip().endswith("391")


def test_cli_exit_codes_for_no_answer_and_bad_arguments(monkeypatch, capsys):
    def failing(messages, **kwargs):
        raise RuntimeError("server unreachable")

    monkeypatch.setattr("nbagent.models.spec.model_from_spec", lambda spec: ScriptedModel(failing))
    assert cli.main(["run", "t", "--verbosity", "-1"]) == 1
    assert "server unreachable" in capsys.readouterr().err
    assert cli.main(["run", "t", "--tools", "no_such_tool"]) == 2
    assert "Unknown tool 'no_such_tool'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run"])
    assert exit_info.value.code == 2


def test_loaded_memory_continues_a_run(tmp_path):
    first = CodeAgent(tools=[], model=ScriptedModel([code("final_answer(1)")]), verbosity_level=-1, show_widget=False)
    first.run("remember the number 1")
    path = first.memory.save(tmp_path / "mem.json")
    model = ScriptedModel([code("final_answer(2)")])
    second = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False)
    second.memory = AgentMemory.load(path)
    assert second.run("and now 2", reset=False) == 2
    assert any("remember the number 1" in m.text for m in model.calls[0])
    assert [s.step_number for s in second.memory.action_steps()] == [1, 2]
    assert Path(path).exists()
