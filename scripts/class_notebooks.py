"""The cells of notebooks/teaching.ipynb and notebooks/demos.ipynb (written by scripts/make_notebooks.py).

Both run under nbval in CI (`pytest notebooks --nbval-lax`): a `ScriptedModel` plays the model where
the lesson needs the same run every time; the last demo runs the offline default model for real.
"""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell

md, py = new_markdown_cell, new_code_cell

TEACHING = [
    md(
        "# How an agent thinks, one step at a time\n\n"
        "An **agent** is a language model in a loop. At every step it\n\n"
        "1. **thinks**: writes a short *Thought* about what to do next,\n"
        "2. **acts**: writes a little Python code,\n"
        "3. **observes**: the code runs, and what it printed (or the error it hit) comes back to the model.\n\n"
        "The loop ends when the code calls `final_answer(...)`. In this lesson we slow the loop down and "
        "watch every step, stop it, correct it and re-run it.\n\n"
        "So that every student sees the same run, a `ScriptedModel` plays the model: its answers are written "
        "in advance. Everything else (the loop, the sandbox, the widget, the controls) is the real thing; "
        "replace `model=...` with `nbagent.default_model()` to try a real model."
    ),
    py("%load_ext nbagent"),
    py(
        "import time\n\n"
        "import pandas as pd\n\n"
        "from nbagent import ActionStep, CodeAgent, ScriptedModel\n\n"
        "scores = pd.DataFrame({\n"
        '    "student": ["Ana", "Ben", "Chloé", "Dev", "Eli"],\n'
        '    "test1": [48, 75, 66, 80, 70],\n'
        '    "test2": [62, 74, 81, 85, 69],\n'
        "})\n"
        "scores"
    ),
    md(
        "## The model's side of the lesson\n\n"
        "These are the answers our pretend model gives, one per step. Each is a *Thought* and a code block, "
        "exactly the format a real model is asked for. (The last two are used later, when we re-run a step.)"
    ),
    py(
        "def step(thought, code):\n"
        '    return f"Thought: {thought}\\n```python\\n{code}\\n```"\n\n'
        "def lesson_model():\n"
        "    return ScriptedModel([\n"
        '        step("First I look at the table.", "print(scores)"),\n'
        "        step(\"The improvement is test2 - test1.\", \"improvement = scores['test2'] - scores['test1']\\nprint(improvement.tolist())\"),\n"
        '        step("The largest improvement is 15 points.", "final_answer(scores.loc[improvement.idxmax(), \'student\'])"),\n'
        "        step(\"Maybe improvement should be relative: in percent.\", \"improvement = (scores['test2'] / scores['test1'] - 1) * 100\\nprint(improvement.round(1).tolist())\"),\n"
        '        step("In percent, the largest is 29.2 %.", "final_answer(scores.loc[improvement.idxmax(), \'student\'])"),\n'
        "    ])\n\n"
        'agent = CodeAgent(tools=[], model=lesson_model(), additional_authorized_imports=["pandas"], namespace=globals())\n'
        "agent"
    ),
    md(
        "## 1. Prepare a run, paused before its first step\n\n"
        "`%%agent --step` sets the run up and returns at once: the widget below shows the task and waits. "
        "In JupyterLab you would press **Step** or **Run** in the widget; here we press them from code, "
        "with `agent.driver` (the object behind the buttons). `--agent agent` uses the agent we just made, "
        "and `-o best` stores the final answer in the variable `best`.\n\n"
        "Notice how the task points at the table with backticks: `` `scores` `` tells nbagent to describe "
        "that DataFrame to the model (its columns and a few rows, never the whole data)."
    ),
    py("%%agent --agent agent --step -o best\nWhich student in `scores` improved the most from test1 to test2?"),
    py(
        "def wait_until(condition, timeout=10):\n"
        '    """What a person does in front of the widget: wait until it shows what we expect."""\n'
        "    deadline = time.monotonic() + timeout\n"
        "    while not condition():\n"
        '        assert time.monotonic() < deadline, "waited too long"\n'
        "        time.sleep(0.02)\n\n"
        "def wait_for(agent, status):\n"
        "    wait_until(lambda: agent.gates.status == status)\n\n"
        'wait_for(agent, "paused")\n'
        "agent.gates.status"
    ),
    md(
        "## 2. Step: one turn of the loop\n\n`driver.step()` is the **Step** button: one step runs, then the run pauses again."
    ),
    py(
        "first = agent.driver.step()\n"
        'print("The model wrote:\\n" + first.model_output)\n'
        'print("\\nIt observed:\\n" + first.observations)'
    ),
    md(
        "The model looked before it computed. It now knows the column names, so the next step can use them. Step again:"
    ),
    py("second = agent.driver.step()\nprint(second.code_action)\nprint(second.observations)"),
    md(
        "Variables the agent defines live in the notebook, like yours: `improvement` is here now. "
        "(The agent ran in this notebook's namespace, inside nbagent's sandbox.)"
    ),
    py("improvement"),
    md("## 3. Run: let it finish\n\n`driver.run()` is the **Run** button: it runs until the final answer."),
    py('answer = agent.driver.run()\nassert answer == best == "Chloé"\nanswer'),
    md(
        "## 4. The memory: everything the agent did\n\n"
        "`agent.memory` holds the run: the system prompt, the task, and one `ActionStep` per step with the "
        "model's output, the code, what it printed, errors, tokens and timing. It is also what the model "
        "reads back at every step, as messages."
    ),
    py(
        "for memory_step in agent.memory.steps:\n"
        "    if isinstance(memory_step, ActionStep):\n"
        '        print(f"step {memory_step.step_number}: {memory_step.code_action!r}")\n'
        "    else:\n"
        "        print(type(memory_step).__name__)"
    ),
    py(
        "messages = agent.write_memory_to_messages()\n"
        "[(m.role.value, len(m.text)) for m in messages]  # (who, how many characters) the model reads next"
    ),
    md("`replay()` prints the whole run again, step by step, as the console shows it:"),
    py("agent.replay()"),
    md(
        "## 5. Re-run from a step\n\n"
        "Was step 2 the right idea? *Improvement* could also mean relative improvement. "
        "`driver.rerun(2)` (the widget's ↻ on a step) forks the memory just before step 2 and continues from "
        "there with the model. The earlier run is kept in `agent.forks`. (Variables the old steps set in the "
        "notebook are not undone; the widget says so too.)"
    ),
    py(
        "agent.driver.rerun(2)\n"
        "agent.driver.join(10)\n"
        "print(agent.last_result.output, '- before:', agent.forks[0].steps[-1].action_output)\n"
        'assert agent.last_result.output == "Ana" and len(agent.forks) == 1'
    ),
    md(
        "## 6. Pause and Stop\n\n"
        "A run can be paused between steps (**Pause**) and stopped at any moment (**Stop**). This model is "
        "slow on purpose (it writes one word every 20 ms) and would count forever."
    ),
    py(
        'counting = ScriptedModel([step(f"Count on. This is step {n}.", f"n = {n}\\nprint(n)") for n in range(1, 30)], token_delay=0.02)\n'
        "counter = CodeAgent(tools=[], model=counting, namespace={}, max_steps=30)\n"
        'counter.start("Count to a big number.")\n'
        'wait_for(counter, "paused")\n'
        "counter.driver.run(wait=False)   # Run, without waiting for the end\n"
        "time.sleep(0.5)\n"
        "counter.driver.pause()           # Pause: the step under way finishes, then the run waits\n"
        'wait_for(counter, "paused")\n'
        "done = len(counter.memory.action_steps())\n"
        'print(f"paused after {done} steps")'
    ),
    py(
        "time.sleep(0.3)\n"
        "assert len(counter.memory.action_steps()) == done  # nothing moves while paused\n"
        "counter.driver.stop()            # Stop: the run ends, its memory stays\n"
        "counter.driver.join(5)\n"
        "counter.last_result.state"
    ),
    md(
        "## 7. Approve, edit or reject the code before it runs\n\n"
        "With `agent.gates.approve_code = True` every step waits after the model wrote its code: a person "
        "reads it, and **approves** it (possibly edited) or **rejects** it with a note. The note is what the "
        "model observes instead of an output. This is how you keep a human in the loop."
    ),
    py(
        "review_model = ScriptedModel([\n"
        '    step("I compute the mean of test_2.", "print(scores[\'test_2\'].mean())"),\n'
        '    step("The column is test2, as the reviewer says.", "mean2 = scores[\'test2\'].mean()\\nprint(mean2)"),\n'
        '    step("I answer with the mean.", "final_answer(round(mean2, 1))"),\n'
        "])\n"
        'reviewed = CodeAgent(tools=[], model=review_model, additional_authorized_imports=["pandas"], namespace=globals())\n'
        "reviewed.gates.approve_code = True\n"
        'reviewed.start("What is the mean of test2 in `scores`?")\n'
        'wait_for(reviewed, "paused")\n'
        "reviewed.driver.run(wait=False)\n"
        "def awaiting(step_number):\n"
        '    return lambda: reviewed.gates.snapshot()["pending_step"] == step_number\n\n'
        "wait_until(awaiting(1))\n"
        "print(reviewed.gates.pending_code)"
    ),
    md("That column does not exist. **Reject** the code, with a note the model will read:"),
    py(
        'reviewed.driver.reject("There is no column test_2: the column is called test2.")\n'
        "wait_until(awaiting(2))\n"
        'print("The model observed:", reviewed.memory.action_steps()[0].observations)\n'
        'print("\\nIts next code:\\n" + reviewed.gates.pending_code)'
    ),
    md("Better. Let us **edit** it before approving: we want two decimals printed."),
    py(
        "reviewed.driver.approve(\"mean2 = scores['test2'].mean()\\nprint(f'{mean2:.2f}')\")\n"
        "wait_until(awaiting(3))\n"
        "edited = reviewed.memory.action_steps()[1]\n"
        'print("the model wrote:", edited.model_code_action, "\\nwhat ran:", edited.code_action, sep="\\n")\n'
        "print(edited.observations)"
    ),
    py(
        "reviewed.gates.approve_code = False  # trust the rest\n"
        "reviewed.driver.approve()\n"
        "reviewed.driver.join(10)\n"
        "assert reviewed.last_result.output == 74.2\n"
        "reviewed.last_result.output"
    ),
    md(
        "## What to remember\n\n"
        "- An agent is a loop: *thought → code → observation*, until `final_answer`.\n"
        "- Every step is kept in `agent.memory`; the model re-reads it at each step.\n"
        "- You can drive the loop yourself: `%%agent --step`, **Step**, **Run**, **Pause**, **Stop** "
        "(the buttons, or `agent.driver` in code).\n"
        "- A person can approve, edit or reject code before it runs, and re-run from any step."
    ),
]

