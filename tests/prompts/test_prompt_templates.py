"""Prompt templates: loading, rendering with the agent's variables, StrictUndefined, merging."""

from __future__ import annotations

import copy
import importlib.resources
import re

import pytest
import yaml

from nbagent.prompts import (
    PROMPT_TEMPLATE_KEYS,
    TEMPLATE_VARIABLES,
    PromptTemplateError,
    check_template_variables,
    load_prompt_templates,
    merge_prompt_templates,
    populate_template,
)
from nbagent.tools import FinalAnswerTool, VisitWebpageTool, tool

KINDS = ("code_agent", "toolcalling_agent")


@tool
def get_weather(city: str, celsius: bool = True) -> str:
    """Gets the weather.

    Args:
        city: The city.
        celsius: Whether to use Celsius.
    """
    return city


class FakeManagedAgent:
    name = "web_researcher"
    description = "Searches the web and reports what it found."
    inputs = {
        "task": {"type": "string", "description": "Long detailed description of the task."},
        "additional_args": {"type": "object", "description": "Extra inputs.", "nullable": True},
    }
    output_type = "string"


def variables(kind: str, key: str, *, tools=None, managed=None, instructions=None) -> dict:
    """Exactly the variables the agent gives this template (the TEMPLATE_VARIABLES contract)."""
    values = {
        "tools": tools if tools is not None else {"final_answer": FinalAnswerTool()},
        "managed_agents": managed or {},
        "custom_instructions": instructions,
        "authorized_imports": "['math', 'statistics']",
        "code_block_opening_tag": "```python\n",
        "code_block_closing_tag": "\n```",
        "task": "Compute 2 + 2.",
        "remaining_steps": 7,
        "name": "helper",
        "final_answer": "4",
    }
    return {k: values[k] for k in TEMPLATE_VARIABLES[kind][key]}


def leaves(templates: dict, prefix: str = ""):
    for key, value in templates.items():
        if isinstance(value, dict):
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def rough_token_count(text: str) -> int:
    """An over-estimate of BPE tokens: every word and every punctuation mark counts as one."""
    return len(re.findall(r"\w+|[^\w\s]", text))


@pytest.mark.parametrize("kind", KINDS)
def test_defaults_have_smolagents_keys_and_render_with_their_variables(kind):
    templates = load_prompt_templates(kind)
    assert set(templates) == set(PROMPT_TEMPLATE_KEYS)
    for group in ("planning", "managed_agent", "final_answer"):
        assert set(templates[group]) == set(PROMPT_TEMPLATE_KEYS[group])
    check_template_variables(templates, kind)
    for key, template in leaves(templates):
        text = populate_template(template, variables(kind, key))
        assert text.strip() and "{{" not in text and "{%" not in text, key


def test_load_returns_a_fresh_copy_and_accepts_aliases():
    first = load_prompt_templates("code_agent")
    first["system_prompt"] = "changed"
    assert load_prompt_templates("code")["system_prompt"] != "changed"
    assert load_prompt_templates("ToolCallingAgent") == load_prompt_templates("toolcalling_agent")
    with pytest.raises(PromptTemplateError, match="Unknown prompt template kind 'chat'"):
        load_prompt_templates("chat")


def test_yaml_files_are_reachable_by_smolagents_recipe():
    text = importlib.resources.files("nbagent.prompts").joinpath("code_agent.yaml").read_text()
    assert yaml.safe_load(text) == load_prompt_templates("code_agent")


def test_code_agent_system_prompt_without_extra_tools_is_compact_and_complete():
    template = load_prompt_templates("code_agent")["system_prompt"]
    text = populate_template(template, variables("code_agent", "system_prompt"))
    assert rough_token_count(text) < 900
    assert "Thought:" in text and "final_answer(" in text
    assert text.count("```python\n") == 4 and "```python\n\n" not in text  # 2 examples (3 blocks) + the tools
    assert "def final_answer(answer: Any) -> Any:" in text
    assert "['math', 'statistics']" in text
    assert "team members" not in text.lower()


def test_code_agent_system_prompt_with_tools_managed_agents_and_instructions():
    template = load_prompt_templates("code_agent")["system_prompt"]
    tools = {"final_answer": FinalAnswerTool(), "get_weather": get_weather}
    text = populate_template(
        template,
        variables(
            "code_agent",
            "system_prompt",
            tools=tools,
            managed={"web_researcher": FakeManagedAgent()},
            instructions="Always answer in French.",
        ),
    )
    assert get_weather.to_code_prompt() in text
    assert "def web_researcher(task: str, additional_args: dict | None = None) -> str:" in text
    assert "Searches the web and reports what it found." in text and "Team members" in text
    assert "Always answer in French." in text
    body = text.split("already defined, do not import them:\n```python\n")[1].split("\n```")[0]
    compile(body.replace('"""\n\ndef', '"""\n    pass\n\ndef') + "\n    pass\n", "<tools>", "exec")


