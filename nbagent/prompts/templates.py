"""Prompt templates: YAML files rendered by jinja2 with StrictUndefined.

Each template file has smolagents' keys (see `PROMPT_TEMPLATE_KEYS`). The agent
renders each template with a fixed set of variables (`TEMPLATE_VARIABLES`); a
template that needs anything else fails with an error naming the variable.
"""

from __future__ import annotations

import copy
import difflib
import re
from functools import lru_cache
from importlib import resources
from typing import Any, TypedDict

import jinja2
import jinja2.meta
import yaml

__all__ = [
    "PromptTemplateError",
    "PlanningPromptTemplate",
    "ManagedAgentPromptTemplate",
    "FinalAnswerPromptTemplate",
    "PromptTemplates",
    "EMPTY_PROMPT_TEMPLATES",
    "PROMPT_TEMPLATE_KEYS",
    "TEMPLATE_VARIABLES",
    "load_prompt_templates",
    "populate_template",
    "merge_prompt_templates",
    "check_template_variables",
]


class PromptTemplateError(ValueError):
    """A prompt template is missing, unknown, malformed, or needs a variable that was not given."""


class PlanningPromptTemplate(TypedDict):
    initial_plan: str
    update_plan_pre_messages: str
    update_plan_post_messages: str


class ManagedAgentPromptTemplate(TypedDict):
    task: str
    report: str


class FinalAnswerPromptTemplate(TypedDict):
    pre_messages: str
    post_messages: str


class PromptTemplates(TypedDict):
    system_prompt: str
    planning: PlanningPromptTemplate
    managed_agent: ManagedAgentPromptTemplate
    final_answer: FinalAnswerPromptTemplate


# The required structure: a leaf is a template string, a dict a group of them.
PROMPT_TEMPLATE_KEYS: dict[str, Any] = {
    "system_prompt": str,
    "planning": {"initial_plan": str, "update_plan_pre_messages": str, "update_plan_post_messages": str},
    "managed_agent": {"task": str, "report": str},
    "final_answer": {"pre_messages": str, "post_messages": str},
}

EMPTY_PROMPT_TEMPLATES: dict[str, Any] = {
    key: "" if spec is str else dict.fromkeys(spec, "") for key, spec in PROMPT_TEMPLATE_KEYS.items()
}

_AGENT_LISTS = frozenset({"tools", "managed_agents"})
# Variables the agent passes to each template (the contract between the loop and the templates).
TEMPLATE_VARIABLES: dict[str, dict[str, frozenset[str]]] = {
    kind: {
        "system_prompt": _AGENT_LISTS | {"custom_instructions"} | extra,
        "planning.initial_plan": _AGENT_LISTS | {"task"},
        "planning.update_plan_pre_messages": frozenset({"task"}),
        "planning.update_plan_post_messages": _AGENT_LISTS | {"task", "remaining_steps"},
        "managed_agent.task": frozenset({"name", "task"}),
        "managed_agent.report": frozenset({"name", "final_answer"}),
        "final_answer.pre_messages": frozenset(),
        "final_answer.post_messages": frozenset({"task"}),
    }
    for kind, extra in (
        ("code_agent", frozenset({"authorized_imports", "code_block_opening_tag", "code_block_closing_tag"})),
        ("toolcalling_agent", frozenset()),
    )
}

_KINDS = {
    "code": "code_agent",
    "code_agent": "code_agent",
    "codeagent": "code_agent",
    "toolcalling": "toolcalling_agent",
    "tool_calling": "toolcalling_agent",
    "toolcalling_agent": "toolcalling_agent",
    "tool_calling_agent": "toolcalling_agent",
    "toolcallingagent": "toolcalling_agent",
}


def _code_signature(obj: Any) -> str:
    from nbagent.tools.base import render_code_signature

    return render_code_signature(obj.name, obj.description, obj.inputs, obj.output_type)


def _tool_calling_signature(obj: Any) -> str:
    from nbagent.tools.base import render_tool_calling_prompt

    return render_tool_calling_prompt(obj.name, obj.description, obj.inputs, obj.output_type)


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
# Render anything with name/description/inputs/output_type (managed agents) like a tool.
_ENV.globals.update(code_signature=_code_signature, tool_calling_signature=_tool_calling_signature)


@lru_cache(maxsize=128)
def _compile(template: str) -> jinja2.Template:
    try:
        return _ENV.from_string(template)
    except jinja2.TemplateSyntaxError as err:
        raise PromptTemplateError(f"Prompt template has a syntax error on line {err.lineno}: {err.message}") from None


