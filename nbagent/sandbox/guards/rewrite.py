"""Parse -> check -> rewrite: turn agent code into a guarded function that runs natively.

The module-level code becomes the body of one function (``<agent code>``) whose ``global`` statement lists every name
the code binds at module level, so those names land in the shared namespace exactly as in a notebook cell while the
sandbox's own bookkeeping (loop counters, temporaries) lives in fast locals. The value of a trailing expression is
returned, like a cell's ``Out``. Everything else is a local, semantics-preserving rewrite (see guards.py for the
table of what becomes what); the static rules refuse code before it runs, with the line number.

Names the rewrite injects all contain a dot (``_nb1.g``, ``_nb1.R``...), so agent source cannot spell them.
"""

from __future__ import annotations
import __future__

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from . import policy
from .scopes import Scope, ScopeBuilder

WRAPPER_NAME = "<agent code>"


class StaticRefusal(Exception):
    """The code was refused before running."""

    def __init__(self, message: str, node: ast.AST | None) -> None:
        super().__init__(message)
        self.message = message
        self.lineno = getattr(node, "lineno", None)


@dataclass
class RewriteContext:
    prefix: str  # injected globals are prefix + "g" (guards), "R" (budget), "M" (module aliases), ...
    protected: frozenset[str] = frozenset()  # tools and additional functions
    hidden: Mapping[str, str] = field(default_factory=dict)  # namespace names invisible to agent code -> reason
    module_names: frozenset[str] = frozenset()  # namespace names bound to granted modules
    defined: Callable[[str], bool] = lambda name: False  # visible in the namespace or a builtin
    users_code: Mapping[str, str] = field(default_factory=dict)  # the notebook's functions and classes -> "function"
    max_allocation_bytes: int | None = policy.DEFAULT_MAX_ALLOCATION_BYTES

    @property
    def localizable(self) -> frozenset[str]:
        return frozenset(name for name in self.hidden if policy.is_rebindable_underscore(name))


@dataclass
class Rewritten:
    tree: ast.Module
    flags: int
    returns_value: bool


# --- the rewrite ----------------------------------------------------------------------------------------------------

_GUARDED_BINOPS = {ast.Mult: "mul", ast.Pow: "power", ast.LShift: "lshift"}
_GUARDED_AUGOPS = {ast.Mult: "imul", ast.Pow: "ipow", ast.LShift: "ilshift"}
_SPECIAL_BUILTINS = policy.GUARDED_BUILTINS | frozenset(policy.FORBIDDEN_BUILTINS)


def _place(node: ast.AST, ref: ast.AST) -> ast.AST:
    """Give the nodes the rewrite created (those without a position) the position of ``ref``; original subtrees
    keep theirs and are not walked (cheaper than ``ast.fix_missing_locations`` on the whole tree)."""
    todo = [node]
    while todo:
        current = todo.pop()
        if "lineno" in current._attributes:
            if hasattr(current, "lineno"):
                if current is not node:
                    continue
            else:
                current.lineno = getattr(ref, "lineno", 1)
                current.col_offset = getattr(ref, "col_offset", 0)
                current.end_lineno = getattr(ref, "end_lineno", None)
                current.end_col_offset = getattr(ref, "end_col_offset", None)
        todo.extend(ast.iter_child_nodes(current))
    return node


def _is_pure(node: ast.AST) -> bool:
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _is_pure(node.value)
    if isinstance(node, ast.Subscript):
        return _is_pure(node.value) and _is_pure(node.slice)
    return False


def _number(node: ast.AST) -> int | float | complex | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, complex):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _number(node.operand)
        return -value if value is not None else None
    return None


_ANNOTATION_NODES = (
    ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Constant, ast.BinOp, ast.BitOr, ast.Slice,
    ast.UnaryOp, ast.USub, ast.expr_context,
)  # fmt: skip