def test_toolcalling_system_prompt_with_and_without_managed_agents():
    template = load_prompt_templates("toolcalling_agent")["system_prompt"]
    tools = {"final_answer": FinalAnswerTool(), "visit_webpage": VisitWebpageTool()}
    plain = populate_template(template, variables("toolcalling_agent", "system_prompt", tools=tools))
    assert VisitWebpageTool().to_tool_calling_prompt() in plain
    assert '"name": "final_answer", "arguments": {"answer":' in plain
    assert "team members" not in plain
    with_team = populate_template(
        template,
        variables("toolcalling_agent", "system_prompt", tools=tools, managed={"web_researcher": FakeManagedAgent()}),
    )
    assert "- web_researcher: Searches the web" in with_team and '"additional_args"' in with_team


def test_planning_and_managed_templates_use_their_variables():
    templates = load_prompt_templates("code_agent")
    plan = populate_template(
        templates["planning"]["update_plan_post_messages"],
        variables("code_agent", "planning.update_plan_post_messages", tools={"get_weather": get_weather}),
    )
    assert "7 steps left" in plan and "- get_weather: Gets the weather." in plan
    task = populate_template(templates["managed_agent"]["task"], {"name": "helper", "task": "Find X."})
    assert "'helper'" in task and "Find X." in task
    report = populate_template(templates["managed_agent"]["report"], {"name": "helper", "final_answer": "X is 3"})
    assert report.endswith("X is 3")


def test_strict_undefined_names_the_missing_variable():
    with pytest.raises(PromptTemplateError, match=r"uses the variable 'task', which was not given \(given: name\)"):
        populate_template("Hi {{name}}, do {{task}}", {"name": "a"})
    template = load_prompt_templates("code_agent")["system_prompt"]
    given = variables("code_agent", "system_prompt")
    del given["authorized_imports"]
    with pytest.raises(PromptTemplateError, match="'authorized_imports'"):
        populate_template(template, given)


def test_template_attribute_and_syntax_errors():
    with pytest.raises(PromptTemplateError, match="has no attribute 'nope'"):
        populate_template("{{ tool.nope }}", {"tool": FinalAnswerTool()})
    with pytest.raises(PromptTemplateError, match="syntax error on line 2"):
        populate_template("ok\n{% for x in %}", {})
    with pytest.raises(PromptTemplateError, match="must be a string"):
        populate_template(None, {})


def test_check_template_variables_rejects_unavailable_variables():
    templates = load_prompt_templates("toolcalling_agent")
    templates["planning"]["initial_plan"] = "Plan {{task}} with {{authorized_imports}}"
    with pytest.raises(PromptTemplateError, match=r"'planning.initial_plan' uses the variable 'authorized_imports'"):
        check_template_variables(templates, "toolcalling_agent")
    check_template_variables(
        {**templates, "planning": load_prompt_templates("toolcalling_agent")["planning"]}, "toolcalling_agent"
    )


def test_merge_overrides_any_subset_without_touching_defaults():
    defaults = load_prompt_templates("code_agent")
    before = copy.deepcopy(defaults)
    merged = merge_prompt_templates(defaults, {"system_prompt": "S {{tools}}", "planning": {"initial_plan": "P"}})
    assert merged["system_prompt"] == "S {{tools}}" and merged["planning"]["initial_plan"] == "P"
    assert merged["planning"]["update_plan_pre_messages"] == defaults["planning"]["update_plan_pre_messages"]
    assert merged["final_answer"] == defaults["final_answer"]
    assert defaults == before
    assert merge_prompt_templates(defaults, None) == defaults and merge_prompt_templates(defaults, None) is not defaults


@pytest.mark.parametrize(
    ("overrides", "pattern"),
    [
        (
            {"system_promt": "x"},
            r"Unknown prompt template key prompt_templates\['system_promt'\]\. Did you mean "
            r"'system_prompt'\?",
        ),
        (
            {"planning": {"initial_facts": "x"}},
            r"Unknown prompt template key prompt_templates\['planning'\]"
            r"\['initial_facts'\]",
        ),
        ({"planning": "x"}, r"prompt_templates\['planning'\] must be a dict, got str"),
        ({"final_answer": {"pre_messages": None}}, r"\['final_answer'\]\['pre_messages'\] must be a template string"),
        (["system_prompt"], "prompt_templates must be a dict, got list"),
    ],
)
def test_merge_errors_name_the_key(overrides, pattern):
    with pytest.raises(PromptTemplateError, match=pattern):
        merge_prompt_templates(load_prompt_templates("code_agent"), overrides)


def test_merge_reports_missing_default_keys():
    defaults = load_prompt_templates("code_agent")
    del defaults["managed_agent"]["report"]
    with pytest.raises(
        PromptTemplateError,
        match=r"Missing prompt template key prompt_templates\['managed_agent'\]"
        r"\['report'\]",
    ):
        merge_prompt_templates(defaults, {})
    del defaults["managed_agent"]
    with pytest.raises(PromptTemplateError, match=r"Missing prompt template key prompt_templates\['managed_agent'\]"):
        merge_prompt_templates(defaults, {})
