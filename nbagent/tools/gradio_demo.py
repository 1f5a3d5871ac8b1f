"""A tool as a Gradio app: `launch_gradio_demo(tool)` now, or the `app.py` that `Tool.save()` writes for a Space."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["launch_gradio_demo", "gradio_app_code", "gradio_interface"]


def gradio_app_code(tool_module: str = "tool") -> str:
    """A small Gradio app that demos the tool in a Space."""
    return f'''"""Gradio demo of the tool in {tool_module}.py (written by nbagent)."""

from pathlib import Path

from nbagent.tools import Tool, launch_gradio_demo

tool = Tool.from_code(Path(__file__).with_name("{tool_module}.py").read_text())
launch_gradio_demo(tool)
'''


def _component(gr: Any, kind: Any, label: str, info: str | None = None) -> Any:
    kinds = kind if isinstance(kind, list) else [kind]
    kinds = [k for k in kinds if k != "null"] or ["any"]
    options = {"label": label, **({"info": info} if info else {})}
    if kinds == ["boolean"]:
        return gr.Checkbox(**options)
    if kinds in (["integer"], ["number"]):
        return gr.Number(precision=0 if kinds == ["integer"] else None, **options)
    if kinds == ["image"]:
        return gr.Image(type="pil", label=label)
    if kinds == ["audio"]:
        return gr.Audio(type="filepath", label=label)
    if kinds[0] in ("array", "object"):
        return gr.JSON(label=label)
    return gr.Textbox(**options)


def gradio_interface(tool: Any) -> Any:
    """A `gradio.Interface` calling the tool: one input component per tool input, one for the output."""
    try:
        import gradio as gr
    except ImportError as err:
        raise ImportError("launch_gradio_demo needs gradio: `pip install 'jupyter-nbagent[gradio]'`.") from err

    names = list(tool.inputs)

    def run(*values: Any) -> Any:
        kwargs = {name: value for name, value in zip(names, values) if value not in (None, "")}
        return tool(**kwargs, sanitize_inputs_outputs=True)

    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names]
    )
    return gr.Interface(
        fn=run,
        inputs=[_component(gr, spec["type"], name, spec.get("description")) for name, spec in tool.inputs.items()],
        outputs=_component(gr, tool.output_type, "Output"),
        title=tool.name,
        description=tool.description,
        api_name=tool.name,
    )


def launch_gradio_demo(tool: Any, **launch_kwargs: Any) -> Any:
    """Launch a Gradio demo of the tool (smolagents' `launch_gradio_demo`); `launch_kwargs` go to `launch()`."""
    return gradio_interface(tool).launch(**launch_kwargs)
