"""Helpers of the control tests: scripted code, waiting, and a stand-in executor until the sandbox lands."""

from __future__ import annotations

import io
import threading
import time
from contextlib import redirect_stdout
from dataclasses import dataclass
from typing import Any


def real_sandbox() -> bool:
    try:
        from nbagent.sandbox import LocalPythonExecutor  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class _Output:
    output: Any
    logs: str
    is_final_answer: bool


class _Final(BaseException):
    def __init__(self, value: Any) -> None:
        self.value = value


class StandInExecutor:
    """Runs code with exec() in a dict; `sleep(s)` in the code is the cancellable long work.

    Used only while nbagent.sandbox has no LocalPythonExecutor yet (it is written in parallel).
    """

    def __init__(self, namespace: dict | None = None, **_: Any) -> None:
        self.namespace = namespace if namespace is not None else {}
        self.authorized_imports: list[str] = []
        self._stop = threading.Event()

    def send_variables(self, variables: dict) -> None:
        self.namespace.update(variables)

    def send_tools(self, tools: dict) -> None:
        def final_answer(value: Any) -> None:
            raise _Final(value)

        self.namespace.update({name: tool for name, tool in tools.items() if name != "final_answer"})
        self.namespace["final_answer"] = final_answer
        self.namespace["sleep"] = self._sleep

    def _sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self._stop.wait(0.02):
                raise _Stopped()

    def request_stop(self) -> None:
        self._stop.set()

    def __call__(self, code: str) -> _Output:
        from nbagent.sandbox import ExecutionError, ExecutionStopped

        self._stop.clear()
        buffer = io.StringIO()
        try:
            with redirect_stdout(buffer):
                exec(compile(code, "<agent>", "exec"), self.namespace)
        except _Final as final:
            return _Output(final.value, buffer.getvalue(), True)
        except _Stopped:
            raise ExecutionStopped("Execution stopped.", logs=buffer.getvalue()) from None
        except KeyboardInterrupt:
            raise ExecutionStopped("Execution stopped by a keyboard interrupt.", logs=buffer.getvalue()) from None
        except Exception as error:
            raise ExecutionError(f"{type(error).__name__}: {error}", logs=buffer.getvalue()) from None
        return _Output(None, buffer.getvalue(), False)


class _Stopped(BaseException):
    pass


SLEEP = "sleep" if not real_sandbox() else "time.sleep"
SLEEP_IMPORT = "" if not real_sandbox() else "import time\n"


def code(body: str, thought: str = "I will run code.") -> str:
    return f"Thought: {thought}\n```python\n{body}\n```"


def long_sleep(seconds: float = 30) -> str:
    """Code that sleeps, with whichever executor runs it."""
    return code(f"{SLEEP_IMPORT}{SLEEP}({seconds})", "This will take a while.")


def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)
