"""README.md's `%%agent` options paragraph names every option the magic has, and no other (they cannot drift)."""

from __future__ import annotations

import re
from pathlib import Path

from nbagent.magics import AgentMagics

README = Path(__file__).resolve().parents[1] / "README.md"
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")


def options_paragraph() -> str:
    """The README's paragraph from "Options:" to "Options are never abbreviated" (the `%%agent` section)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("Options: `-m/--model`")
    return text[start : text.index("are never abbreviated", start)]


def test_the_readme_names_every_option_of_the_magic_and_no_other() -> None:
    parser = AgentMagics.agent.parser
    magic = {option for action in parser._actions for option in action.option_strings if option.startswith("--")}
    magic.discard("--help")
    named = set(OPTION.findall(options_paragraph()))
    assert {"--vars", "--copy", "--executor", "--step", "--max-time"} <= magic  # the ones a trial found missing
    assert sorted(magic - named) == [], "options the magic has that README.md does not name"
    assert sorted(named - magic) == [], "options README.md names that the magic does not have"
