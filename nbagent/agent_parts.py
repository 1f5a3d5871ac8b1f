"""The pieces the loop leans on: tool set-up, step callbacks, prompt messages."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nbagent.memory import ActionStep, MemoryStep
from nbagent.models.base import ChatMessage, MessageRole

if TYPE_CHECKING:
    from nbagent.agents import MultiStepAgent

__all__ = ["CallbackRegistry", "PromptBuilder", "setup_tools", "describe_variables",
           "managed_agent_inputs"]

CODE_BLOCK_OPENING_TAG = "```python\n"
CODE_BLOCK_CLOSING_TAG = "\n```"


def setup_tools(tools: list[Any], add_base_tools: bool, managed_agents: dict[str, Any], code_agent: bool) -> dict[str, Any]:
    """Tools by name, with `final_answer` always present; clear errors for clashes."""
    from nbagent.tools import FinalAnswerTool, Tool, get_base_tools

    by_name: dict[str, Any] = {}
    for tool in tools:
        if not isinstance(tool, Tool):
            raise TypeError(
                f"Every tool must be a nbagent Tool (use the @tool decorator or subclass Tool), got {type(tool).__name__}: {tool!r}"
            )
        if tool.name in by_name:
            raise ValueError(f"Two tools are named {tool.name!r}; tool names must be unique")
        by_name[tool.name] = tool
    if add_base_tools:
        for name, base_tool in get_base_tools(code_agent).items():
            by_name.setdefault(name, base_tool)
    by_name.setdefault("final_answer", FinalAnswerTool())
    for name, agent in managed_agents.items():
        if not name:
            raise ValueError("A managed agent needs a name (and a description) so the manager can call it")
        if name in by_name:
            raise ValueError(f"The managed agent {name!r} has the same name as a tool; rename one of them")
        if not getattr(agent, "description", None):
            raise ValueError(f"The managed agent {name!r} needs a description so the manager knows when to call it")
    return by_name


def managed_agent_inputs() -> dict[str, Any]:
    return {
        "task": {"type": "string", "description": "Long detailed description of the task."},
        "additional_args": {
            "type": "object",
            "description": "Dictionary of extra inputs to pass to the managed agent, e.g. images, dataframes, or any other contextual data it may need.",
            "nullable": True,
        },
    }


ADDITIONAL_ARGS_HEADING = (
    "You have been provided with these additional arguments, that you can access directly using the keys as variables:"
)


def describe_variables(variables: dict[str, Any], heading: str = ADDITIONAL_ARGS_HEADING) -> str:
    """A task suffix naming each variable with its type and a short repr, for the model."""
    lines = [f"- {name}: {type(value).__name__} = {_short_repr(value)}" for name, value in variables.items()]
    return f"\n{heading}\n" + "\n".join(lines)


def _short_repr(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


class CallbackRegistry:
    """Step callbacks: a list (called for ActionSteps) or a dict keyed by step class."""

    def __init__(self, callbacks: list[Callable] | dict[type, Any] | None) -> None:
        self._by_type: dict[type, list[Callable]] = {}
        if callbacks is None:
            return
        if isinstance(callbacks, dict):
            for step_type, funcs in callbacks.items():
                for func in funcs if isinstance(funcs, (list, tuple)) else [funcs]:
                    self.register(step_type, func)
        elif isinstance(callbacks, (list, tuple)):
            for func in callbacks:
                self.register(ActionStep, func)
        else:
            raise TypeError("step_callbacks must be a list of functions or a dict {StepClass: function or list}")

    def register(self, step_type: type, func: Callable) -> None:
        if not (isinstance(step_type, type) and issubclass(step_type, MemoryStep)):
            raise TypeError(f"step_callbacks keys must be memory step classes (e.g. ActionStep), got {step_type!r}")
        if not callable(func):
            raise TypeError(f"Step callback {func!r} is not callable")
        self._by_type.setdefault(step_type, []).append(func)

    def callback(self, step: MemoryStep, **kwargs: Any) -> None:
        for step_type, funcs in self._by_type.items():
            if isinstance(step, step_type):
                for func in funcs:
                    _call_callback(func, step, kwargs)

    def __len__(self) -> int:
        return sum(len(funcs) for funcs in self._by_type.values())


def _call_callback(func: Callable, step: MemoryStep, kwargs: dict[str, Any]) -> None:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        params = {}
    accepts_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    if accepts_kwargs or "agent" in params:
        func(step, **kwargs)
    elif len(params) >= 2:
        func(step, *kwargs.values())
    else:
        func(step)


def _text_message(role: MessageRole, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=[{"type": "text", "text": text}])


class PromptBuilder:
    """Renders the agent's prompt templates into model messages."""

    def __init__(self, agent: MultiStepAgent) -> None:
        self.agent = agent

    def _render(self, template: str, **variables: Any) -> str:
        from nbagent.prompts import populate_template

        return populate_template(template, variables)

    def _common(self) -> dict[str, Any]:
        agent = self.agent
        return {
            "tools": agent.tools,
            "managed_agents": agent.managed_agents,
            "custom_instructions": agent.instructions,
            "name": agent.name,
            "code_block_opening_tag": CODE_BLOCK_OPENING_TAG,
            "code_block_closing_tag": CODE_BLOCK_CLOSING_TAG,
            "authorized_imports": getattr(agent, "authorized_imports_text", lambda: "")(),
        }

    def system_prompt(self) -> str:
        return self._render(self.agent.prompt_templates["system_prompt"], **self._common())

    def plan(self, task: str, is_first: bool, step_number: int) -> list[ChatMessage]:
        planning = self.agent.prompt_templates["planning"]
        if is_first:
            return [_text_message(MessageRole.USER, self._render(planning["initial_plan"], task=task, **self._common()))]
        remaining = self.agent.max_steps - step_number + 1
        pre = _text_message(MessageRole.SYSTEM, self._render(planning["update_plan_pre_messages"], task=task, **self._common()))
        post = _text_message(
            MessageRole.USER,
            self._render(planning["update_plan_post_messages"], task=task, remaining_steps=remaining, **self._common()),
        )
        return [pre, *self.agent.write_memory_to_messages(summary_mode=True), post]

    def plan_text(self, model_text: str, is_first: bool) -> str:
        if is_first:
            return f"Here are the facts I know and the plan of action that I will follow to solve the task:\n```\n{model_text.strip()}\n```"
        return (
            f"I still need to solve the task I was given:\n```\n{self.agent.task}\n```\n\n"
            f"Here are the facts I know and my new/updated plan of action to solve the task:\n```\n{model_text.strip()}\n```"
        )

    def final_answer(self, task: str) -> list[ChatMessage]:
        templates = self.agent.prompt_templates["final_answer"]
        pre = _text_message(MessageRole.SYSTEM, self._render(templates["pre_messages"], task=task, **self._common()))
        post = _text_message(MessageRole.USER, self._render(templates["post_messages"], task=task, **self._common()))
        return [pre, *self.agent.write_memory_to_messages()[1:], post]

    def managed_task(self, task: str) -> str:
        return self._render(self.agent.prompt_templates["managed_agent"]["task"], name=self.agent.name, task=task)

    def managed_report(self, result: Any) -> str:
        answer = getattr(result, "output", result)
        report = self._render(
            self.agent.prompt_templates["managed_agent"]["report"], name=self.agent.name, final_answer=answer
        )
        if self.agent.provide_run_summary:
            summary = "\n---".join(
                _truncate(message.text) for message in self.agent.write_memory_to_messages(summary_mode=True)
            )
            report += (
                "\n\nFor more detail, find below a summary of this agent's work:\n"
                f"<summary_of_work>\n{summary}\n</summary_of_work>"
            )
        return report


def _truncate(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "\n[…]\n" + text[-limit // 2 :]
