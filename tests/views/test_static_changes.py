"""A saved run says what each step did to the notebook's namespace, like the live widget."""

from nbagent import ActionStep, AgentMemory, TaskStep
from nbagent.views.html import memory_to_html


def test_the_static_html_lists_each_steps_namespace_changes():
    memory = AgentMemory("system")
    memory.steps = [
        TaskStep(task="Add a revenue column to `sales`."),
        ActionStep(
            step_number=1,
            code_action="sales['revenue'] = sales.units * sales.price",
            namespace_changes=[
                {"name": "sales", "change": "modified", "type": "DataFrame 3×3", "detail": "+1 column revenue"},
                {"name": "total", "change": "created", "type": "float", "detail": ""},
            ],
        ),
        ActionStep(step_number=2, code_action="print(1)", observations="1"),
    ]
    html = memory_to_html(memory)
    assert html.count('class="nba-changes"') == 1  # step 2 changed nothing: no line
    line = html.split('class="nba-changes"')[1].split("</div>")[0]
    assert "Namespace: " in line
    assert '<span class="nba-change nba-change-modified">~ sales: +1 column revenue</span> · ' in line
    assert '<span class="nba-change nba-change-created">+ total (float)</span>' in line


def _changed_orders() -> AgentMemory:
    memory = AgentMemory("system")
    memory.steps = [
        TaskStep(task="How many categories in `orders`?"),
        ActionStep(
            step_number=1,
            code_action="orders['category'] = orders['category'].str.lower()",
            namespace_changes=[
                {
                    "name": "orders",
                    "change": "modified",
                    "type": "DataFrame 400×6",
                    "detail": "column category changed",
                    "yours": True,
                },
                {"name": "tmp", "change": "created", "type": "int", "detail": ""},
            ],
        ),
    ]
    return memory


def test_a_change_to_your_variable_is_a_warning_in_the_static_html_and_the_console():
    from io import StringIO

    from rich.console import Console

    from nbagent.record import RunEnd, RunResult
    from nbagent.views.console import ConsoleView

    memory = _changed_orders()
    html = memory_to_html(memory)
    chip = (
        '<span class="nba-change nba-change-modified nba-change-yours">⚠ changed your orders: column category changed'
    )
    assert chip in html
    assert "⚠ The run changed your variable: orders; agent.undo() or %agent --undo puts them back" in html

    out = StringIO()
    view = ConsoleView(console=Console(file=out, width=200, color_system=None))
    view.consume(memory.steps[1])
    result = RunResult(output=2, state="success", memory_steps=memory.steps)
    result.scratch = ["tmp"]
    view.consume(RunEnd(result))
    text = out.getvalue()
    assert "⚠ changed your orders: column category changed" in text
    assert "⚠ The run changed your variable: orders" in text
    assert "Kept in the agent's scope: 1 name (tmp); agent.scratch holds them; %agent --keep brings them in." in text
