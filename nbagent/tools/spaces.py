"""A Gradio app (a Space on the Hub, or any app's URL) read as a `ForeignTool` (`Tool.from_space`, `from_gradio`).

Through `gradio_client` 2.x, which smolagents 1.26 cannot use (it passes `hf_token`, now `token`). The endpoint's
parameters become the inputs; Gradio 6 names an Interface's endpoint after its function (`/greet`), not
`/predict`, so a missing `api_name` is an error that lists the app's endpoints. Files cross as `handle_file`
(a PIL image is written to a PNG first); an image or audio the app returns (a downloaded file) is an
`AgentImage` / `AgentAudio`, shown in the step like any tool's image.
"""

from __future__ import annotations

import inspect
import os
import tempfile
import typing
import warnings
from pathlib import Path
from typing import Any

from nbagent.media.agent_types import AgentAudio, AgentImage

from .foreign import ForeignTool, schema_type, tool_name
from .types import hint_to_schema

__all__ = ["client_parts", "gradio_parts", "space_parts"]

_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")
_AUDIO_SUFFIXES = (".mp3", ".wav", ".ogg", ".m4a", ".flac")
_OUTPUT_TYPES = {"Image": "image", "Audio": "audio"}
_INSTALL = "pip install 'jupyter-nbagent[spaces]' (gradio_client 2.x)"


def space_parts(
    space_id: str, name: str, description: str = "", api_name: str | None = None, token: str | None = None
) -> ForeignTool:
    """A Space id or an app's URL, connected; its endpoint `api_name` as a tool."""
    return client_parts(_connect(space_id, token), name, description, api_name)


def gradio_parts(
    gradio_tool: Any, name: str | None = None, description: str | None = None, api_name: str | None = None
) -> ForeignTool:
    """A `gradio_client.Client` (with `name`) or a `gradio_tools`-style object (`name`, `description`, `run`)."""
    if hasattr(gradio_tool, "view_api") and hasattr(gradio_tool, "predict"):
        if not name:
            raise ValueError("Tool.from_gradio(client, name=...): a gradio_client.Client needs the tool's name")
        return client_parts(gradio_tool, name, description or "", api_name)
    if all(hasattr(gradio_tool, attribute) for attribute in ("name", "description", "run")):
        return _run_parts(gradio_tool, name, description)
    raise TypeError(
        "Tool.from_gradio takes a gradio_client.Client (with name=, description=, api_name=) or a Gradio tool "
        f"with name, description and run() (gradio_tools' GradioTool), got {type(gradio_tool).__name__}"
    )


def client_parts(client: Any, name: str, description: str, api_name: str | None) -> ForeignTool:
    """The endpoint `api_name` of a connected client as a tool."""
    endpoints = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    api_name = _endpoint(endpoints, api_name, str(getattr(client, "src", "the app")))
    endpoint = endpoints[api_name]
    returns = endpoint.get("returns") or []
    output_type = _output_type(returns)

    def call(**arguments: Any) -> Any:
        sent = {key: _as_sent(value) for key, value in arguments.items()}
        return _as_received(client.predict(api_name=api_name, **sent), output_type)

    inputs = {parameter["parameter_name"]: _input(parameter) for parameter in endpoint.get("parameters") or []}
    return ForeignTool(
        name=tool_name(name),
        description=description.strip() or f"The Gradio app's endpoint {api_name}.",
        inputs=inputs,
        output_type=output_type,
        call=call,
        attributes={"client": client, "api_name": api_name},
    )


def _connect(src: str, token: str | None) -> Any:
    try:
        from gradio_client import Client
    except ImportError:
        raise ImportError(f"Tool.from_space needs gradio_client: {_INSTALL}") from None
    accepted = inspect.signature(Client).parameters
    if "token" not in accepted:
        raise ImportError(f"Tool.from_space needs gradio_client 2.x (this one takes hf_token): {_INSTALL}")
    options = {"analytics_enabled": False} if "analytics_enabled" in accepted else {}
    try:
        return Client(src, token=token, verbose=False, **options)
    except Exception as failure:  # the client's errors vary with where it failed (DNS, HTTP, the app's config)
        where = "the Hub (needs the network)" if "://" not in src else src
        raise ConnectionError(f"Tool.from_space could not reach {src!r} on {where}: {failure}") from failure