DEMOS = [
    md(
        "# nbagent demos\n\n"
        "Tools, a chart, a team of agents, planning, and a data analysis by the offline default model. "
        "The first four use a `ScriptedModel` (answers written in advance, so the demo is the same every "
        "time); the last one is a real run of Qwen2.5-Coder-1.5B on this machine's CPU."
    ),
    py(
        "%load_ext nbagent\n\n"
        "import pandas as pd\n\n"
        "from nbagent import CodeAgent, ScriptedModel, Tool, tool\n\n"
        "def step(thought, code):\n"
        '    return f"Thought: {thought}\\n```python\\n{code}\\n```"'
    ),
    md(
        "## Tools\n\n"
        "A tool is a Python function the agent may call. `@tool` turns a documented function into one; a "
        "`Tool` subclass does the same with explicit fields (and may keep state, or load something once in "
        "`setup()`). The model sees each tool as a Python signature with its docstring."
    ),
    py(
        "@tool\n"
        "def exchange_rate(currency: str) -> float:\n"
        '    """How many euros one unit of a currency is worth today.\n\n'
        "    Args:\n"
        "        currency: a currency code such as USD or GBP\n"
        '    """\n'
        '    return {"USD": 0.92, "GBP": 1.17, "CHF": 1.04}[currency.upper()]\n\n\n'
        "class ShippingCost(Tool):\n"
        '    name = "shipping_cost"\n'
        '    description = "The cost in euros of shipping a parcel of the given weight to a country."\n'
        "    inputs = {\n"
        '        "kilograms": {"type": "number", "description": "the parcel\'s weight"},\n'
        '        "country": {"type": "string", "description": "the destination, e.g. France"},\n'
        "    }\n"
        '    output_type = "number"\n\n'
        "    def forward(self, kilograms: float, country: str) -> float:\n"
        '        return round(4.5 + 1.2 * kilograms * (1 if country == "France" else 2), 2)\n\n\n'
        "print(exchange_rate.to_code_prompt())"
    ),
    py(
        "shop_model = ScriptedModel([\n"
        "    step(\"I convert the price and add the shipping.\", \"eur = 120 * exchange_rate('USD')\\nship = shipping_cost(kilograms=2, country='Spain')\\nprint(eur, ship)\"),\n"
        '    step("The total is the sum.", "final_answer(round(eur + ship, 2))"),\n'
        "])\n"
        "shop = CodeAgent(tools=[exchange_rate, ShippingCost()], model=shop_model)\n"
        'total = shop.run("A 2 kg item costs 120 USD. What does it cost in euros, shipped to Spain?")\n'
        "assert total == 119.7\n"
        "total"
    ),
    md(
        "## A chart the agent draws\n\n"
        "When the agent's code draws with matplotlib, the figure is captured into its step: the widget "
        "shows it under the code, and it is saved with the memory (JSON + PNG)."
    ),
    py(
        "sales = pd.DataFrame({\n"
        '    "region": ["North", "South", "East", "West"] * 3,\n'
        '    "units": [12, 7, 15, 9, 10, 8, 14, 11, 13, 6, 16, 10],\n'
        '    "unit_price": [20.0, 22.0, 19.5, 25.0] * 3,\n'
        "})\n"
        "chart_model = ScriptedModel([\n"
        '    step("I sum the revenue per region and draw bars.",\n'
        "         \"import matplotlib.pyplot as plt\\nrevenue = (sales['units'] * sales['unit_price']).groupby(sales['region']).sum()\\n\"\n"
        "         \"revenue.plot.bar(title='Revenue by region')\\nplt.show()\\nprint(revenue.round(1).to_dict())\"),\n"
        '    step("The chart is drawn.", "final_answer(revenue.idxmax())"),\n'
        "])\n"
        'charter = CodeAgent(tools=[], model=chart_model, additional_authorized_imports=["pandas", "matplotlib"], namespace=globals())'
    ),
    py(
        "%%agent --agent charter -o top\n"
        "Draw a bar chart of the revenue (units × unit_price) per region in `sales`. Which region leads?"
    ),
    py(
        "chart_step = charter.memory.action_steps()[0]\n"
        'assert top == "East" and len(chart_step.observations_images) == 1\n'
        "chart_step.observations_images[0].size  # the figure, kept in the step"
    ),
    md(
        "## A team: a manager and a managed agent\n\n"
        "An agent with a `name` and a `description` can be given to another as a team member. The manager "
        "calls it like a function with a task in words; the member runs its own loop (shown nested in the "
        "manager's step) and reports back."
    ),
    py(
        "analyst = CodeAgent(\n"
        '    tools=[], name="analyst", description="Answers questions about the sales table with pandas.",\n'
        "    model=ScriptedModel([step(\"I count the rows of the West region.\", \"final_answer(int((sales['region'] == 'West').sum()))\")]),\n"
        "    additional_authorized_imports=['pandas'], namespace={'sales': sales},\n"
        ")\n"
        "manager = CodeAgent(\n"
        "    tools=[], managed_agents=[analyst],\n"
        "    model=ScriptedModel([\n"
        '        step("I ask the analyst.", "report = analyst(task=\'How many rows of sales are in the West region?\')\\nprint(report)"),\n'
        '        step("The analyst says 3.", "final_answer(\'The West region has 3 sales.\')"),\n'
        "    ]),\n"
        ")\n"
        'print(manager.run("How many sales were made in the West? Ask your analyst."))\n'
        'assert "3" in manager.memory.action_steps()[0].observations'
    ),
    md(
        "## Planning steps\n\n"
        "With `planning_interval=n` the agent first writes a plan (facts known, facts to find, steps), and "
        "revises it every *n* steps. The plan is a step of its own in the memory and the widget."
    ),
    py(
        "planner = CodeAgent(\n"
        "    tools=[], planning_interval=3, namespace={'sales': sales}, additional_authorized_imports=['pandas'],\n"
        "    model=ScriptedModel([\n"
        '        "1. Compute the units per region.\\n2. Take the region with the fewest.\\n3. Answer with its name.\\n<end_plan>",\n'
        "        step(\"Following the plan.\", \"units = sales.groupby('region')['units'].sum()\\nfinal_answer(units.idxmin())\"),\n"
        "    ]),\n"
        ")\n"
        'print(planner.run("Which region sold the fewest units?"))\n'
        "print(planner.memory.steps[1].plan)"
    ),
    md(
        "## A data analysis with the offline default model\n\n"
        "No scripts now: the offline default model (Qwen2.5-Coder-1.5B on llama.cpp, CPU only) answers a "
        "question about the `sales` table. Backticks point the model at the table; it is told its columns "
        "and a few rows, and uses it by name. This takes a few seconds to a minute, depending on the machine."
    ),
    py(
        "%%agent --imports pandas -o per_region --max-steps 4\n"
        "What is the total number of units sold per region in `sales`? Give a dict from region to units."
    ),
    py(
        "expected = sales.groupby('region')['units'].sum().to_dict()\n"
        "print(per_region)\n"
        "assert {k: int(v) for k, v in dict(per_region).items()} == expected, (per_region, expected)"
    ),
]
