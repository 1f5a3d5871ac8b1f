"""`Tool.from_space` / `Tool.from_gradio` through gradio_client 2.x, against a real Gradio 6 app served on
127.0.0.1 by this module: text in and out, an image out that reaches the agent's step and the widget's state as an
image, an image in, and the errors a person meets (Gradio 6's endpoint names, an app that is not there)."""

from __future__ import annotations

import io
import os
import socket
import warnings
from collections.abc import Iterator

import pytest
from PIL import Image

from nbagent import AgentImage, CodeAgent, ScriptedModel, Tool
from nbagent.views.state import memory_to_state

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
gr = pytest.importorskip("gradio")
gradio_client = pytest.importorskip("gradio_client")


def greet(name: str) -> str:
    return f"Hello, {name}!"


def draw(color: str, width: int = 8) -> Image.Image:
    return Image.new("RGB", (width, 4), color)


def measure(picture: Image.Image) -> str:
    return f"{picture.size[0]}x{picture.size[1]} {picture.getpixel((0, 0))}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    demo = gr.TabbedInterface(
        [
            gr.Interface(greet, gr.Textbox(label="name"), gr.Textbox()),
            gr.Interface(
                draw,
                [gr.Textbox(label="color"), gr.Number(label="width", value=8, precision=0)],
                gr.Image(type="pil", format="png"),
            ),
            gr.Interface(measure, gr.Image(type="pil", label="picture"), gr.Textbox()),
        ]
    )
    demo.launch(server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield demo.local_url
    finally:
        demo.close()


def code(body: str) -> str:
    return f"Thought: use the app.\n```python\n{body}\n```"


def test_text_in_and_out(app_url: str) -> None:
    greeter = Tool.from_space(app_url, "greeter", "Greets a person by name.", api_name="/greet")
    assert greeter.inputs == {"name": {"type": "string", "description": "name"}}
    assert greeter.output_type == "string" and greeter.api_name == "/greet"
    assert greeter("Ann") == "Hello, Ann!" and greeter(name="Bo") == "Hello, Bo!"


def test_an_image_out_is_an_agent_image(app_url: str) -> None:
    painter = Tool.from_space(app_url, "painter", "Paints a small swatch.", api_name="draw")  # the slash optional
    assert painter.output_type == "image"
    assert painter.inputs["width"] == {"type": "integer", "description": "width", "nullable": True}
    swatch = painter("red", width=6)
    assert isinstance(swatch, AgentImage) and swatch.size == (6, 4)
    assert swatch.to_raw().convert("RGB").getpixel((0, 0)) == (255, 0, 0)


def test_an_image_in_is_sent_as_a_file(app_url: str) -> None:
    ruler = Tool.from_space(app_url, "ruler", "Measures a picture.", api_name="/measure")
    assert ruler(Image.new("RGB", (5, 3), "blue")) == "5x3 (0, 0, 255)"
    assert ruler(AgentImage(Image.new("RGB", (2, 2), "lime"))) == "2x2 (0, 255, 0)"


def test_the_image_reaches_the_step_and_the_widget(app_url: str) -> None:
    painter = Tool.from_space(app_url, "painter", "Paints a small swatch.", api_name="/draw")
    agent = CodeAgent(
        tools=[painter],
        model=ScriptedModel([code("swatch = painter('blue', 5)\nprint(swatch.size)"), code("final_answer('drawn')")]),
        verbosity_level=-1,
        show_widget=False,
    )
    assert agent.run("paint") == "drawn"
    step = agent.memory.action_steps()[0]
    assert "(5, 4)" in step.observations and step.tool_calls  # the code ran in the worker, the tool here
    [image] = step.observations_images
    assert image.size == (5, 4) and image.convert("RGB").getpixel((0, 0)) == (0, 0, 255)
    run, pngs = memory_to_state(agent.memory)  # what the widget shows
    shown = [s["images"] for s in run["steps"] if s.get("images")]
    assert shown == [[0]] and Image.open(io.BytesIO(pngs[0])).size == (5, 4)


def test_gradio_6_endpoint_names_and_the_default_endpoint(app_url: str) -> None:
    with pytest.raises(ValueError, match=r"no endpoint '/predict'; it has /greet, /draw, /measure \(Gradio 6"):
        Tool.from_space(app_url, "greeter", "Greets.", api_name="/predict")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = Tool.from_space(app_url, "greeter", "Greets.")
    assert first.api_name == "/greet" and "using the app's first endpoint '/greet'" in str(caught[0].message)


def test_an_app_that_is_not_there_is_a_clear_error() -> None:
    with pytest.raises(ConnectionError, match=r"could not reach 'http://127.0.0.1:\d+/'"):
        Tool.from_space(f"http://127.0.0.1:{_free_port()}/", "ghost", "Nothing.")


def test_from_gradio_takes_a_client(app_url: str) -> None:
    client = gradio_client.Client(app_url, verbose=False)
    greeter = Tool.from_gradio(client, name="Greeter", description="Greets.", api_name="/greet")
    assert greeter.name == "greeter" and greeter.client is client and greeter("Cy") == "Hello, Cy!"
    with pytest.raises(ValueError, match="needs the tool's name"):
        Tool.from_gradio(client)


def test_from_gradio_takes_a_gradio_tools_style_tool(app_url: str) -> None:
    class GreeterTool:  # gradio_tools' GradioTool interface: name, description, run(query), over a Client
        name = "GreeterTool"
        description = "Greets whoever is named in the query."

        def __init__(self, src: str) -> None:
            self.client = gradio_client.Client(src, verbose=False)

        def run(self, query: str) -> str:
            return self.client.predict(query, api_name="/greet")

    wrapped = Tool.from_gradio(GreeterTool(app_url))
    assert (wrapped.name, wrapped.output_type) == ("greetertool", "string")
    assert wrapped.inputs == {"query": {"type": "string", "description": "query"}}
    assert wrapped("Di") == "Hello, Di!"
    with pytest.raises(TypeError, match="takes a gradio_client.Client"):
        Tool.from_gradio(object())
