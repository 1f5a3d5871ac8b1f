"""The static HTML page of a run: same classes and CSS as the widget, no JavaScript, images inline.

Used as the `text/html` of the widget's output bundle (what a saved notebook, nbconvert, GitHub and
nbviewer show) and for standalone pages (`run_page`). Markdown goes through markdown-it-py with raw
HTML disabled; code is highlighted by `highlight.py`, the Python twin of js/highlight.js.
"""

from __future__ import annotations

import base64
import functools
import json
import math
from html import escape
from pathlib import Path
from typing import Any

from nbagent.loop.deadline import describe_limit
from nbagent.record.status import LIVE_STATUSES, STEP_MARK_LABELS, mark_of_step
from nbagent.views.changes import change_text, scratch_text, yours_line
from nbagent.views.code_diff import CHANGE_LABELS
from nbagent.views.highlight import highlight_python
from nbagent.views.links import keep_safe_links
from nbagent.views.thought import thought_text as thought_of

__all__ = [
    "run_to_html",
    "run_page",
    "memory_to_html",
    "widget_css",
    "format_count",
    "format_duration",
    "format_clock",
    "thought_text",
]

STATIC = Path(__file__).resolve().parent.parent / "static"
SCHEMA = "1"  # data-nbagent-run marker value; nbagent/views/saving.py looks for the attribute
PYTHON_LANGS = {"py", "python", "python3", "ipython", "pycon"}
STATUS_LABELS = {
    "idle": "idle",
    "running": "running",
    "paused": "paused",
    "awaiting_approval": "awaiting approval",
    "awaiting_permission": "awaiting permission",
    "stopped": "stopped",
    "done": "done",
    "error": "failed",
    "max_steps": "max steps",
    "no_answer": "no answer",
    "timed_out": "timed out",
    "stuck": "stuck",
}


# The block of a step that was stopped, timed out or stuck: what ended it, not an error (js/step.js's ENDED).
ENDED_BLOCKS = {"stopped": "Stopped", "timed_out": "Timed out", "stuck": "Stuck"}


@functools.lru_cache(maxsize=1)
def widget_css() -> str:
    """The widget's stylesheet (built by `npm run build` into nbagent/static/widget.css)."""
    path = STATIC / "widget.css"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the widget with `npm ci && npm run build` in the repository")
    return path.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def static_css() -> str:
    """Rules of the static page only: separators hidden when styled, no per-line bands behind code."""
    return (Path(__file__).parent / "templates" / "static.css").read_text(encoding="utf-8")


def format_count(n: float | None) -> str:
    """950 -> "950", 1234 -> "1.2k", 2500000 -> "2.5M" (as js/meta.js)."""
    if n is None:
        return "–"
    if n < 1000:
        return str(round(n))
    if n < 1e6:
        return f"{n / 1e3:.{1 if n < 1e4 else 0}f}k"
    return f"{n / 1e6:.1f}M"