def _endpoint(endpoints: dict[str, Any], api_name: str | None, src: str) -> str:
    names = list(endpoints)
    if not names:
        raise ValueError(f"the Gradio app {src} has no named endpoint to call")
    if api_name is None:
        if len(names) > 1:
            warnings.warn(
                f"api_name not given: using the app's first endpoint {names[0]!r} (it has {names})", stacklevel=5
            )
        return names[0]
    wanted = api_name if api_name.startswith("/") else f"/{api_name}"
    if wanted not in endpoints:
        raise ValueError(
            f"the Gradio app {src} has no endpoint {api_name!r}; it has {', '.join(names)} (Gradio 6 names an "
            "Interface's endpoint after its function, not /predict)"
        )
    return wanted


def _input(parameter: dict[str, Any]) -> dict[str, Any]:
    kind, admits_null = schema_type(parameter.get("type") or {})
    text = (parameter.get("python_type") or {}).get("description") or parameter.get("label") or ""
    spec: dict[str, Any] = {"type": kind, "description": text or parameter["parameter_name"].replace("_", " ")}
    if parameter.get("parameter_has_default") or admits_null:
        spec["nullable"] = True
    return spec


def _output_type(returns: list[dict[str, Any]]) -> str:
    """The first output's kind: an image or audio component by its name, else its JSON type (several: "any")."""
    if not returns:
        return "null"
    first = _OUTPUT_TYPES.get(returns[0].get("component", ""))
    if first or len(returns) > 1:
        return first or "any"
    kind, _ = schema_type(returns[0].get("type") or {})
    return kind if isinstance(kind, str) and kind != "object" else "any"


def _as_sent(value: Any) -> Any:
    """A file the app should receive (a path that exists, a URL, a PIL image or AgentImage) as `handle_file`."""
    from gradio_client import handle_file
    from gradio_client.utils import is_http_url_like

    if isinstance(value, AgentImage):
        value = value.to_string()
    elif type(value).__module__.startswith("PIL."):
        with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as file:
            value.save(file, format="PNG")
        value = file.name
    if isinstance(value, Path) or (isinstance(value, str) and (os.path.isfile(value) or is_http_url_like(value))):
        return handle_file(str(value))
    return value


def _as_received(output: Any, output_type: str) -> Any:
    """An image or audio file as the agent type; an image endpoint's extra outputs (a seed) are dropped."""
    if isinstance(output, (tuple, list)) and output_type in ("image", "audio") and output:
        output = output[0]
    if isinstance(output, str) and output.lower().endswith(_IMAGE_SUFFIXES) and os.path.isfile(output):
        image = AgentImage(output)
        image.to_raw()  # the pixels, read here: the agent's code in the isolated worker may not read the file
        return image
    if isinstance(output, str) and output.lower().endswith(_AUDIO_SUFFIXES) and os.path.isfile(output):
        return AgentAudio(output)
    return output


def _run_parts(gradio_tool: Any, name: str | None, description: str | None) -> ForeignTool:
    """A gradio_tools-style tool: `run`'s parameters are the inputs (their hints the types), the output text."""
    inputs: dict[str, dict[str, Any]] = {}
    hints = typing.get_type_hints(gradio_tool.run)
    for parameter in inspect.signature(gradio_tool.run).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        spec = {"type": _hint_type(hints.get(parameter.name, Any)), "description": parameter.name.replace("_", " ")}
        if parameter.default is not parameter.empty:
            spec["nullable"] = True
        inputs[parameter.name] = spec
    return ForeignTool(
        name=tool_name(name or gradio_tool.name),
        description=(description or gradio_tool.description or "").strip() or f"The Gradio tool {gradio_tool.name}.",
        inputs=inputs,
        output_type="string",
        call=gradio_tool.run,
        attributes={"gradio_tool": gradio_tool},
    )


def _hint_type(hint: Any) -> Any:
    try:
        return hint_to_schema(hint)["type"]
    except TypeError:  # a hint with no tool type
        return "any"
