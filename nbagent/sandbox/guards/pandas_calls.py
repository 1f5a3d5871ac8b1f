"""pandas' string dispatch and expression language, checked.

pandas turns strings into code in two ways: its dispatching methods (``agg``/``aggregate``/``apply``/``transform``
of frames, series, group-bys, windows and resamplers; ``pivot_table``/``crosstab``'s ``aggfunc``) look a string up as
an attribute of the object (``df.agg("eval", 0, "@x")`` calls ``df.eval``, and ``"_mgr"``, ``"to_pickle"`` or a numpy
function work the same way), and ``eval``/``query`` evaluate an expression language with attribute access, calls and
the caller's variables (``@name``). The guards therefore hand agent code checked versions of those methods:

* a function named by a string must be a plain reduction or transform of :data:`policy.PANDAS_STRING_FUNCTIONS`,
  wherever the string sits (a list, a dict of columns, a named aggregation ``t=("col", "sum")``);
* ``eval`` is refused; ``query`` accepts comparisons of columns and literals joined by ``and``/``or``/``&``/``|``,
  ``in``, arithmetic, and a few accessor calls (``name.str.contains('x')``), never ``@`` names; it runs without the
  caller's namespace (empty ``local_dict``/``global_dict``);
* ``DataFrame.style`` (the Styler: ``str.format`` templates and jinja2 rendering) is refused, and so are string
  ``formatters`` of ``to_latex`` (pandas applies them with ``str.format`` to every cell: ``{0.__globals__}``);
* a plotting backend named by a string (``df.plot(backend="x")``, ``pd.set_option("plotting.backend", "x")``,
  ``pd.options.plotting.backend = "x"``...) is imported by pandas as any module: while agent code runs, pandas may
  load only its own matplotlib backend. This one is enforced where pandas loads a backend (``_load_backend``, which
  every spelling reaches), wrapped once; outside agent code it behaves as before.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from collections.abc import Callable
from typing import Any

from ..errors import AttributeNotAllowed, OperationNotAllowed
from . import policy

#: Names of the pandas methods whose function argument may be a string looked up on the object.
DISPATCHING_METHODS: frozenset[str] = frozenset({"agg", "aggregate", "apply", "transform", "pivot_table", "crosstab"})
#: The parameters of those methods that hold the function (or a list/dict of functions).
_FUNCTION_PARAMETERS = ("func", "aggfunc", "arg")
_MAX_FUNCTIONS = 10_000  # a list or dict of functions longer than this is refused rather than walked
_signatures: dict[Any, inspect.Signature | None] = {}


def is_pandas_callable(value: Any) -> bool:
    """A function or method defined by pandas (bound, unbound, or reached through ``super()``)."""
    function = getattr(value, "__func__", value)
    module = getattr(function, "__module__", None)
    return callable(value) and isinstance(module, str) and module.split(".")[0] == "pandas"


def _is_styler(value: Any) -> bool:
    return any(str(getattr(c, "__module__", "")).startswith("pandas.io.formats.style") for c in type(value).__mro__)


def checked_attribute(name: str, value: Any, *, owner_is_pandas: bool = False) -> Any:
    """What agent code receives for ``obj.<name>`` (a name of policy.RUNTIME_CHECKED_ATTRIBUTES) when it is pandas'
    (the owner is a pandas object, or the value a pandas function): a checked wrapper, or a refusal."""
    if name == "style" and (owner_is_pandas or _is_styler(value)):  # DataFrame.style.fget(df) too
        raise AttributeNotAllowed(
            "pandas' DataFrame.style (the Styler) is not available to agent code: it renders format strings and "
            "templates outside the sandbox; round with df.round(2) or format a column with df['c'].map('{:.2f}'.format)"
        )
    if not (owner_is_pandas and callable(value)) and not is_pandas_callable(value):
        return value
    if name == "eval":
        raise AttributeNotAllowed(
            "pandas' eval() is not available to agent code: its expressions can call functions and reach the "
            "caller's namespace; compute with columns instead, e.g. df['c'] = df['a'] + df['b']"
        )
    if name == "query":
        return _checked_query(value)
    if name in DISPATCHING_METHODS:
        return checked_dispatch(name, value)
    if name == "to_latex":
        return _checked_to_latex(value)
    return value


def _checked_to_latex(original: Callable) -> Callable:
    def to_latex(*args: Any, **kwargs: Any) -> Any:
        formatters = kwargs.get("formatters")
        values = list(formatters.values()) if isinstance(formatters, dict) else formatters
        if isinstance(values, str) or any(isinstance(v, str) for v in _list_items(values) or ()):
            raise OperationNotAllowed(
                "to_latex(formatters=) with a string is not allowed: pandas applies it with str.format to every cell; "
                "pass a function, e.g. formatters={'a': '{:.2f}'.format}"
            )
        return original(*args, **kwargs)

    to_latex.__name__ = to_latex.__qualname__ = "to_latex"
    to_latex.__doc__ = getattr(original, "__doc__", None)
    return to_latex


# --- the dispatching methods ----------------------------------------------------------------------------------------


def _signature(function: Any) -> inspect.Signature | None:
    """The signature of the function itself (with ``self`` for a method), cached."""
    try:
        return _signatures[function]
    except (KeyError, TypeError):
        pass
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        signature = None
    try:
        _signatures[function] = signature
    except TypeError:
        pass
    return signature


def checked_dispatch(name: str, original: Callable) -> Callable:
    """``original`` (a pandas ``agg``/``apply``/... or ``pivot_table``) refusing string names outside the allow-list."""

    def checked(*args: Any, **kwargs: Any) -> Any:
        check_dispatch_arguments(name, original, args, kwargs)
        return original(*args, **kwargs)

    for attribute in ("__name__", "__qualname__", "__doc__"):
        setattr(checked, attribute, getattr(original, attribute, None))
    return checked


def check_dispatch_arguments(name: str, original: Callable, args: tuple, kwargs: dict) -> None:
    function = getattr(original, "__func__", None)
    if function is not None:  # a bound method: its signature with self
        original, args = function, (getattr(original, "__self__", None), *args)
    signature = _signature(original)
    if signature is None:  # no signature: every argument counts as a function argument
        for value in (*args, *kwargs.values()):
            check_function_spec(name, value)
        return
    try:
        bound = signature.bind_partial(*args, **kwargs).arguments
    except TypeError:
        return  # pandas raises its own TypeError for these arguments
    for parameter, value in bound.items():
        if parameter in _FUNCTION_PARAMETERS:
            check_function_spec(name, value)
        elif signature.parameters[parameter].kind is inspect.Parameter.VAR_KEYWORD:
            for relabel in value.values():  # named aggregation: total=("column", "sum") or pd.NamedAgg(...)
                if isinstance(relabel, tuple) and len(relabel) == 2:
                    check_function_spec(name, relabel[1])
                else:
                    check_function_spec(name, _named_aggregation(relabel))


def check_function_spec(method: str, spec: Any, depth: int = 0) -> None:
    """A function argument of a dispatching method: a string must be allow-listed, wherever it is nested."""
    if isinstance(spec, str):
        text = str.__str__(spec)  # the characters pandas will look up, whatever a str subclass claims
        if text not in policy.PANDAS_STRING_FUNCTIONS:
            raise OperationNotAllowed(policy.pandas_dispatch_refusal(method, text))
        return
    named = _named_aggregation(spec)
    if named is not None:
        return check_function_spec(method, named, depth + 1)
    if depth > 3 or callable(spec) or spec is None:
        return
    values = _dict_values(spec)
    if values is None:
        values = _list_items(spec)
    if values is None:
        return
    if len(values) > _MAX_FUNCTIONS:
        raise OperationNotAllowed(f"pandas' {method}() with more than {_MAX_FUNCTIONS:,} functions is not allowed")
    for value in values:
        check_function_spec(method, value, depth + 1)


def _named_aggregation(spec: Any) -> Any:
    """The function of a ``pd.NamedAgg`` (a plain class since pandas 3, a namedtuple before), else None."""
    if type(spec).__name__ != "NamedAgg" or str(type(spec).__module__).split(".")[0] != "pandas":
        return None
    return getattr(spec, "aggfunc", None)


def _dict_values(spec: Any) -> list | None:
    if isinstance(spec, dict):
        return list(spec.values())
    keys = getattr(type(spec), "keys", None)
    if keys is None or not hasattr(type(spec), "__getitem__"):
        return None
    try:
        return [spec[key] for key in spec.keys()]  # a Series of function names is dict-like to pandas
    except Exception:
        return None


def _list_items(spec: Any) -> list | None:
    if isinstance(spec, (list, tuple, set, frozenset)):
        return list(spec)
    if type(spec).__module__.split(".")[0] in ("numpy", "pandas") and hasattr(spec, "__iter__"):
        try:
            return list(spec)
        except Exception:
            return None
    return None


# --- plotting backends --------------------------------------------------------------------------------------------


def guard_plot_backends(agent_code_running: Callable[[], bool]) -> None:
    """Wrap pandas' backend loader (once per process): no backend but matplotlib while agent code runs."""
    core = sys.modules.get("pandas.plotting._core")
    original = getattr(core, "_load_backend", None)
    if original is None or getattr(original, "nbagent_checked", False):
        return

    def _load_backend(backend: str) -> Any:
        if backend != "matplotlib" and agent_code_running():
            raise OperationNotAllowed(
                f"the pandas plotting backend {backend!r} is not allowed: pandas would import it as a module; "
                "agent code plots with the default matplotlib backend"
            )
        return original(backend)

    _load_backend.nbagent_checked = True  # type: ignore[attr-defined]
    core._load_backend = _load_backend  # type: ignore[union-attr]


