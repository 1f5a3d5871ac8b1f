"""The answer's own code, run on the task's frames cleaned first: a whole program a refusal can offer.

Told two or three things at once about untidy data (count each order once; the amounts are text; 'North' is also
written ' NORTH'), the 1.5B model fixes one and loses another: the messy run fixed the labels, then lost that fix
while dropping the repeats, and ran out of steps. The cleaning is mechanical, so it is written for it: one line makes
`<frame>_clean` from the frame — its repeated rows dropped when the question counts each once, each column the code
reads that holds numbers as text read as numbers (dates too, where the code reads dates or the question asks by
day, month or year), each column of labels
written several ways read as a person reads them (blank labels as gaps) — and the code that led to the answer
follows, reading `<frame>_clean` where it read the frame. Lines that changed a column the frame has, or its rows, in
place are left out (done already, or done by the cleaning); a new column the code makes is made on the cleaned
frame; a string the code compares a cleaned label column with is written as the cleaned labels are. Nothing is run
here: the next step runs the program without a model call (`offer_in_place`; the model answers what that run
said), and the answer checks read its answer as any other (`offer_taken` runs the offer when the model, asked after
all, sends its own code again instead).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from .bindings import root_name
from .code_checks import CodeFix, frame_column, in_place, is_method_call
from .coercions import number_conversion
from .data_card import filled_text, labels_written_apart, text_kind, value_kind
from .reconversions import fix_reconversions
from .repeats import same_code
from .untidy_answers import ONCE_ASKED

__all__ = ["cleaned_program", "offer_in_place", "offer_reply", "offer_taken", "offered_program", "ran_in_place"]

_MAX_ROWS = 2_000_000
_DATE_USES = frozenset({"dt", "to_datetime", "to_period", "resample"})
_TIME_ASKED = re.compile(
    r"\b(?:dates?|daily|days?|weekly|weeks?|monthly|months?|quarterly|quarters?|yearly|annual(?:ly)?|years?)\b", re.I
)
_CHANGING = ("pop", "insert", "update", "drop", "rename", "set_index", "reset_index", "fillna", "replace")


def cleaned_program(code: str, question: str, namespace: dict[str, Any], variables: list[str]) -> str:
    """`code` (the statements the answer depends on) on cleaned copies of the task's frames, or "" when nothing
    the code reads is untidy, or the code rebinds a frame's name."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    cleanings: dict[str, _Cleaning] = {}
    for name in variables:
        frame = namespace.get(name)
        if value_kind(frame) == "DataFrame" and len(frame) <= _MAX_ROWS and _reads(tree, name):
            cleaning = _cleaning(name, frame, tree, question)
            if cleaning is None:
                return ""
            if cleaning.once or cleaning.fixes:
                cleanings[name] = cleaning
    if not cleanings:
        return ""
    existing = {(name, str(column)) for name in cleanings for column in namespace[name].columns}
    kept = [statement for statement in tree.body if not _changes_a_frame(statement, set(cleanings), existing)]
    program = ast.Module(body=[_Renamed(cleanings).visit(s) for s in kept], type_ignores=[])
    body = ast.unparse(ast.fix_missing_locations(program))
    # its own text cleaning of a column the cleaning line made numbers runs as the column (.str raises on numbers)
    typed = {f"{name}_clean": cleaning.typed_like(namespace[name]) for name, cleaning in cleanings.items()}
    lines = [cleaning.line for cleaning in cleanings.values()]
    imports = ["import pandas as pd"] if "pd." in "".join(lines) and "pd" not in namespace else []
    return "\n".join([*imports, *lines, fix_reconversions(body, typed).code])


@dataclass
class _Cleaning:
    """How one task frame is cleaned: its repeats dropped (`once`), and each column's fix by kind ("numbers",
    "dates", "labels") with the expression that reads it (of `f`, the frame)."""

    name: str
    once: bool
    fixes: dict[str, tuple[str, str]]

    @property
    def line(self) -> str:
        """`orders_clean = orders.drop_duplicates().assign(amount=lambda f: …)`."""
        made = self.name + (".drop_duplicates()" if self.once else "")
        if self.fixes:
            made += f".assign({', '.join(f'{column}=lambda f: {fix}' for column, (_, fix) in self.fixes.items())})"
        return f"{self.name}_clean = {made}"

    def columns(self, kind: str) -> list[str]:
        return [column for column, (fixed_as, _) in self.fixes.items() if fixed_as == kind]

    def typed_like(self, frame: Any) -> Any:
        """No rows of `frame`, its columns typed as the cleaning makes them (numbers, dates): what the cleaned
        frame's columns hold, for `fix_reconversions`."""
        typed = frame.iloc[:0].copy()
        for column in self.columns("numbers"):
            typed[column] = typed[column].astype("float64")
        for column in self.columns("dates"):
            typed[column] = typed[column].astype("datetime64[ns]")
        return typed


