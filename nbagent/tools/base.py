"""`Tool`: the smolagents tool surface (attributes, call, prompts, save/load, hub)."""

from __future__ import annotations

import inspect
import json
import textwrap
import threading
from abc import ABC, ABCMeta, abstractmethod
from pathlib import Path
from typing import Any

from nbagent.media import is_image, report_image

from .awaiting import resolve_awaitable
from .errors import ToolDefinitionError, ToolSerializationError
from .foreign import ForeignTool
from .forward_schema import infer_io_from_forward
from .gradio_demo import gradio_app_code
from .hub import download_tool_code, push_tool_to_hub
from .source import StandaloneCode, exec_tool_code, object_source, requirements_of
from .types import python_type_name
from .validation import (
    REQUIRED_ATTRIBUTES,
    required_init_parameters,
    validate_forward_signature,
    validate_tool_attributes,
)

__all__ = ["BaseTool", "Tool", "render_code_signature", "render_tool_calling_prompt"]

_SETUP_LOCK = threading.Lock()


def _class_label(cls: type, name: Any = None) -> str:
    name = name if name is not None else cls.__dict__.get("name", getattr(cls, "name", None))
    if isinstance(name, str) and name != cls.__name__:
        return f"'{name}' (class {cls.__name__})"
    return f"class {cls.__name__}"


def _defined_below_tool(cls: type, attr: str) -> bool:
    """Whether a class in cls's MRO other than `Tool` itself defines `attr`."""
    return any(attr in vars(klass) for klass in cls.__mro__ if klass not in (Tool, BaseTool, object))


class BaseTool(ABC):
    """What an agent can call by name (smolagents' `BaseTool`): a `name` and `__call__`. `Tool` is the one to
    subclass; this is for `isinstance` checks and for callables that describe themselves some other way."""

    name: str

    @abstractmethod
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


