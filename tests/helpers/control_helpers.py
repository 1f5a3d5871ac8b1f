"""Helpers of the control tests: scripted code, a real kernel-style interrupt, waiting."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any


def code(body: str, thought: str = "I will run code.") -> str:
    return f"Thought: {thought}\n```python\n{body}\n```"


def long_sleep(seconds: float = 30) -> str:
    """Code that blocks in `time.sleep` for `seconds`."""
    return code(f"import time\ntime.sleep({seconds})", "This will take a while.")


def kernel_interrupt() -> None:
    """What the kernel's ■ does: SIGINT to the main thread (interrupts blocking waits, unlike interrupt_main)."""
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


def stop_when(agent: Any, ready: Any, delay: float = 0.2) -> list[float]:
    """Call `agent.stop()` `delay` s after `ready()` holds (from another thread); the time of the stop.

    A stop waits for the state it tests (the model called, the code running): a timer started before `run()` may
    fire before the run begins on a busy machine, and a run clears an earlier stop when it starts."""
    stopped: list[float] = []

    def stop() -> None:
        wait_until(ready, timeout=30)
        time.sleep(delay)
        stopped.append(time.monotonic())
        agent.stop()

    threading.Thread(target=stop, daemon=True).start()
    return stopped


class Kernel:
    """A real ipykernel driven with jupyter_client, acting as a front-end with or without subshells."""

    def __init__(self, cwd: str) -> None:
        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3", cwd=cwd)

    def run(self, source: str, timeout: float = 60) -> str:
        """Execute a cell and return its stdout; raise with the traceback if it failed."""
        out: list[str] = []
        errors: list[str] = []

        def hook(msg: dict) -> None:
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                errors.append("\n".join(msg["content"]["traceback"]))

        self.client.execute_interactive(source, timeout=timeout, output_hook=hook)
        if errors:
            raise AssertionError("the kernel cell failed:\n" + "\n".join(errors))
        return "".join(out)

    def start_cell(self, source: str) -> str:
        return self.client.execute(source)

    def wait_reply(self, msg_id: str, timeout: float = 60) -> dict:
        while True:
            reply = self.client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id and reply["msg_type"] == "execute_reply":
                return reply

    def create_subshell(self) -> str:
        """What JupyterLab does for widget comms (one subshell per comm target)."""
        request = self.client.session.msg("create_subshell_request", {})
        self.client.control_channel.send(request)
        while True:
            reply = self.client.control_channel.get_msg(timeout=10)
            if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                return reply["content"]["subshell_id"]

    def comm_msg(self, comm_id: str, data: dict, subshell_id: str | None = None) -> None:
        msg = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        if subshell_id:
            msg["header"]["subshell_id"] = subshell_id
        self.client.shell_channel.send(msg)

    def interrupt(self) -> None:
        self.manager.interrupt_kernel()

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