def populate_template(template: str, variables: dict[str, Any]) -> str:
    """Render a template; a variable it needs but `variables` lacks is an error naming it."""
    if not isinstance(template, str):
        raise PromptTemplateError(f"A prompt template must be a string, got {type(template).__name__}")
    compiled = _compile(template)
    try:
        return compiled.render(**variables)
    except jinja2.UndefinedError as err:
        match = re.match(r"^'([^']+)' is undefined$", str(err))
        given = ", ".join(sorted(variables)) or "none"
        if match:
            raise PromptTemplateError(
                f"Prompt template uses the variable {match.group(1)!r}, which was not given (given: {given})."
            ) from None
        raise PromptTemplateError(f"Prompt template failed: {err} (variables given: {given})") from None


def _check_structure(templates: Any, spec: dict[str, Any], path: str, *, partial: bool) -> None:
    where = f"prompt_templates{path}"
    if not isinstance(templates, dict):
        raise PromptTemplateError(f"{where} must be a dict, got {type(templates).__name__}")
    for key, value in templates.items():
        if key not in spec:
            close = difflib.get_close_matches(str(key), list(spec), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise PromptTemplateError(
                f"Unknown prompt template key {where}[{key!r}].{hint} Valid keys: {', '.join(spec)}."
            )
        if isinstance(spec[key], dict):
            _check_structure(value, spec[key], f"{path}[{key!r}]", partial=partial)
        elif not isinstance(value, str):
            raise PromptTemplateError(f"{where}[{key!r}] must be a template string, got {type(value).__name__}")
    if not partial:
        missing = [key for key in spec if key not in templates]
        if missing:
            raise PromptTemplateError(
                f"Missing prompt template key {where}[{missing[0]!r}]; required keys: {', '.join(spec)}."
            )


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> None:
    for key, value in overrides.items():
        if isinstance(value, dict):
            _merge(base[key], value)
        else:
            base[key] = value


def merge_prompt_templates(defaults: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults with `overrides` laid over them (any subset of the keys, nested).

    An unknown key in `overrides`, a key missing from `defaults`, or a value that is
    not a template string is a `PromptTemplateError` naming the key.
    """
    _check_structure(defaults, PROMPT_TEMPLATE_KEYS, "", partial=False)
    merged = copy.deepcopy(defaults)
    if overrides is not None:
        _check_structure(overrides, PROMPT_TEMPLATE_KEYS, "", partial=True)
        _merge(merged, copy.deepcopy(overrides))
    return merged


def _kind(kind: str) -> str:
    normalized = _KINDS.get(str(kind).lower())
    if normalized is None:
        raise PromptTemplateError(f"Unknown prompt template kind {kind!r}; use 'code_agent' or 'toolcalling_agent'.")
    return normalized


@lru_cache(maxsize=4)
def _load(kind: str) -> dict[str, Any]:
    text = resources.files("nbagent.prompts").joinpath(f"{kind}.yaml").read_text(encoding="utf-8")
    templates = yaml.safe_load(text)
    _check_structure(templates, PROMPT_TEMPLATE_KEYS, "", partial=False)
    return templates


def load_prompt_templates(kind: str) -> dict[str, Any]:
    """The default templates of 'code_agent' or 'toolcalling_agent' (a fresh copy you may edit)."""
    return copy.deepcopy(_load(_kind(kind)))


def _leaves(templates: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    out = []
    for key, value in templates.items():
        if isinstance(value, dict):
            out.extend(_leaves(value, f"{prefix}{key}."))
        else:
            out.append((f"{prefix}{key}", value))
    return out


def check_template_variables(templates: dict[str, Any], kind: str) -> None:
    """Fail early if a template uses a variable the agent of this kind does not provide.

    Stricter than rendering: a variable used only in an untaken branch also counts.
    """
    allowed = TEMPLATE_VARIABLES[_kind(kind)]
    for key, template in _leaves(templates):
        parsed = _ENV.parse(template)
        unknown = sorted(
            jinja2.meta.find_undeclared_variables(parsed) - allowed.get(key, frozenset()) - set(_ENV.globals)
        )
        if unknown:
            given = ", ".join(sorted(allowed.get(key, ()))) or "none"
            raise PromptTemplateError(
                f"Prompt template {key!r} uses the variable {unknown[0]!r}, which the agent does not provide "
                f"there (available: {given})."
            )
