"""The check: run the program once, without the model, and compare its `answer` with the run's.

It runs in a fresh executor of the agent's own kind and options (the isolated worker under the same confinement,
or the local executor behind the same guards), never in the agent's: that one's namespace is the notebook's and
its snapshots are the run's time travel, which a check must not touch. The namespace holds copies of the inputs
as the run read them (so the check changes nothing of the person's, even with the local executor), the modules
and library objects the program reads, and the agent's tools (their calls run again: a tool's result may differ,
which the check then says).
"""

from __future__ import annotations

import copy
from typing import Any

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor, is_worker_handle
from nbagent.text import ONE_LINE, truncate

from ..executors import make_executor
from .inputs import Inputs
from .same import same_value

__all__ = ["check_program", "REPRODUCES"]

REPRODUCES = "reproduces the answer"
_MISSING = object()


def check_program(code: str, inputs: Inputs, answer: Any, agent: Any) -> tuple[bool, str]:
    """(True, REPRODUCES) when `code` binds `answer` to a value the same as the run's; else (False, why not)."""
    own = getattr(agent, "python_executor", None)
    if not isinstance(own, (IsolatedPythonExecutor, LocalPythonExecutor)):
        kind = type(own).__name__
        return False, f"not checked: the agent's own executor ({kind}) cannot run it apart from the notebook"
    namespace, why = _namespace(inputs, isolated=isinstance(own, IsolatedPythonExecutor))
    if why:
        return False, why
    try:
        executor = make_executor(
            getattr(agent, "executor_type", None),
            additional_authorized_imports=list(getattr(agent, "additional_authorized_imports", []) or []),
            namespace=namespace,
            **{"max_print_outputs_length": 0, **dict(getattr(agent, "executor_kwargs", None) or {})},
        )
    except Exception as failure:
        return False, f"not checked: no executor to run it in ({type(failure).__name__}: {failure})"
    try:
        executor.send_tools({**getattr(agent, "tools", {}), **getattr(agent, "managed_agents", {})})
        executor(code)
        got = executor.state.get("answer", _MISSING)
    except ExecutionError as failure:
        return False, f"the program failed when run again: {_line(failure)}"
    except Exception as failure:  # a tool, the executor itself
        return False, f"the program failed when run again: {type(failure).__name__}: {_line(failure)}"
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()
    return _verdict(got, answer)


def _namespace(inputs: Inputs, isolated: bool) -> tuple[dict[str, Any], str]:
    namespace: dict[str, Any] = dict(inputs.libraries)
    for name, value in inputs.variables.items():
        if isolated:  # the worker never changes a kernel object in place: no copy (a 1 GB frame costs nothing)
            namespace[name] = value
            continue
        try:
            namespace[name] = copy.deepcopy(value)
        except Exception as failure:
            if not isolated:  # the local executor would change the person's own object
                return {}, f"not checked: its input {name} cannot be copied ({type(failure).__name__})"
            namespace[name] = value  # the worker never changes a kernel object in place
    return namespace, ""


def _verdict(got: Any, answer: Any) -> tuple[bool, str]:
    if got is _MISSING:
        return False, "the program ran but bound no answer"
    if is_worker_handle(got):
        return False, "its answer stayed in the sandbox's worker (not plain data), so it could not be compared"
    if same_value(got, answer):
        return True, REPRODUCES
    return False, f"run again it gives {_shown(got)}, not the run's {_shown(answer)}"


def _shown(value: Any) -> str:
    return truncate(repr(value), ONE_LINE).replace("\n", " ")


def _line(failure: BaseException) -> str:
    text = str(failure).strip().splitlines()
    return truncate(text[-1] if text else type(failure).__name__, ONE_LINE)
