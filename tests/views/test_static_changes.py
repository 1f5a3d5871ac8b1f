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
