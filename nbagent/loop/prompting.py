"""Prompting: the agent's prompt templates rendered into model messages, and variables described for the model."""

from __future__ import annotations

from typing import Any

from nbagent.models.base import ChatMessage, MessageRole
from nbagent.prompts import populate_template
from nbagent.text import RUN_SUMMARY, truncate

__all__ = ["PromptBuilder", "CODE_BLOCK_OPENING_TAG", "CODE_BLOCK_CLOSING_TAG"]

CODE_BLOCK_OPENING_TAG = "```python\n"
CODE_BLOCK_CLOSING_TAG = "\n```"


def _text_message(role: MessageRole, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=[{"type": "text", "text": text}])


class PromptBuilder:
    """Renders the agent's prompt templates into model messages."""

    def __init__(self, agent: Any) -> None:  # an AgentLoop (engine.py imports this module)
        self.agent = agent

    def _render(self, template: str, **variables: Any) -> str:
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
            return [
                _text_message(MessageRole.USER, self._render(planning["initial_plan"], task=task, **self._common()))
            ]
        remaining = self.agent.max_steps - step_number + 1
        pre = _text_message(
            MessageRole.SYSTEM, self._render(planning["update_plan_pre_messages"], task=task, **self._common())
        )
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
                truncate(message.text, RUN_SUMMARY)
                for message in self.agent.write_memory_to_messages(summary_mode=True)
            )
            report += (
                "\n\nFor more detail, find below a summary of this agent's work:\n"
                f"<summary_of_work>\n{summary}\n</summary_of_work>"
            )
        return report
