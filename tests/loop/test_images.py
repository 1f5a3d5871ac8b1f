"""Images a step produces: returned by tools inside code, drawn with matplotlib, returned by the code."""

from __future__ import annotations

import time

import nbformat
import pytest
from nbclient import NotebookClient
from PIL import Image

from nbagent import CodeAgent, ScriptedModel, tool
from nbagent.record import CodeOutputDelta

pytest.importorskip("matplotlib")


def code(body: str) -> str:
    return f"Thought: draw.\n```python\n{body}\n```"


@tool
def make_badge(color: str) -> Image.Image:
    """Make a small badge image.

    Args:
        color: a color name such as "red"
    """
    return Image.new("RGB", (8, 4), color)


def run_one(body: str, **kwargs) -> CodeAgent:
    agent = CodeAgent(
        tools=[make_badge],
        model=ScriptedModel([code(body), code("final_answer('ok')")]),
        verbosity_level=-1,
        show_widget=False,
        **kwargs,
    )
    agent.run("draw")
    return agent


def test_images_returned_by_tools_inside_code_appear_in_the_step():
    agent = run_one("badge = make_badge('red')\nother = make_badge('blue')\nprint(badge.size)")
    images = agent.memory.action_steps()[0].observations_images
    assert [image.getpixel((0, 0)) for image in images] == [(255, 0, 0), (0, 0, 255)]


def test_matplotlib_figures_are_captured_and_closed():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agent = run_one(
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\nfig = plt.figure()\nplt.bar([1], [2])",
        additional_authorized_imports=["matplotlib"],
    )
    images = agent.memory.action_steps()[0].observations_images
    assert len(images) == 2 and all(image.size[0] > 50 for image in images)
    assert plt.get_fignums() == []  # nothing left to leak into the cell's output


def test_returned_image_is_not_counted_twice():
    agent = run_one("badge = make_badge('green')\nbadge")
    assert len(agent.memory.action_steps()[0].observations_images) == 1


@pytest.mark.slow
def test_figures_do_not_leak_into_the_cell_output_in_a_real_kernel():
    agent_cell = (
        "from nbagent import CodeAgent, ScriptedModel\n"
        "steps = ['```python\\nimport matplotlib.pyplot as plt\\nplt.plot([1, 2])\\nplt.show()\\nplt.plot([2, 1])\\n```',\n"
        "         '```python\\nfinal_answer(1)\\n```']\n"
        "agent = CodeAgent(tools=[], model=ScriptedModel(steps), additional_authorized_imports=['matplotlib'],\n"
        "                  show_widget=False, verbosity_level=-1)\n"
        "agent.run('plot')"
    )
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("%matplotlib inline"),
            nbformat.v4.new_code_cell(agent_cell),
            nbformat.v4.new_code_cell("print(len(agent.memory.action_steps()[0].observations_images))"),
        ]
    )
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    agent_outputs = notebook.cells[1].outputs
    assert not any("image/png" in output.get("data", {}) for output in agent_outputs)
    assert notebook.cells[2].outputs[0]["text"].strip() == "2"


@pytest.mark.parametrize("executor_type", ["isolated", "local"])
def test_prints_reach_the_views_while_the_code_runs(executor_type: str) -> None:
    seen: list[tuple[str, float]] = []

    class Recorder:
        def consume(self, event: object) -> None:
            if isinstance(event, CodeOutputDelta):
                seen.append((event.text, time.monotonic()))

    model = ScriptedModel(
        [code("import time\nprint('first', flush=True)\ntime.sleep(1.0)\nprint('second')\nfinal_answer(1)")]
    )
    agent = CodeAgent(model=model, executor_type=executor_type, verbosity_level=-1, show_widget=False)
    agent._views_for_run = lambda: [Recorder()]
    began = time.monotonic()
    assert agent.run("Count") == 1
    ended = time.monotonic()
    texts = "".join(text for text, _ in seen)
    assert "first" in texts and "second" in texts
    first_at = next(at for text, at in seen if "first" in text)
    assert first_at - began < ended - began - 0.5  # "first" arrived while the code still slept
    assert "first\nsecond" in agent.memory.action_steps()[0].observations  # the step keeps all of it


@pytest.mark.parametrize("executor_type", ["isolated", "local"])
def test_every_plotting_step_keeps_its_figure_and_tells_the_model(executor_type: str) -> None:
    import pandas as pd

    steps = [
        "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [1, 2])\nprint('bars')",  # only `plt`, no show()
        "fig, ax = plt.subplots()\nax.plot([1, 2, 3])",
        "table.plot(x='x', y='y')\nprint('pandas')",
        "other, axis = plt.subplots()\naxis.scatter([1], [2])\nother",  # a figure as the last value
    ]
    agent = CodeAgent(
        tools=[],
        model=ScriptedModel([code(body) for body in steps] + [code("final_answer('ok')")]),
        additional_authorized_imports=["matplotlib", "pandas"],
        namespace={"table": pd.DataFrame({"x": [1, 2], "y": [3, 1]})},
        executor_type=executor_type,
        verbosity_level=-1,
        show_widget=False,
    )
    agent.run("Draw four charts of `table`.")
    for step in agent.memory.action_steps()[:4]:
        assert len(step.observations_images) == 1, (step.step_number, step.observations)
        width, height = step.observations_images[0].size
        assert f"\n[figure captured: {width}×{height} PNG]\n" in "\n" + step.observations, step.observations
    assert agent.memory.action_steps()[0].observations.startswith("Execution logs:\nbars\n")


@pytest.mark.parametrize("executor_type", ["isolated", "local"])
def test_each_step_that_calls_show_keeps_its_own_figure(executor_type: str) -> None:
    """nbagent swaps ``plt.show`` per step: the module view agent code reads must not keep the first step's."""
    steps = [
        "import matplotlib.pyplot as plt\nplt.bar(['a'], [1])\nplt.show()",
        "plt.plot([1, 2])\nplt.show()",
        "from matplotlib.pyplot import show\nplt.plot([3, 1])\nshow()",
    ]
    agent = CodeAgent(
        tools=[],
        model=ScriptedModel([code(body) for body in steps] + [code("final_answer('ok')")]),
        additional_authorized_imports=["matplotlib"],
        executor_type=executor_type,
        verbosity_level=-1,
        show_widget=False,
    )
    agent.run("Draw three charts.")
    assert [len(step.observations_images or []) for step in agent.memory.action_steps()[:3]] == [1, 1, 1]


def test_a_figure_open_in_the_kernel_neither_takes_the_agents_plot_nor_is_changed():
    """The worker is forked from the kernel: a figure the kernel left open was the worker's current figure, so the
    agent's `plt.plot` drew on that copy, which counted as open before the step and was never taken."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kernels = plt.figure()
    plt.plot([5, 5])
    try:
        agent = run_one(
            "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
            additional_authorized_imports=["matplotlib"],
            executor_type="isolated",
        )
        assert len(agent.memory.action_steps()[0].observations_images) == 1
        assert plt.get_fignums() == [kernels.number] and len(kernels.axes[0].lines) == 1  # the kernel's, as it was
    finally:
        plt.close(kernels)
