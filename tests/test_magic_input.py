"""`%%agent`/`%agent` input checked before a run, and honest `-o` values, through a real IPython shell.

Bad input (an unknown model, a typo'd or abbreviated option) is a one-line `UsageError` with suggestions
before any widget opens or model loads; `%agent … Paris?` runs (IPython would read the `?` as help);
`--imports os` says what it allows; `-o` holds the answer only when the run answered.
"""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from nbagent import ScriptedModel
from nbagent.models.spec import check_spec, model_from_spec, needs_loading
from nbagent.notebook.magic_input import imports_notice, keep_agent_questions

F = "`" * 3


def code(body: str) -> str:
    return f"Thought: go.\n{F}python\n{body}\n{F}"


@pytest.fixture
def magics(ip):
    return ip.magics_manager.registry["AgentMagics"]


# ---------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("--max-step 3", "unknown option --max-step (did you mean --max-steps"),  # no abbreviations
        ("--quite", "unknown option --quite (did you mean --quiet?)"),
        ("--imoprts pandas", "did you mean --imports?"),
        ("--n_ctx 4096", "did you mean --n-ctx?"),
        ("--bogus", "unknown option --bogus\n"),  # nothing close: no suggestion
    ],
)
def test_a_typo_or_an_abbreviation_is_refused_with_a_suggestion(ip, line, message):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(1)")])
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("agent", f"-m m {line}", "t")
    assert message in str(info.value)


def test_the_usage_line_is_clean_and_names_the_magic_used(ip):
    with pytest.raises(UsageError) as cell:
        ip.run_cell_magic("agent", "--max-steps x", "t")
    first, usage = str(cell.value).split("\n")
    assert first.startswith("%%agent: argument --max-steps: invalid int value")
    assert usage.startswith("usage: %%agent [-m MODEL]") and "::" not in usage and " %agent [" not in usage
    with pytest.raises(UsageError) as line:
        ip.run_line_magic("agent", "--max-stepz 2 do it")
    assert str(line.value).split("\n")[1].startswith("usage: %agent [-m MODEL]")
    assert str(line.value).rstrip().endswith("TASK")


def test_a_value_that_starts_with_a_dash_is_not_taken_for_an_option(ip):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(1)")])
    with pytest.raises(UsageError, match="--max-tokens must be 0 or more, got -5"):
        ip.run_cell_magic("agent", "-m m --max-tokens -5", "t")


# ---------------------------------------------------------------------------- models


def test_an_unknown_model_is_a_usage_error_before_any_widget(ip, magics, capsys, monkeypatch):
    magics.show_widget = True
    shown = []
    monkeypatch.setattr("nbagent.notebook.display.show_loading_widget", lambda message: shown.append(message))
    ip.user_ns["my_model"] = ScriptedModel([])
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("agent", "-m my_modle", "t")
    assert "Unknown model 'my_modle' (did you mean 'my_model'?)" in str(info.value)
    with pytest.raises(UsageError, match="did you mean 'default'"):
        ip.run_cell_magic("agent", "-m defualt", "t")
    with pytest.raises(UsageError, match="Unknown model prefix 'opnai:' \\(did you mean 'openai:'\\?\\)"):
        ip.run_cell_magic("agent", "-m opnai:gpt-4o", "t")
    assert shown == [] and magics.last_agent is None  # nothing opened, nothing ran
    assert "AgentWidget" not in capsys.readouterr().out