def format_duration(seconds: float | None) -> str | None:
    """0.0123 -> "12 ms", 3.456 -> "3.5 s", 125 -> "2 min 5 s" (as js/meta.js)."""
    if seconds is None:
        return None
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    if seconds < 60:
        return f"{seconds:.{1 if seconds < 10 else 0}f} s"
    minutes = int(seconds // 60)
    return f"{minutes} min {round(seconds - minutes * 60)} s"


def format_clock(seconds: float | None) -> str | None:
    """42 -> "0:42", 135 -> "2:15", 3725 -> "1:02:05": the header's clock (as js/clock.js's formatClock)."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return None
    whole = math.floor(seconds)
    hours, minutes, secs = whole // 3600, whole // 60 % 60, whole % 60
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _run_total(run: dict[str, Any]) -> str | None:
    """The header's "run 2:15" of a run that ended (a live run's clock ticks only in the widget)."""
    if run.get("status") in LIVE_STATUSES or not isinstance(run.get("duration"), (int, float)):
        return None
    text = format_clock(run["duration"])
    return f"run {text}" if text else None


# The label of a final box by outcome, as js/final.js's ANSWER_LABELS (anything but success: not an answer).
ANSWER_LABELS = {
    "success": "Final answer",
    "max_steps_error": "No answer: max steps reached. The model's closing reply",
    "error_answer": "No answer: the final answer reads as an error",
}


# What a code change's diff compares, by who changed the code (as js/code.js's DIFF_SIDES).
DIFF_SIDES = {
    "nbagent": "the model's code (−) → nbagent's (+)",
    "you": "the code you were shown (−) → yours (+)",
    "unknown": "the model's code (−) → the code that ran (+)",
}


def _is_answer(answer: dict[str, Any]) -> bool:
    return answer.get("outcome") in (None, "success")


def _answer_label(answer: dict[str, Any]) -> str:
    return ANSWER_LABELS.get(answer.get("outcome") or "success", "No answer")


def _format_tokens(usage: dict[str, int] | None) -> str | None:
    if not usage or not (usage.get("input_tokens") or usage.get("output_tokens")):
        return None
    return f"{format_count(usage.get('input_tokens', 0))} in · {format_count(usage.get('output_tokens', 0))} out tokens"


def thought_text(step: dict[str, Any]) -> str:
    """The thought of a step dict (see nbagent/views/thought.py)."""
    return thought_of(step.get("model_output"), (step.get("code"), step.get("model_code")))


@functools.lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    def fence(code: str, lang: str, _attrs: str) -> str:
        lang = (lang or "").strip().lower()
        body = highlight_python(code.rstrip("\n")) if lang in PYTHON_LANGS else escape(code.rstrip("\n"), quote=False)
        cls = f' class="language-{escape(lang)}"' if lang else ""
        return f'<pre class="nba-code"><code{cls}>{body}</code></pre>'

    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "highlight": fence})
    md.enable("table")
    md.disable("image")  # no remote fetches from a saved page
    return keep_safe_links(md)  # the widget's safe-URL rule: no relative links on Jupyter's origin


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=select_autoescape(["j2", "html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("run.html.j2")


def run_to_html(run: dict[str, Any], images: list[bytes], *, css: bool = True) -> str:
    """An HTML fragment showing `run` (a run dict of nbagent/views/state.py) with its PNG `images`."""
    from markupsafe import Markup

    from nbagent.views.state import normalize_run

    if not isinstance(run, dict) or not isinstance(run.get("steps"), list):
        raise TypeError("run_to_html() takes a run dict as built by nbagent.views.state (with a 'steps' list)")
    run = normalize_run(run)

    def image_src(index: int) -> str:
        if not 0 <= index < len(images):
            return ""
        return "data:image/png;base64," + base64.b64encode(images[index]).decode("ascii")

    def call_time(seconds: float) -> str:  # as js/code.js's callTime
        return f"{int(seconds * 1000 + 0.5)} ms" if seconds < 1 else f"{seconds:.1f} s"

    def tool_args(arguments: Any) -> str:
        return arguments if isinstance(arguments, str) else json.dumps(arguments, indent=1, default=str)

    return _template().render(
        run=run,
        schema=SCHEMA,
        css=Markup(widget_css() + "\n" + static_css()) if css else "",
        markdown=lambda text: Markup('<div class="nba-md">%s</div>') % Markup(_markdown().render(text or "").strip()),
        python=lambda code: Markup(highlight_python(code)),
        image_src=image_src,
        tool_args=tool_args,
        call_time=call_time,
        thought_text=thought_text,
        change_text=change_text,
        yours_line=yours_line,
        scratch_text=scratch_text,
        program_label=program_label,
        format_tokens=_format_tokens,
        format_duration=format_duration,
        run_total=_run_total,
        describe_limit=describe_limit,
        status_key=lambda status: status if status in STATUS_LABELS else "idle",
        status_label=lambda status: STATUS_LABELS.get(status, "idle"),
        step_mark=lambda step: (
            mark_of_step(step) if step.get("kind") == "action" else ("error" if step.get("error") else None)
        ),
        mark_labels=STEP_MARK_LABELS,
        ended=ENDED_BLOCKS,
        count_steps=lambda r: sum(1 for s in r.get("steps", []) if s.get("kind") == "action"),
        is_answer=_is_answer,
        answer_label=_answer_label,
        diff_sides=lambda by: DIFF_SIDES.get(by, DIFF_SIDES["unknown"]),
        change_labels=CHANGE_LABELS,
    )


def program_label(program: dict[str, Any]) -> str:
    """The static page's line over the run's program: "The run as code · checked: reproduces the answer"."""
    status = str(program.get("text") or "").split("\n", 1)[0].lstrip("# ")
    return f"The run as code · {status}" if status else "The run as code"


def run_page(run: dict[str, Any], images: list[bytes], title: str | None = None) -> str:
    """A standalone HTML document of the run (e.g. to share a run as one file)."""
    name = escape(title or run.get("task") or "nbagent run")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{name[:120]}</title></head><body>\n{run_to_html(run, images)}\n</body></html>\n"
    )


def memory_to_html(memory: Any, **kwargs: Any) -> str:
    """The static HTML of an `AgentMemory` (kwargs go to `memory_to_state`)."""
    from nbagent.views.state import memory_to_state

    run, images = memory_to_state(memory, **kwargs)
    return run_to_html(run, images)
