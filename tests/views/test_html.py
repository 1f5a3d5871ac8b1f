"""The static HTML page of a run: structure, escaping, images, and parity with the JS front-end."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from PIL import Image

from nbagent import AgentMemory
from nbagent.views.highlight import highlight_python, tokenize_python
from nbagent.views.html import (
    format_clock,
    format_count,
    format_duration,
    memory_to_html,
    run_page,
    run_to_html,
    thought_text,
)
from nbagent.views.state import memory_to_state

ROOT = Path(__file__).resolve().parents[2]


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def test_run_page_shows_every_part(memory: AgentMemory) -> None:
    page = soup(memory_to_html(memory, agent_name="analyst", model_id="scripted"))
    root = page.select_one("div.nbagent.nbagent-static")
    assert root["data-status"] == "done" and root["data-nbagent-run"] == "1"
    assert page.select_one(".nba-agent").text == "analyst"
    assert page.select_one(".nba-task strong").text == "squares"
    steps = page.select(".nba-steps > .nba-step")
    assert [s["data-kind"] for s in steps] == ["planning", "action", "action", "action"]
    assert [s.select_one(".nba-step-title").text for s in steps] == ["Plan", "Step 1", "Step 2", "Step 3"]
    error_step = steps[1]
    assert "nba-step-error" in error_step["class"]
    assert "ZeroDivisionError" in error_step.select_one(".nba-error-text").text
    assert error_step.select_one("pre.nba-code").text == "x = 1/0"
    assert error_step.select_one(".nba-md").text.strip() == "Thought: divide"  # the code block is shown once
    assert error_step.select_one(".nba-tokens").text == "100 in · 20 out tokens"
    assert error_step.select_one(".nba-duration").text == "1.5 s"
    edited = steps[2]
    assert edited.select_one(".nba-block-code .nba-label").text.startswith("Code that ran")
    assert [chip.text.strip(" ·") for chip in edited.select(".nba-code-change")] == ["edited by you"]
    diff = edited.select_one(".nba-block-diff")
    assert diff["data-by"] == "you" and diff.select_one(".nba-label").text.startswith("Edited by you: ")
    assert [line.text for line in diff.select(".nba-diff-line")] == ["- img = plot()\n", "+ img = plot(color='red')\n"]
    assert edited.select_one(".nba-logs").text == "Execution logs:\nplotted\n"
    assert page.select_one(".nba-final .nba-md").text.strip() == "1, 4, 9"
    assert "4 steps" not in page.text and page.select_one(".nba-footer").text.startswith("3 steps")
    assert page.select_one("style") is not None  # the widget's CSS travels with the page


def test_images_are_inline_pngs(memory: AgentMemory) -> None:
    imgs = soup(memory_to_html(memory)).select("img.nba-img")
    assert len(imgs) == 2
    header, data = imgs[1]["src"].split(",", 1)
    assert header == "data:image/png;base64"
    assert Image.open(io.BytesIO(base64.b64decode(data))).size == (8, 8)


def test_model_text_cannot_inject_markup() -> None:
    run = {
        "task": "<script>alert(1)</script>",
        "status": "error",
        "agent_name": "<b>x</b>",
        "steps": [
            {
                "kind": "task",
                "step_number": None,
                "task": "<img src=x onerror=alert(1)> [l](javascript:alert(1))",
                "images": [7],
            },
            {
                "kind": "action",
                "step_number": 1,
                "model_output": "<iframe></iframe>",
                "code": "x = '</pre><script>'",
                "model_code": None,
                "tool_calls": [{"name": "<t>", "arguments": {"q": "<b>"}}],
                "observations": "</pre><script>1</script>",
                "error": "<script>2</script>",
                "images": [],
                "action_output": None,
                "is_final_answer": False,
                "token_usage": None,
                "duration": None,
                "stopped": False,
                "plan": None,
                "children": [],
            },
        ],
        "final_answer": {"text": "<script>3</script>", "type": "str", "images": []},
        "error": "<script>4</script>",
    }
    page = soup(run_to_html(run, [], css=False))
    assert page.select("script, iframe, img, b") == []
    assert page.select("a") == []
    assert "<script>2</script>" in page.select_one(".nba-error-text").text
    assert page.select_one(".nba-tool-name").text == "<t>"


def test_planning_tool_calls_nested_and_stopped() -> None:
    child = {
        "task": "2+2?",
        "agent_name": "helper",
        "status": "done",
        "steps": [{"kind": "task", "step_number": None, "task": "2+2?", "images": []}],
        "final_answer": {"text": "4", "type": "str", "images": []},
        "token_usage": None,
        "duration": None,
        "error": None,
    }
    step = {
        "kind": "action",
        "step_number": 4,
        "model_output": "ask",
        "code": None,
        "model_code": None,
        "tool_calls": [{"name": "helper", "arguments": {"task": "2+2?"}}],
        "observations": None,
        "error": None,
        "images": [],
        "action_output": "4",
        "is_final_answer": False,
        "token_usage": None,
        "duration": 2.0,
        "stopped": True,
        "plan": None,
        "children": [child],
    }
    page = soup(run_to_html({"status": "stopped", "steps": [step]}, [], css=False))
    assert "nba-step-stopped" in page.select_one(".nba-step")["class"]
    assert page.select_one(".nba-tool-args").text == '{\n "task": "2+2?"\n}'
    details = page.select_one("details.nba-child")
    assert details.select_one("summary").text == "helper · 0 steps · done"
    assert details.select_one(".nba-nested .nba-final").text.strip().endswith("4")
    assert page.select_one(".nba-output").text == "4"  # returned value shown when there is no observation


def test_standalone_page_and_bad_input(memory: AgentMemory) -> None:
    run, images = memory_to_state(memory)
    page = run_page(run, images)
    assert page.startswith("<!doctype html>") and "<title>Plot the **squares**</title>" in page
    with pytest.raises(TypeError, match="run dict"):
        run_to_html({"task": "no steps"}, [])


def test_thought_text_drops_only_the_shown_code() -> None:
    step = {"model_output": "T\n```py\na = 1\n```\nmore\n```py\nb = 2\n```", "code": "a = 1", "model_code": None}
    assert thought_text(step) == "T\n\nmore\n```py\nb = 2\n```"
    assert thought_text({"model_output": "T\n<code>\na = 1\n</code>", "code": "a = 1"}) == "T"


def test_highlight_escapes_and_round_trips() -> None:
    code = "def f(x):\n    return '<b>' # c\n"
    assert "".join(text for _, text in tokenize_python(code)) == code
    html = highlight_python(code)
    assert "<b>" not in html and "&lt;b&gt;" in html and '<span class="nba-f">f</span>' in html


SNIPPETS = [
    "@cache\ndef area(r):\n    return 3.14 * r ** 2  # pi\n",
    "s = f'{x!r}' + b\"\\x00\" + '''multi\nline''' + 'open\nnext = 0x1F + .5e3j",
    'x = """never closed\nprint(1)',
    "class A(B):\n    def __init__(self): super().__init__(); print(len([1_000, 0b101, 0o7]))",
    "for i in range(3):\n\tif i in y and not z: yield i\nelse: pass",
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run the JS side")
def test_python_and_js_highlighters_agree() -> None:
    script = (
        "import { tokenizePython } from './js/highlight.js';"
        "import { formatCount, formatDuration } from './js/meta.js';"
        "const input = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify({tokens: input.snippets.map(tokenizePython),"
        " counts: input.counts.map(formatCount), durations: input.durations.map(formatDuration)}));"
    )
    counts, durations = (
        [0, 950, 999, 1000, 1234, 9999, 45600, 999_999, 2_500_000],
        [0.0123, 0.5, 3.456, 42.0, 59.9, 125.0],
    )
    arg = json.dumps({"snippets": SNIPPETS, "counts": counts, "durations": durations})
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script, arg], cwd=ROOT, capture_output=True, text=True, check=True
    )
    js = json.loads(out.stdout)
    assert js["tokens"] == [[list(t) for t in tokenize_python(s)] for s in SNIPPETS]
    assert js["counts"] == [format_count(n) for n in counts]
    assert js["durations"] == [format_duration(d) for d in durations]


def test_the_header_says_a_finished_runs_total_time() -> None:
    run = {"status": "done", "steps": [], "duration": 135.7, "agent_name": "analyst"}
    header = soup(run_to_html(run, [])).select_one(".nba-header")
    assert header.select_one(".nba-clock-total").text == "run 2:15"
    assert header.text == "analyst · done · run 2:15"  # the separators stand in for the styles
    for unfinished in ({**run, "status": "running"}, {**run, "duration": None}):  # a live run's clock ticks in JS only
        assert soup(run_to_html(unfinished, [])).select_one(".nba-header .nba-clock") is None


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run the JS side")
def test_python_and_js_clocks_agree() -> None:
    values = [0, 0.4, 42.9, 59.99, 60, 135, 3599, 3600, 3725.5, 86_400 + 61, -1]
    script = (
        "import { formatClock } from './js/clock.js';"
        "console.log(JSON.stringify(JSON.parse(process.argv[1]).map(formatClock)));"
    )
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps(values)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == [format_clock(v) for v in values]
    assert format_clock(135) == "2:15" and format_clock(3725) == "1:02:05"
