"""Prompt templates for the agents (YAML + jinja2, StrictUndefined)."""

from .templates import (
    EMPTY_PROMPT_TEMPLATES,
    PROMPT_TEMPLATE_KEYS,
    TEMPLATE_VARIABLES,
    FinalAnswerPromptTemplate,
    ManagedAgentPromptTemplate,
    PlanningPromptTemplate,
    PromptTemplateError,
    PromptTemplates,
    check_template_variables,
    load_prompt_templates,
    merge_prompt_templates,
    populate_template,
)

__all__ = [
    "EMPTY_PROMPT_TEMPLATES",
    "PROMPT_TEMPLATE_KEYS",
    "TEMPLATE_VARIABLES",
    "FinalAnswerPromptTemplate",
    "ManagedAgentPromptTemplate",
    "PlanningPromptTemplate",
    "PromptTemplateError",
    "PromptTemplates",
    "check_template_variables",
    "load_prompt_templates",
    "merge_prompt_templates",
    "populate_template",
]
