"""Bad input to `%%agent` fails at once, before any widget or model call, and `--max-time` reaches the run.

Through a real IPython shell: a backticked or `{}` name that is not defined, a Hub id that is neither in
the local Hugging Face cache (a real cache folder layout in a temporary directory) nor reachable with a
token, a `--max-time` that is no duration.
"""

from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.error import UsageError

from nbagent import ScriptedModel
from nbagent.models.spec import check_spec, needs_loading


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


@pytest.fixture
def magics(ip):
    return ip.magics_manager.registry["AgentMagics"]


@pytest.fixture
def unused_model(ip):
    """A model in the notebook that must never be called (it has no answer)."""
    model = ScriptedModel([])
    ip.user_ns["m"] = model
    return model


# ---------------------------------------------------------------- names the task points at


def test_an_undefined_backticked_name_is_a_usage_error_with_did_you_mean(ip, magics, unused_model, monkeypatch):
    magics.show_widget = True
    shown = []
    monkeypatch.setattr("nbagent.notebook.display.show_loading_widget", lambda message: shown.append(message))
    ip.user_ns["grades_2024"] = pd.DataFrame({"student": ["a"], "grade": [3]})
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("agent", "-m m", "What is the mean grade in `grades`?")
    message = str(info.value)
    assert "points at `grades`, but no variable 'grades' is defined" in message
    assert "(did you mean `grades_2024`?)" in message
    assert unused_model.calls == [] and shown == [] and magics.last_agent is None  # nothing opened, nothing ran


def test_with_nothing_close_the_error_lists_the_variables(ip, unused_model):
    ip.user_ns["sales"] = pd.DataFrame({"units": [1]})
    with pytest.raises(UsageError, match=r"no variable 'zzz' is defined .*the notebook's variables: .*`sales`"):
        ip.run_line_magic("agent", "-m m Sum `zzz` please")


def test_an_undefined_placeholder_gets_did_you_mean(ip, unused_model):
    ip.user_ns["threshold"] = 5
    with pytest.raises(UsageError, match=r"no variable 'treshold' is defined \(did you mean `threshold`\?\)"):
        ip.run_cell_magic("agent", "-m m", "Rows above {treshold}?")
    assert unused_model.calls == []


def test_backticked_words_that_are_not_variables_pass(ip):
    ip.user_ns["sales"] = pd.DataFrame({"units": [1, 2], "region": ["x", "y"]})
    ip.user_ns["m"] = model = ScriptedModel([code("final_answer(3)")])
    task = "Use `groupby` on `region` of `sales` with `sum` and `pandas`: total `units`?"  # method, columns, …
    assert ip.run_cell_magic("agent", "-m m --quiet", task) == 3
    assert len(model.calls) == 1


