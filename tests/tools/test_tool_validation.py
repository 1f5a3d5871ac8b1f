"""Every invalid Tool definition raises one ToolDefinitionError naming the tool, the field and the fix.

As in smolagents, the checks run when a tool is instantiated: defining a slightly-off class does not
raise (a module holding one still imports).
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from nbagent.tools import Tool, ToolDefinitionError


def define(**attrs: Any) -> type[Tool]:
    """Define a Tool subclass (never raises: validation happens on instantiation)."""
    namespace = {
        "name": "get_weather",
        "description": "Gets the weather for a city.",
        "inputs": {"city": {"type": "string", "description": "The city."}},
        "output_type": "string",
        "forward": lambda self, city: f"sunny in {city}",
    }
    namespace.update(attrs)
    namespace = {k: v for k, v in namespace.items() if v is not ...}
    return type("WeatherTool", (Tool,), namespace)


def test_valid_definition_works():
    cls = define()
    tool = cls()
    assert tool("Paris") == "sunny in Paris"
    assert isinstance(ToolDefinitionError("t", "f", "p", "x"), ValueError)


@pytest.mark.parametrize(
    ("attrs", "field", "fix"),
    [
        ({"name": "get weather"}, "is not a Python identifier", "get_weather"),
        ({"name": 42}, "is not a Python identifier", "letters, digits"),
        ({"name": "class"}, "keyword", "class_tool"),
        ({"name": "print"}, "builtin", "print_tool"),
        ({"description": ""}, "'description'", "describe"),
        ({"description": None}, "'description'", "You must set an attribute description"),
        ({"inputs": [("city", "string")]}, "'inputs'", '{"arg"'),
        ({"inputs": {"city": "string"}}, "inputs['city']", '"type": "string"'),
        ({"inputs": {"city": {"description": "The city."}}}, "has no 'type'", '"type"'),
        ({"inputs": {"city": {"type": "str", "description": "The city."}}}, "inputs['city']['type']", "'string'"),
        ({"inputs": {"city": {"type": ["string", "float"], "description": "c"}}}, "'float'", "'number'"),
        ({"inputs": {"city": {"type": [], "description": "The city."}}}, "empty list", "one of"),
        ({"inputs": {"city": {"type": "string"}}}, "has no 'description'", '"description"'),
        ({"inputs": {"city": {"type": "string", "description": "  "}}}, "has no 'description'", '"description"'),
        ({"inputs": {"city": {"type": "string", "description": "c", "nullable": "yes"}}}, "['nullable']", "True"),
        ({"output_type": "str"}, "'output_type'", "'string'"),
        ({"output_type": "dataframe"}, "'output_type'", "one of"),
        ({"output_type": ...}, "'output_type'", "You must set an attribute output_type"),
        ({"description": ...}, "'description'", "class attribute description"),
    ],
)
def test_invalid_attribute_is_one_clear_error_at_instantiation(attrs, field, fix):
    cls = define(**attrs)  # defining the class does not raise
    with pytest.raises(ToolDefinitionError) as info:
        cls()
    message = str(info.value)
    assert message.startswith("Tool ")
    assert "WeatherTool" in message  # the tool is named
    assert field in message
    assert "Fix:" in message and fix in message.split("Fix:")[1]


def test_forward_must_match_inputs():
    with pytest.raises(ToolDefinitionError, match=r"lacks \['city'\].*has \['town'\].*Fix: make forward"):
        define(forward=lambda self, town: town)()


def test_missing_forward():
    with pytest.raises(ToolDefinitionError, match="'forward' is not defined"):
        define(forward=...)()


def test_var_args_need_the_skip_flag():
    with pytest.raises(ToolDefinitionError, match=r"takes \*args.*skip_forward_signature_validation"):
        define(forward=lambda self, *args: args)()
    with pytest.raises(ToolDefinitionError, match=r"takes \*\*kwargs"):
        define(forward=lambda self, **kwargs: kwargs)()
    cls = define(forward=lambda self, *args, **kwargs: (args, kwargs), skip_forward_signature_validation=True)
    assert cls()(city="Oslo") == ((), {"city": "Oslo"})


def test_default_requires_nullable_and_back():
    with pytest.raises(ToolDefinitionError, match=r"inputs\['city'\] is not nullable.*default \('Paris'\).*nullable"):
        define(forward=lambda self, city="Paris": city)()
    nullable = {"city": {"type": "string", "description": "The city.", "nullable": True}}
    with pytest.raises(ToolDefinitionError, match=r"is nullable but .* no default.*city=None"):
        define(inputs=nullable, forward=lambda self, city: city)()
    assert define(inputs=nullable, forward=lambda self, city=None: city or "here")()() == "here"


def test_optional_annotation_counts_as_nullable_without_default():
    def forward(self, city: Optional[str]) -> str:  # noqa: UP045 - the old spelling on purpose
        return str(city)

    nullable = {"city": {"type": "string", "description": "The city.", "nullable": True}}
    assert define(inputs=nullable, forward=forward)()(None) == "None"


def test_class_statement_does_not_raise_instantiation_does():
    class Adder(Tool):
        name = "adder"
        description = "Adds two numbers."
        inputs = {"a": {"type": "int", "description": "first"}}
        output_type = "integer"

        def forward(self, a):
            return a

    with pytest.raises(ToolDefinitionError, match="'adder' \\(class Adder\\)") as info:
        Adder()
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)  # smolagents raises either


@pytest.mark.parametrize(
    ("kind", "error", "phrase"),
    [
        ("invalid_type", ValueError, "must be one of"),
        (["string", "invalid_type"], ValueError, "must be one of"),
        ([123, "string"], TypeError, "when type is a list, all elements must be strings"),
        (123, TypeError, "must be a string or list of strings"),
    ],
)
def test_type_errors_keep_smolagents_wording(kind, error, phrase):
    cls = define(inputs={"city": {"type": kind, "description": "The city."}})
    with pytest.raises(error, match=phrase):
        cls()


def test_nullable_mismatch_says_nullable():
    with pytest.raises(ToolDefinitionError, match="Nullable"):
        define(forward=lambda self, city=False: city)()


def test_dynamic_attributes_are_checked_at_instantiation():
    class Dynamic(Tool):
        def __init__(self, output_type: str):
            super().__init__()
            self.name = "dynamic"
            self.description = "Made at runtime."
            self.inputs = {"x": {"type": "integer", "description": "a number"}}
            self.output_type = output_type

        def forward(self, x):
            return x

    assert Dynamic("integer")(3) == 3  # defining the class did not raise
    with pytest.raises(ToolDefinitionError, match=r"'dynamic' \(class Dynamic\): 'output_type' = 'int'.*'integer'"):
        Dynamic("int")


def test_instance_inputs_set_in_init_must_match_forward():
    class Renamed(Tool):
        name = "renamed"
        description = "Inputs replaced at runtime."
        inputs = {"x": {"type": "integer", "description": "a number"}}
        output_type = "integer"

        def __init__(self):
            super().__init__()
            self.inputs = {"y": {"type": "integer", "description": "another number"}}

        def forward(self, x):
            return x

    with pytest.raises(ToolDefinitionError, match=r"'renamed' \(class Renamed\): 'forward' parameters \['x'\]"):
        Renamed()


def test_missing_attribute_of_dynamic_tool_at_instantiation():
    class NoName(Tool):
        def __init__(self):
            super().__init__()
            self.description = "No name."
            self.inputs = {}
            self.output_type = "string"

        def forward(self):
            return "x"

    with pytest.raises(ToolDefinitionError, match="'name' is not set. Fix: You must set an attribute name"):
        NoName()


def test_abstract_base_without_attributes_is_allowed_and_subclasses_are_checked():
    class Base(Tool):
        def helper(self):
            return 1

    class Child(Base):
        name = "child"
        description = ""
        inputs = {}
        output_type = "integer"

        def forward(self):
            return self.helper()

    with pytest.raises(ToolDefinitionError, match="'description'"):
        Child()
