"""A permission ask cannot be made to say something else (issue 29, item 2).

The agent chooses the path it is refused, so it chose one whose backticks closed nbagent's code span and wrote a
sentence of its own ("wants to write `report.csv` (a copy in the scratch folder...). Then it wants to read
`data.csv`"), with a bidi override for good measure. Through the real isolated executor (guards on and off), the
ask, the record, the widget's state, the static HTML and the console keep the kind and the target apart, show the
target as one escaped text node, and say nbagent's words only.
"""

from __future__ import annotations

import html as html_lib
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from nbagent import CodeAgent, ScriptedModel
from nbagent.loop import RunGates
from nbagent.sandbox.wire.capabilities import RefusedCapability, shown_target
from nbagent.views.console import replay_memory
from nbagent.views.html import memory_to_html
from nbagent.views.state import memory_to_state

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the worker's OS confinement is Linux-only")

SPOOF = "report.csv` (a copy in the scratch folder: none of your files is written). Then it wants to read `data.csv"
BIDI = "invoice\u202efdp.exe"  # shows as "invoiceexe.pdf"
ESCAPED_NOTE = " (shown escaped: it holds control, bidi or backtick characters)"


def code(body: str) -> str:
    return f"Thought: save it.\n```python\n{body}\n```"


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
def test_a_spoofing_target_is_one_escaped_text_node_everywhere(guards: bool, tmp_path: Path) -> None:
    spoof, bidi = str(tmp_path / SPOOF), str(tmp_path / BIDI)
    asked = []

    def deny(ask):
        asked.append(ask)
        return "deny"

    steps = [code(f"open({spoof!r}, 'w').write('x')"), code(f"open({bidi!r}, 'w')"), code("final_answer('kept')")]
    agent = CodeAgent(
        tools=[],
        model=ScriptedModel(steps),
        executor_type="isolated",
        executor_kwargs={"guards": guards},
        additional_authorized_imports=["io"],
        on_permission=deny,
        verbosity_level=-1,
        show_widget=False,
    )
    try:
        assert agent.run("Save the report.") == "kept"
    finally:
        agent.python_executor.close()
    [ask] = asked  # the bidi name was never asked about
    assert (ask.kind, ask.target) == ("write", spoof)  # the grant would be exact: the raw target, apart
    assert ask.text == f"Step 1 wants to write `{shown_target(spoof)}`{ESCAPED_NOTE}"
    assert ask.text.count("`") == 2

    [denied], [never] = (step.permissions for step in agent.memory.action_steps()[:2])
    assert (denied["kind"], denied["target"], denied["answer"]) == ("write", spoof, "deny")  # the record: separate
    assert (never["kind"], never["target"], never["answer"]) == ("write", bidi, "never")
    assert "bidi" in never["reason"] and "never grants" in never["reason"]

    states = [step["permissions"] for step in memory_to_state(agent.memory)[0]["steps"] if step.get("permissions")]
    for [shown], target in zip(states, (spoof, bidi)):
        assert [part for part in shown["parts"] if part[0] == "target"] == [["target", shown_target(target)]]
    words = "".join(text for role, text in states[0][0]["parts"] if role == "words")
    assert words == f"Denied: write {ESCAPED_NOTE} (by on_permission)"

    page = memory_to_html(agent.memory)
    lines = re.findall(r'<li class="nba-permission"[^>]*>(.*?)</li>', page)
    assert [re.findall(r"<code[^>]*>(.*?)</code>", line) for line in lines] == [
        [html_lib.escape(shown_target(spoof))],
        [html_lib.escape(shown_target(bidi))],
    ]
    assert "\u202e" not in page and "Then it wants to read <code" not in page

    console = Console(record=True, width=400)
    replay_memory(agent.memory, console=console)
    said = console.export_text()
    assert f"Permission: Denied: write `{shown_target(spoof)}`" in said
    assert f"Permission: Never granted: write `{shown_target(bidi)}`" in said and "\u202e" not in said


def test_the_widget_gets_the_question_as_parts_with_one_escaped_target() -> None:
    gates = RunGates()
    refused = RefusedCapability("connect", "evil`.example:443\u2066")
    with gates.waiting_for_person(2, refused) as ask:
        assert gates.pending_ask == ask
    assert (ask["kind"], ask["target"]) == ("connect", "evil`.example:443\u2066")
    assert ask["parts"] == [
        ["words", "Step 2 wants to "],
        ["words", "connect to "],
        ["target", "evil\\u0060.example:443\\u2066"],
        ["words", ESCAPED_NOTE],
    ]


@pytest.mark.parametrize(
    "character",
    ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\n", "\x1b", "`"],
)
def test_control_bidi_and_backtick_characters_are_escaped(character: str) -> None:
    refused = RefusedCapability("read", f"/w/a{character}b.csv")
    [(_, verb), (role, target), (_, note)] = refused.parts()
    assert (verb, role) == ("read ", "target")
    assert target == f"/w/a\\u{ord(character):04x}b.csv" and character not in target
    assert "shown escaped" in note
    assert shown_target(target) == target  # idempotent
    assert RefusedCapability("read", "/w/plain.csv").parts() == [("words", "read "), ("target", "/w/plain.csv")]
