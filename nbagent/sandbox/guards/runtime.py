"""Runtime guards: the functions the rewritten code calls where a static check is not enough.

One :class:`Guards` object per executor is stored in the namespace under a name agent code cannot spell (it contains
a dot). The rewrite (rewrite.py) routes these operations through it:

==========================================  ===============================================================
agent code                                  becomes
==========================================  ===============================================================
``import x`` / ``from x import y``          ``import_module`` / ``import_from`` (allow-list, module views)
a global name the policy must look at       ``name('x')`` (hidden names, modules, guarded builtins)
a tool name                                 ``tool('x')`` (a read-only :class:`ToolProxy`)
``obj._x`` (load)                           ``private_attr(obj, '_x')`` (only the notebook's own objects)
``obj.format`` / ``obj.agg`` ...            ``attr(obj, 'format')`` (field paths, pandas dispatch)
``obj.x = v`` / ``del obj.x``               ``store_target(obj).x = v`` (modules and library classes are read-only)
``a * b``, ``a ** b``, ``a << b``           ``mul(a, b)`` ... (allocation guard)
``type(name, bases, ns)``                   ``type_call(...)`` (no ``__del__``)
start of every ``except`` handler           ``check()`` (control exceptions cannot be swallowed)
==========================================  ===============================================================

``getattr``, ``setattr``, ``delattr``, ``hasattr``, ``pow`` and (when ``io`` is authorized) ``open`` are replaced by
checked versions built here.
"""

from __future__ import annotations

import _string
import abc
import asyncio
import builtins
import copy
import enum
import importlib
import itertools
import os
import string
import sys
import time
import types
import typing
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import (
    AttributeNotAllowed,
    FinalAnswerException,
    ImportNotAllowed,
    NameNotAllowed,
    OperationNotAllowed,
)
from . import frontend, pandas_calls, policy
from .allocation import AllocationGuard
from .modules import ModuleViews, SandboxModule

if TYPE_CHECKING:
    from .limits import CallState

_REAL_GETATTR = builtins.getattr
_STR_FORMAT = str.format
_STR_FORMAT_MAP = str.format_map
_DANGEROUS_BUILTIN_IDS = frozenset(
    id(getattr(builtins, name)) for name in policy.FORBIDDEN_BUILTINS if hasattr(builtins, name)
) | {id(builtins.__import__), id(builtins.getattr), id(builtins.setattr), id(builtins.delattr), id(builtins.hasattr)}


class ToolProxy:
    """What agent code sees for a tool: callable, read-only, with copies of the tool's descriptive attributes."""

    __slots__ = ("_nb_name", "_nb_tool", "_nb_guards", "_nb_final")
    _DESCRIPTIVE = frozenset({"name", "description", "inputs", "output_type"})

    def __init__(self, name: str, tool: Callable, guards: Guards, *, final: bool) -> None:
        object.__setattr__(self, "_nb_name", name)
        object.__setattr__(self, "_nb_tool", tool)
        object.__setattr__(self, "_nb_guards", guards)
        object.__setattr__(self, "_nb_final", final)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._nb_guards.check()  # after a final answer (or a stop) no tool runs: the first answer wins
        result = self._nb_tool(*args, **kwargs)
        if self._nb_final:
            self._nb_guards.final_answer(result)
        return result

    def __getattr__(self, name: str) -> Any:
        if name in ToolProxy._DESCRIPTIVE:
            return copy.deepcopy(_REAL_GETATTR(self._nb_tool, name))
        raise AttributeNotAllowed(f"attribute {name!r} of tool {self._nb_name!r} is not available to agent code")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeNotAllowed(f"tool {self._nb_name!r} cannot be modified")

    def __delattr__(self, name: str) -> None:
        raise AttributeNotAllowed(f"tool {self._nb_name!r} cannot be modified")

    def __repr__(self) -> str:
        return f"<tool {self._nb_name}>"


class _ReadOnly:
    """Stands in for an object whose attributes agent code may not set or delete."""

    __slots__ = ("_nb_reason",)

    def __init__(self, reason: str) -> None:
        object.__setattr__(self, "_nb_reason", reason)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeNotAllowed(self._nb_reason)

    def __delattr__(self, name: str) -> None:
        raise AttributeNotAllowed(self._nb_reason)

    def __getattr__(self, name: str) -> Any:
        raise AttributeNotAllowed(_REAL_GETATTR(self, "_nb_reason"))


