"""Read-only views of modules for agent code.

Agent code never holds a real module object. ``import numpy as np`` gives it a :class:`SandboxModule`: a module whose
dict is a snapshot of numpy's public attributes (so ``np.sum`` is a plain dict lookup, native speed) minus what the
policy denies, with a few functions replaced by checked wrappers (``time.sleep``, ``numpy.load``...). Attributes that
are modules, and attributes missing from the snapshot, go through the view's ``__getattr__`` which applies the import
allow-list, so a module reached as an attribute of an allowed one is checked like an import. Views are read-only:
agent code cannot poison a library for the rest of the kernel.
"""

from __future__ import annotations

import itertools
import operator
import sys
from collections.abc import Callable
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Any

from ..errors import AttributeNotAllowed, ImportNotAllowed, OperationNotAllowed
from . import pandas_calls, policy

#: The executor's runtime guards (guards.Guards); not imported, so that guards -> modules stays one-way.
Guards = Any


class SandboxModule(ModuleType):
    """A read-only module view; see the module docstring."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeNotAllowed(f"cannot set attribute {name!r} of module {self.__name__!r}: modules are read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeNotAllowed(
            f"cannot delete attribute {name!r} of module {self.__name__!r}: modules are read-only"
        )


def _named(wrapper: Callable, original: Any) -> Callable:
    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, attribute, getattr(original, attribute))
        except (AttributeError, TypeError):
            pass
    return wrapper


# --- wrappers: (module, attribute) -> factory(original, guards) -> replacement ------------------------------------


def _sleep(original: Callable, guards: Guards) -> Callable:
    return _named(guards.sleep, original)


def _bounded_integer_function(original: Callable, guards: Guards) -> Callable:
    def bounded(*args: Any) -> Any:
        if any(isinstance(a, int) and a > policy.MAX_FACTORIAL_ARGUMENT for a in args):
            guards.refuse_allocation(
                f"{original.__name__}() of an argument above {policy.MAX_FACTORIAL_ARGUMENT:,} would block the kernel"
            )
        return original(*args)

    return _named(bounded, original)


def _checked_getter(original: Callable, guards: Guards) -> Callable:
    """operator.attrgetter / methodcaller: every attribute goes through the sandbox's getattr."""
    guarded_getattr = guards.builtins["getattr"]

    def checked(*names: Any, **kwargs: Any) -> Any:
        for name in names if original is operator.attrgetter else names[:1]:
            if not isinstance(name, str):
                return original(*names, **kwargs)  # raises the usual TypeError
            for part in name.split("."):
                guards.check_attribute_name(part)
        if original is operator.methodcaller:
            method, args = names[0], names[1:]
            return lambda obj: guarded_getattr(obj, method)(*args, **kwargs)

        def get(obj: Any) -> Any:
            values = []
            for name in names:
                value = obj
                for part in name.split("."):
                    value = guarded_getattr(value, part)
                values.append(value)
            return values[0] if len(values) == 1 else tuple(values)

        return get

    return _named(checked, original)


def _endless_iterator(original: Callable, guards: Guards) -> Callable:
    def counted(*args: Any, **kwargs: Any) -> Any:
        iterator = original(*args, **kwargs)
        if original is itertools.repeat and (len(args) > 1 or "times" in kwargs):
            return iterator
        return guards.counted(iterator)

    return _named(counted, original)


def _allocation_operator(original: Callable, guards: Guards) -> Callable:
    checker = {
        operator.mul: guards.mul,
        operator.imul: guards.imul,
        operator.pow: guards.power,
        operator.ipow: guards.ipow,
        operator.lshift: guards.lshift,
        operator.ilshift: guards.ilshift,
    }[original]
    return _named(lambda a, b: checker(a, b), original)


def _path_checked(original: Callable, guards: Guards) -> Callable:
    def checked(*args: Any, **kwargs: Any) -> Any:
        target = args[0] if args else next(iter(kwargs.values()), None)
        guards.check_path(target)
        return original(*args, **kwargs)

    return _named(checked, original)