class Rewriter(ast.NodeTransformer):
    def __init__(self, ctx: RewriteContext, scopes: ScopeBuilder, *, string_annotations: bool = False) -> None:
        self.ctx = ctx
        self.string_annotations = string_annotations
        self.scopes = scopes
        self.scope = scopes.root
        self.classes: list[str] = []  # enclosing class names, for private name mangling
        self.temp_counter = 0
        self.match_hoists: list[ast.stmt] = []
        root = scopes.root
        self.module_bound = root.bound
        self.module_imported_only = root.imported - root.assigned
        self.module_imported_mixed = root.imported & root.assigned

    # -- helpers ------------------------------------------------------------------------------------------------------

    def _injected(self, suffix: str) -> ast.Name:
        return ast.Name(id=self.ctx.prefix + suffix, ctx=ast.Load())

    def _guard(self, method: str, args: list[ast.expr], node: ast.AST, keywords: list | None = None) -> ast.Call:
        call = ast.Call(
            func=ast.Attribute(value=self._injected("g"), attr=method, ctx=ast.Load()),
            args=args,
            keywords=keywords or [],
        )
        return _place(call, node)

    def _tick(self, node: ast.AST) -> ast.stmt:
        call = ast.Call(func=self._injected("next"), args=[self._injected("R")], keywords=[])
        return _place(ast.Expr(value=_place(call, node)), node)

    def _counted(self, iterable: ast.expr) -> ast.expr:
        call = ast.Call(func=self._injected("compress"), args=[iterable, self._injected("R")], keywords=[])
        return _place(call, iterable)

    def _temp(self) -> str:
        self.temp_counter += 1
        return f"{self.ctx.prefix}t{self.temp_counter}"

    def _refuse(self, message: str, node: ast.AST) -> None:
        raise StaticRefusal(message, node)

    def _syntax_error(self, message: str, node: ast.AST) -> None:
        raise SyntaxError(
            message, ("<agent code>", getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1, None)
        )

    def _mangle(self, name: str) -> str:
        if not self.classes or not name.startswith("__") or name.endswith("__") or "." in name:
            return name
        owner = self.classes[-1].lstrip("_")
        return f"_{owner}{name}" if owner else name

    def _with_scope(self, node: ast.AST, visit: Callable[[], None]) -> None:
        saved = self.scope
        self.scope = self.scopes.scopes[id(node)]
        try:
            visit()
        finally:
            self.scope = saved

    def resolve(self, name: str, scope: Scope | None = None) -> str:
        """'local' if ``name`` refers to a function/class/comprehension local or closure, else 'global'."""
        scope = scope or self.scope
        if scope.kind == "module":
            return "local" if name in self.ctx.localizable and name in scope.bound else "global"
        if name in scope.globals:
            return "global"
        if name in scope.nonlocals or name in scope.bound:
            return "local"
        parent = scope.parent
        while parent is not None:
            if parent.kind == "class":
                parent = parent.parent
                continue
            if parent.kind == "module":
                return self.resolve(name, parent)
            if name in parent.globals:
                return "global"
            if name in parent.bound or name in parent.nonlocals:
                return "local"
            parent = parent.parent
        return "global"

    def _binding_scope(self, scope: Scope) -> str:
        return "global" if scope.kind == "module" else scope.kind

    def check_binding(self, name: str, node: ast.AST, scope: Scope | None = None) -> None:
        """Every binding form goes through here: tools, special and hidden names cannot be (re)bound."""
        scope = scope or self.scope
        if name in self.ctx.protected:
            self._refuse(f"{name!r} is a tool: it cannot be reassigned, shadowed or deleted; use another name", node)
        if policy.is_dunder(name):
            if scope.kind != "class" or name in policy.FORBIDDEN_CLASS_DUNDERS:
                self._refuse(f"binding the special name {name!r} is not allowed", node)
            return
        is_global = name in scope.globals or (scope.kind == "module" and name not in self.ctx.localizable)
        if scope.kind == "class" and policy.is_display_hook(name):
            self._refuse(f"classes defined by agent code cannot define the IPython display hook {name!r}", node)
        if scope.kind == "class" and not is_global:
            if name in self.ctx.hidden or name in self.ctx.module_names or name in _SPECIAL_BUILTINS:
                self._refuse(f"a class body cannot bind {name!r}; use another name", node)
            return
        if is_global and name in self.ctx.hidden and name not in self.ctx.localizable:
            self._refuse(f"cannot bind {name!r}: {self.ctx.hidden[name]}", node)
        if is_global and name in self.ctx.users_code:  # the person's next call would run the agent's code
            kind = self.ctx.users_code[name]
            self._refuse(f"cannot bind {name!r}: it is your notebook's {kind}, never replaced; use another name", node)

    # -- names --------------------------------------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> ast.expr:
        name = node.id
        if name.startswith(self.ctx.prefix):
            return node
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.check_binding(name, node)
            return node
        if policy.is_dunder(name) and name not in policy.READABLE_DUNDER_NAMES:
            self._refuse(f"access to the special name {name!r} is not allowed", node)
        if self.resolve(name) == "local":  # class-body bindings included: check_binding refused the dangerous ones
            return node
        return self._global_load(node)

    def _global_load(self, node: ast.Name) -> ast.expr:
        name, ctx = node.id, self.ctx
        if name in ctx.protected:
            return self._guard("tool", [ast.Constant(name)], node)
        if name in _SPECIAL_BUILTINS or name in ctx.hidden:
            return self._guard("name", [ast.Constant(name)], node)
        if name in self.module_bound:
            if name in ctx.module_names or name in self.module_imported_mixed:
                return self._guard("name", [ast.Constant(name)], node)
            if name in self.module_imported_only:
                return self._alias(node)
            return node
        if name in ctx.module_names:
            return self._alias(node)
        if ctx.defined(name):
            return node
        return self._guard("name", [ast.Constant(name)], node)

    def _alias(self, node: ast.Name) -> ast.expr:
        return _place(ast.Attribute(value=self._injected("M"), attr=node.id, ctx=ast.Load()), node)

    def visit_Global(self, node: ast.Global) -> ast.stmt:
        for name in node.names:
            if name in self.ctx.protected or name in self.ctx.hidden or policy.is_dunder(name):
                self._refuse(f"'global {name}' is not allowed", node)
        return node

    def visit_Nonlocal(self, node: ast.Nonlocal) -> ast.stmt:
        if self.scope.kind == "module":
            self._syntax_error("nonlocal declaration not allowed at module level", node)
        for name in node.names:
            if name in self.ctx.protected:
                self._refuse(f"'nonlocal {name}' is not allowed", node)
        return node

    # -- attributes ---------------------------------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        attr = self._mangle(node.attr)
        storing = isinstance(node.ctx, (ast.Store, ast.Del))
        reason = policy.attribute_refusal(attr, store=storing)
        if reason:
            self._refuse(reason, node)
        node.value = self.visit(node.value)
        if storing:
            target = "private_store_target" if policy.is_private(attr) else "store_target"
            node.value = self._guard(target, [node.value], node)
            node.attr = attr
            return node
        if policy.is_private(attr):
            return self._guard("private_attr", [node.value, ast.Constant(attr)], node)
        if attr in policy.RUNTIME_CHECKED_ATTRIBUTES:
            return self._guard("attr", [node.value, ast.Constant(attr)], node)
        node.attr = attr
        return node

    def _pattern_expr(self, expr: ast.expr) -> ast.expr:
        """Names and dotted names inside patterns must stay names and attribute chains (Python's grammar)."""
        if isinstance(expr, ast.Attribute):
            reason = policy.attribute_refusal(expr.attr) or (
                f"access to attribute {expr.attr!r} is not allowed in a pattern"
                if expr.attr.startswith("_") or expr.attr in policy.RUNTIME_CHECKED_ATTRIBUTES
                else None
            )
            if reason:
                self._refuse(reason, expr)
            expr.value = self._pattern_expr(expr.value)
            return expr
        if isinstance(expr, ast.Name):
            if self.resolve(expr.id) == "local":
                return expr
            loaded = self._global_load(expr) if not policy.is_dunder(expr.id) else None
            if isinstance(loaded, (ast.Name, ast.Attribute)):
                return loaded
            if loaded is not None and expr.id not in self.ctx.protected and expr.id not in _SPECIAL_BUILTINS:
                if expr.id not in self.ctx.hidden:
                    return expr  # a global defined later: looked up by Python itself
            self._refuse(f"{expr.id!r} cannot be used in a pattern", expr)
        return self.visit(expr)

    def visit_MatchValue(self, node: ast.MatchValue) -> ast.pattern:
        node.value = self._pattern_expr(node.value)
        return node

    def visit_MatchClass(self, node: ast.MatchClass) -> ast.pattern:
        for attr in node.kwd_attrs:
            reason = policy.attribute_refusal(attr) or (
                f"matching private attribute {attr!r} is not allowed" if attr.startswith("_") else None
            )
            if reason:
                self._refuse(reason, node)
        node.cls = self._pattern_expr(node.cls)
        if node.patterns:  # positional sub-patterns read the attributes named by __match_args__: checked first
            temp = self._temp()
            check = self._guard("match_class", [node.cls, ast.Constant(len(node.patterns))], node)
            self.match_hoists.append(
                _place(ast.Assign(targets=[ast.Name(id=temp, ctx=ast.Store())], value=check), node)
            )
            node.cls = _place(ast.Name(id=temp, ctx=ast.Load()), node.cls)
        node.patterns = [self.visit(p) for p in node.patterns]
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        return node

    def visit_Match(self, node: ast.Match) -> ast.stmt | list[ast.stmt]:
        """Classes of positional class patterns are looked up (and checked) just before the match statement."""
        saved, self.match_hoists = self.match_hoists, []
        try:
            self.generic_visit(node)
            hoists = self.match_hoists
        finally:
            self.match_hoists = saved
        return [*hoists, node] if hoists else node

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.pattern:
        if node.name:
            self.check_binding(node.name, node)
        self.generic_visit(node)
        return node

    def visit_MatchStar(self, node: ast.MatchStar) -> ast.pattern:
        if node.name:
            self.check_binding(node.name, node)
        return node

    def visit_MatchMapping(self, node: ast.MatchMapping) -> ast.pattern:
        if node.rest:
            self.check_binding(node.rest, node)
        node.keys = [self._pattern_expr(k) for k in node.keys]
        node.patterns = [self.visit(p) for p in node.patterns]
        return node

    # -- operators ----------------------------------------------------------------------------------------------------

    def _binop_is_safe(self, node: ast.BinOp) -> bool:
        left, right, op = node.left, node.right, node.op
        if isinstance(op, ast.Mult):
            if ast.dump(left) == ast.dump(right) and _is_pure(left):
                return True
            if any(isinstance(_number(side), (float, complex)) for side in (left, right)):
                return True
            a, b = _number(left), _number(right)
            return a is not None and b is not None
        if isinstance(op, ast.Pow):
            exponent, base = _number(right), _number(left)
            if isinstance(exponent, (float, complex)) or isinstance(base, (float, complex)):
                return True
            if isinstance(exponent, int) and exponent <= 4:
                return True
            if isinstance(exponent, int) and isinstance(base, int):
                return abs(base).bit_length() * exponent <= policy.MAX_INT_BITS
            return False
        shift = _number(right)
        return isinstance(shift, int) and shift <= 64

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        safe = type(node.op) in _GUARDED_BINOPS and self._binop_is_safe(node)
        self.generic_visit(node)
        method = _GUARDED_BINOPS.get(type(node.op))
        if method is None or safe:
            return node
        return self._guard(method, [node.left, node.right], node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt | list[ast.stmt]:
        method = _GUARDED_AUGOPS.get(type(node.op))
        if method is None:
            self.generic_visit(node)
            return node
        target, value = node.target, self.visit(node.value)
        if isinstance(target, ast.Name):
            self.check_binding(target.id, target)
            load = self.visit(_place(ast.Name(id=target.id, ctx=ast.Load()), target))
            new = ast.Assign(targets=[target], value=self._guard(method, [load, value], node))
            return _place(new, node)
        temps: list[str] = []
        statements: list[ast.stmt] = []

        def hold(expr: ast.expr) -> ast.Name:
            name = self._temp()
            temps.append(name)
            statements.append(_place(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=expr), node))
            return ast.Name(id=name, ctx=ast.Load())

        if isinstance(target, ast.Attribute):
            owner = hold(self.visit(target.value))
            load = ast.Attribute(value=owner, attr=target.attr, ctx=ast.Load())
            store = ast.Attribute(value=ast.Name(id=owner.id, ctx=ast.Load()), attr=target.attr, ctx=ast.Store())
        else:
            assert isinstance(target, ast.Subscript)
            owner = hold(self.visit(target.value))
            index = hold(self.visit(target.slice))
            load = ast.Subscript(value=owner, slice=index, ctx=ast.Load())
            store = ast.Subscript(
                value=ast.Name(id=owner.id, ctx=ast.Load()),
                slice=ast.Name(id=index.id, ctx=ast.Load()),
                ctx=ast.Store(),
            )
        load = self.visit(_place(load, target))
        store = self.visit(_place(store, target))
        statements.append(_place(ast.Assign(targets=[store], value=self._guard(method, [load, value], node)), node))
        if self.scope.kind == "class":
            statements.append(_place(ast.Delete(targets=[ast.Name(id=t, ctx=ast.Del()) for t in temps]), node))
        return statements

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id == "type"
            and not (len(node.args) == 1 and not node.keywords)
            and self.resolve("type") == "global"
            and "type" not in self.module_bound
            and not self.ctx.defined("type__shadowed")
        ):
            return self._guard("type_call", node.args, node, node.keywords)
        return node

    # -- statements ---------------------------------------------------------------------------------------------------

    def _check_top_level(self, node: ast.AST, what: str) -> None:
        if self.scope.kind == "module":
            self._syntax_error(f"'{what}' outside function", node)

    def visit_Return(self, node: ast.Return) -> ast.stmt:
        self._check_top_level(node, "return")
        self.generic_visit(node)
        return node

    def visit_Yield(self, node: ast.Yield) -> ast.expr:
        self._check_top_level(node, "yield")
        self.generic_visit(node)
        return node

    def visit_YieldFrom(self, node: ast.YieldFrom) -> ast.expr:
        self._check_top_level(node, "yield")
        self.generic_visit(node)
        return node

    def visit_Await(self, node: ast.Await) -> ast.expr:
        self._check_top_level(node, "await")
        self.generic_visit(node)
        return node

    def _function_body(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        body = [self.visit(stmt) for stmt in node.body]
        node.body = _flatten(body)
        if any(isinstance(n, ast.Call) for stmt in node.body for n in ast.walk(stmt)):
            docstring = (
                1
                if node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
                and isinstance(node.body[0].value.value, str)
                else 0
            )
            node.body.insert(docstring, self._tick(node))

    def _parameters(self, args: ast.arguments, node: ast.AST, scope: Scope) -> None:
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                self.check_binding(arg.arg, node, scope)
                if arg.annotation is not None:
                    arg.annotation = self._annotation(arg.annotation)

    def _annotation(self, expr: ast.expr) -> ast.expr:
        """Annotations kept as strings are evaluated later by libraries (typing.get_type_hints) with plain eval, so
        they may only contain type-like expressions; evaluated annotations are rewritten like any code."""
        if self.string_annotations:
            self._check_type_expression(expr)
            return expr
        for node in ast.walk(expr):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                self._check_type_expression(node)
        return self.visit(expr)

    def _check_type_expression(self, expr: ast.expr) -> None:
        for node in ast.walk(expr):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:
                    parsed = ast.parse(node.value.strip(), mode="eval")
                except SyntaxError:
                    continue
                self._check_type_expression(parsed.body)
            elif not isinstance(node, _ANNOTATION_NODES) or (
                isinstance(node, ast.BinOp) and not isinstance(node.op, ast.BitOr)
            ):
                self._refuse(
                    "annotations evaluated as strings may only contain names, attributes, subscripts, literals and |",
                    expr,
                )
            elif isinstance(node, ast.Name) and policy.is_dunder(node.id):
                self._refuse(f"access to the special name {node.id!r} is not allowed", expr)
            elif isinstance(node, ast.Attribute) and (policy.attribute_refusal(node.attr) or node.attr.startswith("_")):
                self._refuse(f"access to attribute {node.attr!r} is not allowed in an annotation", expr)

    def _defaults(self, args: ast.arguments) -> None:
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [self.visit(d) if d is not None else None for d in args.kw_defaults]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt:
        self.check_binding(node.name, node)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self._defaults(node.args)
        inner = self.scopes.scopes[id(node)]
        self._parameters(node.args, node, inner)
        if node.returns is not None:
            node.returns = self._annotation(node.returns)
        self._with_scope(node, lambda: self._function_body(node))
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.expr:
        self._defaults(node.args)
        self._parameters(node.args, node, self.scopes.scopes[id(node)])

        def body() -> None:
            node.body = self.visit(node.body)

        self._with_scope(node, body)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.stmt:
        self.check_binding(node.name, node)
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        register = ast.Attribute(value=self._injected("g"), attr="register_class", ctx=ast.Load())
        node.decorator_list.append(_place(register, node))  # innermost: receives the class as created

        def body() -> None:
            self.classes.append(node.name)
            try:
                node.body = _flatten([self.visit(stmt) for stmt in node.body])
            finally:
                self.classes.pop()

        self._with_scope(node, body)
        return node

    def _comprehension(self, node: ast.AST, results: list[str]) -> ast.expr:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        first = self.visit(generators[0].iter)

        def body() -> None:
            for index, generator in enumerate(generators):
                generator.target = self.visit(generator.target)
                if index:
                    generator.iter = self.visit(generator.iter)
                generator.ifs = [self.visit(c) for c in generator.ifs]
                if index and not generator.is_async:
                    generator.iter = self._counted(generator.iter)
            for result in results:
                setattr(node, result, self.visit(getattr(node, result)))

        self._with_scope(node, body)
        generators[0].iter = first if generators[0].is_async else self._counted(first)
        return node

    def visit_ListComp(self, node: ast.ListComp) -> ast.expr:
        return self._comprehension(node, ["elt"])

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> ast.expr:
        return self._comprehension(node, ["key", "value"])

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.expr:
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        self.check_binding(node.target.id, node, scope)
        node.value = self.visit(node.value)
        return node

    def visit_For(self, node: ast.For) -> ast.stmt:
        self.generic_visit(node)
        if self.scope.kind == "class":
            node.body.insert(0, self._tick(node))
        else:
            node.iter = self._counted(node.iter)
        return node

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.stmt:
        self.generic_visit(node)
        node.body.insert(0, self._tick(node))
        return node

    def visit_While(self, node: ast.While) -> ast.stmt:
        self.generic_visit(node)
        node.body.insert(0, self._tick(node))
        return node

    def _handlers(self, node: ast.Try) -> ast.stmt:
        for handler in node.handlers:
            if handler.name:
                self.check_binding(handler.name, handler)
        self.generic_visit(node)
        for handler in node.handlers:
            handler.body.insert(0, self._check(handler))
        if node.finalbody:
            # A final answer (or a stop) raised in the try body must not be swallowed by its ``finally``: a
            # ``return``/``break``/``continue``/``raise`` there, or its end, first re-raises the pending one.
            node.finalbody = [*_checked_exits(node.finalbody, self._check), self._check(node.finalbody[-1])]
        return node

    visit_Try = _handlers
    visit_TryStar = _handlers

    def _check(self, node: ast.AST) -> ast.stmt:
        return _place(ast.Expr(value=self._guard("check", [], node)), node)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> list[ast.stmt]:
        """An ``__exit__`` that returns True swallows the final answer too: the code after the block re-raises it."""
        self.generic_visit(node)
        return [node, self._check(node)]

    visit_AsyncWith = visit_With

    def visit_Import(self, node: ast.Import) -> list[ast.stmt]:
        statements = []
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            self.check_binding(bound, node)
            to_namespace = self.resolve(bound) == "global" and self.scope.kind != "class"
            value = self._guard(
                "import_module",
                [ast.Constant(alias.name), ast.Constant(alias.asname), ast.Constant(to_namespace)],
                node,
            )
            statements.append(_place(ast.Assign(targets=[ast.Name(id=bound, ctx=ast.Store())], value=value), node))
        return statements

    def visit_ImportFrom(self, node: ast.ImportFrom) -> list[ast.stmt]:
        if node.level:
            self._refuse("relative imports are not allowed", node)
        module = node.module or ""
        if module == "__future__":
            self._syntax_error("from __future__ imports must occur at the beginning of the file", node)
        if any(alias.name == "*" for alias in node.names):
            if self.scope.kind != "module":
                self._syntax_error("import * only allowed at module level", node)
            return [_place(ast.Expr(value=self._guard("import_star", [ast.Constant(module)], node)), node)]
        statements = []
        for alias in node.names:
            if alias.name.startswith("_"):
                self._refuse(f"importing the private name {alias.name!r} is not allowed", node)
            bound = alias.asname or alias.name
            self.check_binding(bound, node)
            value = self._guard("import_from", [ast.Constant(module), ast.Constant(alias.name)], node)
            statements.append(_place(ast.Assign(targets=[ast.Name(id=bound, ctx=ast.Store())], value=value), node))
        return statements

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        if self.scope.kind != "module":
            node.target = self.visit(node.target)
            node.annotation = self._annotation(node.annotation)
            if node.value is not None:
                node.value = self.visit(node.value)
            return node
        self._annotation(node.annotation)  # checked, then dropped
        # Module-level names are declared `global` in the wrapper, where annotations are not allowed.
        if node.value is None:
            return _place(ast.Pass(), node)
        assign = _place(ast.Assign(targets=[node.target], value=node.value), node)
        return self.visit(assign)


_EXITS = (ast.Return, ast.Break, ast.Continue, ast.Raise)
_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _checked_exits(statements: list[ast.stmt], check: Callable[[ast.AST], ast.stmt]) -> list[ast.stmt]:
    """``statements`` with ``check`` before every statement that leaves them early, at any depth (not inside nested
    functions or classes, whose exits are their own)."""
    out: list[ast.stmt] = []
    for statement in statements:
        if isinstance(statement, _EXITS):
            out.append(check(statement))
        elif not isinstance(statement, _OWN_SCOPES):
            for name in ("body", "orelse", "finalbody"):
                block = getattr(statement, name, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    setattr(statement, name, _checked_exits(block, check))
            for part in [*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())]:
                part.body = _checked_exits(part.body, check)
        out.append(statement)
    return out


def _flatten(items: list) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        elif item is not None:
            out.append(item)
    return out


def _future_flags(tree: ast.Module) -> int:
    flags, index = 0, 0
    body = tree.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        index = 1
    while index < len(body) and isinstance(body[index], ast.ImportFrom) and body[index].module == "__future__":
        for alias in body[index].names:
            feature = getattr(__future__, alias.name, None)
            if not isinstance(feature, __future__._Feature):
                raise SyntaxError(
                    f"future feature {alias.name} is not defined", ("<agent code>", body[index].lineno, 1, None)
                )
            flags |= feature.compiler_flag
        del body[index]
    return flags


def rewrite(tree: ast.Module, ctx: RewriteContext) -> Rewritten:
    """Check and rewrite a parsed module in place; raises StaticRefusal or SyntaxError."""
    flags = _future_flags(tree)
    scopes = ScopeBuilder()
    scopes.build(tree)
    rewriter = Rewriter(ctx, scopes, string_annotations=bool(flags & __future__.annotations.compiler_flag))
    original_last = tree.body[-1] if tree.body else None
    body = _flatten([rewriter.visit(stmt) for stmt in tree.body])
    returns_value = isinstance(original_last, ast.Expr)
    if returns_value:
        last = body[-1]
        assert isinstance(last, ast.Expr)
        body[-1] = _place(ast.Return(value=last.value), last)
    global_names = sorted(scopes.root.bound - ctx.localizable)
    if global_names:
        body.insert(0, _place(ast.Global(names=global_names), body[0]))
    wrapper = ast.FunctionDef(
        name=WRAPPER_NAME,
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        ),
        body=body or [ast.Pass()],
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    module = ast.Module(body=[wrapper], type_ignores=[])
    _place(wrapper, tree.body[0] if tree.body else ast.Pass(lineno=1, col_offset=0))
    return Rewritten(tree=module, flags=flags, returns_value=returns_value)