# --- query ----------------------------------------------------------------------------------------------------------

#: A backticked column name. Without quotes inside, a span is wholly inside one string literal or wholly outside
#: them, so the expression checked here has the structure pandas parses (pandas splits backticks around strings).
_BACKTICKED = re.compile(r"`[^`'\"]*`")
_ALLOWED_QUERY_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Name, ast.Constant,
    ast.List, ast.Tuple, ast.Load, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.BitAnd, ast.BitOr,
    ast.BitXor, ast.Not, ast.USub, ast.UAdd, ast.Invert, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In,
    ast.NotIn, ast.Is, ast.IsNot, ast.Attribute, ast.Call, ast.keyword,
)  # fmt: skip
_QUERY_HINT = (
    "a query may compare columns and literals (and, or, &, |, in, arithmetic) and call "
    "column.str.contains/startswith/endswith/..., column.isin([...]) or column.between(a, b); "
    "use boolean indexing for anything else, e.g. df[df['a'] > threshold]"
)


def _checked_query(original: Callable) -> Callable:
    def query(*args: Any, **kwargs: Any) -> Any:
        frame_args, expr = _split_query_arguments(original, args, kwargs)
        unknown = set(kwargs) - {"inplace"}
        if unknown:
            raise OperationNotAllowed(
                f"pandas' query() accepts only the expression and inplace= in agent code, not {sorted(unknown)}"
            )
        check_query_expression(expr)
        return original(*frame_args, expr, local_dict={}, global_dict={}, **kwargs)

    query.__name__ = query.__qualname__ = "query"
    query.__doc__ = getattr(original, "__doc__", None)
    return query


