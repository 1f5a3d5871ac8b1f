"""The sandbox: model-written Python runs natively, in the notebook's namespace, without the powers not granted.

Two executors with one surface, both a :class:`PythonExecutor` (smolagents-compatible: ``executor(code) ->
CodeOutput``, ``send_tools``, ``send_variables``, ``state``, ``request_stop``, ``authorized_imports``):

* :class:`IsolatedPythonExecutor` -- the boundary: a worker process forked from the kernel, confined by the OS
  (Linux), killed at the deadline; the namespace comes back as plain data, functions as proxies, tools run here.
* :class:`LocalPythonExecutor` -- in this process, with the rewrite and guards: protection against a mistaken model,
  not a hostile one (also the usability layer inside the isolated worker).

Rooms (layer 1: nothing from nbagent but ``nbagent.errors`` / ``nbagent.media``), arrows down only:

* ``boundary/`` -- the worker boundary: process, confinement (Landlock, seccomp), the host side of the executor.
* ``guards/``   -- the in-process guards: policy, rewrite, runtime guards, limits, LocalPythonExecutor.
* ``wire/``     -- between them: plain data (codec), frames (channel), handles (proxies), change reports.
* ``remote``    -- smolagents' remote executors (E2B, Docker, Modal, Blaxel): each says at construction what it needs.
* ``errors``    -- ExecutionError (an InterpreterError, as in smolagents) and its subclasses, the in-code refusals,
  the control exceptions (both layers raise them).
"""

from .boundary.isolated import IsolatedPythonExecutor
from .errors import (
    ExecutionError,
    ExecutionStopped,
    ExecutionTimeout,
    ExecutionTimeoutError,
    FinalAnswerException,
    InterpreterError,
    OperationLimitExceeded,
    PolicyError,
)
from .guards.executor import CodeOutput, LocalPythonExecutor, PythonExecutor
from .guards.policy import BASE_BUILTIN_MODULES, is_import_authorized
from .guards.statement_value import with_last_statement_value
from .wire.codec import AgentValue
from .wire.proxies import RemoteClass, RemoteFunction, RemoteObject, handle_advice, is_worker_handle

__all__ = [
    "AgentValue",
    "BASE_BUILTIN_MODULES",
    "CodeOutput",
    "ExecutionError",
    "ExecutionStopped",
    "ExecutionTimeout",
    "ExecutionTimeoutError",
    "FinalAnswerException",
    "InterpreterError",
    "IsolatedPythonExecutor",
    "LocalPythonExecutor",
    "OperationLimitExceeded",
    "PolicyError",
    "PythonExecutor",
    "RemoteClass",
    "RemoteFunction",
    "RemoteObject",
    "handle_advice",
    "is_import_authorized",
    "is_worker_handle",
    "with_last_statement_value",
]
