"""The tools a code step's code calls: each call recorded for a person, limited, and approved where asked.

A CodeAgent's code calls its tools by name (in the isolated executor, through the worker's stubs; the tool runs
here, in the kernel). The loop hands the executor its tools wrapped (`ToolUses.wrap`), so that each call:

* is recorded on the step (`ActionStep.code_tool_calls`: tool, arguments, a short result or the error, seconds),
  which the widget, the static HTML and the console show under "Tool calls";
* runs under the step's limits (`tools/calls.py`): the executor's deadline for the code and Stop, which a tool
  that waits on another process (an MCP server) obeys;
* for a tool named in `approve_tools`, runs only in code a person approved: code that names such a tool goes to
  the approval gate as `approve_code=True` code does (`needs_approval`); a call the person did not see (the name
  built at run time) is refused with the reason.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from nbagent.media import is_image
from nbagent.text import Truncation, truncate
from nbagent.tools.calls import limited

__all__ = ["ToolUses", "ToolNotApproved"]

_ARGUMENT = Truncation(200)
_RESULT = Truncation(300)
_MAX_RECORDED = 50  # calls recorded per step; more are counted in the last entry


class ToolNotApproved(PermissionError):
    """A tool of `approve_tools` was called by code no person approved."""


class ToolUses:
    """The wrapped tools of one agent and the calls of the current step (`calls`)."""

    def __init__(self, approve_tools: Iterable[str] = ()) -> None:
        if isinstance(approve_tools, str) or not all(isinstance(name, str) for name in approve_tools):
            raise TypeError(f"approve_tools takes a list of tool names, got {approve_tools!r}")
        self.approve_tools = frozenset(approve_tools)
        self.running: str | None = None  # the tool a call of the code waits for now (its name), else None
        self.calls: list[dict[str, Any]] = []
        self._deadline: float | None = None
        self._stopped: Callable[[], bool] = lambda: False
        self._approved = False

    def wrap(self, tools: Mapping[str, Any]) -> dict[str, Any]:
        """The tools as the executor should call them (final_answer as it is: it ends the step, it is no use)."""
        return {name: tool if name == "final_answer" else _Recorded(name, tool, self) for name, tool in tools.items()}

    def needs_approval(self, code: str) -> bool:
        """Whether `code` names a tool of `approve_tools` (then a person approves the step's code first)."""
        return any(re.search(rf"\b{re.escape(name)}\b", code) for name in self.approve_tools)

    def begin(self, timeout: float | None, stopped: Callable[[], bool], approved: bool) -> None:
        """A code call starts: its deadline (`timeout` seconds from now), Stop, whether a person approved it."""
        self.calls = []
        self._deadline = time.monotonic() + timeout if timeout else None
        self._stopped, self._approved = stopped, approved

    def call(self, name: str, tool: Any, args: tuple, kwargs: dict) -> Any:
        entry: dict[str, Any] = {"name": name, "arguments": _arguments(args, kwargs)}
        started = time.monotonic()
        try:
            if name in self.approve_tools and not self._approved:
                raise ToolNotApproved(
                    f"{name} runs only in code a person approved; this step's code was not shown for approval (call "
                    f"{name}(...) by its name, so the step asks first)"
                )
            self.running = name
            with limited(self._deadline, self._stopped):
                result = tool(*args, **kwargs)
        except BaseException as failure:
            entry["error"] = truncate(f"{type(failure).__name__}: {failure}", _RESULT)
            raise
        else:
            entry["result"] = _preview(result)
            return result
        finally:
            self.running = None
            entry["seconds"] = round(time.monotonic() - started, 4)
            self._record(entry)

    def _record(self, entry: dict[str, Any]) -> None:
        if len(self.calls) < _MAX_RECORDED:
            self.calls.append(entry)
        else:
            self.calls[-1]["more"] = self.calls[-1].get("more", 0) + 1


class _Recorded:
    """A tool as the executor calls it: its descriptive attributes are the tool's, each call goes through `uses`."""

    def __init__(self, name: str, tool: Any, uses: ToolUses) -> None:
        self._nb_name, self._nb_tool, self._nb_uses = name, tool, uses

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._nb_uses.call(self._nb_name, self._nb_tool, args, kwargs)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_nb_"):
            raise AttributeError(attribute)
        return getattr(self._nb_tool, attribute)

    def __repr__(self) -> str:
        return repr(self._nb_tool)


def _arguments(args: tuple, kwargs: dict) -> dict[str, Any]:
    """The call's arguments as short texts (positional ones by position: the tool names them, not the call)."""
    shown = {f"#{i + 1}": value for i, value in enumerate(args)} | dict(kwargs)
    return {str(key): truncate(_text(value, repr), _ARGUMENT) for key, value in shown.items()}


def _preview(result: Any) -> str:
    if is_image(result):
        size = getattr(result, "size", None)
        return f"an image {size[0]}×{size[1]}" if size else "an image"
    return truncate(_text(result), _RESULT)


def _text(value: Any, show: Callable[[Any], str] = str) -> str:
    try:
        return show(value)
    except Exception:
        return f"<{type(value).__name__}>"