def _reads(tree: ast.Module, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(tree))


def _cleaning(name: str, frame: Any, tree: ast.Module, question: str) -> _Cleaning | None:
    """How `frame` is cleaned for the code (perhaps not at all); None when the code binds the name itself (its frame
    is then no longer the task's), or `<name>_clean`."""
    if any(
        isinstance(node, ast.Name) and node.id in (name, f"{name}_clean") and isinstance(node.ctx, ast.Store)
        for node in ast.walk(tree)
    ):
        return None  # (a `<frame>_clean` of the code's own is a frame of its own too)
    once = bool(ONCE_ASKED.search(question)) and bool(frame.duplicated().any())
    timed = bool(_TIME_ASKED.search(question))  # "monthly": the next step reads the dates the code has not read yet
    dated = timed or any(isinstance(node, ast.Attribute) and node.attr in _DATE_USES for node in ast.walk(tree))
    read = _columns_read(tree, frame)
    fixes = {column: fix for column in read if (fix := _fix(frame, column, dated))}
    if timed:
        dates = ((str(c), _fix(frame, str(c), True)) for c in frame.columns if str(c) not in read)
        fixes |= {column: fix for column, fix in dates if fix is not None and fix[0] == "dates"}
    return _Cleaning(name, once, fixes)


def _columns_read(tree: ast.Module, frame: Any) -> list[str]:
    """The frame's columns the code names, also through a merge's suffixes (`merged['amount_y']` reads `amount`: the
    messy run's offer left the orders' amounts text, and its total joined them)."""
    columns = {str(column) for column in frame.columns}
    named = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    named |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    named |= {text[:-2] for text in named if text.endswith(("_x", "_y"))}
    return [column for column in map(str, frame.columns) if column in named & columns and column.isidentifier()]


def _fix(frame: Any, column: str, dated: bool) -> tuple[str, str] | None:
    """How the column reads when clean, (kind, expression): numbers written as text as numbers, labels as a person
    reads them, and dates written as text as dates where the code reads them as dates (`.dt`, `to_datetime`)."""
    values = filled_text(frame[column])
    kind = text_kind(values)
    if kind == "numbers":
        return kind, number_conversion(f"f[{column!r}]")
    if kind == "dates":
        return (kind, f"pd.to_datetime(f[{column!r}], format='mixed', errors='coerce')") if dated else None
    if labels_written_apart(values):
        return "labels", f"f[{column!r}].str.strip().str.title().replace('', None)"
    return None


def _changes_a_frame(statement: ast.stmt, frames: set[str], existing: set[tuple[str, str]]) -> bool:
    """`orders['amount'] = …` of a column the frame has, `orders.dropna(inplace=True)`, `del orders['x']`: left out
    (done already, refused, or done better by the cleaning). A new column the code makes (`orders['revenue'] = …`)
    stays, made on the cleaned frame."""
    if isinstance(statement, ast.Delete):
        return any(root_name(target) in frames for target in statement.targets)
    if isinstance(statement, ast.Expr) and is_method_call(statement.value):
        call = statement.value
        return (in_place(call) or call.func.attr in _CHANGING) and root_name(call.func.value) in frames
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        targets = [statement.target]
    return any(not isinstance(target, ast.Name) and _changed_there(target, frames, existing) for target in targets)


def _changed_there(target: ast.AST, frames: set[str], existing: set[tuple[str, str]]) -> bool:
    """A target on a cleaned frame other than a new column: a column it has, or rows (`.loc[...]`)."""
    name = root_name(target)
    if name not in frames:
        return False
    column = frame_column(target)
    return column is None or (name, column[1]) in existing


class _Renamed(ast.NodeTransformer):
    """Reads `<frame>_clean` where the code read a cleaned frame; a label compared with a cleaned label column is
    written as the cleaned labels are ('north ' → 'North')."""

    def __init__(self, cleanings: dict[str, _Cleaning]) -> None:
        self.cleanings = cleanings
        self.labels = {column for cleaning in cleanings.values() for column in cleaning.columns("labels")}

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.cleanings and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(f"{node.id}_clean", ast.Load()), node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if any(_column_of(part) in self.labels for part in (node.left, *node.comparators)):
            node.comparators = [_titled(part) for part in node.comparators]
            node.left = _titled(node.left)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if is_method_call(node, "isin") and _column_of(node.func.value) in self.labels and node.args:
            node.args = [_titled_items(node.args[0]), *node.args[1:]]
        return node


