"""The mechanism in a real ipykernel: control messages are handled while a cell blocks; ■ stops idle-kernel runs.

These tests fail loudly when ipykernel changes how comm messages are routed to subshells
(nbagent.notebook.channel.route_comm relies on ipykernel 7.4's private `Comm._reply_subshell_for`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from control_helpers import Kernel

pytestmark = pytest.mark.slow

SETUP = """
import json, threading, time
from nbagent.notebook.channel import ControlChannel
got = []
channel = ControlChannel(lambda content: got.append((content.get('n'), threading.current_thread().name, time.monotonic())))
print(json.dumps({'comm_id': channel.comm.comm_id, 'route': channel.route}))
"""


@pytest.fixture(scope="module")
def kernel():
    k = Kernel(cwd=str(Path(__file__).resolve().parents[2]))
    yield k
    k.close()


@pytest.fixture(scope="module")
def channel(kernel):
    return json.loads(kernel.run(SETUP).strip().splitlines()[-1])


def handled_during_a_blocking_cell(kernel, comm_id: str, n: int, subshell_id: str | None = None, data=None) -> tuple:
    """Send a control message 0.5 s into a 2 s blocking cell; return (seconds after the send, thread)."""
    kernel.run("t0 = time.monotonic()")
    cell = kernel.start_cell("time.sleep(2)")
    time.sleep(0.5)
    for extra in data or []:
        kernel.comm_msg(comm_id, extra, subshell_id)
    kernel.comm_msg(comm_id, {"method": "custom", "content": {"type": "control", "n": n}}, subshell_id)
    kernel.wait_reply(cell)
    out = kernel.run(f"print(json.dumps([(t - t0, th) for k, th, t in got if k == {n}]))")
    ((seconds, thread),) = json.loads(out)
    return seconds, thread


def test_the_channel_is_routed_to_nbagents_subshell(channel):
    assert channel["route"] == "subshell", (
        "ipykernel no longer offers Comm._reply_subshell_for/_reply_subshell_id (or subshells): the widget's "
        "Stop would wait for the running cell. Revisit nbagent/control_channel.py:route_comm."
    )


def test_a_front_end_without_subshells_reaches_python_while_a_cell_blocks(kernel, channel):
    seconds, thread = handled_during_a_blocking_cell(kernel, channel["comm_id"], 1)
    assert thread != "MainThread" and seconds < 1.2, (seconds, thread)


def test_a_front_end_with_subshells_reaches_python_while_a_cell_blocks(kernel, channel):
    front_end_subshell = kernel.create_subshell()
    seconds, thread = handled_during_a_blocking_cell(kernel, channel["comm_id"], 2, front_end_subshell)
    assert thread != "MainThread" and seconds < 1.2, (seconds, thread)


def test_the_route_survives_kernel_side_sends_on_the_comm(kernel, channel):
    # a page reload asks for the state and a trait update is echoed: both make ipykernel send on the comm
    noise = [{"method": "request_state"}, {"method": "update", "state": {}, "buffer_paths": []}]
    seconds, thread = handled_during_a_blocking_cell(kernel, channel["comm_id"], 3, None, noise)
    assert thread != "MainThread" and seconds < 1.2, (seconds, thread)


def test_a_send_from_the_main_shell_does_not_route_the_next_click_to_it(kernel, channel):
    # ipykernel re-points a comm at the shell that last sent on it; the blocked main shell must never get the click
    kernel.run("channel.send({'echo': 1})")
    seconds, thread = handled_during_a_blocking_cell(kernel, channel["comm_id"], 4)
    assert thread != "MainThread" and seconds < 1.2, (seconds, thread)


def test_kernel_interrupt_stops_a_run_advancing_on_a_worker_while_the_kernel_is_idle(kernel):
    kernel.run(
        """
from nbagent import CodeAgent, ScriptedModel
fence = "`" * 3
sleepy = CodeAgent(tools=[], model=ScriptedModel([f"Thought: wait.\\n{fence}python\\nimport time\\ntime.sleep(30)\\n{fence}"]),
                   verbosity_level=-1, show_widget=False)
controller = sleepy.start("sleep")
controller.run(wait=False)
"""
    )
    time.sleep(1.0)  # the cell has ended: the kernel is idle, the worker sleeps in the agent's code
    assert kernel.run("print(sleepy.gates.status)").strip() == "running"
    began = time.monotonic()
    kernel.interrupt()
    out = kernel.run("print(controller.join(5), sleepy.gates.status, sleepy.memory.steps[-1].stopped)")
    assert out.split() == ["True", "stopped", "True"] and time.monotonic() - began < 10  # not the 30 s sleep
    # the handler does not swallow interrupts meant for cells
    cell = kernel.start_cell("import time\ntime.sleep(20)")
    time.sleep(0.5)
    kernel.interrupt()
    reply = kernel.wait_reply(cell, timeout=10)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
