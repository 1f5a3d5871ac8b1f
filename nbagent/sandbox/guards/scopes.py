"""Scope analysis for the rewrite: which names each scope binds, and how (mirrors CPython's symbol table rules).

The rewrite needs to know whether a name refers to a local (left alone) or to the shared namespace (where the policy
may have to look at it), and which names the module level binds (they are declared ``global`` in the wrapper).
"""

from __future__ import annotations

import ast


class Scope:
    def __init__(self, kind: str, parent: Scope | None) -> None:
        self.kind = kind  # "module", "function", "class", "comprehension"
        self.parent = parent
        self.bound: set[str] = set()
        self.imported: set[str] = set()  # bound by `import x` (not `from x import y`)
        self.assigned: set[str] = set()  # bound by any other form
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()


class ScopeBuilder(ast.NodeVisitor):
    """Records, per scope, which names are bound and how (mirrors CPython's symbol table rules)."""

    def __init__(self) -> None:
        self.scopes: dict[int, Scope] = {}
        self.root = Scope("module", None)
        self.current = self.root

    def build(self, tree: ast.Module) -> None:
        self.scopes[id(tree)] = self.root
        for stmt in tree.body:
            self.visit(stmt)
        for scope in self.scopes.values():  # names bound elsewhere under a `global` declaration are module names
            for name in scope.globals & scope.bound:
                self.root.bound.add(name)
                (self.root.imported if name in scope.imported else self.root.assigned).add(name)

    def bind(self, name: str, *, imported: bool = False, scope: Scope | None = None) -> None:
        scope = scope or self.current
        scope.bound.add(name)
        (scope.imported if imported else scope.assigned).add(name)

    def _enter(self, node: ast.AST, kind: str) -> Scope:
        scope = Scope(kind, self.current)
        self.scopes[id(node)] = scope
        self.current = scope
        return scope

    def _exit(self) -> None:
        assert self.current.parent is not None
        self.current = self.current.parent

    def _arguments_outside(self, args: ast.arguments) -> None:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)

    def _annotations(self, args: ast.arguments) -> None:
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.visit(arg.annotation)

    def _bind_parameters(self, args: ast.arguments) -> None:
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                self.bind(arg.arg)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.bind(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._arguments_outside(node.args)
        self._annotations(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self._enter(node, "function")
        self._bind_parameters(node.args)
        for stmt in node.body:
            self.visit(stmt)
        self._exit()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._arguments_outside(node.args)
        self._enter(node, "function")
        self._bind_parameters(node.args)
        self.visit(node.body)
        self._exit()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bind(node.name)
        for expr in [*node.bases, *(k.value for k in node.keywords), *node.decorator_list]:
            self.visit(expr)
        self._enter(node, "class")
        for stmt in node.body:
            self.visit(stmt)
        self._exit()

    def _comprehension(self, node: ast.AST, generators: list[ast.comprehension], results: list[ast.AST]) -> None:
        self.visit(generators[0].iter)
        self._enter(node, "comprehension")
        for index, generator in enumerate(generators):
            self.visit(generator.target)
            if index:
                self.visit(generator.iter)
            for condition in generator.ifs:
                self.visit(condition)
        for result in results:
            self.visit(result)
        self._exit()

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, node.generators, [node.elt])

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, node.generators, [node.key, node.value])

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.current
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        if isinstance(node.target, ast.Name):
            self.bind(node.target.id, scope=scope)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.bind(node.id)

    def visit_Global(self, node: ast.Global) -> None:
        self.current.globals.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.current.nonlocals.update(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bind(alias.asname or alias.name.split(".")[0], imported=True)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name != "*":
                self.bind(alias.asname or alias.name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.bind(node.rest)
        self.generic_visit(node)
