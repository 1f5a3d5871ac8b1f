"""Exceptions of the sandbox.

Three families:

* ``ExecutionError`` and its subclasses are what :class:`LocalPythonExecutor` raises to its caller (all are
  ``InterpreterError``, a ``ValueError``, as in smolagents). ``str(err)`` is the one message shown to the model, the widget and the console; ``err.logs`` holds the print output captured before the
  error, ``err.warnings`` the warnings raised before it (one line each) and ``err.cause_type`` the name of the
  underlying exception class.
* The *refusals* (``ImportNotAllowed``, ``AttributeNotAllowed``, ...) are raised *inside* agent code when it reaches for
  something the policy does not grant. They subclass the natural builtin exception (``ImportError``, ``AttributeError``,
  ...) so that ordinary code such as ``try: import pandas except ImportError: ...`` keeps working.
* The *control* exceptions (``FinalAnswerException`` and ``SandboxInterrupt``) end a call. Agent code cannot swallow
  them: every ``except`` handler re-raises them and the sandbox re-raises them at the next loop iteration or function
  call if a context manager or ``finally`` suppressed them.
"""

from __future__ import annotations

from typing import Any


class InterpreterError(ValueError):
    """smolagents' name for "the executor could not run this code" (a ``ValueError``); base of ``ExecutionError``."""


class ExecutionTimeoutError(Exception):
    """smolagents' name for "the code ran longer than allowed"; ``ExecutionTimeout`` is one."""


def timeout_message(seconds: float | None) -> str:
    """The one wording of a timeout (smolagents' first sentence, then what happened)."""
    return f"Code execution exceeded the maximum execution time of {seconds} seconds (timeout_seconds={seconds})"


class ExecutionError(InterpreterError):
    """The agent code failed. ``str()`` is the complete, model-readable message."""

    def __init__(
        self,
        message: str,
        *,
        logs: str = "",
        cause_type: str = "",
        lineno: int | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.logs = logs
        self.cause_type = cause_type
        self.lineno = lineno
        self.warnings = list(warnings or [])

    def __str__(self) -> str:
        return self.message


class PolicyError(ExecutionError):
    """The code tried something the sandbox policy does not allow (the message says how to grant it, if it can be)."""


class ExecutionStopped(ExecutionError):
    """The call was cancelled through :meth:`LocalPythonExecutor.request_stop`."""


class ExecutionTimeout(ExecutionError, ExecutionTimeoutError):
    """The call ran longer than ``timeout_seconds``."""


class OperationLimitExceeded(ExecutionError):
    """The call used more loop iterations and function calls than ``max_operations``."""


# --- refusals raised inside agent code -------------------------------------------------------------------------


class Refusal:
    """Mixin marking an exception raised by the policy (as opposed to by the code itself)."""


class ImportNotAllowed(Refusal, ImportError):
    pass


class AttributeNotAllowed(Refusal, AttributeError):
    pass


class NameNotAllowed(Refusal, NameError):
    pass


class OperationNotAllowed(Refusal, RuntimeError):
    pass


class AllocationTooLarge(Refusal, MemoryError):
    pass


# --- control flow ----------------------------------------------------------------------------------------------


class ControlFlow(BaseException):
    """Base of the exceptions that end a call; agent code cannot catch them."""


class FinalAnswerException(ControlFlow):
    """Raised when the code calls ``final_answer(...)``; carries the answer."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


class SandboxInterrupt(ControlFlow):
    """Raised into the running code on timeout, stop request, exhausted budget or a user interrupt."""
