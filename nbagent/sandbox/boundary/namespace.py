"""The host's view of what its worker has: which notebook names are shared, and how they travel there.

Host to worker is the trusted direction, so values are pickled (:class:`HostPickler`): functions the notebook
defined travel as their code (marshal), modules by name, handles as references the worker resolves; classes the
notebook defined cannot travel (the worker is then replaced, or the name is reported unavailable).
"""

from __future__ import annotations

import importlib
import marshal
import pickle
import sys
import types
from typing import Any

#: In the worker: its namespace (set at start), where functions the host sends are rebuilt.
WORKER_NAMESPACE: list[dict] = [{}]


def dumps(value: Any, namespace: dict) -> bytes:
    sink = _BytesSink()
    HostPickler(sink, namespace).dump(value)
    return sink.getvalue()


class _BytesSink:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


class HostPickler(pickle.Pickler):
    """Host -> worker (the trusted direction): notebook functions travel as code, modules by name."""

    def __init__(self, file: Any, namespace: dict) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.namespace = namespace

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.FunctionType) and obj.__globals__ is self.namespace:
            closure = tuple(cell.cell_contents for cell in obj.__closure__) if obj.__closure__ else None
            code = marshal.dumps(obj.__code__)
            return (
                rebuild_function,
                (code, obj.__name__, obj.__defaults__, obj.__kwdefaults__, closure, obj.__doc__),
            )
        if isinstance(obj, types.ModuleType):
            return (importlib.import_module, (obj.__name__,))
        if isinstance(obj, type) and obj.__module__ == self.namespace.get("__name__"):
            raise pickle.PicklingError(f"class {obj.__qualname__} was defined in the notebook")
        return NotImplemented


def execution_count(namespace: dict) -> int | None:
    module = sys.modules.get("IPython.core.getipython")
    shell = module.get_ipython() if module is not None else None
    if shell is None or getattr(shell, "user_ns", None) is not namespace:
        return None
    return getattr(shell, "execution_count", None)


def rebuild_function(code: bytes, name: str, defaults: Any, kwdefaults: Any, closure: Any, doc: Any) -> Any:
    """In the worker: a function the notebook defined, sent by the host (marshal of its code, trusted data)."""

    cells = tuple(types.CellType(value) for value in closure) if closure is not None else None
    function = types.FunctionType(marshal.loads(code), WORKER_NAMESPACE[0], name, defaults, cells)
    function.__kwdefaults__ = kwdefaults
    function.__doc__ = doc
    return function