def _numpy_load(original: Callable, guards: Guards) -> Callable:
    def load(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("allow_pickle") or (len(args) > 2 and args[2]):
            raise OperationNotAllowed("numpy.load(allow_pickle=True) is not allowed: unpickling can execute code")
        guards.check_path(args[0] if args else kwargs.get("file"))
        return original(*args, **kwargs)

    return _named(load, original)


def _torch_load(original: Callable, guards: Guards) -> Callable:
    def load(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("weights_only") is False:
            raise OperationNotAllowed("torch.load(weights_only=False) is not allowed: unpickling can execute code")
        kwargs["weights_only"] = True
        guards.check_path(args[0] if args else kwargs.get("f"))
        return original(*args, **kwargs)

    return _named(load, original)


def _asyncio_run(original: Callable, guards: Guards) -> Callable:
    return _named(guards.asyncio_run, original)


def _asyncio_sleep(original: Callable, guards: Guards) -> Callable:
    return _named(guards.asyncio_sleep, original)


def _asyncio_task(original: Callable, guards: Guards) -> Callable:
    def schedule(coro: Any, *args: Any, **kwargs: Any) -> Any:
        guards.check_own_event_loop(original.__name__, coro)
        return original(coro, *args, **kwargs)

    return _named(schedule, original)


def _pandas_dispatch(original: Callable, guards: Guards) -> Callable:
    return _named(pandas_calls.checked_dispatch(original.__name__, original), original)


WRAPPERS: dict[tuple[str, str], Callable[[Any, Guards], Callable]] = {
    ("time", "sleep"): _sleep,
    ("math", "factorial"): _bounded_integer_function,
    ("math", "comb"): _bounded_integer_function,
    ("math", "perm"): _bounded_integer_function,
    ("itertools", "count"): _endless_iterator,
    ("itertools", "cycle"): _endless_iterator,
    ("itertools", "repeat"): _endless_iterator,
    ("operator", "attrgetter"): _checked_getter,
    ("operator", "methodcaller"): _checked_getter,
    **{("operator", op): _allocation_operator for op in ("mul", "imul", "pow", "ipow", "lshift", "ilshift")},
    ("io", "open"): lambda original, guards: _named(guards.open, original),
    ("os", "open"): _path_checked,
    ("numpy", "load"): _numpy_load,
    **{("numpy", fn): _path_checked for fn in ("loadtxt", "genfromtxt", "fromfile", "fromregex")},
    ("torch", "load"): _torch_load,
    ("asyncio", "run"): _asyncio_run,
    ("asyncio", "sleep"): _asyncio_sleep,
    ("asyncio", "create_task"): _asyncio_task,
    ("asyncio", "ensure_future"): _asyncio_task,
    **{("pandas", fn): _pandas_dispatch for fn in ("pivot_table", "crosstab")},
}
#: every public ``read_*`` function of these modules checks its path argument
PATH_READER_MODULES = ("pandas",)


_tables: dict[str, Any] = {"modules": -1, "denied": {}, "wrappers": {}}


def _identity_tables() -> tuple[dict[int, str], dict[int, tuple[Callable, Any]]]:
    """Denied values and wrapped functions by identity, rebuilt when new modules have been imported."""
    if _tables["modules"] == len(sys.modules):
        return _tables["denied"], _tables["wrappers"]
    denied: dict[int, str] = {}
    for module_name, attribute in policy.DANGEROUS_CALLABLES:
        value = getattr(sys.modules.get(module_name), attribute, None)
        if value is not None:
            denied[id(value)] = f"'{module_name}.{attribute}' is not available to agent code"
    for module_name, attributes in policy.DENIED_MODULE_ATTRIBUTES.items():
        module = sys.modules.get(module_name)
        for attribute in attributes if module is not None else ():
            value = getattr(module, attribute, None)
            if value is not None and not isinstance(value, (int, str, bool, ModuleType)):
                denied[id(value)] = policy.module_attribute_refusal(module_name, attribute) or ""
    specs = list(WRAPPERS.items())
    for module_name in PATH_READER_MODULES:
        module = sys.modules.get(module_name)
        for attribute in dir(module) if module is not None else ():
            if attribute.startswith("read_"):
                specs.append(((module_name, attribute), _path_checked))
    wrappers: dict[int, tuple[Callable, Any]] = {}
    for (module_name, attribute), factory in specs:
        value = getattr(sys.modules.get(module_name), attribute, None)
        if value is not None and callable(value):
            wrappers[id(value)] = (factory, value)
            denied.pop(id(value), None)
    _tables.update(modules=len(sys.modules), denied=denied, wrappers=wrappers)
    return denied, wrappers


class ModuleViews:
    """Builds and caches the views of one executor (their content depends on its allow-list)."""

    def __init__(self, guards: Guards) -> None:
        self._guards = guards
        self._views: dict[int, tuple[ModuleType, SandboxModule]] = {}
        self._wrapped: dict[int, Callable] = {}

    def denied_reason(self, value: Any) -> str | None:
        return _identity_tables()[0].get(id(value))

    @staticmethod
    def foreign_reason(owner: str, value: Any) -> str | None:
        """A function or class a module of a package re-exports from a module of the same package that agent code may
        never import (pandas.core.frame holds pandas.core.apply's functions): refused like that module. Other
        packages' values are left alone (nbagent's own ``plt.show`` in the worker, say)."""
        if not isinstance(value, (type, FunctionType, BuiltinFunctionType)):
            return None
        module = getattr(value, "__module__", None)
        if not isinstance(module, str) or module.split(".")[0] != owner.split(".")[0]:
            return None
        if not policy.never_importable(module):
            return None
        return f"{getattr(value, '__name__', '?')!r} comes from the module {module!r}, which is never available to agent code"

    def wrap(self, value: Any) -> Any:
        """The value agent code receives for ``value`` (a checked wrapper for a few functions)."""
        key = id(value)
        spec = _identity_tables()[1].get(key)
        if spec is None or spec[1] is not value:
            return value
        wrapped = self._wrapped.get(key)
        if wrapped is None:
            wrapped = self._wrapped[key] = spec[0](value, self._guards)
        return wrapped

    # -- views ------------------------------------------------------------------------------------------------------

    def is_authorized(self, module: ModuleType, path: str | None = None) -> bool:
        names = {module.__name__}
        if path and sys.modules.get(path) is module:
            names.add(path)
        if any(policy.never_importable(name) for name in names | ({path} if path else set())):
            return False
        return any(policy.is_import_authorized(name, self._guards.authorized) for name in names)

    def view(self, module: ModuleType, path: str | None = None) -> SandboxModule:
        """The view of ``module`` (reached through the dotted ``path``); ImportNotAllowed if it is not granted."""
        if isinstance(module, SandboxModule):
            return module
        if not self.is_authorized(module, path):
            refusal = policy.import_refusal(module.__name__, self._guards.authorized, self._guards.executor_name)
            if path and path != module.__name__:  # reached as an attribute: smolagents' words first
                refusal = f"Forbidden access to module: {module.__name__} (reached as {path}). {refusal}"
            raise ImportNotAllowed(refusal)
        cached = self._views.get(id(module))
        if cached is not None and cached[0] is module:
            return cached[1]
        built = self._build(module, path or module.__name__)
        self._views[id(module)] = (module, built)
        return built

    def way_to(self, module_name: str) -> SandboxModule:
        """What `import a.b.c` binds as `a`: its view when `a` is granted, else a view of `a` that holds only the way
        down to the granted module (and `a`'s other granted submodules already imported), so that granting
        `urllib.request` makes `import urllib.request` work without granting the rest of `urllib`."""
        parts = module_name.split(".")
        top = sys.modules[parts[0]]
        if len(parts) == 1 or self.is_authorized(top, parts[0]):
            return self.view(top, parts[0])
        return self._way(parts, 0)

    def _way(self, parts: list[str], depth: int) -> SandboxModule:
        name = ".".join(parts[: depth + 1])
        module = sys.modules[name]
        if self.is_authorized(module, name):
            return self.view(module, name)
        way = SandboxModule(name, getattr(module, "__doc__", None))
        content = way.__dict__
        for key, value in list(vars(module).items()):  # its granted submodules, as the real package holds them
            if isinstance(value, ModuleType) and not key.startswith("_") and self.is_authorized(value, f"{name}.{key}"):
                content[key] = self.view(value, f"{name}.{key}")
        if depth + 1 < len(parts):
            content[parts[depth + 1]] = self._way(parts, depth + 1)
        granted = ", ".join(sorted(k for k, v in content.items() if isinstance(v, ModuleType)))

        def refuse(attribute: str) -> Any:
            if attribute.startswith("_"):
                raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
            raise AttributeNotAllowed(
                f"{name}.{attribute}: the module {name} is not granted, only its submodules {granted} "
                f"({policy.grant_hint(name, self._guards.executor_name)})"
            )

        content["__getattr__"] = refuse
        return way

    def _build(self, module: ModuleType, path: str) -> SandboxModule:
        name = module.__name__
        if name.split(".")[0] == "pandas":
            pandas_calls.guard_plot_backends(self._guards.agent_code_running)
        view = SandboxModule(name, getattr(module, "__doc__", None))
        content = view.__dict__
        live = policy.LIVE_MODULE_ATTRIBUTES.get(name, frozenset())
        for key, value in list(vars(module).items()):
            if key.startswith("_") or key in live or isinstance(value, ModuleType):
                continue
            if (
                policy.module_attribute_refusal(name, key)
                or self.denied_reason(value)
                or self.foreign_reason(name, value)
            ):
                continue
            content[key] = self.wrap(value)
        content["__getattr__"] = lambda attribute: self._lazy(view, module, path, attribute)
        return view

    def _lazy(self, view: SandboxModule, module: ModuleType, path: str, attribute: str) -> Any:
        name = module.__name__
        if attribute.startswith("_"):
            value = getattr(module, attribute) if attribute in policy.READABLE_DUNDERS else None
            if isinstance(value, (str, tuple)):
                return value
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        reason = policy.module_attribute_refusal(name, attribute)
        if reason:
            raise AttributeNotAllowed(reason)
        value = getattr(module, attribute)
        if isinstance(value, ModuleType):
            value = self.view(value, f"{path}.{attribute}")
        else:
            reason = self.denied_reason(value) or self.foreign_reason(name, value)
            if reason:
                raise AttributeNotAllowed(reason)
            value = self.wrap(value)
        if attribute not in policy.LIVE_MODULE_ATTRIBUTES.get(name, ()):
            view.__dict__[attribute] = value
        return value
