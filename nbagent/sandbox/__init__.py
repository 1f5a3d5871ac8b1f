"""The sandbox: model-written Python runs natively, in the notebook's namespace, without the powers not granted.

Two executors with one surface (smolagents-compatible: ``executor(code) -> CodeOutput``, ``send_tools``,
``send_variables``, ``state``, ``request_stop``, ``authorized_imports``):

* :class:`IsolatedPythonExecutor` -- the boundary: a worker process forked from the kernel, confined by the OS
  (Linux), killed at the deadline; the namespace comes back as plain data, functions as proxies, tools run here.
* :class:`LocalPythonExecutor` -- in this process, with the rewrite and guards: protection against a mistaken model,
  not a hostile one (also the usability layer inside the isolated worker).

Modules (layer 1: nothing from nbagent but ``nbagent.errors`` / ``nbagent.media``):

* ``policy``     -- every rule about what agent code may do (imports, builtins, attributes, per-module denials).
* ``errors``     -- ExecutionError (an InterpreterError, as in smolagents) and its subclasses, the in-code refusals,
  the control exceptions.
* ``scopes``     -- which names each scope of the code binds (for the rewrite).
* ``rewrite``    -- parse, check, rewrite the code into one guarded function.
* ``allocation`` -- the ``*``/``**``/``<<`` allocation guard.
* ``modules``    -- read-only module views and checked wrappers of a few library functions.
* ``guards``     -- the runtime guards the rewritten code calls.
* ``limits``     -- timeouts, stop requests, operation budget, recursion and memory limits of a call.
* ``capture``    -- print capture into a capped buffer (with a hook for streaming).
* ``executor``   -- LocalPythonExecutor and CodeOutput.
* ``statement_value`` -- smolagents' value of the code (a trailing assignment's too), for its compat API.
* ``wire``       -- plain data between worker and host without pickle (JSON tree + raw buffers; AgentValue).
* ``channel``    -- framed messages over the socket pair, read resumably, with deadlines and size limits.
* ``proxies``    -- handles and function/class proxies the notebook holds for objects left in the worker.
* ``landlock``   -- Landlock through its system calls (ctypes).
* ``seccomp``    -- the worker's seccomp-BPF filter, assembled by hand.
* ``confine``    -- the confinement plan (computed in the host) and its application in the worker.
* ``figures``    -- matplotlib in the worker: Agg backend, new figures taken as images.
* ``namespace``  -- which names the notebook and the worker share, and how the host sends values (pickle).
* ``changes``    -- what a call did to the shared namespace (created, rebound, changed in place, deleted), in words.
* ``copies``     -- ``copy_inputs`` for the local executor: the code works on copies of the notebook's objects.
* ``process``    -- the worker process seen from the host: fork, poll, kill, reap, describe its end.
* ``worker``     -- the worker process: cut ties to the kernel, confine, serve calls.
* ``isolated``   -- IsolatedPythonExecutor, the host side: fork, sync, wait, decode, tools, limits from outside.
"""

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
from .executor import CodeOutput, LocalPythonExecutor
from .isolated import IsolatedPythonExecutor
from .policy import BASE_BUILTIN_MODULES
from .proxies import RemoteClass, RemoteFunction, RemoteObject
from .statement_value import with_last_statement_value
from .wire import AgentValue

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
    "RemoteClass",
    "RemoteFunction",
    "RemoteObject",
    "with_last_statement_value",
]