def _split_query_arguments(original: Callable, args: tuple, kwargs: dict) -> tuple[tuple, Any]:
    """(the frame, for the unbound ``DataFrame.query(df, ...)``) and the expression."""
    bound = getattr(original, "__self__", None) is not None
    frame_args, rest = (args[:0], args) if bound else (args[:1], args[1:])
    if "expr" in kwargs:
        if rest:
            raise TypeError("query() got multiple values for argument 'expr'")
        return frame_args, kwargs.pop("expr")
    if len(rest) != 1:
        raise TypeError("query() takes the expression as its one positional argument")
    return frame_args, rest[0]


def check_query_expression(expr: Any) -> None:
    """Refuse a query expression outside the safe subset (see the module docstring)."""
    if not isinstance(expr, str):
        raise TypeError(f"expr must be a string to be evaluated, {type(expr).__name__} given")
    text = str.__str__(expr)
    try:
        tree = ast.parse(_BACKTICKED.sub("_column", text).strip(), mode="eval")  # a stray backtick: SyntaxError
    except SyntaxError:
        raise OperationNotAllowed(f"pandas' query({text!r}) is not allowed: {_QUERY_HINT}") from None
    for node in ast.walk(tree):
        reason = _query_node_refusal(node)
        if reason:
            raise OperationNotAllowed(f"pandas' query({text!r}) is not allowed: {reason}; {_QUERY_HINT}")


def _query_node_refusal(node: ast.AST) -> str | None:
    if not isinstance(node, _ALLOWED_QUERY_NODES):
        return f"{type(node).__name__} is not part of the query language agent code may use"
    if isinstance(node, ast.Name) and node.id.startswith("__"):
        return f"the name {node.id!r} is not allowed"
    if isinstance(node, ast.Attribute) and node.attr not in policy.PANDAS_QUERY_ATTRIBUTES:
        return f"the attribute .{node.attr} is not allowed"
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Attribute) or node.func.attr not in policy.PANDAS_QUERY_METHODS:
            return "only the methods " + ", ".join(sorted(policy.PANDAS_QUERY_METHODS)) + " may be called"
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if any(not _is_literal(a) for a in arguments):
            return "method arguments must be literals"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        if any(
            isinstance(side, ast.Constant) and isinstance(side.value, (str, bytes)) for side in (node.left, node.right)
        ):
            return "repeating a string is not allowed"
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and len(node.value) > 10_000:
        return "literals longer than 10,000 characters are not allowed"
    return None


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _is_literal(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal(e) for e in node.elts)
    return False
