"""The sandbox: model-written Python runs natively, in a shared namespace, closed and bounded.

Public surface (smolagents-compatible): :class:`LocalPythonExecutor`, :class:`CodeOutput` and the exceptions below.
The rules live in :mod:`nbagent.sandbox.policy`.
"""

from .errors import (
    ExecutionError,
    ExecutionStopped,
    ExecutionTimeout,
    FinalAnswerException,
    OperationLimitExceeded,
    PolicyError,
)
from .executor import CodeOutput, LocalPythonExecutor
from .isolated import IsolatedPythonExecutor
from .policy import BASE_BUILTIN_MODULES

__all__ = [
    "BASE_BUILTIN_MODULES",
    "CodeOutput",
    "ExecutionError",
    "ExecutionStopped",
    "ExecutionTimeout",
    "FinalAnswerException",
    "IsolatedPythonExecutor",
    "LocalPythonExecutor",
    "OperationLimitExceeded",
    "PolicyError",
]
