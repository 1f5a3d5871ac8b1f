"""The notebooks the browser tests run, written with nbformat (no stale outputs in the repository)."""

from __future__ import annotations

from pathlib import Path

from labkit import write_notebook

HAND_MADE = """\
from PIL import Image, ImageDraw
from nbagent import ActionStep, AgentMemory, TaskStep, Timing
from nbagent.errors import AgentExecutionError
from nbagent.models.base import TokenUsage
from nbagent.notebook.widget import AgentWidget

square = Image.new("RGB", (120, 80), "white")
ImageDraw.Draw(square).rectangle([20, 10, 100, 70], fill=(220, 30, 30))
memory = AgentMemory("system prompt")
memory.steps = [
    TaskStep(task="Divide 1 by 0, then draw a **red square**."),
    ActionStep(step_number=1, timing=Timing(0.0, 0.8), model_output="Thought: try the division.",
               code_action="print('dividing')\\nx = 1/0", observations="Execution logs:\\ndividing\\n",
               error=AgentExecutionError("Code execution failed at line 'x = 1/0': ZeroDivisionError: division by zero"),
               token_usage=TokenUsage(812, 31)),
    ActionStep(step_number=2, timing=Timing(0.8, 2.0), model_output="Thought: draw it.",
               code_action="img = draw_square('red')\\nprint('drawn')", observations="Execution logs:\\ndrawn\\n",
               observations_images=[square], token_usage=TokenUsage(905, 40)),
    ActionStep(step_number=3, timing=Timing(2.0, 2.3), model_output="Thought: done.",
               code_action="final_answer('A red square; 1/0 is undefined.')",
               action_output="A red square; 1/0 is undefined.", is_final_answer=True, token_usage=TokenUsage(990, 22)),
]
widget = AgentWidget.from_memory(memory, agent_name="painter", model_id="hand-made")
widget"""

SECOND_VIEW = "widget  # a second view of the same widget"

AGENT_RUN = '''\
import json
from PIL import Image, ImageDraw
from nbagent import ScriptedModel, ToolCallingAgent, tool

@tool
def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
        a: the dividend
        b: the divisor
    """
    return a / b

@tool
def draw_square(color: str) -> Image.Image:
    """Draw a square.

    Args:
        color: its colour
    """
    image = Image.new("RGB", (120, 80), "white")
    ImageDraw.Draw(image).rectangle([20, 10, 100, 70], fill=color)
    return image

def action(thought, name, arguments):
    """A text answer (streamed token by token) that calls a tool as a JSON action."""
    return f"Thought: {thought}\\nAction:\\n" + json.dumps({"name": name, "arguments": arguments})

model = ScriptedModel(
    [
        action("I will first try the division that the task asks for, one over zero, and see what happens.",
               "divide", {"a": 1, "b": 0}),
        action("the division failed, now draw the square.", "draw_square", {"color": "red"}),
        action("done.", "final_answer", {"answer": "A red square; 1/0 is undefined."}),
    ],
    token_delay=0.05,
)
agent = ToolCallingAgent(tools=[divide, draw_square], model=model, name="painter")
result = agent.run("Divide 1 by 0, then draw a red square.")'''

AFTER_RUN = "print('RESULT:', result)"

MAGIC_SETUP = """\
%load_ext nbagent
from nbagent import ScriptedModel

def code(thought, body):
    return f"Thought: {thought}\\n```python\\n{body}\\n```"

model = ScriptedModel(
    [
        code("try the division.", "print('dividing')\\nx = 1/0"),
        code("draw it.", "from PIL import Image, ImageDraw\\nimg = Image.new('RGB', (120, 80), 'white')\\n"
             "ImageDraw.Draw(img).rectangle([20, 10, 100, 70], fill=(220, 30, 30))\\nprint('drawn')\\nimg"),
        code("done.", "final_answer('A red square; 1/0 is undefined.')"),
    ],
    token_delay=0.01,
)"""

MAGIC_RUN = """\
%%agent -m model --imports PIL,PIL.* -o answer
Divide 1 by 0, then draw a **red square**."""

MAGIC_AFTER = "print('ANSWER:', answer)"


def write_notebooks(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    notebooks = {
        "hand_made.ipynb": [HAND_MADE, SECOND_VIEW],
        "agent_run.ipynb": [AGENT_RUN, AFTER_RUN],
        "magic_run.ipynb": [MAGIC_SETUP, MAGIC_RUN, MAGIC_AFTER],
    }
    return [write_notebook(folder / name, sources) for name, sources in notebooks.items()]
