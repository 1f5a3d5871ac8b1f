"""The isolated executor shares the notebook's namespace (a real IPython shell's user_ns): what the code sees, what
comes back (plain data, handles, proxies), tools run in the host, images, streamed prints."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell
from PIL import Image

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor
from nbagent.sandbox.wire.proxies import DeadHandleError, RemoteFunction, RemoteObject


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    created = not InteractiveShell.initialized()
    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    yield shell
    shell.reset(new_session=False)
    if created:  # a later test in this process may start IPython's test shell, another kind of the singleton
        InteractiveShell.clear_instance()


@pytest.fixture
def agent(shell: InteractiveShell) -> Iterator[IsolatedPythonExecutor]:
    executor = IsolatedPythonExecutor(
        namespace=shell.user_ns, timeout_seconds=20, additional_authorized_imports=["pandas", "numpy", "matplotlib"]
    )
    yield executor
    executor.close()


def cell(shell: InteractiveShell, code: str) -> Any:
    result = shell.run_cell(code, store_history=True)
    result.raise_error()
    return result.result


def test_bound_names_come_back_as_plain_data(shell: InteractiveShell, agent: IsolatedPythonExecutor) -> None:
    cell(shell, "data = [3, 1, 2]")
    out = agent("ordered = sorted(data)\ntable = {'a': (1, 2.5), 'b': None}\nimport numpy\narr = numpy.arange(3)")
    assert out.output is None
    assert cell(shell, "ordered") == [1, 2, 3]
    assert cell(shell, "table") == {"a": (1, 2.5), "b": None}
    assert cell(shell, "arr.tolist()") == [0, 1, 2]
    agent("del ordered")
    assert "ordered" not in shell.user_ns


def test_in_place_change_of_a_notebook_dataframe_comes_back(
    shell: InteractiveShell, agent: IsolatedPythonExecutor
) -> None:
    cell(shell, "import pandas as pd\nsales = pd.DataFrame({'units': [1, 2, 3], 'price': [10.0, 20.0, 30.0]})")
    agent("sales['revenue'] = sales['units'] * sales['price']")
    assert cell(shell, "sales['revenue'].tolist()") == [10.0, 40.0, 90.0]
    agent("x = 1")  # a step that does not mention sales leaves it alone
    assert list(shell.user_ns["sales"].columns) == ["units", "price", "revenue"]


def test_notebook_changes_between_steps_reach_the_worker(
    shell: InteractiveShell, agent: IsolatedPythonExecutor
) -> None:
    cell(shell, "items = [1]")
    assert agent("len(items)").output == 1
    cell(shell, "items.append(2)")  # in place, in a cell: the next call forks afresh (nothing would be lost)
    assert agent("len(items)").output == 2
    agent("def keep():\n    return 'kept'")  # now the worker holds a function the notebook has a proxy for
    cell(shell, "items = [1, 2, 3]\ndef helper(x):\n    return x * 10")  # rebinds are sent to the same worker
    assert agent("(len(items), helper(4), keep())").output == (3, 40, "kept")


def test_functions_come_back_as_proxies_callable_from_a_cell(
    shell: InteractiveShell, agent: IsolatedPythonExecutor
) -> None:
    agent("def area(w, h):\n    print('computing')\n    return w * h\nclass Box:\n    pass")
    assert isinstance(shell.user_ns["area"], RemoteFunction)
    assert "area(w, h)" in repr(shell.user_ns["area"])
    assert cell(shell, "area(3, 4)") == 12  # runs in the worker
    assert agent("area(5, 6)").output == 30  # later steps see the real function
    box = cell(shell, "Box()")
    assert isinstance(box, RemoteObject) and "Box" in repr(box)
    assert agent("b = Box()\nb.size = 3\nb.size").output == 3


def test_an_unpicklable_notebook_object_is_readable(shell: InteractiveShell, agent: IsolatedPythonExecutor) -> None:
    cell(shell, "import threading\nlock = threading.Lock()\ngen = (i * i for i in range(5))")
    assert agent("(lock.locked(), next(gen), next(gen))").output == (False, 0, 1)
    agent("same = lock\nlabel = str(type(lock))")
    assert shell.user_ns["same"] is shell.user_ns["lock"]  # the notebook's own object, not a copy
    agent("made = threading_like = iter([1, 2])")
    assert isinstance(shell.user_ns["made"], RemoteObject) and shell.user_ns["threading_like"] is shell.user_ns["made"]


def test_tools_run_in_the_host(agent: IsolatedPythonExecutor) -> None:
    calls: list[tuple] = []
    answer = object()

    class Lookup:
        name, description, output_type = "lookup", "Looks up.", "string"
        inputs = {"key": {"type": "string", "description": "key"}}

        def __call__(self, key: str) -> str:
            calls.append((key, threading.get_ident()))
            print("tool printed")
            return key.upper()

    agent.send_tools({"lookup": Lookup(), "final_answer": lambda value: answer})
    out = agent("r = lookup('abc')\nprint(r)\nr")
    assert out.output == "ABC" and out.logs == "tool printed\nABC\n"
    assert calls == [("abc", threading.get_ident())]  # in this process, this thread
    final = agent("final_answer(lookup.description)")
    assert final.is_final_answer and final.output is answer  # the host's own value, not a copy
    with pytest.raises(ExecutionError, match="tool"):
        agent("lookup = None")
    assert agent("lookup('x')").output == "X"  # still intact


def test_a_tool_error_is_an_exception_in_the_code(agent: IsolatedPythonExecutor) -> None:
    def fails(x: int) -> int:
        raise ValueError("bad value")

    agent.send_tools({"fails": fails})
    assert agent("try:\n    fails(1)\nexcept ValueError as e:\n    r = str(e)\nr").output == "bad value"


def test_matplotlib_figures_and_images_come_back(agent: IsolatedPythonExecutor) -> None:
    out = agent("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()")
    assert len(out.images) == 1 and isinstance(out.images[0], Image.Image)
    assert out.images[0].size[0] > 50


def test_an_image_tool_result_reaches_the_host(agent: IsolatedPythonExecutor) -> None:
    image = Image.new("RGB", (8, 8), "blue")
    seen: list[Any] = []
    agent.send_tools({"draw": lambda: image, "final_answer": lambda value: seen.append(value) or value})
    out = agent("final_answer(draw())")
    assert out.output.size == (8, 8) and seen and seen[0].tobytes() == image.tobytes()


def test_prints_stream_as_they_are_produced(agent: IsolatedPythonExecutor) -> None:
    seen: list[tuple[str, float]] = []
    import time

    agent("None")  # the worker's start (a fork and its confinement) is not what is measured
    agent.on_output = lambda text: seen.append((text, time.monotonic()))
    started = time.monotonic()
    out = agent("import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')")
    assert out.logs == "first\nsecond\n"
    assert "".join(t for t, _ in seen) == "first\nsecond\n"
    assert seen[0][1] - started < 0.8  # before the sleep ended


def test_a_crash_loses_only_what_lived_in_the_worker(shell: InteractiveShell) -> None:
    executor = IsolatedPythonExecutor(namespace=shell.user_ns, guards=False, timeout_seconds=10)
    try:
        executor("values = [1, 2]\ndef f():\n    return 1")
        with pytest.raises(ExecutionError, match="Lost: f"):
            executor("import ctypes\nctypes.string_at(0)")
        assert shell.user_ns["values"] == [1, 2]
        with pytest.raises(DeadHandleError):
            shell.user_ns["f"]()
        assert executor("values + [3]").output == [1, 2, 3]
    finally:
        executor.close()


def test_large_values_stay_in_the_worker_as_handles(agent: IsolatedPythonExecutor) -> None:
    agent.max_transfer_bytes = 10_000
    agent.restart()
    agent("import numpy as np\nbig = np.zeros(100_000)\nsmall = np.zeros(10)")
    assert isinstance(agent.state["big"], RemoteObject) and agent.state["small"].shape == (10,)
    assert agent("big.sum()").output == 0.0


@pytest.mark.slow
def test_a_200_mb_dataframe(shell: InteractiveShell, agent: IsolatedPythonExecutor) -> None:
    cell(shell, "import numpy as np, pandas as pd\nbig = pd.DataFrame(np.ones((2_500_000, 10)))")
    assert agent("big.shape").output == (2_500_000, 10)
    agent("big[0] = 2.0")
    assert float(shell.user_ns["big"][0].sum()) == 5_000_000.0
    assert agent("half = big.iloc[:1_250_000]\nhalf.shape").output == (1_250_000, 10)
    assert isinstance(shell.user_ns["half"], pd.DataFrame)
    assert np.allclose(shell.user_ns["half"][1].to_numpy(), 1.0)


def test_a_module_only_the_worker_imported_survives_a_fresh_worker(shell: InteractiveShell) -> None:
    import sys

    name = next(m for m in ("netrc", "tabnanny", "wave", "colorsys", "pipes") if m not in sys.modules)
    executor = IsolatedPythonExecutor(namespace=shell.user_ns, additional_authorized_imports=[name])
    try:
        executor(f"import {name} as mod")
        assert "mod" not in shell.user_ns and name not in sys.modules  # never imported in the kernel
        cell(shell, "x = 1")  # a cell ran: the next call forks a fresh worker
        assert executor("mod.__name__").output == name
    finally:
        executor.close()


def test_a_row_of_a_table_comes_back_with_its_label_as_name(
    shell: InteractiveShell, agent: IsolatedPythonExecutor
) -> None:
    """`df.iloc[0]` is a Series named by a numpy integer (or a Timestamp, by date): plain data, not a broken worker."""
    cell(
        shell,
        "import pandas as pd\nc = pd.DataFrame({'name': ['Ada', 'Bo'], 'day': pd.to_datetime(['2024-02-01', '2023-01-05'])})",
    )
    out = agent("first = c.sort_values(by='day').iloc[0]\nby_day = c.set_index('day').iloc[0]\nfirst['name']")
    assert out.output == "Bo"
    assert cell(shell, "(first.name, first['name'])") == (1, "Bo")
    assert cell(shell, "by_day.name") == pd.Timestamp("2024-02-01")
    assert agent("len(c)").output == 2  # the same worker goes on
