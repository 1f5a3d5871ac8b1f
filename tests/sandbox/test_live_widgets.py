"""The page is the person's: agent code cannot reach a live widget, comm or traitlets object (issue 29, item 6).

The attack: ``w.set_trait('_esm', "export default {render(){…}}")`` on the ``AgentWidget`` a notebook variable holds
passed the private-attribute check and anywidget ran the new code in the page (which owns the kernel); ``w.run =
{...}`` rewrote what the widget shows. Through the public executors: the local one refuses every spelling with one
clear error and the widget sends nothing; the isolated one refuses the same with the guards on, and with them off the
worker changes only its copy: the kernel's widget is untouched and no message of the worker's reaches the kernel's
iopub channel (proved in a real ipykernel, with the host's own message as the positive control).
"""

from __future__ import annotations

import ast
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import assert_next_call_works, outcome

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor

ipywidgets = pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

PAYLOAD = "export default {render(){document.title='pwned-by-agent'}}"
ATTACKS = {
    "set_trait _esm": f"w.set_trait('_esm', {PAYLOAD!r})",
    "trait_set": "w.trait_set(run={'status': 'done'})",
    "set_state": f"w.set_state({{'_esm': {PAYLOAD!r}}})",
    "send": "w.send({'pwned': 1})",
    "open": "w.open()",
    "hold_trait_notifications": "w.hold_trait_notifications()",
    "public trait": "w.run = {'task': 'pwned', 'steps': []}",
    "_esm": f"w._esm = {PAYLOAD!r}",
    "setattr": "setattr(w, 'run', {})",
    "getattr": "getattr(w, 'set_trait')('_esm', 'x')",
    "attrgetter": "import operator\noperator.attrgetter('set_state')(w)({})",
    "the class": "type(w).set_trait(w, '_esm', 'x')",
    "super": "super(type(w), w).set_trait('_esm', 'x')",
    "a subclass": "class Mine(type(w)):\n    pass\nMine.send(w, {})",
    "inside a list": "widgets[0].set_trait('_esm', 'x')",
    "the comm": "w.comm.send({'pwned': 1})",
    "a slider": "slider.value = 99",
    "observe": "w.observe(lambda change: None)",
    "delete": "del w.run",
}


class RecordingComm:
    """Stands in for the widget's comm in the host: what the widget sends lands here."""

    comm_id = "recording"
    kernel = None

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.sent.append(data)

    def open(self, *args: Any, **kwargs: Any) -> None:
        self.sent.append("open")

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass

    def on_msg(self, callback: Any) -> None:
        pass


@pytest.fixture
def page() -> Iterator[dict[str, Any]]:
    from nbagent.notebook.widget import AgentWidget

    widget = AgentWidget()
    comm = RecordingComm()
    widget.comm = comm
    slider = ipywidgets.IntSlider(value=3)
    namespace = {"w": widget, "widgets": [widget], "slider": slider}
    yield {"ns": namespace, "w": widget, "comm": comm, "esm": widget._esm, "run": dict(widget.run), "slider": slider}
    widget.comm = None


def assert_untouched(page: dict[str, Any]) -> None:
    assert page["ns"]["w"] is page["w"] and page["w"]._esm == page["esm"] and page["w"].run == page["run"]
    assert page["comm"].sent == [] and page["slider"].value == 3


def refusal(result: Any) -> str:
    assert isinstance(result, ExecutionError), result
    return str(result)


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_the_local_executor_refuses_every_spelling_and_the_widget_sends_nothing(page: dict, attack: str) -> None:
    executor = LocalPythonExecutor(namespace=page["ns"], additional_authorized_imports=["operator"], timeout_seconds=5)
    said = refusal(outcome(executor, attack))
    assert "the page and the kernel are the person's" in said and ("live widget" in said or "comm" in said), said
    assert_untouched(page)
    assert executor("slider.value + 1").output == 4  # reading a widget's plain value is fine


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the isolated executor forks")
@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
@pytest.mark.parametrize("attack", ["set_trait _esm", "public trait", "the comm", "super"])
def test_the_isolated_worker_never_changes_the_kernels_widget(page: dict, guards: bool, attack: str) -> None:
    executor = IsolatedPythonExecutor(
        guards=guards, namespace=page["ns"], additional_authorized_imports=["operator"], timeout_seconds=5
    )
    try:
        result = outcome(executor, f"{ATTACKS[attack]}\n'ran'")
        if guards:
            assert "the page and the kernel are the person's" in refusal(result)
        else:  # past the guards: the worker's copy changed (or its comm led nowhere); the kernel's widget did not
            assert result == "ran" or isinstance(result, ExecutionError)
        assert_untouched(page)
        assert_next_call_works(executor)
    finally:
        executor.close()


def test_without_guards_the_change_is_real_in_the_worker_and_absent_in_the_kernel(page: dict) -> None:
    """The positive control of the test above: the worker did change its copy."""
    executor = IsolatedPythonExecutor(guards=False, namespace=page["ns"], timeout_seconds=5)
    try:
        assert executor(f"w.set_trait('_esm', {PAYLOAD!r})\nw._esm").output == PAYLOAD
    finally:
        executor.close()
    assert_untouched(page)


KERNEL_SETUP = """
from nbagent.notebook.widget import AgentWidget
from nbagent.sandbox import IsolatedPythonExecutor
w = AgentWidget()
esm = w._esm
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="a real ipykernel with the Linux worker")
def test_in_a_real_kernel_no_message_of_the_worker_reaches_the_page() -> None:
    from jupyter_client import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    client = manager.client()
    client.start_channels()
    seen: list[dict] = []
    try:
        client.wait_for_ready(timeout=60)

        def run(code: str, **expressions: str) -> dict:
            reply = client.execute_interactive(code, user_expressions=expressions, timeout=60, output_hook=seen.append)
            assert reply["content"]["status"] == "ok", reply["content"]
            return {k: v["data"]["text/plain"] for k, v in reply["content"]["user_expressions"].items()}

        run(KERNEL_SETUP)
        attack = f"w.set_trait('_esm', {PAYLOAD!r}); w.run = {{'task': 'pwned'}}; w.send({{'pwned': 1}})"
        for guards in (True, False):
            run(
                f"executor = IsolatedPythonExecutor(namespace=get_ipython().user_ns, guards={guards}, timeout_seconds=5)"
            )
            said = run(
                f"try:\n    executor({attack!r})\n    said = 'ran'\nexcept Exception as e:\n    said = str(e)\n"
                "executor.close()",
                said="said",
            )["said"]
            if guards:
                assert "the page and the kernel are the person's" in ast.literal_eval(said)
            else:  # past the guards the worker's copy took every call; none of it may reach the page
                assert said == "'ran'", said
        time.sleep(1)  # anything the worker managed to send would be on iopub by now
        run("w.send({'probe': 'from-the-kernel'})")  # the positive control: the kernel's own message is seen
        left = run("", esm="w._esm == esm", task="w.run['task']")
        comm_messages = [m for m in seen if m["msg_type"] == "comm_msg"]
        assert any("from-the-kernel" in str(m["content"]) for m in comm_messages)
        sent = [m for m in seen if m["msg_type"] != "execute_input"]  # the kernel echoes the cells' code
        assert not any("pwned" in str(m["content"]) for m in sent), [m for m in sent if "pwned" in str(m["content"])]
        assert left == {"esm": "True", "task": "''"}
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
