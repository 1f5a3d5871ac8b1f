"""Write the notebooks (quickstart, memory, teaching, demos), kept as code so they stay reviewable.

.venv/bin/python scripts/make_notebooks.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent / "notebooks"

QUICKSTART = [
    new_markdown_cell(
        "# nbagent quickstart\n\n"
        "An agent answers a question about a DataFrame defined in this notebook. It runs the offline default "
        "model (Qwen2.5-Coder-1.5B on llama.cpp): no key, no network. Its code runs in this notebook's namespace, "
        "inside nbagent's sandbox, and the live widget shows every step."
    ),
    new_code_cell("%load_ext nbagent"),
    new_code_cell(
        "import pandas as pd\n\n"
        "sales = pd.DataFrame(\n"
        '    {"units": [120, 95, 143, 100], "price": [2.5, 3.0, 2.0, 4.0]},\n'
        '    index=pd.Index(["north", "south", "east", "west"], name="region"),\n'
        ")\n"
        "sales"
    ),
    new_code_cell(
        "%%agent --imports pandas -o best --max-steps 4\n"
        "The pandas DataFrame `sales` is already defined. Which region has the highest revenue (units * price)? "
        "Call final_answer with the region name only."
    ),
    new_markdown_cell("The answer is a normal variable now, ready for the next cell:"),
    new_code_cell('print(f"Best region: {best}")\nassert str(best).strip().strip(\'\\\'"\').lower() == "west", best'),
]

MEMORY = [
    new_markdown_cell(
        "# Manage your agent's memory\n\n"
        "The examples of smolagents' memory guide, run with nbagent. A `ScriptedModel` plays the model, "
        "so the run is the same every time (swap in any real model)."
    ),
    new_code_cell(
        "from nbagent import ActionStep, CodeAgent, ScriptedModel, TaskStep\n\n"
        "def fib_answers():\n"
        "    return ScriptedModel([\n"
        '        "Thought: I will compute the Fibonacci numbers.\\n```python\\na, b = 0, 1\\nfor _ in range(19):\\n    a, b = b, a + b\\nprint(b)\\n```",\n'
        '        "Thought: The 20th Fibonacci number is 6765.\\n```python\\nfinal_answer(6765)\\n```",\n'
        "    ])\n\n"
        "agent = CodeAgent(tools=[], model=fib_answers(), verbosity_level=0)\n"
        'result = agent.run("What\'s the 20th Fibonacci number?")\n'
        "result"
    ),
    new_markdown_cell("## Replay the run"),
    new_code_cell("agent.replay()"),
    new_markdown_cell("## Inspect the memory"),
    new_code_cell(
        "system_prompt_step = agent.memory.system_prompt\n"
        'print("The system prompt given to the agent was:")\n'
        'print(system_prompt_step.system_prompt[:300], "…")\n\n'
        "task_step = agent.memory.steps[0]\n"
        'print("\\n\\nThe first task step was:")\n'
        "print(task_step.task)\n\n"
        "for step in agent.memory.steps:\n"
        "    if isinstance(step, ActionStep):\n"
        "        if step.error is not None:\n"
        '            print(f"\\nStep {step.step_number} got this error:\\n{step.error}\\n")\n'
        "        else:\n"
        '            print(f"\\nStep {step.step_number} got these observations:\\n{step.observations}\\n")'
    ),
    new_code_cell("len(agent.memory.get_full_steps()), agent.memory.get_succinct_steps()[1]['code_action']"),
    new_markdown_cell("## A step callback that keeps only the latest images"),
    new_code_cell(
        "from PIL import Image\n\n"
        "def update_screenshot(memory_step: ActionStep, agent: CodeAgent) -> None:\n"
        "    latest_step = memory_step.step_number\n"
        "    for previous_memory_step in agent.memory.steps:\n"
        "        if isinstance(previous_memory_step, ActionStep) and previous_memory_step.step_number <= latest_step - 2:\n"
        "            previous_memory_step.observations_images = None\n"
        "    shade = 60 * latest_step\n"
        '    memory_step.observations_images = [Image.new("RGB", (48, 32), (shade, 120, 200))]\n\n'
        "steps = [\"Thought: look.\\n```python\\nprint('page', 1)\\n```\", \"Thought: look again.\\n```python\\nprint('page', 2)\\n```\",\n"
        "         \"Thought: done.\\n```python\\nfinal_answer('browsed')\\n```\"]\n"
        "browser_agent = CodeAgent(tools=[], model=ScriptedModel(steps), step_callbacks=[update_screenshot], verbosity_level=0)\n"
        'browser_agent.run("Browse three pages")\n'
        "[step.observations_images is not None for step in browser_agent.memory.steps if isinstance(step, ActionStep)]"
    ),
    new_markdown_cell("## Run an agent one step at a time"),
    new_code_cell(
        "agent = CodeAgent(tools=[], model=fib_answers(), verbosity_level=1)\n"
        "agent.python_executor.send_tools({**agent.tools})\n"
        'print(agent.memory.system_prompt.system_prompt[:80], "…")\n\n'
        'task = "What is the 20th Fibonacci number?"\n'
        "agent.memory.steps.append(TaskStep(task=task, task_images=[]))\n\n"
        "final_answer = None\n"
        "step_number = 1\n"
        "while final_answer is None and step_number <= 10:\n"
        "    memory_step = ActionStep(\n"
        "        step_number=step_number,\n"
        "        observations_images=[],\n"
        "    )\n"
        "    final_answer = agent.step(memory_step)\n"
        "    agent.memory.steps.append(memory_step)\n"
        "    step_number += 1\n\n"
        'print("The final answer is:", final_answer)'
    ),
    new_markdown_cell("## Save the memory, load it back, show it"),
    new_code_cell(
        "import tempfile, pathlib\n"
        "from nbagent import AgentMemory\n\n"
        'path = browser_agent.memory.save(pathlib.Path(tempfile.mkdtemp()) / "run.json")\n'
        "loaded = AgentMemory.load(path)\n"
        "assert loaded == browser_agent.memory\n"
        "loaded"
    ),
]


def write(name: str, cells: list) -> None:
    notebook = new_notebook(cells=cells)
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number}"  # stable ids: re-running this script changes only what the cells say
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    ROOT.mkdir(exist_ok=True)
    nbformat.write(notebook, ROOT / name)


if __name__ == "__main__":
    from class_notebooks import DEMOS, TEACHING  # beside this script: run as a script, it is on sys.path

    notebooks = {
        "quickstart.ipynb": QUICKSTART,
        "memory.ipynb": MEMORY,
        "teaching.ipynb": TEACHING,
        "demos.ipynb": DEMOS,
    }
    for name, cells in notebooks.items():
        write(name, cells)
    print(f"wrote {', '.join(notebooks)} in {ROOT}")
