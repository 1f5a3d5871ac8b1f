"""The terminal view: rich output built only from the event stream (and memory, for replay)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text

from nbagent.loop.view import LogLevel
from nbagent.models.base import ChatMessageStreamDelta
from nbagent.record import (
    CODE_TOOL_NAME,
    ActionStep,
    AgentMemory,
    ChildEvent,
    FinalAnswerStep,
    PlanningStep,
    Rerun,
    RunEnd,
    RunStart,
    StepStart,
    TaskStep,
    ToolCall,
)
from nbagent.record.status import answered, looks_like_error, outcome_message, run_outcome, step_mark
from nbagent.text import plain_text

from .changes import change_text, scratch_text, yours_line
from .code_diff import code_changes
from .permissions import permission_parts
from .state import is_forced_answer
from .thought import step_thought

__all__ = ["LogLevel", "ConsoleView", "replay_memory"]

# the word and colour of a step that ended without an error of its own (record/status.py's StepMark)
_ENDED = {
    "stopped": ("Stopped", "bold magenta"),
    "timed_out": ("Timed out", "bold yellow"),
    "stuck": ("Stuck", "bold yellow"),
}

ACCENT = "#d4b702"
_PERMISSION_STYLES = {"once": "green", "run": "green", "deny": "yellow", "never": "red"}


class ConsoleView:
    """Prints a run as it happens. INFO: every step; DEBUG adds streamed tokens.

    OFF and ERROR (`verbosity_level=0`) print nothing: the model's own errors are part of the
    run (the next step reads them), and a run that fails raises to the caller, which says it once.
    """

    def __init__(self, verbosity_level: int = LogLevel.INFO, console: Console | None = None) -> None:
        self.level = LogLevel(max(-1, min(2, int(verbosity_level))))
        self.console = console or Console(highlight=False)
        self._streaming = False
        self._depth = 0
        self._last_error: str | None = None  # the last step's error as printed: the run's end does not repeat it
        self._forced: bool | None = None  # the steps ran out: the final "answer" is the model's closing reply

    def consume(self, event: Any) -> None:
        if self.level <= LogLevel.ERROR:
            return
        if isinstance(event, ChildEvent):
            self._depth += 1
            try:
                self.consume(event.event)
            finally:
                self._depth -= 1
            return
        for renderable in self._render(event):
            self.console.print(Padding(renderable, (0, 0, 0, 4 * self._depth)) if self._depth else renderable)

    def _render(self, event: Any) -> list[Any]:
        if isinstance(event, ChatMessageStreamDelta):
            if self.level >= LogLevel.DEBUG and event.content:
                self.console.print(event.content, end="", markup=False)
                self._streaming = True
            return []
        out: list[Any] = []
        if self._streaming:
            self.console.print()
            self._streaming = False
        info = self.level >= LogLevel.INFO
        if isinstance(event, RunStart):
            self._forced = self._last_error = None
        if isinstance(event, RunStart) and info:
            out.append(task_panel(event.task, event.agent_name))
        elif isinstance(event, StepStart) and info and event.kind == "action":
            out.append(Rule(f"[bold]Step {event.step_number}", style=ACCENT))
        elif isinstance(event, ToolCall) and info and event.name != CODE_TOOL_NAME:
            out.append(
                Panel(Text(f"Calling tool: {event.name!r} with arguments: {event.arguments}"), border_style="cyan")
            )
        elif isinstance(event, ActionStep) and is_forced_answer(event):
            self._last_error, self._forced = None, True
            out.append(Text("Max steps reached: no answer. The model's closing reply:", style="bold yellow"))
        elif isinstance(event, ActionStep):
            self._last_error = None if event.error is None else str(event.error)
            out.extend(render_action_step(event, self.level, show_model_output=self.level == LogLevel.INFO))
        elif isinstance(event, PlanningStep) and info:
            out.extend(render_planning_step(event))
        elif isinstance(event, FinalAnswerStep) and info:
            out.append(Text(str(event.output)) if self._forced else final_answer_text(event.output))
        elif isinstance(event, Rerun) and info:
            out.append(Rule(f"[bold]Re-running from step {event.step_number}", style=ACCENT))
        elif isinstance(event, RunEnd):
            out.extend(self._run_end(event))
        return out

    def _run_end(self, event: RunEnd) -> list[Any]:
        """One line when the run did not answer (the error only if its last step did not already show it); the
        person's variables it changed and the names kept in the agent's scope, when there are any."""
        result = event.result
        out = self._namespace_lines(result) if self.level >= LogLevel.INFO else []
        outcome = run_outcome(result.state, result.output, result.error)
        if answered(outcome):
            return out
        error = result.error if result.error and result.error != self._last_error else None
        line = f"Run ended: {outcome_message(outcome)}" + (f": {error}" if error else "")
        return [*out, Text(line, style="bold red" if result.state == "error" else "bold yellow")]

    @staticmethod
    def _namespace_lines(result: Any) -> list[Any]:
        steps = [s for s in getattr(result, "memory_steps", []) if isinstance(s, ActionStep)]
        yours = yours_line({"changes": s.namespace_changes} for s in steps)
        scratch = scratch_text(getattr(result, "scratch", None))
        return [Text(text, style=style) for text, style in ((yours, "bold yellow"), (scratch, "dim")) if text]


def final_answer_text(output: Any) -> Text:
    """The final answer line; an answer that reads as an error is said not to be one."""
    if looks_like_error(output):
        return Text(f"Final answer (reads as an error, not an answer): {plain_text(output)}", style="bold yellow")
    return Text(f"Final answer: {plain_text(output)}", style=f"bold {ACCENT}")


def task_panel(task: str, agent_name: str | None) -> Panel:
    return Panel(
        Text(task.strip()), title=f"[bold]New run{' - ' + agent_name if agent_name else ''}", border_style=ACCENT
    )


def render_action_step(step: ActionStep, level: LogLevel, show_model_output: bool = True) -> list[Any]:
    out: list[Any] = []
    if level >= LogLevel.INFO:
        if show_model_output and step.model_output:
            thought = step_thought(step)
            if thought:
                out.append(Markdown(thought, hyperlinks=False))  # a link shows where it goes
        if step.code_action:
            changes = code_changes(step)
            said = f" ({', '.join(change['label'] for change in changes)})" if changes else ""
            out.append(
                Panel(
                    Syntax(step.code_action, "python", theme="monokai", word_wrap=True),
                    title=f"Executing this code{said}:",
                    border_style="dim",
                )
            )
            out += [_diff_text(change) for change in changes]
        out += [Text(tool_call_line(call), style="cyan") for call in getattr(step, "code_tool_calls", None) or []]
        if step.observations:
            out.append(Text(step.observations.rstrip()))
        if step.warnings:
            out.append(Text(_warnings_line(step.warnings), style="dim yellow"))
        for entry in getattr(step, "permissions", None) or []:
            out.append(_permission_line(entry))
        for change in step.namespace_changes or []:  # the person's names: each change said, as a warning
            if change.get("yours") and not change.get("kept"):
                out.append(Text(change_text(change), style="bold yellow"))
        for index, image in enumerate(step.observations_images or [], 1):
            out.append(Text(image_placeholder(image, index), style="magenta"))
    mark = step_mark(step.error, bool(step.stopped), step.observations)
    if step.error is not None:  # stopped, timed out and stuck are no errors: their own word and colour
        word, style = _ENDED.get(mark, ("Error", "bold red"))
        out.append(Text(f"{word}: {step.error}", style=style))
    elif mark == "rejected":
        out.append(Text("Rejected: a person rejected this code, so it did not run.", style="bold magenta"))
    if level >= LogLevel.INFO:
        out.append(Text(step_footer(step), style="dim"))
    return out


def tool_call_line(call: dict[str, Any]) -> str:
    """One tool the step's code called: `add(a=2, b=3) → 5 (12 ms)`, as the widget's "Tool calls" says it."""
    arguments = ", ".join(f"{key}={value}" for key, value in (call.get("arguments") or {}).items())
    outcome = f"✗ {call['error']}" if call.get("error") is not None else f"→ {call.get('result')}"
    seconds = float(call.get("seconds") or 0)
    took = f"{int(seconds * 1000 + 0.5)} ms" if seconds < 1 else f"{seconds:.1f} s"
    more = f"; and {call['more']} more calls" if call.get("more") else ""
    return f"Tool call: {call.get('name')}({arguments}) {outcome} ({took}){more}"


def render_planning_step(step: PlanningStep) -> list[Any]:
    return [
        Rule("[bold]Plan", style="orange1"),
        Markdown(step.plan, hyperlinks=False),
        Text(step_footer(step), style="dim"),
    ]


def _diff_text(change: dict[str, Any]) -> Text:
    """A code change as a console diff: its label, then the changed lines in red and green (kept lines left out)."""
    text = Text(f"{change['label'][0].upper()}{change['label'][1:]}:\n", style="bold")
    for op, line in change["diff"]:
        if op != " ":
            text.append(f"{op} {line}\n", style="red" if op == "-" else "green")
    text.rstrip()
    return text


def _permission_line(entry: dict[str, Any]) -> Text:
    """ "Permission: Allowed once: write `out.csv` (by you)", built part by part (never parsed as markup): the
    target escaped and in backticks, so a target cannot write nbagent's sentence."""
    line = Text("Permission: ", style=_PERMISSION_STYLES.get(entry.get("answer"), ""))
    for role, text in permission_parts(entry):
        line.append(f"`{text}`" if role == "target" else text, style="bold" if role == "target" else "")
    return line