def _column_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value if isinstance(node.slice.value, str) else None
    return node.attr if isinstance(node, ast.Attribute) else None


def _titled(node: ast.AST) -> ast.AST:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ast.copy_location(ast.Constant(node.value.strip().title()), node)
    return node


def _titled_items(node: ast.AST) -> ast.AST:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        node.elts = [_titled(item) for item in node.elts]
    return node


_OFFERED = re.compile(r"with the data cleaned first[^\n]*\n```python\n(.*?)\n```", re.S)


def offered_program(said: str) -> str:
    """The program a step's error or observation (`said`) offered to send as the next step, or ""."""
    offered = _OFFERED.search(said or "")
    return offered.group(1) if offered else ""


# the step nbagent takes in the model's place, as the model then reads it (its own turn, said to be nbagent's)
_IN_PLACE = (
    "(nbagent ran the code it offered after your last step, your code on the data cleaned first, in your place:)"
)


def offer_reply(program: str) -> str:
    """The reply a step that runs the offered `program` without a model call records as the model's turn."""
    return f"{_IN_PLACE}\n```python\n{program}\n```"


def ran_in_place(step: Any) -> bool:
    """Whether an action step ran an offer in the model's place: its recorded reply is `offer_reply`'s and no model
    wrote it (a model that copies the reply's words writes tokens)."""
    usage = getattr(step, "token_usage", None)
    reply = str(getattr(step, "model_output", "") or "")
    return reply.startswith(_IN_PLACE) and (usage is None or usage.output_tokens == 0)


def offer_in_place(last_said: str, after_in_place: bool, codes_run: list[str]) -> str:
    """The program the last step offered (`last_said`: its error or observation), to run as the next step without a
    model call, or "": when it offered none, when the last step was itself such a run (`after_in_place`: the model
    answers what an offer's run said, never a chain of nbagent's own steps), or when a step of the task ran that code
    already (`codes_run`).

    Offered its code on the cleaned frames, the 1.5B model sent it back (whole or in part) or an empty reply in 12
    of 19 and 10 of 19 offers of two messy runs, each costing a model call of 5-15 s that wrote nothing new.
    """
    if after_in_place:
        return ""
    program = offered_program(last_said)
    return program if program and not any(same_code(program, code) for code in codes_run) else ""


def offer_taken(code: str, last_code: str, last_said: str, namespace: dict[str, Any]) -> CodeFix:
    """`code` as the model meant it after the last step was offered its code on the cleaned frames (`last_said`:
    that step's error or observation): the offer itself when `code` is empty (an empty reply) or sends nothing but
    the last step's code again, and the offer's cleaning lines first when `code` reads a `<frame>_clean` it never
    made. Shown its code on the cleaned frames, the 1.5B model answered with its refused answer line again, with
    nothing (3 questions of 20 in one messy run), or with the offer's last lines alone (a NameError), until it ran out
    of steps."""
    program = offered_program(last_said)
    if not program:
        return CodeFix(code)
    if not code.strip():
        return CodeFix(
            program,
            [
                "Your reply was empty: nbagent ran the code it offered after your last step (your code "
                "on the data cleaned first)."
            ],
        )
    if "_clean" not in code and _only_repeats(code, last_code):
        note = (
            "nbagent ran the code it offered after your last step (your code on the data cleaned first) in its place."
        )
        return CodeFix(program, [note])
    try:
        nodes = list(ast.walk(ast.parse(code)))
    except SyntaxError:
        return CodeFix(code)
    made = [line for line in program.splitlines() if _makes_an_unmade(line, nodes, namespace)]
    if not made:
        return CodeFix(code)
    lines = [line for line in program.splitlines() if line == "import pandas as pd" and "pd" not in namespace]
    note = f"nbagent ran the offered {', '.join(line.split(' = ')[0] for line in made)} line first: your code reads it."
    return CodeFix("\n".join([*lines, *made, code]), [note])


def _makes_an_unmade(line: str, nodes: list[ast.AST], namespace: dict[str, Any]) -> bool:
    """`orders_clean = …` where the code (`nodes`) reads `orders_clean` and neither it nor an earlier step made it."""
    name = line.split(" = ")[0] if " = " in line else ""
    if not name.endswith("_clean") or name in namespace:
        return False
    read = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in nodes)
    bound = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in nodes)
    return read and not bound


def _only_repeats(code: str, last_code: str) -> bool:
    try:
        sent, before = ast.parse(code).body, ast.parse(last_code or "").body
    except SyntaxError:
        return False
    earlier = {ast.dump(statement) for statement in before}
    return bool(sent) and all(ast.dump(statement) in earlier for statement in sent)