# ---------------------------------------------------------------- Hub ids


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An empty Hugging Face cache and no token; `cache(model_id)` puts a snapshot of a model there."""
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "token"))
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(name, raising=False)

    def cache(model_id: str) -> None:
        snapshot = tmp_path / "hub" / f"models--{model_id.replace('/', '--')}" / "snapshots" / "0123abc"
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text("{}")

    return cache


def test_a_typo_in_a_hub_id_fails_at_once_with_the_nearest_local_models(ip, magics, hub_cache, monkeypatch):
    hub_cache("Qwen/Qwen2.5-Coder-0.5B-Instruct")
    magics.show_widget = True
    shown = []
    monkeypatch.setattr("nbagent.notebook.display.show_loading_widget", lambda message: shown.append(message))
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("agent", "-m Qwen/Qwen2.5-Coder-1.5B-Instrct", "t")
    message = str(info.value)
    assert "'Qwen/Qwen2.5-Coder-1.5B-Instrct' is not available offline" in message
    assert "not in the Hugging Face cache" in message and "no Hugging Face token" in message  # what was looked for
    assert "did you mean 'default' (the offline Qwen2.5-Coder-1.5B-Instruct)" in message
    assert "'Qwen/Qwen2.5-Coder-0.5B-Instruct'" in message  # the cached model nearest to it
    assert shown == [] and magics.last_agent is None


def test_a_cached_hub_id_is_loaded_here_and_a_token_sends_it_to_the_providers(hub_cache, monkeypatch):
    hub_cache("HuggingFaceTB/SmolLM2-135M-Instruct")
    check_spec("HuggingFaceTB/SmolLM2-135M-Instruct")  # in the cache: fine offline
    assert needs_loading("HuggingFaceTB/SmolLM2-135M-Instruct")  # loaded in this process (the loading widget)
    with pytest.raises(ValueError, match="not available offline"):
        check_spec("meta-llama/Llama-3.3-70B-Instruct")
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    check_spec("meta-llama/Llama-3.3-70B-Instruct")  # a token: Inference Providers serve it
    assert not needs_loading("meta-llama/Llama-3.3-70B-Instruct")


# ---------------------------------------------------------------- --max-time


def test_a_max_time_that_is_no_duration_is_a_usage_error(ip, unused_model):
    with pytest.raises(UsageError, match=r"--max-time takes seconds, or a duration such as 90s, 10m, 1h .*'soon'"):
        ip.run_cell_magic("agent", "-m m --max-time soon", "t")
    assert unused_model.calls == []


def test_max_time_reaches_the_run_and_its_widget(ip, magics):
    pytest.importorskip("anywidget")
    magics.show_widget = True
    ip.user_ns["m"] = ScriptedModel([code("final_answer(1)"), code("final_answer(2)")])
    ip.run_cell_magic("agent", "-m m --max-time 10m -o first", "t")
    agent = magics.last_agent
    assert ip.user_ns["first"] == 1 and agent.widget.run["max_time"] == 600  # "stops after 10 min" in the header
    ip.user_ns["agent_var"] = agent
    ip.run_cell_magic("agent", "--agent agent_var --max-time 0 -o second", "t")
    assert ip.user_ns["second"] == 2 and agent.widget.run["max_time"] is None  # 0: no limit


# ---------------------------------------------------------------- nbagent run


def test_nbagent_run_takes_max_time_and_refuses_a_bad_one(monkeypatch, capsys):
    from nbagent import cli

    sleeping = ScriptedModel([code("import time\ntime.sleep(30)")])
    monkeypatch.setattr("nbagent.models.spec.model_from_spec", lambda spec: sleeping)
    assert cli.main(["run", "t", "--max-time", "1s", "--verbosity", "-1"]) == 1  # no answer: it timed out
    assert "state 'timed_out' (timed out before an answer" in capsys.readouterr().err
    assert cli.main(["run", "t", "--max-time", "soon"]) == 2
    assert "--max-time takes seconds" in capsys.readouterr().err


def test_nbagent_run_refuses_a_hub_id_it_cannot_reach(hub_cache, capsys):
    from nbagent import cli

    assert cli.main(["run", "t", "-m", "Qwen/Qwen2.5-Coder-1.5B-Instrct"]) == 2
    assert "is not available offline" in capsys.readouterr().err


# ---------------------------------------------------------------- names the options give


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ("-o 2best", r"-o 2best: not a Python variable name"),
        ("-o class", r"-o class: `class` is a Python keyword"),
        ("-o match", r"-o match: `match` is a Python keyword"),
        ("--agent my-agent", r"--agent my-agent: not a Python variable name"),
        (
            "--imports pandsa",
            r"--imports pandsa: no module of that name is installed in this kernel \(did you mean pandas",
        ),
        ("--imports pandas,nosuchmodule_xyz", r"--imports nosuchmodule_xyz: no module of that name is installed"),
    ],
)
def test_a_name_the_run_could_not_use_is_refused_before_the_model(ip, unused_model, options, reason):
    with pytest.raises(UsageError, match=reason):
        ip.run_cell_magic("agent", f"-m m {options}", "How many rows?")
    assert unused_model.calls == []


def test_good_names_and_submodules_pass_the_check(ip):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(3)")])
    ip.run_cell_magic("agent", "-m m --executor local --quiet -o best_1 --imports numpy.*,collections.abc", "Three?")
    assert ip.user_ns["best_1"] == 3