def _warnings_line(warnings: list[str]) -> str:
    """The step's warnings, kept from the model: one dim line each under a count."""
    count = f"{len(warnings)} warning{'' if len(warnings) == 1 else 's'} (not shown to the model)"
    return "\n".join([count, *(f"  {warning}" for warning in warnings)])


def image_placeholder(image: Any, index: int) -> str:
    size = getattr(image, "size", None)
    dims = f" {size[0]}×{size[1]}" if size else ""
    return f"[image {index}:{dims} {type(image).__name__}]"


def step_footer(step: ActionStep | PlanningStep) -> str:
    parts = []
    number = getattr(step, "step_number", None)
    if number is not None:
        parts.append(f"Step {number}")
    duration = getattr(step.timing, "duration", None)  # smolagents' tests build steps with timing=0
    if duration is not None:
        parts.append(f"Duration {duration:.2f} s")
    if step.token_usage is not None:
        parts.append(
            f"Input tokens: {step.token_usage.input_tokens:,} | Output tokens: {step.token_usage.output_tokens:,}"
        )
    return "[" + " | ".join(parts) + "]"


def replay_memory(memory: AgentMemory, console: Console | None = None, detailed: bool = False) -> None:
    """Print a finished run from memory: every step's model output, code, observations, errors, images, tokens, time."""
    console = console or Console(highlight=False)
    console.print(Rule("[bold]Replaying the agent's steps", style=ACCENT))
    for step in memory.steps:
        if isinstance(step, TaskStep):
            images = [image_placeholder(img, i) for i, img in enumerate(step.task_images or [], 1)]
            console.print(Group(task_panel(step.task, None), *map(Text, images)))
        elif isinstance(step, PlanningStep):
            console.print(Group(*render_planning_step(step)))
        elif isinstance(step, ActionStep) and is_forced_answer(step):
            console.print(Text("Max steps reached: no answer. The model's closing reply:", style="bold yellow"))
            console.print(Text(plain_text(step.action_output)))
        elif isinstance(step, ActionStep):
            console.print(Rule(f"[bold]Step {step.step_number}", style=ACCENT))
            if detailed and step.model_input_messages:
                console.print(
                    Panel(
                        Text("\n\n".join(f"{m.role}: {m.text}" for m in step.model_input_messages)), title="Model input"
                    )
                )
            if step.model_output:
                console.print(Panel(Text(str(step.model_output)), title="Model output", border_style="dim"))
            console.print(Group(*render_action_step(step, LogLevel.INFO, show_model_output=False)))
        elif isinstance(step, FinalAnswerStep):
            console.print(final_answer_text(step.output))
