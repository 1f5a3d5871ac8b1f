"""Agent code calls the cleaning helpers (nbagent/data/cleaning.py) the notebook holds: they run where the code runs,
in the confined worker or in this process, and the user's frame stays as it was."""

from __future__ import annotations

import pytest

from nbagent import CodeAgent, ScriptedModel
from nbagent.data import clean_labels, is_missing, to_dates, to_number

pd = pytest.importorskip("pandas")

CODE = """```python
o = orders.drop_duplicates()
amount = to_number(o['amount'])
region = clean_labels(o['region'])
march = to_dates(o['day']).dt.month == 3
final_answer({'north': round(float(amount[region == 'North'].sum()), 2), 'march': int(march.sum()),
              'gaps': int(is_missing(o['amount']).sum())})
```"""


@pytest.mark.parametrize("executor_type", ["isolated", "local"])
def test_agent_code_cleans_with_the_helpers(executor_type: str) -> None:
    orders = pd.DataFrame(
        {
            "day": ["2024-03-05", "03/07/2024", "April 2, 2024", "", "03/07/2024"],
            "region": ["North", " north", "NORTH ", "South", " north"],
            "amount": ["$1,234.50", "-$18.46", "(10.00)", "", "-$18.46"],
        }
    )
    before = orders.copy(deep=True)
    helpers = {"to_number": to_number, "to_dates": to_dates, "clean_labels": clean_labels, "is_missing": is_missing}
    agent = CodeAgent(
        model=ScriptedModel([CODE]),
        namespace={"orders": orders, **helpers},
        executor_type=executor_type,
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=1,
    )
    assert agent.run("Clean and count `orders`") == {"north": 1206.04, "march": 2, "gaps": 1}
    pd.testing.assert_frame_equal(orders, before)