def test_model_specs(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test")  # with a token, a Hub id goes to Inference Providers
    check_spec("Qwen/Qwen2.5-Coder-1.5B-Instruct")  # a Hub id is org/name
    check_spec("hf:gpt2")  # a bare Hub id needs its prefix
    with pytest.raises(ValueError, match="Unknown model 'nosuchmodel'"):
        check_spec("nosuchmodel")
    assert needs_loading("default") and needs_loading(None) and not needs_loading("openai:gpt-4o")
    with pytest.raises(ValueError, match="n_ctx applies to llama.cpp models"):
        model_from_spec("openai:gpt-4o", n_ctx=4096)


def test_n_ctx_is_for_models_nbagent_loads(ip):
    ip.user_ns["m"] = ScriptedModel([])
    with pytest.raises(UsageError, match="m is already loaded"):
        ip.run_cell_magic("agent", "-m m --n-ctx 16384", "t")
    with pytest.raises(UsageError, match="at least 256"):
        ip.run_cell_magic("agent", "--n-ctx 10", "t")


def test_the_loading_message_is_in_the_widget_before_the_model_loads(ip, magics, monkeypatch):
    """The widget opens at once saying so; the run then shows in that same widget."""
    pytest.importorskip("anywidget")
    import nbagent.notebook.display as display

    magics.show_widget = True
    widgets = []
    real = display.show_loading_widget

    def show(message):
        widgets.append(real(message))
        return widgets[-1]

    def load(spec, n_ctx=None):
        assert widgets and widgets[0].run["message"] == "loading the offline model…"  # shown before the load
        assert n_ctx == 4096
        return ScriptedModel([code("final_answer('Paris')")])

    monkeypatch.setattr(display, "show_loading_widget", show)
    monkeypatch.setattr("nbagent.models.spec.model_from_spec", load)
    magics._models.clear()
    assert ip.run_cell_magic("agent", "-m default --n-ctx 4096 -o answer", "Capital of France?") is None
    assert ip.user_ns["answer"] == "Paris"
    assert magics.last_agent._widget is widgets[0]  # the run showed in the loading widget
    assert widgets[0].run["message"] is None and widgets[0].run["outcome"] == "success"
    magics._models.clear()


# ---------------------------------------------------------------------------- a task ending in "?"


def test_a_line_task_ending_in_a_question_mark_runs(ip):
    ip.user_ns["m"] = ScriptedModel([code("final_answer('Paris')")])
    result = ip.run_cell("%agent -m m --quiet -o answer What is the capital of France? Paris?")
    assert result.success and ip.user_ns["answer"] == "Paris"
    assert "pinfo" in ip.transform_cell("%agent?\n")  # help on the magic itself still works
    assert keep_agent_questions(["x = 1\n", "%agent why?\n"])[1] == "get_ipython().run_line_magic('agent', 'why?')\n"


# ---------------------------------------------------------------------------- imports


def test_sensitive_imports_say_what_they_allow(ip, capsys):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(1)")])
    ip.run_cell_magic("agent", "-m m --imports os,pandas --executor isolated", "t")
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("--imports os,pandas: os without processes or environment variables; files: reads only")
    assert imports_notice(["pandas", "numpy"], "isolated") is None  # nothing sensitive: nothing said
    local = imports_notice(["requests", "subprocess", "sys"], "local")
    assert "subprocess stay refused" in local and "network: unrestricted (the local executor)" in local
    assert "sys without sys.modules" in local
    ip.run_cell_magic("agent", "-m m --imports os --quiet", "t")
    assert capsys.readouterr().out == ""  # --quiet says nothing


# ---------------------------------------------------------------------------- -o and the cell's value


def test_o_holds_the_answer_only_when_the_run_answered(ip, capsys):
    ip.user_ns["m"] = ScriptedModel([code("x = 1"), code("y = 2"), "Sorry, I ran out of steps."])
    ip.user_ns["answer"] = "old"
    assert ip.run_cell_magic("agent", "-m m --max-steps 2 -o answer", "t") is None
    assert ip.user_ns["answer"] is None
    assert capsys.readouterr().err.strip().endswith("%%agent: max steps reached, no answer (answer = None)")
    ip.user_ns["m"] = ScriptedModel([code("final_answer('Error: no column named revenue')")])
    ip.run_cell_magic("agent", "-m m -o answer", "t")
    assert ip.user_ns["answer"] is None
    assert "reads as an error" in capsys.readouterr().err


def test_a_shown_answer_is_not_echoed_but_stored(ip):
    ip.user_ns["m"] = ScriptedModel([code("final_answer(42)")] * 2)
    assert ip.run_cell_magic("agent", "-m m -o answer", "t") is None  # no Out[] under the view that shows it
    assert ip.user_ns["answer"] == 42
    assert ip.run_cell_magic("agent", "-m m --quiet", "t") == 42  # --quiet: the value is the answer


@pytest.mark.parametrize(("magic", "line", "cell"), [("%agent", "--help", None), ("%%agent", "-h", "Which region?")])
def test_help_shows_the_help_not_unknown_option(ip, capsys, magic, line, cell):
    # issue 33: `%agent --help` said "unknown option --help"
    if cell is None:
        result = ip.run_line_magic("agent", line)
    else:
        result = ip.run_cell_magic("agent", line, cell)
    out = capsys.readouterr().out
    assert result is None
    assert out.startswith(f"{magic} [-m MODEL]")
    assert "--max-steps MAX_STEPS" in out and "unknown option" not in out
    assert "%agent? shows this too" in out
    # what the agent sees and changes by default, and how to widen or undo it (issue 28)
    assert "sees the variables the task names" in out and "--copy keeps your variables untouched" in out
