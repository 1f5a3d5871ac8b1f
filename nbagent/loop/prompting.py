"""Prompting: the agent's prompt templates rendered into model messages, and which profile a model gets.

Small local models (the offline default, Qwen2.5-Coder-1.5B) get their own profile: a short
system prompt with pandas examples (`nbagent/prompts/code_agent_small.yaml`) and a cap on the
tokens of one step; what they read at a step is compacted by `aids.history`.
`prompt_profile(model)` decides; API models and large local models keep the standard prompt.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from nbagent.models.base import ChatMessage, MessageRole
from nbagent.prompts import merge_prompt_templates, populate_template
from nbagent.text import RUN_SUMMARY, truncate

from .aids.history import text_message as _text_message

__all__ = [
    "PromptBuilder",
    "CODE_BLOCK_OPENING_TAG",
    "CODE_BLOCK_CLOSING_TAG",
    "SMALL",
    "STANDARD",
    "SMALL_MODEL_STEP_TOKENS",
    "prompt_profile",
    "small_model_templates",
]

CODE_BLOCK_OPENING_TAG = "```python\n"
CODE_BLOCK_CLOSING_TAG = "\n```"


SMALL, STANDARD = "small", "standard"
SMALL_MODEL_MAX_BILLIONS = 4.0  # local models up to this many parameters get the small profile
SMALL_MODEL_STEP_TOKENS = 384  # a step of a small model is cut here (a pandas step needs ~60-200)
_LOCAL_MODEL_CLASSES = ("LlamaCppModel", "TransformersModel")
_SIZE = re.compile(r"(?:^|[-_ .])(\d+(?:\.\d+)?)[bB](?=$|[-_ .])")  # "-1.5b-", "_3B."


def prompt_profile(model: Any) -> str:
    """`SMALL` for a small local model (e.g. the offline default), else `STANDARD`.

    A model may say so itself with a `prompt_profile` attribute ("small" or "standard");
    otherwise a llama.cpp or transformers model whose file or id names a size up to
    `SMALL_MODEL_MAX_BILLIONS` ("…-1.5b-…", "Llama-3.2-3B") is small. API models are standard.
    """
    declared = getattr(model, "prompt_profile", None)
    if declared in (SMALL, STANDARD):
        return declared
    if type(model).__name__ not in _LOCAL_MODEL_CLASSES:
        return STANDARD
    names = [str(getattr(model, attr, "") or "") for attr in ("model_path", "model_id", "gguf_file")]
    sizes = [float(size) for name in names for size in _SIZE.findall(name.replace("\\", "/").rsplit("/", 1)[-1])]
    return SMALL if sizes and max(sizes) <= SMALL_MODEL_MAX_BILLIONS else STANDARD


@lru_cache(maxsize=1)
def _small_model_yaml() -> dict[str, Any]:
    text = resources.files("nbagent.prompts").joinpath("code_agent_small.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def small_model_templates(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The CodeAgent templates for small local models, with `overrides` laid over them (a fresh copy)."""
    return merge_prompt_templates(_small_model_yaml(), overrides)


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
            summary = "".join(  # smolagents' layout: each message on its own lines, then "---"
                f"\n{truncate(message.text, RUN_SUMMARY)}\n---"
                for message in self.agent.write_memory_to_messages(summary_mode=True)
            )
            report += (
                "\n\nFor more detail, find below a summary of this agent's work:\n"
                f"<summary_of_work>\n{summary}\n</summary_of_work>"
            )
        return report