def _aliases(lookup: Callable[[str], Any]) -> Any:
    """Namespace of module views for global names bound to modules; misses fall back to a checked name lookup."""

    class Aliases:
        def __getattr__(self, name: str) -> Any:
            return lookup(name)

    return Aliases()


class Guards(AllocationGuard):
    """The runtime half of the policy for one executor and its namespace."""

    executor_name = "LocalPythonExecutor"  # the executor advice names (the isolated worker sets its own)

    def __init__(self, namespace: dict, authorized: tuple[str, ...], max_allocation_bytes: int | None) -> None:
        self.ns = namespace
        self.authorized = authorized
        self.max_allocation_bytes = max_allocation_bytes
        self.call: CallState | None = None
        self.budget_key = ""  # namespace key of the operation budget (set by the executor)
        self.views = ModuleViews(self)
        self.tools: dict[str, ToolProxy] = {}
        self.aliases = _aliases(self.name)
        self.alias_sources: dict[str, types.ModuleType] = {}
        self.ipython_hidden: frozenset[str] = frozenset()
        self.unavailable: dict[str, str] = {}  # names the isolated executor could not bring into its worker
        #: the notebook's names the task did not give the agent -> why (wire/visibility.py): a load is a NameError
        #: (which the executor turns into an ask), a binding is refused (it would change the user's variable)
        self.hidden_names: dict[str, str] = {}
        self.notebook_classes: weakref.WeakSet = weakref.WeakSet()
        for value in list(namespace.values()):  # the user's classes, before any agent code ran
            if isinstance(value, type) and value.__module__ == namespace.get("__name__"):
                self.notebook_classes.add(value)
        self._own_loops: set[int] = set()
        self.builtins = self._guarded_builtins()
        _LIVE_GUARDS.add(self)

    def agent_code_running(self) -> bool:
        """Is agent code running in this thread, under any executor's guards (libraries' callbacks included)?"""
        return any(g._running_here() for g in list(_LIVE_GUARDS))

    def _running_here(self) -> bool:
        call = self.call
        return call is not None and call.armed and call.thread_ident == _thread_ident()

    @property
    def ns_name(self) -> Any:
        return self.ns.get("__name__")

    # -- names ------------------------------------------------------------------------------------------------------

    def hidden_reason(self, key: str, value: Any) -> str | None:
        """Why the namespace entry ``key`` is invisible to agent code, or None."""
        if key in self.hidden_names:
            return f"{key!r} is {self.hidden_names[key]}; use another name"
        if key in self.ipython_hidden or (self.ipython_hidden and policy.is_ipython_internal(key)):
            return f"{key!r} is an IPython internal and is not visible to agent code"
        if id(value) in _DANGEROUS_BUILTIN_IDS or self.views.denied_reason(value):
            return f"{key!r} holds a function that is not available to agent code"
        if isinstance(value, types.ModuleType):
            if isinstance(value, SandboxModule) or self.views.is_authorized(value):
                return None
            return (
                f"{key!r} is the module {value.__name__!r}, which the user imported but the agent was not granted. "
                + policy.grant_hint(value.__name__, self.executor_name)
            )
        if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
            module = getattr(value, "__module__", None)
            if not isinstance(module, str) or module in ("builtins", self.ns_name):
                return None
            if isinstance(value, types.FunctionType) and value.__globals__ is self.ns:
                return None
            candidates = (module, module.lstrip("_"))
            if not any(policy.is_import_authorized(m, self.authorized) for m in candidates):
                return (
                    f"{key!r} comes from the module {module!r}, which the agent was not granted. "
                    + policy.grant_hint(module.lstrip("_"), self.executor_name)
                )
        return None

    def name(self, key: str) -> Any:
        """Checked lookup of a global name (used where a plain lookup could reach something hidden)."""
        if key in self.hidden_names:  # not shared with the agent: as if it were not there (the executor asks)
            raise NameError(f"name {key!r} is not defined")
        try:
            value = self.ns[key]
        except KeyError:
            return self.builtin(key)
        if key in self.ipython_hidden and key in policy.FORBIDDEN_BUILTINS:
            return self.builtin(key)  # IPython's own `open`, `exit`...: the agent gets the sandbox's answer
        reason = self.hidden_reason(key, value)
        if reason:
            raise NameNotAllowed(reason)
        if isinstance(value, types.ModuleType):
            return self.views.view(value)
        return value

    def builtin(self, key: str) -> Any:
        if key in self.builtins:
            return self.builtins[key]
        if key in policy.FORBIDDEN_BUILTINS:
            raise NameNotAllowed(f"{key}() is not available to agent code: it {policy.FORBIDDEN_BUILTINS[key]}")
        if key in self.unavailable:
            raise NameError(f"name {key!r} is not available to the agent's code: {self.unavailable[key]}")
        if key.startswith("__") or not hasattr(builtins, key):
            raise NameError(f"name {key!r} is not defined")
        return _REAL_GETATTR(builtins, key)

    def tool(self, key: str) -> ToolProxy:
        try:
            return self.tools[key]
        except KeyError:
            raise NameError(f"name {key!r} is not defined") from None

    def final_answer(self, value: Any) -> Any:
        call = self.call
        if call is None or not call.armed:
            return value
        call.set_pending("final", value)
        raise FinalAnswerException(value)

    # -- attributes -------------------------------------------------------------------------------------------------

    def is_notebook_class(self, cls: Any) -> bool:
        """A class defined in the notebook, known by identity (never by ``__module__``, which libraries can forge):
        created by agent code (registered as it is made), present in the namespace with the notebook's module name
        when the executor first saw it, or owning a function defined in the notebook."""
        if not isinstance(cls, type):
            return False
        if cls in self.notebook_classes:
            return True
        for value in _class_dict(cls).values():
            function = getattr(value, "__func__", None) if isinstance(value, (classmethod, staticmethod)) else value
            function = value.fget if isinstance(value, property) else function
            if isinstance(function, types.FunctionType) and function.__globals__ is self.ns:
                return True
        return False

    def register_class(self, cls: Any) -> Any:
        """Decorator the rewrite puts innermost on every class statement (and type_call on its result)."""
        if isinstance(cls, type):
            self.notebook_classes.add(cls)
        return cls

    def is_notebook_object(self, obj: Any, name: str | None = None) -> bool:
        """May agent code use the private attribute ``name`` of ``obj``? Yes for the notebook's own functions, and
        for objects whose classes are all the notebook's (or plain builtins); for a notebook class derived from a
        library class, only attributes its notebook part defines (the rest may be the library's internals)."""
        if isinstance(obj, types.ModuleType):
            return False
        if isinstance(obj, types.FunctionType):
            return obj.__globals__ is self.ns
        cls = obj if isinstance(obj, type) else type(obj)
        mro = _class_mro(cls)
        if all(c in _SAFE_BASES or self.is_notebook_class(c) for c in mro):
            return any(c not in _SAFE_BASES for c in mro)
        if name is None:
            return False
        for c in mro:
            if name in _class_dict(c):
                return self.is_notebook_class(c)
        return False

    def check_attribute_name(self, name: Any, obj: Any = None, *, store: bool = False) -> None:
        if not isinstance(name, str):
            return
        reason = policy.attribute_refusal(name, store=store)
        if reason:
            raise AttributeNotAllowed(reason)
        if policy.is_private(name) and not self.is_notebook_object(obj, name):
            owner = (
                f"module {obj.__name__!r}" if isinstance(obj, types.ModuleType) else f"{type(obj).__name__!r} objects"
            )
            raise AttributeNotAllowed(
                f"access to private attribute {name!r} of {owner} is not allowed "
                "(only objects defined in the notebook expose their underscore attributes)"
            )

    def private_attr(self, obj: Any, name: str) -> Any:
        self.check_attribute_name(name, obj)
        return _REAL_GETATTR(obj, name)

    def attr(self, obj: Any, name: str) -> Any:
        """Attributes in policy.RUNTIME_CHECKED_ATTRIBUTES."""
        if name in frontend.FRONTEND_ATTRIBUTES:
            reason = frontend.attribute_refusal(obj, name)
            if reason:
                raise AttributeNotAllowed(reason)
            return _REAL_GETATTR(obj, name)
        value = _REAL_GETATTR(obj, name)
        if name in ("format", "format_map"):
            return self.checked_format(value)
        return pandas_calls.checked_attribute(name, value, owner_is_pandas=_is_pandas(obj))

    def checked_format(self, value: Any) -> Any:
        """``str.format``/``format_map`` however reached (a str, a str subclass or its class, ``super()``): the
        template is checked before formatting. Anything else (an agent-defined method) is returned as is."""
        if value is _STR_FORMAT or value is _STR_FORMAT_MAP:

            def checked_unbound(template: Any, *args: Any, **kwargs: Any) -> Any:
                if isinstance(template, str):
                    self.check_format_string(str.__str__(template))
                return value(template, *args, **kwargs)

            return checked_unbound
        if type(value) is types.BuiltinMethodType and isinstance(getattr(value, "__self__", None), str):
            if value.__name__ in ("format", "format_map"):
                template = str.__str__(value.__self__)

                def checked_bound(*args: Any, **kwargs: Any) -> Any:
                    self.check_format_string(template)
                    return value(*args, **kwargs)

                return checked_bound
        return value

    def check_format_string(self, template: str, depth: int = 0) -> None:
        if depth > 2:
            return
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError:
            return  # str.format raises the same error itself
        for _literal, field, spec, _conversion in parsed:
            if field:
                try:
                    _first, rest = _string.formatter_field_name_split(field)
                    parts = list(rest)
                except ValueError:
                    parts = []
                for is_attribute, key in parts:
                    if is_attribute:
                        if key.startswith("_") or policy.attribute_refusal(key):
                            raise AttributeNotAllowed(
                                f"format string field {field!r} is not allowed: format strings cannot access "
                                f"underscore or introspection attributes ({key!r})"
                            )
            if spec:
                self.check_format_string(spec, depth + 1)

    def store_target(self, obj: Any) -> Any:
        """The object itself if agent code may set/delete its (public) attributes, else a refusing stand-in."""
        reason = frontend.store_refusal(obj)
        if reason:  # a live widget, comm or kernel object: the page is the person's
            return _ReadOnly(reason)
        if isinstance(obj, types.ModuleType):
            return _ReadOnly(f"cannot modify module {obj.__name__!r}: modules are read-only for agent code")
        if isinstance(obj, type) and not self.is_notebook_class(obj):
            return _ReadOnly(
                f"cannot modify class {obj.__name__!r}: classes not defined in the notebook are read-only for agent code"
            )
        return obj

    def private_store_target(self, obj: Any) -> Any:
        reason = frontend.store_refusal(obj)
        if reason:  # `w._esm = ...`: said as what it is, before the private-attribute rule
            return _ReadOnly(reason)
        cls = obj if isinstance(obj, type) else type(obj)
        if not (isinstance(obj, types.FunctionType) and obj.__globals__ is self.ns) and not self.is_notebook_class(cls):
            return _ReadOnly(
                f"cannot set private attributes of {type(obj).__name__!r} objects "
                "(only objects defined in the notebook expose their underscore attributes)"
            )
        return obj

    # -- guarded builtins -------------------------------------------------------------------------------------------

    def _guarded_builtins(self) -> dict[str, Any]:
        guards = self

        def getattr(obj: Any, name: str, *default: Any) -> Any:
            guards.check_attribute_name(name, obj)
            if name in policy.RUNTIME_CHECKED_ATTRIBUTES:
                value = guards.attr(obj, name)
            else:
                try:
                    value = _REAL_GETATTR(obj, name)
                except AttributeError:
                    if default:
                        return default[0]
                    raise
            return guards.filter_value(value, obj, name)

        def setattr(obj: Any, name: str, value: Any) -> None:
            guards.check_attribute_name(name, obj, store=True)
            target = guards.store_target(obj)
            builtins.setattr(target, name, value)

        def delattr(obj: Any, name: str) -> None:
            guards.check_attribute_name(name, obj, store=True)
            builtins.delattr(guards.store_target(obj), name)

        def hasattr(obj: Any, name: str) -> bool:
            guards.check_attribute_name(name, obj)
            return builtins.hasattr(obj, name)

        def pow(base: Any, exp: Any, mod: Any = None) -> Any:
            return guards.power(base, exp, mod)

        table: dict[str, Any] = {"getattr": getattr, "setattr": setattr, "delattr": delattr, "hasattr": hasattr}
        table["pow"] = pow
        if policy.is_import_authorized("io", self.authorized):
            table["open"] = self.open
        return table

    def filter_value(self, value: Any, obj: Any = None, name: str = "") -> Any:
        """Apply module views and the denied-value table to a value fetched by name at run time."""
        if isinstance(value, types.ModuleType):
            path = f"{obj.__name__}.{name}" if isinstance(obj, types.ModuleType) and name else None
            return self.views.view(value, path)
        reason = self.views.denied_reason(value)
        if reason or id(value) in _DANGEROUS_BUILTIN_IDS:
            raise AttributeNotAllowed(reason or f"{name!r} is not available to agent code")
        return self.views.wrap(value)

    def open(self, file: Any, *args: Any, **kwargs: Any) -> Any:
        self.check_path(file)
        return builtins.open(file, *args, **kwargs)

    def check_path(self, target: Any) -> None:
        if isinstance(target, bytes):
            target = os.fsdecode(target)
        if isinstance(target, os.PathLike):
            target = os.fspath(target)
        if not isinstance(target, str) or "://" in target:
            return
        resolved = os.path.realpath(os.path.expanduser(target))
        reason = policy.secret_path_refusal(resolved)
        if reason:
            raise OperationNotAllowed(reason)

    def match_class(self, cls: Any, positional: int) -> Any:
        """The class of ``case cls(p1, p2...)``: its ``__match_args__`` is read once and checked like attribute
        names, and the match sees a stand-in with that frozen tuple (a metaclass cannot answer differently later)."""
        if not isinstance(cls, type) or cls in _SELF_MATCHING:
            return cls
        try:
            names = _REAL_GETATTR(cls, "__match_args__")
        except AttributeError:
            names = None
        if names is None:
            base = next((b for b in _SELF_MATCHING if issubclass(cls, b)), None)
            return _match_stand_in(self, cls, None, base, positional)
        if type(names) is not tuple or any(type(n) is not str for n in names):
            raise TypeError(f"{cls.__name__}.__match_args__ must be a tuple of strings")
        for name in names[:positional]:
            reason = policy.attribute_refusal(name)
            if reason:
                raise AttributeNotAllowed(f"match pattern {cls.__name__}(...): {reason}")
        return _match_stand_in(self, cls, names, None, positional)

    def type_call(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 3 and isinstance(args[2], dict):
            for key in args[2]:
                if key in policy.FORBIDDEN_CLASS_DUNDERS or (isinstance(key, str) and policy.is_display_hook(key)):
                    raise AttributeNotAllowed(f"classes created by agent code cannot define {key!r}")
        return self.register_class(type(*args, **kwargs))

    def counted(self, iterator: Any) -> Any:
        """An endless iterator that counts against the operation budget even when consumed by C code (sum, list)."""
        budget = self.ns.get(self.budget_key)
        return iterator if budget is None else itertools.compress(iterator, budget)

    # -- imports ----------------------------------------------------------------------------------------------------

    def _import(self, module_name: str) -> types.ModuleType:
        if not policy.is_import_authorized(module_name, self.authorized):
            raise ImportNotAllowed(policy.import_refusal(module_name, self.authorized, self.executor_name))
        return importlib.import_module(module_name)

    def import_module(self, module_name: str, bound_name: str | None, to_namespace: bool) -> Any:
        """``import a.b.c`` (bound_name None binds the top package) / ``import a.b.c as bound_name``."""
        module = self._import(module_name)
        if bound_name is None:  # `import a.b.c` binds `a`: the way down to a.b.c, even when only a.b.c is granted
            top = module_name.split(".")[0]
            module, bound_name = sys.modules[top], top
            view = self.views.way_to(module_name)
        else:
            view = self.views.view(module, module.__name__)
        if to_namespace:
            self.aliases.__dict__[bound_name] = view
            self.alias_sources[bound_name] = module
            return module
        return view

    def import_from(self, module_name: str, attribute: str) -> Any:
        submodule = f"{module_name}.{attribute}"
        if not policy.is_import_authorized(module_name, self.authorized) and policy.is_import_authorized(
            submodule, self.authorized
        ):  # `from urllib import request` with only urllib.request granted: that submodule, nothing else of urllib
            return self.views.view(self._import(submodule), submodule)
        module = self._import(module_name)
        try:
            value = _REAL_GETATTR(module, attribute)
        except AttributeError:
            try:
                value = self._import(submodule)
            except ModuleNotFoundError:
                raise ImportError(f"cannot import name {attribute!r} from {module_name!r}") from None
        if isinstance(value, types.ModuleType):
            return self.views.view(value, f"{module_name}.{attribute}")
        reason = policy.module_attribute_refusal(module.__name__, attribute) or self.views.denied_reason(value)
        reason = reason or self.views.foreign_reason(module.__name__, value)
        if reason:
            raise ImportNotAllowed(reason)
        return self.views.wrap(value)

    def import_star(self, module_name: str) -> None:
        module = self._import(module_name)
        names = _REAL_GETATTR(module, "__all__", None)
        if names is None:
            names = [n for n in vars(module) if not n.startswith("_")]
        for key in names:
            if key.startswith("_") or key in self.tools or key in self.ns and self.hidden_reason(key, self.ns[key]):
                continue
            try:
                self.ns[key] = self.import_from(module_name, key)
            except (ImportError, AttributeError):
                continue

    # -- control ----------------------------------------------------------------------------------------------------

    def check(self) -> None:
        """Start of every ``except`` handler: a pending control exception (final answer, stop...) goes on."""
        call = self.call
        if call is not None and call.pending is not None and call.armed:
            raise call.control_exception()

    def sleep(self, seconds: float) -> None:
        call = self.call
        if call is None or not call.armed or call.thread_ident != _thread_ident():
            return time.sleep(seconds)
        if not isinstance(seconds, (int, float)):
            seconds = float(seconds)
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        if call.stop_event.wait(seconds):
            call.raise_if_pending()
        return None

    async def asyncio_sleep(self, delay: float, result: Any = None) -> Any:
        deadline = time.monotonic() + max(0.0, float(delay))
        while True:
            remaining = deadline - time.monotonic()
            call = self.call
            if call is not None:
                call.raise_if_pending()
            if remaining <= 0:
                return result
            await asyncio.sleep(min(remaining, 0.05))

    def asyncio_run(self, main: Any, *, debug: bool | None = None) -> Any:
        result = self._run_beside_the_kernel_loop(main, debug)
        self.check()  # a final answer a task swallowed (gather(return_exceptions=True)) ends the step here
        return result

    def _run_beside_the_kernel_loop(self, main: Any, debug: bool | None) -> Any:
        # In a notebook the kernel's event loop is already running in this thread; run ours beside it.
        from asyncio import events

        running = events._get_running_loop()
        events._set_running_loop(None)
        try:
            if not hasattr(asyncio, "Runner"):  # Python 3.10
                return asyncio.run(main, debug=bool(debug))
            with asyncio.Runner(debug=debug) as runner:
                loop = runner.get_loop()
                self._own_loops.add(id(loop))
                try:
                    return runner.run(main)
                finally:
                    self._own_loops.discard(id(loop))
        finally:
            events._set_running_loop(running)

    def check_own_event_loop(self, what: str, coro: Any) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or id(loop) not in self._own_loops:
            if hasattr(coro, "close"):
                coro.close()
            raise OperationNotAllowed(
                f"asyncio.{what}() is only allowed inside asyncio.run(...): tasks on another event loop would "
                "run after the code has finished"
            )


_LIVE_GUARDS: weakref.WeakSet = weakref.WeakSet()  # every executor's guards, for agent_code_running()
_CLASS_DICT = type.__dict__["__dict__"]
_CLASS_MRO = type.__dict__["__mro__"]
#: Bases whose privates are harmless (by identity): builtin types, and the abc/enum/typing scaffolding.
_SAFE_BASES = frozenset(v for v in vars(builtins).values() if isinstance(v, type)) | frozenset(
    {abc.ABC, enum.Enum, enum.IntEnum, enum.Flag, enum.IntFlag, typing.Generic, typing.Protocol}
)


def _class_dict(cls: type) -> Any:
    return _CLASS_DICT.__get__(cls)  # not through a metaclass's __getattribute__


def _class_mro(cls: type) -> tuple:
    return _CLASS_MRO.__get__(cls)


_SELF_MATCHING = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


def _match_stand_in(guards: Guards, cls: type, names: tuple | None, base: type | None, positional: int) -> type:
    class MatchClass(type):
        def __instancecheck__(self, obj: Any) -> bool:
            if not isinstance(obj, cls):
                return False
            for name in (names or ())[:positional]:
                guards.check_attribute_name(name, obj)
            return True

    namespace = {"__match_args__": names} if names is not None else {}
    return MatchClass(cls.__name__, (base,) if base is not None else (), namespace)


def _thread_ident() -> int:
    import threading

    return threading.get_ident()


def _is_pandas(obj: Any) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return any(str(_REAL_GETATTR(c, "__module__", "")).split(".")[0] == "pandas" for c in cls.__mro__)