class _ToolMeta(ABCMeta):
    """Validates every tool once it is fully constructed, whatever its `__init__` does."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        instance = super().__call__(*args, **kwargs)
        instance._validate_instance()
        return instance


def _render_param(arg: str, spec: dict[str, Any], defaults: dict[str, Any] | None) -> str:
    """`defaults` None means unknown: a nullable input is then shown as defaulting to None."""
    annotation = python_type_name(spec)
    if defaults is not None and arg in defaults and defaults[arg] is not None:
        default = defaults[arg]
        return f"{arg}: {annotation} = {default!r}" if len(repr(default)) < 40 else f"{arg}: {annotation} = ..."
    if spec.get("nullable"):
        has_default = defaults is None or arg in defaults
        return f"{arg}: {annotation} | None" + (" = None" if has_default else "")
    return f"{arg}: {annotation}"


def _forward_defaults(forward: Any) -> dict[str, Any] | None:
    try:
        params = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):
        return None
    return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}


def render_tool_calling_prompt(name: str, description: str, inputs: dict[str, Any], output_type: str) -> str:
    """A managed agent as text for tool-calling prompts (its inputs as JSON); tools use `to_tool_calling_prompt`."""
    return (
        f"{name}: {description}\n"
        f"    Takes inputs: {json.dumps(inputs, default=str, ensure_ascii=False)}\n"
        f"    Returns an output of type: {output_type}"
    )


def _code_prompt_type(kind: Any) -> str:
    """A tool type as written in `to_code_prompt` signatures: smolagents' names, except `any` as `Any`
    (in a Python signature `any` would name the builtin function)."""
    return "Any" if kind == "any" else str(kind)


def render_code_signature(
    name: str,
    description: str,
    inputs: dict[str, Any],
    output_type: str,
    output_description: str | None = None,
    defaults: dict[str, Any] | None = None,
) -> str:
    """A Python `def` with a Google-style docstring, as code-writing models expect to read tools."""
    params = [_render_param(arg, spec, defaults) for arg, spec in inputs.items()]
    doc = description.strip()
    if inputs:
        args = "\n".join(f"    {arg}: {spec['description']}" for arg, spec in inputs.items())
        doc += f"\n\nArgs:\n{args}"
    if output_description:
        doc += f"\n\nReturns:\n    {output_description}"
    body = textwrap.indent(f'"""{doc}\n"""', "    ")
    return f"def {name}({', '.join(params)}) -> {python_type_name({'type': output_type})}:\n{body}"


class Tool(BaseTool, metaclass=_ToolMeta):
    """A function the agent can call, described for the model.

    Subclass it with class attributes `name`, `description`, `inputs`
    (`{arg: {"type", "description", optional "nullable"}}`) and `output_type`,
    and a `forward(self, ...)` taking exactly the `inputs`. A fully annotated and documented
    `forward` may stand in for `inputs` and `output_type`. The definition is checked when the
    tool is instantiated (as smolagents does: a module defining a slightly-off tool still
    imports); each problem raises one `ToolDefinitionError` naming the tool, the field and the fix.
    Put expensive initialisation (loading a model) in `setup()`: it runs once, on first call.
    `output_schema` (optional) is a JSON schema of a structured (dict) output, shown to the model.
    """

    name: str
    description: str
    inputs: dict[str, dict[str, Any]]
    output_type: str
    output_description: str | None = None
    output_schema: dict[str, Any] | None = None
    skip_forward_signature_validation: bool = False
    is_initialized: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.is_initialized = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        infer_io_from_forward(cls, _defined_below_tool, _class_label(cls))

    def _validate_instance(self) -> None:
        cls = type(self)
        label = _class_label(cls, getattr(self, "name", None))
        for attr in REQUIRED_ATTRIBUTES:
            if getattr(self, attr, None) is None:
                raise ToolDefinitionError(
                    label,
                    f"'{attr}'",
                    "is not set",
                    f"You must set an attribute {attr}: a class attribute {attr} = ..., or self.{attr} in __init__",
                )
        validate_tool_attributes({a: getattr(self, a) for a in REQUIRED_ATTRIBUTES}, label)
        if self.output_schema is not None and not isinstance(self.output_schema, dict):
            raise ToolDefinitionError(
                label, "'output_schema'", f"is a {type(self.output_schema).__name__}", "make it a JSON schema (a dict)"
            )
        if not self.skip_forward_signature_validation:
            if type(self).forward is Tool.forward and "forward" not in vars(self):
                raise ToolDefinitionError(
                    label, "'forward'", "is not defined", "write def forward(self, ...) taking the keys of 'inputs'"
                )
            validate_forward_signature(self.forward, self.inputs, label, drop_first=False)

    # -- calling -------------------------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Tool {self.name!r}: write forward() in your Tool subclass.")

    def setup(self) -> None:
        """Override for expensive initialisation; called once, before the first call."""

    def __call__(self, *args: Any, sanitize_inputs_outputs: bool = False, **kwargs: Any) -> Any:
        if not self.is_initialized:
            with _SETUP_LOCK:
                if not self.is_initialized:
                    self.setup()
                    self.is_initialized = True
        # Models sometimes pass all arguments as one dict: tool({"a": 1, "b": 2}).
        if len(args) == 1 and not kwargs and isinstance(args[0], dict) and set(args[0]) <= set(self.inputs):
            if not (len(self.inputs) == 1 and set(args[0]) != set(self.inputs)):
                args, kwargs = (), dict(args[0])
        if sanitize_inputs_outputs:
            from nbagent.media.agent_types import handle_agent_input_types, handle_agent_output_types

            args, kwargs = handle_agent_input_types(*args, **kwargs)
            result = handle_agent_output_types(resolve_awaitable(self.forward(*args, **kwargs)), self.output_type)
        else:
            result = resolve_awaitable(self.forward(*args, **kwargs))  # an `async def forward` is awaited
        if is_image(result):
            report_image(result)  # shown in the step that called the tool
        return result

    # -- prompts -------------------------------------------------------------------------------

    def to_code_prompt(self) -> str:
        """The tool as a Python `def` with a docstring, for the CodeAgent system prompt (smolagents' format).

        Types are the tool type names (`text: string`), as smolagents writes them (`any` as `Any`); a tool with an
        `output_schema` is shown returning `dict`, with the schema in its docstring.
        """
        arguments = ", ".join(f"{arg}: {_code_prompt_type(spec['type'])}" for arg, spec in self.inputs.items())
        has_schema = self.output_schema is not None
        doc = self.description
        if has_schema:
            doc += (
                "\n\nImportant: This tool returns structured output! Use the JSON schema below to directly access "
                "fields like result['field_name']. NO print() statements needed to inspect the output!"
            )
        if self.inputs:
            described = "\n".join(f"{arg}: {spec['description']}" for arg, spec in self.inputs.items())
            doc += "\n\nArgs:\n" + textwrap.indent(described, "    ")
        if has_schema:
            schema = textwrap.indent(json.dumps(self.output_schema, indent=4), "        ")
            doc += (
                "\n\nReturns:\n    dict (structured output): This tool ALWAYS returns a dictionary that strictly "
                f"adheres to the following JSON schema:\n{schema}"
            )
        body = textwrap.indent(f'"""{doc}\n"""', "    ")
        returned = "dict" if has_schema else _code_prompt_type(self.output_type)
        return f"def {self.name}({arguments}) -> {returned}:\n{body}"

    def to_tool_calling_prompt(self) -> str:
        """The tool as text for the ToolCallingAgent system prompt (smolagents' exact format)."""
        return f"{self.name}: {self.description}\n    Takes inputs: {self.inputs}\n    Returns an output of type: {self.output_type}"

    # -- persistence ---------------------------------------------------------------------------

    def _label(self) -> str:
        return _class_label(type(self), self.name)

    def _main_source(self) -> tuple[str, dict[str, Any], StandaloneCode]:
        """(source of the defining code, its globals, the collector with fixed imports)."""
        cls = type(self)
        source = object_source(cls)
        if source is None:
            raise ToolSerializationError(
                f"Tool {self._label()}: Python kept no source for class {cls.__name__}. "
                f"Fix: define it in a notebook cell or a .py file."
            )
        import sys

        module = sys.modules.get(cls.__module__)
        return source, vars(module) if module else {}, StandaloneCode(self._label())

    def to_code(self) -> str:
        """The tool as one standalone Python file that recreates it (see `from_code`)."""
        source, namespace, code = self._main_source()
        code.add_dependencies(source, namespace)
        return code.render(source, f"Tool {self.name!r}, saved by nbagent.")

    def _check_init_has_defaults(self) -> None:
        """A saved tool is rebuilt by calling its class without arguments (`load_tool`, an agent's folder)."""
        required = required_init_parameters(type(self))
        if required:
            raise ToolSerializationError(
                f"Parameters in __init__ must have default values, found required parameters {required}: tool "
                f"{self._label()} cannot be saved. The values given when it was created are not saved, and a saved "
                f"tool is rebuilt without arguments. Fix: give them defaults, or set them as class attributes."
            )

    def to_dict(self) -> dict[str, Any]:
        """`{"name", "code", "requirements"}`: enough to recreate the tool with `from_dict`."""
        self._check_init_has_defaults()
        code = self.to_code()
        return {"name": self.name, "code": code, "requirements": requirements_of(code)}

    @classmethod
    def from_dict(cls, tool_dict: dict[str, Any], **kwargs: Any) -> Tool:
        """Recreate a tool from `to_dict()` output. This runs the code: load only tools you trust."""
        if not isinstance(tool_dict, dict) or not isinstance(tool_dict.get("code"), str):
            raise ToolSerializationError(
                f"Tool.from_dict needs a dict with a 'code' string (as made by to_dict()): the dict must contain "
                f"'code' key, got {tool_dict!r:.200}"
            )
        return cls.from_code(tool_dict["code"], **kwargs)

    @classmethod
    def from_code(cls, tool_code: str, **kwargs: Any) -> Tool:
        """Run tool code and return the tool it defines (a `@tool` function or a Tool subclass).

        `kwargs` go to the subclass's `__init__`. This runs the code: load only code you trust.
        """
        module = exec_tool_code(tool_code)
        instances = [v for v in vars(module).values() if isinstance(v, Tool)]
        if instances:
            if len(instances) > 1:
                names = [t.name for t in instances]
                raise ToolSerializationError(f"Tool code defines several tools {names}; save one tool per file.")
            if kwargs:
                raise ToolSerializationError(
                    f"Tool {instances[0].name!r} is a @tool function and takes no init arguments, got {list(kwargs)}."
                )
            return instances[0]
        classes = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Tool) and v.__module__ == module.__name__
        ]
        leaves = [c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)]
        if len(leaves) != 1:
            found = [c.__name__ for c in leaves]
            raise ToolSerializationError(
                f"Tool code must define exactly one Tool subclass or @tool function; found {found or 'none'}."
            )
        try:
            return leaves[0](**kwargs)
        except TypeError as err:
            raise ToolSerializationError(
                f"Could not create tool class {leaves[0].__name__} from code: {err}. "
                f"Fix: pass its constructor arguments, e.g. Tool.from_code(code, api_key=...)."
            ) from err

    def save(self, output_dir: str | Path, tool_file_name: str = "tool", make_gradio_app: bool = True) -> Path:
        """Write `<tool_file_name>.py` (standalone code) and `requirements.txt` to `output_dir`.

        `make_gradio_app` (default True, as in smolagents) also writes an `app.py`: a Gradio demo for a Space.
        Returns the path of the tool file.
        """
        folder = Path(output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        data = self.to_dict()
        tool_path = folder / f"{tool_file_name}.py"
        tool_path.write_text(data["code"], encoding="utf-8")
        requirements = list(data["requirements"])
        if make_gradio_app:
            (folder / "app.py").write_text(gradio_app_code(tool_file_name), encoding="utf-8")
            requirements = sorted({*requirements, "gradio"})
        (folder / "requirements.txt").write_text("".join(f"{r}\n" for r in requirements), encoding="utf-8")
        return tool_path

    def push_to_hub(
        self,
        repo_id: str,
        commit_message: str = "Upload tool",
        private: bool | None = None,
        token: bool | str | None = None,
        create_pr: bool = False,
    ) -> Any:
        """Upload the tool to a Hugging Face Space (tool.py, app.py, requirements.txt)."""
        return push_tool_to_hub(
            self, repo_id, commit_message=commit_message, private=private, token=token, create_pr=create_pr
        )

    @classmethod
    def from_hub(cls, repo_id: str, token: str | None = None, trust_remote_code: bool = False, **kwargs: Any) -> Tool:
        """Load a tool saved on the Hub (a Space holding `tool.py`). Needs `trust_remote_code=True`.

        Hub keywords (`revision`, `cache_dir`, `repo_type`, `local_files_only`) go to the download;
        the others to the tool's `__init__`.
        """
        code, init_kwargs = download_tool_code(repo_id, token=token, trust_remote_code=trust_remote_code, **kwargs)
        return Tool.from_code(code, **init_kwargs)

    # -- tools defined elsewhere ---------------------------------------------------------------

    @staticmethod
    def from_langchain(langchain_tool: Any) -> Tool:
        """A LangChain tool (`langchain_core.tools.BaseTool`: `@tool`, `StructuredTool`, a community tool) as a
        tool: its name (lower case, as in smolagents), description and argument schema (types, descriptions,
        which are optional). A sync tool is invoked, an async-only one awaited (`ainvoke`)."""
        from .langchain import langchain_parts

        return _ForeignToolWrapper(langchain_parts(langchain_tool))

    @staticmethod
    def from_space(
        space_id: str, name: str, description: str = "", api_name: str | None = None, token: str | None = None
    ) -> Tool:
        """A Gradio app as a tool, through `gradio_client` 2.x: a Space id (`"owner/space"`, needs the network)
        or the app's URL (`"http://127.0.0.1:7860/"`). `api_name` picks the endpoint (Gradio 6 names an
        Interface's after its function, e.g. `"/greet"`); without it the app's only one, or its first with a
        warning. Inputs come from the endpoint's parameters; an image or audio output is an `AgentImage` /
        `AgentAudio`. `token` is the Hub token for a private Space."""
        from .spaces import space_parts

        return _ForeignToolWrapper(space_parts(space_id, name, description, api_name=api_name, token=token))

    @staticmethod
    def from_gradio(
        gradio_tool: Any, name: str | None = None, description: str | None = None, api_name: str | None = None
    ) -> Tool:
        """A Gradio tool as a tool: a `gradio_tools`-style object (`name`, `description`, `run(...)`, as
        smolagents takes), or a connected `gradio_client.Client` with the tool's `name`, `description` and
        `api_name` (as for `from_space`)."""
        from .spaces import gradio_parts

        return _ForeignToolWrapper(gradio_parts(gradio_tool, name=name, description=description, api_name=api_name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={getattr(self, 'name', None)!r})"


class _ForeignToolWrapper(Tool):
    """A tool defined elsewhere (`ForeignTool`): positional arguments are matched to the inputs in order."""

    skip_forward_signature_validation = True

    def __init__(self, parts: ForeignTool) -> None:
        super().__init__()
        self.name, self.description = parts.name, parts.description
        self.inputs, self.output_type = parts.inputs, parts.output_type
        self._call = parts.call
        for attribute, value in parts.attributes.items():
            setattr(self, attribute, value)
        self.is_initialized = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        names = list(self.inputs)
        if len(args) > len(names):
            raise TypeError(f"{self.name}() takes {len(names)} arguments ({', '.join(names)}), {len(args)} given")
        for key, value in zip(names, args):
            if key in kwargs:
                raise TypeError(f"{self.name}() got two values for {key!r}")
            kwargs[key] = value
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise TypeError(f"{self.name}() has no argument {', '.join(unknown)} (it takes {', '.join(names)})")
        return self._call(**kwargs)
