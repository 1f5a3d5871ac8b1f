"""One concept, one answer in Python and in the widget's JS: the run statuses and the model's thought.

Each test runs the JS module under node (skipped without node, like the highlighter's parity test in
test_html.py) and compares with the Python definition: `nbagent.record.status` with js/status.js,
`nbagent.views.thought.thought_text` with js/step.js's `thoughtText`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from nbagent.record.status import (
    LIVE_STATUSES,
    STATUSES,
    STEP_MARK_LABELS,
    STEP_MARKS,
    RunStatus,
    StepMark,
    mark_of_step,
)
from nbagent.views.html import STATUS_LABELS
from nbagent.views.thought import thought_text

ROOT = Path(__file__).resolve().parents[2]
F = "`" * 3  # a code fence

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run the JS side")


def run_js(script: str, data: Any = None) -> Any:
    """Run an ES module snippet from the repository root (`input` is `data`); its JSON output, parsed."""
    prelude = "const input = JSON.parse(process.argv[1]);"
    out = subprocess.run(
        ["node", "--input-type=module", "-e", prelude + script, json.dumps(data)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


@needs_node
def test_statuses_are_the_same_in_python_and_js() -> None:
    js = run_js(
        "import { LIVE_STATUSES, RunStatus, STATUSES, STATUS_LABELS } from './js/status.js';"
        "console.log(JSON.stringify({statuses: STATUSES, names: Object.keys(RunStatus),"
        " values: Object.values(RunStatus), live: [...LIVE_STATUSES], labels: STATUS_LABELS}));"
    )
    assert js["statuses"] == list(STATUSES) == [status.value for status in RunStatus]  # same order too
    assert js["names"] == [status.name for status in RunStatus]  # RunStatus.AWAITING_APPROVAL on both sides
    assert js["values"] == list(STATUSES)
    assert set(js["live"]) == set(LIVE_STATUSES) and len(js["live"]) == len(LIVE_STATUSES)
    assert js["labels"] == STATUS_LABELS  # the badge of the widget and of the static HTML page


# (model text, the codes shown separately) -> the same thought on both sides
THOUGHT_CASES: list[tuple[str | None, list[str | None]]] = [
    (f"Thought: divide\n{F}py\nx = 1/0\n{F}", ["x = 1/0"]),  # fenced, with a language tag
    (f"Thought: count\n{F}\nn = len(rows)\n{F}", ["n = len(rows)"]),  # fenced, no tag
    ("Thought: plot\n<code>\nimg = plot()\n</code>", ["img = plot()"]),  # smolagents' <code> block
    ("Inline<code>x = 1</code> then more", ["x = 1"]),  # <code> without newlines
    (  # a quoted example that is not the step's code stays in the thought
        f"The docs say:\n{F}python\nprint('example')\n{F}\nSo I run:\n{F}python\nx = 2\n{F}\nand see.",
        ["x = 2"],
    ),
    (f"Edited:\n{F}python\nimg = plot()\n{F}", ["img = plot(color='red')", "img = plot()"]),  # the model's code
    (f"Twice:\n{F}py\nx = 1\n{F}\nagain\n{F}py\nx = 1\n{F}", ["x = 1"]),  # every copy of the code goes
    (f"Spaces:\n{F}c++ \n   int x = 1;   \n{F}", ["int x = 1;"]),  # tag with + and a space; bodies compared stripped
    ("", ["x = 1"]),  # empty text
    (None, ["x = 1"]),  # no text at all
    (f"No codes:\n{F}py\nx = 1\n{F}\n", []),  # nothing shown separately: the text as it is, not stripped
    (f"Empty codes:\n{F}py\nx = 1\n{F}\n", [None, ""]),
    (f"Windows:\r\n{F}python\r\nx = 1\r\n{F}\r\n", ["x = 1"]),  # CRLF after the tag: no block is found
    (f"Mixed:\r\n{F}python\nx = 1\n{F}\r\n", ["x = 1"]),  # LF inside the block, CRLF around it
    (f"Nested:\n{F}`md\n{F}py\nx = 1\n{F}\n{F}`", ["x = 1"]),  # a four-backtick fence around a fenced block
    (f"Backticks {F}inline{F} first\n{F}py\ns = '{F}'\n{F}", [f"s = '{F}'"]),  # backticks in text and in code
    (f"Unterminated:\n{F}py\nx = 1", ["x = 1"]),  # the model never closed its fence
    (f"Café ☕ — naïve:\n{F}python\nprint('é')\n{F}", ["print('é')"]),  # non-ASCII text and code
]


@needs_node
def test_thought_is_the_same_in_python_and_js() -> None:
    js = run_js(
        "import { thoughtText } from './js/step.js';"
        "console.log(JSON.stringify(input.map(([text, codes]) => thoughtText(text, codes))));",
        THOUGHT_CASES,
    )
    python = [thought_text(text, codes) for text, codes in THOUGHT_CASES]
    assert js == python
    assert python[0] == "Thought: divide" and "print('example')" in python[4] and "x = 2" not in python[4]


@needs_node
def test_thought_with_a_non_ascii_language_tag() -> None:
    case = (f"Thought\n{F}pythön\nx = 1\n{F}", ["x = 1"])
    js = run_js("import { thoughtText } from './js/step.js'; console.log(JSON.stringify(thoughtText(...input)));", case)
    assert js == thought_text(*case)


CHANGES = [
    {"name": "region_data", "change": "created", "type": "Series 4", "detail": ""},
    {"name": "sales", "change": "modified", "type": "DataFrame 20×4", "detail": "+1 column total_revenue"},
    {"name": "prices", "change": "modified", "type": "list", "detail": ""},
    {"name": "x", "change": "rebound", "type": "int", "detail": ""},
    {"name": "tmp", "change": "deleted", "type": "", "detail": ""},
    {"name": "sales", "change": "modified", "type": "DataFrame", "detail": "+1 column c", "kept": True},
    {"name": "print", "change": "created", "type": "function", "detail": "", "kept": True, "reason": "a builtin"},
]


@needs_node
def test_a_namespace_change_reads_the_same_in_python_and_js() -> None:
    from nbagent.views.changes import change_text

    js = run_js(
        "import { changeText } from './js/changes.js';console.log(JSON.stringify(input.map(changeText)));", CHANGES
    )
    assert js == [change_text(change) for change in CHANGES]
    assert js[:2] == ["+ region_data (Series 4)", "~ sales: +1 column total_revenue"]
    assert js[-1] == "+ print (function) [kept in the worker]"


@needs_node
def test_time_limits_are_said_the_same_in_python_and_js() -> None:
    from nbagent.loop.deadline import describe_limit

    seconds = [0.5, 1, 30, 59.6, 60, 90, 119, 150, 599, 600, 630, 3599, 3600, 5400, 7200, 86400]
    js = run_js(
        "import { formatLimit } from './js/meta.js'; console.log(JSON.stringify(input.map(formatLimit)));", seconds
    )
    assert js == [describe_limit(s) for s in seconds]


# step dicts (as nbagent/views/state.py builds them, or older ones without `mark`) -> the same badge on both sides
MARK_CASES: list[dict[str, Any]] = [
    {"mark": "stopped", "stopped": True, "error": "Stopped by the user."},
    {"mark": "timed_out", "stopped": True, "error": "Stopped: the run reached its time limit of 4 s (max_time)."},
    {"mark": "rejected", "stopped": False, "error": None},
    {"mark": "stuck", "stopped": False, "error": "The model sent the same code again."},
    {"mark": "error", "stopped": False, "error": "ZeroDivisionError"},
    {"mark": None, "stopped": False, "error": None},
    {"stopped": True, "error": "Stopped by the user."},  # saved before steps had a mark
    {"error": "NameError"},
    {"mark": "bogus", "error": None},
]


@needs_node
def test_step_marks_are_the_same_in_python_and_js() -> None:
    js = run_js(
        "import { STEP_MARK_LABELS, StepMark, stepMark } from './js/status.js';"
        "console.log(JSON.stringify({names: Object.keys(StepMark), values: Object.values(StepMark),"
        " labels: STEP_MARK_LABELS, marks: input.map(stepMark)}));",
        MARK_CASES,
    )
    assert js["names"] == [mark.name for mark in StepMark] and js["values"] == list(STEP_MARKS)
    assert js["labels"] == STEP_MARK_LABELS
    assert js["marks"] == [mark_of_step(case) for case in MARK_CASES]
    assert js["marks"] == ["stopped", "timed_out", "rejected", "stuck", "error", None, "stopped", "error", None]
