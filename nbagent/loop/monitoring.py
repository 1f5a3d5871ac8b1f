"""smolagents' `monitoring` names: `AgentLogger` (what an agent prints, and where), `Monitor` (token and
time totals of a run), with `LogLevel`, `TokenUsage` and `Timing` re-exported.

`agent.logger` is an `AgentLogger`: its `level` is the agent's `verbosity_level` and its `console`
is the rich console the run is printed to (nbagent's console view writes there, so
`agent.logger.console.capture()` catches a run's output, as in smolagents). Rich is imported
only when a console is made or something is printed.

Where nbagent differs: `Monitor.update_metrics` counts but prints nothing (the console view
already ends every step with its duration and tokens), and level 0 (`LogLevel.ERROR`) prints
nothing during a run (failed steps are the model's business; a run that fails raises).
"""

from __future__ import annotations

import json
from typing import Any

from nbagent.models.base import TokenUsage
from nbagent.record import Timing

from .view import LogLevel

__all__ = ["AgentLogger", "LogLevel", "Monitor", "TokenUsage", "Timing", "YELLOW_HEX"]

YELLOW_HEX = "#d4b702"


class AgentLogger:
    """Prints to a rich console what is at or below its `level` (`LogLevel`: -1 off … 2 debug)."""

    def __init__(self, level: int = LogLevel.INFO, console: Any = None) -> None:
        self.level = level
        self._console = console

    @property
    def console(self) -> Any:
        """The rich `Console` (made on first use: `Console(highlight=False)`)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False)
        return self._console

    @console.setter
    def console(self, console: Any) -> None:
        self._console = console

    def log(self, *args: Any, level: int | str = LogLevel.INFO, **kwargs: Any) -> None:
        """`console.print(*args, **kwargs)` if `level` (a `LogLevel`, its number or name) is within ours."""
        if isinstance(level, str):
            level = LogLevel[level.upper()]
        if level <= self.level:
            self.console.print(*args, **kwargs)

    def log_error(self, error_message: str) -> None:
        from rich.text import Text

        self.log(Text(str(error_message), style="bold red"), level=LogLevel.ERROR)

    def log_markdown(
        self, content: str, title: str | None = None, level: int = LogLevel.INFO, style: str = YELLOW_HEX
    ) -> None:
        from rich.console import Group
        from rich.rule import Rule
        from rich.syntax import Syntax

        body = Syntax(str(content), lexer="markdown", theme="github-dark", word_wrap=True)
        if title:
            self.log(Group(Rule("[bold italic]" + title, align="left", style=style), body), level=level)
        else:
            self.log(body, level=level)

    def log_code(self, title: str, content: str, level: int = LogLevel.INFO) -> None:
        from rich import box
        from rich.panel import Panel
        from rich.syntax import Syntax

        code = Syntax(str(content), lexer="python", theme="monokai", word_wrap=True)
        self.log(Panel(code, title="[bold]" + title, title_align="left", box=box.HORIZONTALS), level=level)

    def log_rule(self, title: str, level: int = LogLevel.INFO) -> None:
        from rich.rule import Rule

        self.log(Rule("[bold white]" + title, characters="━", style=YELLOW_HEX), level=level)

    def log_task(self, content: Any, subtitle: Any, title: str | None = None, level: int = LogLevel.INFO) -> None:
        """The "New run" panel. Content is shown as text, never read as rich markup (tool output may hold `[/x]`)."""
        from rich.panel import Panel
        from rich.text import Text

        body = Text("\n") + Text(_printable(content), style="bold") + Text("\n")
        self.log(
            Panel(
                body,
                title="[bold]New run" + (f" - {title}" if title else ""),
                subtitle=Text(_printable(subtitle)),
                border_style=YELLOW_HEX,
                subtitle_align="left",
            ),
            level=level,
        )

    def log_messages(self, messages: list[Any], level: int = LogLevel.DEBUG) -> None:
        from rich.syntax import Syntax

        text = "\n".join(json.dumps(_message_dict(m), indent=4, default=str) for m in messages)
        self.log(Syntax(text, lexer="markdown", theme="github-dark", word_wrap=True), level=level)

    def visualize_agent_tree(self, agent: Any) -> None:
        """Print the agent as a tree: model, tools with their inputs, managed agents."""
        from rich.tree import Tree

        def headline(agent: Any, name: str | None = None) -> str:
            prefix = f"{name} | " if name else ""
            return f"[bold {YELLOW_HEX}]{prefix}{type(agent).__name__} | {getattr(agent.model, 'model_id', None)}"

        def add_branches(tree: Any, agent: Any) -> None:
            tools = tree.add("Tools:")
            for name, tool in agent.tools.items():
                tools.add(f"{name}: {getattr(tool, 'description', '')}")
            for name, managed in getattr(agent, "managed_agents", {}).items():
                add_branches(tree.add(headline(managed, name)), managed)

        tree = Tree(headline(agent))
        add_branches(tree, agent)
        self.console.print(tree)


class Monitor:
    """Token and time totals over a run's action steps (`update_metrics` is a step callback)."""

    def __init__(self, tracked_model: Any, logger: AgentLogger | None = None) -> None:
        self.tracked_model = tracked_model
        self.logger = logger
        self.step_durations: list[float | None] = []
        self.total_input_token_count = 0
        self.total_output_token_count = 0

    def get_total_token_counts(self) -> TokenUsage:
        return TokenUsage(input_tokens=self.total_input_token_count, output_tokens=self.total_output_token_count)

    def reset(self) -> None:
        self.step_durations = []
        self.total_input_token_count = 0
        self.total_output_token_count = 0

    def update_metrics(self, step_log: Any) -> None:
        """Count one finished step's duration and tokens (printed by the console view, not here)."""
        self.step_durations.append(step_log.timing.duration)
        usage = getattr(step_log, "token_usage", None)
        if usage is not None:
            self.total_input_token_count += usage.input_tokens
            self.total_output_token_count += usage.output_tokens


def _printable(value: Any) -> str:
    return (
        value if isinstance(value, str) else json.dumps(value, default=str) if isinstance(value, dict) else str(value)
    )


def _message_dict(message: Any) -> Any:
    return message.dict() if hasattr(message, "dict") else message
