"""Answers over untidy data that look right and are not: gaps counted without the blank texts, a label
selected in one spelling when the column writes it several ways, and repeated rows counted again when the
question asks to count each thing once.

Measured on messy notebook data: "how many orders have no amount recorded?" answered with `isna().sum()`
(9) where the column also holds 4 empty strings (13); "how many orders came from the North region?"
answered with `== "North"` (64) where the column also writes it 'north ' and ' NORTH' (101). Both answers
are numbers of the right kind, so only the data can tell; these checks read the column the code names.
"""

from __future__ import annotations

import ast
import numbers
import re
from typing import Any

from .bindings import assignments, last_assignment, root_name, through_wrappers
from .code_checks import frame_column, in_place, is_method_call, is_text
from .coercions import number_conversion
from .data_card import data_frames, filled_text, text_kind, value_kind
from .doubts import Contradiction

__all__ = [
    "blank_groups",
    "blanks_not_counted",
    "label_spellings_missed",
    "repeats_not_dropped",
    "spellings_counted_apart",
    "groups_split_by_spelling",
    "text_totalled",
    "kept_rows_counted_for_missing",
    "gaps_subtracted_from_rows",
    "whole_rows_dropped_for_a_total",
    "gaps_counted_after_dropna",
    "ONCE_ASKED",
    "distinct_rows_for_repeats",
]

_MISSING_CALLS = ("isna", "isnull")
_MAX_LABELS = 50  # a column with more distinct spellings than this holds names or notes, not labels
_SHOWN = 3
ONCE_ASKED = re.compile(  # "count each once": repeated rows are one thing
    r"\b(once|unique|distinct|de-?duplicat\w*|without (?:the )?(?:duplicates|repeats)|duplicates? removed)\b",
    re.IGNORECASE,
)
# code that reads labels as a person does before grouping or counting them: without spaces and in one case
_SPACES_DROPPED = re.compile(r"\.str\.strip\(")
_ONE_CASE = re.compile(r"\.str\.(?:lower|upper|title|casefold|capitalize)\(")
_DEDUPLICATING = ("drop_duplicates", "duplicated", "unique", "nunique")
_COUNTING = ("sum", "mean", "count", "value_counts", "size", "std", "var")  # values a repeated row changes
_MAX_CHECKED_ROWS = 1_000_000  # finding repeated rows hashes every row: beyond this, say nothing
# code that also looks at blank texts: == "", .str.strip(), replace("", …), isin(["", …]), str.len(), is_missing(…)
_BLANKS_HANDLED = re.compile(
    r"""(==|!=)\s*(['"])\s*\2|\.str\.strip\(|replace\(\s*(['"])\s*\3|\[\s*(['"])\s*\4\s*[,\]]|\.str\.len\(|is_missing\("""
)


def blanks_not_counted(tree: ast.Module, namespace: dict[str, Any]) -> list[str]:
    """`frame["col"].isna()` where `col` also holds blank texts ("", "  ") that `isna()` does not count."""
    found: list[str] = []
    if _BLANKS_HANDLED.search(ast.unparse(tree)):
        return found
    for node in ast.walk(tree):
        if not is_method_call(node, *_MISSING_CALLS):
            continue
        column = _named_column(node.func.value, namespace)
        if column is None:
            continue
        frame_name, name, values = column
        blank = sum(isinstance(value, str) and not value.strip() for value in values.tolist())
        if blank:
            found.append(
                f"{frame_name}[{name!r}] also holds {blank} blank text value{'s' if blank > 1 else ''} (''), which "
                f"{node.func.attr}() does not count as missing: count the empty strings too: where the code has "
                f"{ast.unparse(node)}, write {_gaps(ast.unparse(node.func.value))}"
            )
    return found[:1]


_MISSING_ASKED = re.compile(
    r"\bhow many\b.*\b(no|without|missing|blank|empty|lack(?:s|ing)?)\b|\b(no|missing)\b.*\bhow many\b",
    re.IGNORECASE,
)


def kept_rows_counted_for_missing(question: str, tree: ast.Module) -> list[str]:
    """ "How many orders have no amount recorded?" answered by counting what `dropna()` keeps: the rows that have
    one (the messy run's 321 for 13), unless the code also looks for the gaps (isna, is_missing, a subtraction)."""
    if not _MISSING_ASKED.search(question):
        return []
    calls = [node for node in ast.walk(tree) if is_method_call(node)]
    if not any(call.func.attr == "dropna" for call in calls):
        return []
    if any(call.func.attr in (*_MISSING_CALLS, "notna", "notnull") for call in calls) or any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) for node in ast.walk(tree)
    ):
        return []
    gaps = next((gaps for call in calls if call.func.attr == "dropna" and (gaps := _gaps_of(call))), "")
    return [
        "dropna() keeps the rows that have a value, so the code counted those; the question asks for the rows "
        "without one: count the gaps instead (isna(), and the blank texts too)" + (f": {gaps}" if gaps else "")
    ]


def gaps_counted_after_dropna(tree: ast.Module) -> list[str]:
    """`kept = orders.dropna(subset=['amount'])` then `kept['amount'].isna().sum()`: the gaps are counted in rows
    that were kept for having none, so the count is 0 whatever the data (the messy run's answer to "how many orders
    have no amount recorded?", which stood)."""
    for node in ast.walk(tree):
        if not is_method_call(node, *_MISSING_CALLS):
            continue
        receiver = node.func.value
        dropped = _dropna_in(receiver)
        name = root_name(receiver)
        if not dropped and name is not None:
            made = last_assignment(name, tree, before=node)
            dropped = _dropna_in(made) if made is not None else None
        if dropped is not None:
            return [
                f"{ast.unparse(node)} counts the gaps in rows {ast.unparse(dropped)} kept for having none, so it is 0 "
                "whatever the data: count them in the frame before any dropna (and the blank texts too)"
            ]
    return []


def _dropna_in(node: ast.AST) -> ast.Call | None:
    return next((call for call in ast.walk(node) if is_method_call(call, "dropna")), None)


def blank_groups(answer: Any) -> list[str]:
    """A dict answer per group with a group for the rows that have no label: '' (or 'nan', None): the blank texts
    groupby keeps as a label of their own (the messy run's segment totals came with a '' segment beside Business,
    Consumer and Enterprise)."""
    if not isinstance(answer, dict) or len(answer) < 2:
        return []
    blanks = [key for key in answer if _is_blank_key(key)]
    if not blanks or not any(isinstance(key, str) and not _is_blank_key(key) for key in answer):
        return []
    return [
        f"the answer's group {blanks[0]!r} holds the rows with no label at all (blank or missing), no group the "
        "question asks for: leave those rows out (groupby keeps a blank text as a label of its own: turn the blank "
        "texts into gaps first, .replace('', np.nan), and groupby skips them)"
    ]


def _is_blank_key(key: Any) -> bool:
    if key is None or (isinstance(key, float) and key != key):
        return True
    return isinstance(key, str) and key.strip().lower() in ("", "nan", "none", "<na>", "nat")


def gaps_subtracted_from_rows(question: str, tree: ast.Module, answer: ast.AST | None) -> list[str]:
    """ "How many orders have no amount recorded?" answered with all the rows less the gaps the code counted: the
    rows that have one (the messy run counted the 13 gaps right, then answered 330 - 13 = 317)."""
    if answer is None or not _MISSING_ASKED.search(question):
        return []
    difference = through_wrappers(answer, tree)
    if not (isinstance(difference, ast.BinOp) and isinstance(difference.op, ast.Sub)):
        return []
    gaps = difference.right
    if not _counts_gaps(through_wrappers(gaps, tree), tree):
        return []
    return [
        f"{ast.unparse(difference)} takes the gaps from all the rows, which counts the rows that have a value; the "
        f"question asks for the rows without one: that is {ast.unparse(gaps)} itself"
    ]


def _counts_gaps(node: ast.AST, tree: ast.Module) -> bool:
    """Whether `node` (or the names it reads, their assignments in turn) tests for gaps: isna(), a blank text."""
    seen: set[str] = set()
    todo = [node]
    while todo:
        for part in ast.walk(todo.pop()):
            if is_method_call(part, *_MISSING_CALLS, "is_missing") or _blank_test(part):
                return True
            if isinstance(part, ast.Name) and part.id not in seen:
                seen.add(part.id)
                value = last_assignment(part.id, tree)
                todo += [value] if value is not None else []
    return False


def _blank_test(node: ast.AST) -> bool:
    """`… == ''` (a blank text tested for), or a call of `is_missing(...)` by its bare name."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id == "is_missing"
    return isinstance(node, ast.Compare) and any(is_text(c) and not c.value.strip() for c in node.comparators)


def _gaps_of(dropna: ast.Call) -> str:
    """The count of gaps, blank texts too, in the one column `frame.dropna(subset=["col"])` looked at, or ""."""
    subset = next((keyword.value for keyword in dropna.keywords if keyword.arg == "subset"), None)
    if isinstance(subset, (ast.List, ast.Tuple)) and len(subset.elts) == 1:
        subset = subset.elts[0]
    if not (is_text(subset) and isinstance(dropna.func.value, ast.Name)):
        return ""
    return f"{_gaps(f'{dropna.func.value.id}[{subset.value!r}]')}.sum()"


def _gaps(values: str) -> str:
    """The gaps of `values` (code naming a column), blank texts too: what `isna()` alone misses."""
    return f"({values}.isna() | ({values}.str.strip() == ''))"


def whole_rows_dropped_for_a_total(
    question: str, tree: ast.Module, namespace: dict[str, Any], given: dict[str, Any] | None = None
) -> list[str]:
    """A total of one column after `dropna()` with no `subset=`: every row with a gap in any column is gone, also
    the rows whose amount is there (the messy run's net revenue lost 48 orders with no region or date). Not said
    where the question is about gaps, or where the frame, as the code left it, has no gap outside the column.

    Proved (a `Contradiction`) for `frame.dropna(inplace=True)` of a frame as the task `given` it, where that frame
    has such rows: the frame's rows are gone for the rest of the run, and every total of it after is short (the
    messy run fixed the sign of its net revenue after it was told the rows were lost twice, and the short total
    stood)."""
    if _MISSING_ASKED.search(question) or re.search(r"\b(complete|missing|gaps?|blank)\b", question, re.IGNORECASE):
        return []
    dropped = [
        node
        for node in ast.walk(tree)
        if is_method_call(node, "dropna") and not any(keyword.arg in ("subset", "axis") for keyword in node.keywords)
    ]
    totalled = _totalled_columns(tree)
    for call in dropped:
        root = call.func.value
        frame_name = root.id if isinstance(root, ast.Name) else None
        for name, column in totalled:
            if name != frame_name and not _bound_from(name, frame_name, tree):
                continue
            frame = namespace.get(frame_name)
            if value_kind(frame) != "DataFrame" or column not in frame:
                continue
            if not in_place(call) and _gaps_elsewhere(frame, column) == 0:
                continue  # no gap outside the column: the rows dropped are the ones its sum skips anyway
            others = [str(c) for c in frame.columns if str(c) != column]
            said = (
                f"{ast.unparse(call)} drops every row with a gap in any column ({', '.join(others[:4])}…), also rows "
                f"whose {column!r} is there, so the total loses them: total {column!r} as it is (sum() skips its "
                f"gaps), or drop only its own gaps: dropna(subset=[{column!r}])"
            )
            lost_for_good = in_place(call) and _values_with_gaps_elsewhere((given or {}).get(frame_name), column)
            return [Contradiction(said) if lost_for_good else said]
    return []


def _values_with_gaps_elsewhere(frame: Any, column: str) -> bool:
    """Whether `frame` (as the task gave it) has rows whose `column` holds a value (not blank text) and some other
    column a gap."""
    from nbagent.data import is_missing  # pandas is loaded: `frame` is a DataFrame

    if value_kind(frame) != "DataFrame" or column not in frame.columns:
        return False
    held = ~is_missing(frame[column])
    return bool((held & frame.drop(columns=[column]).isna().any(axis=1)).any())


def _totalled_columns(tree: ast.Module) -> list[tuple[str, str]]:
    """(frame name, column) of each `frame['column'].sum()` (or mean) in the code."""
    return [
        read
        for node in ast.walk(tree)
        if is_method_call(node, "sum", "mean") and (read := frame_column(node.func.value)) is not None
    ]


def _bound_from(name: str, source: str | None, tree: ast.Module) -> bool:
    """Whether `name` was bound to a value read from `source` (`clean = orders.dropna()`)."""
    return source is not None and any(
        isinstance(node, ast.Name) and node.id == source
        for statement in assignments(name, tree)
        for node in ast.walk(statement.value)
    )


def _gaps_elsewhere(frame: Any, column: str) -> int:
    """Rows whose `column` has a value and some other column a gap: the rows a whole-row dropna() loses."""
    return int((frame[column].notna() & frame.drop(columns=[column]).isna().any(axis=1)).sum())


def label_spellings_missed(tree: ast.Module, namespace: dict[str, Any]) -> list[str]:
    """`frame["col"] == "North"` (or `frame["col"].value_counts()["North"]`) where `col` also writes North as
    'north ' or ' NORTH': rows the code leaves out."""
    for node in ast.walk(tree):
        column, wanted = _label_comparison(node, namespace) or _label_lookup(node, namespace) or (None, [])
        if column is None or not wanted:
            continue
        frame_name, name, values = column
        spellings = _other_spellings(values, wanted)
        if spellings:
            missed, others = spellings
            shown = ", ".join(repr(text) for text in others[:_SHOWN])
            return [
                f"{frame_name}[{name!r}] also writes {wanted[0]!r} as {shown}, so the comparison leaves out {missed} "
                f"rows of it: compare the labels as a person reads them, {_read_as_a_person(frame_name, name)} == "
                f"{wanted[0].strip().title()!r}"
            ]
    return []


def _label_comparison(node: ast.AST, namespace: dict[str, Any]) -> tuple[Any, list[str]] | None:
    """(column, labels) of `frame["col"] == "North"` or `frame["col"] in [...]`."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.In))):
        return None
    return _named_column(node.left, namespace), _texts(node.comparators[0])


def _label_lookup(node: ast.AST, namespace: dict[str, Any]) -> tuple[Any, list[str]] | None:
    """(column, [label]) of a count looked up by label: `frame["col"].value_counts()["North"]`, `.loc["North"]` or
    `.get("North")` (the messy run's 59 for 101 North orders, after three refusals of `== "North"`)."""
    if isinstance(node, ast.Subscript) and is_text(node.slice):
        counts, label = node.value, node.slice.value
        if isinstance(counts, ast.Attribute) and counts.attr in ("loc", "at"):
            counts = counts.value
    elif is_method_call(node, "get") and node.args and is_text(node.args[0]):
        counts, label = node.func.value, node.args[0].value
    else:
        return None
    if not is_method_call(counts, "value_counts"):
        return None
    return _named_column(counts.func.value, namespace), [label]


def _named_column(node: ast.AST, namespace: dict[str, Any]) -> tuple[str, str, Any] | None:
    """(frame, column, values) for `frame["col"]` or `frame.col` of a notebook frame's text column, else None."""
    if (read := frame_column(node)) is not None:
        frame_name, name = read
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        frame_name, name = node.value.id, node.attr
    else:
        return None
    return _text_column(frame_name, name, namespace)


def _text_column(frame_name: str, name: str, namespace: dict[str, Any]) -> tuple[str, str, Any] | None:
    """(frame, column, values) when notebook frame `frame_name` has a text column `name`, else None."""
    frame = dict(data_frames(namespace)).get(frame_name)
    if frame is None or name not in map(str, frame.columns):
        return None
    values = frame[name]
    if getattr(values, "ndim", 1) != 1 or not (values.dtype.kind == "O" or str(values.dtype) in ("str", "string")):
        return None
    return frame_name, name, values


# reductions that run on text without an error and give a wrong number: a sum joins the texts, a max is the last
# text in alphabetical order ('$98.10' > '$1,234.00')
_SILENT_ON_TEXT = ("sum", "cumsum", "max", "min", "idxmax", "idxmin", "nlargest", "nsmallest")
_TEXT_SAMPLE = 400


def text_totalled(tree: ast.Module, namespace: dict[str, Any]) -> list[str]:
    """`frame["col"].sum()` (or grouped, or `.max()`, `.idxmax()`, …) where `col` still holds numbers written as
    text: pandas joins or orders the texts without an error, so the answer is a number of the right kind, and
    wrong. Read on the namespace the code left: a column converted in place is numbers by then."""
    for node in ast.walk(tree):
        if not is_method_call(node, *_SILENT_ON_TEXT):
            continue
        column = _reduced_column(node.func.value, namespace)
        if column is None:
            continue
        frame_name, name, values = column
        if text_kind(filled_text(values.iloc[:_TEXT_SAMPLE])) != "numbers":
            continue
        ref = f"{frame_name}[{name!r}]"
        variable = name if name.isidentifier() and name not in namespace else "numbers"
        converted = number_conversion(ref)
        then = _on_the_numbers(node, frame_name, variable)
        return [
            f"{ref} still holds numbers written as text, so .{node.func.attr}() works on the texts (a sum joins "
            f"them, a max takes the last in alphabetical order), not on the numbers: convert it first, into a new "
            + (f"variable, {variable} = {converted}, then use it: {then}" if then else f"variable, {converted}")
        ]
    return []


def _on_the_numbers(reduction: ast.Call, frame_name: str, variable: str) -> str:
    """`reduction` written on `variable` (the column converted to numbers), for the shapes a model writes:
    `frame["col"].sum()`, `frame.groupby(key)["col"].sum()` (a key named by its column is read from the frame)
    and `frame[mask]["col"].sum()`; "" for other shapes. The measured run, told to convert the column, converted
    its grouped total of joined texts instead, and got NaN."""
    reduced = reduction.func.value
    under = reduced.value if isinstance(reduced, (ast.Subscript, ast.Attribute)) else None
    numbers: ast.expr = ast.Name(variable)
    if isinstance(under, ast.Name) and under.id == frame_name:
        pass
    elif is_method_call(under, "groupby") and isinstance(under.func.value, ast.Name) and not under.keywords:
        if under.func.value.id != frame_name or len(under.args) != 1:
            return ""
        numbers = ast.Call(ast.Attribute(numbers, "groupby"), [_key_of(under.args[0], frame_name)], [])
    elif isinstance(under, ast.Subscript) and isinstance(under.value, ast.Name) and under.value.id == frame_name:
        numbers = ast.Subscript(numbers, under.slice)
    else:
        return ""
    return ast.unparse(ast.Call(ast.Attribute(numbers, reduction.func.attr), reduction.args, reduction.keywords))


def _key_of(key: ast.expr, frame_name: str) -> ast.expr:
    """A groupby key as it reads beside a Series: a column's name becomes the frame's column."""
    if is_text(key):
        return ast.Subscript(ast.Name(frame_name), key)
    if isinstance(key, ast.List) and all(is_text(element) for element in key.elts):
        return ast.List([ast.Subscript(ast.Name(frame_name), element) for element in key.elts])
    return key


def _reduced_column(node: ast.AST, namespace: dict[str, Any]) -> tuple[str, str, Any] | None:
    """The frame column under a reduction: `frame["col"]`, `frame.col`, `frame.groupby(...)["col"]`,
    `frame[mask]["col"]` or `frame.groupby(...).col`."""
    if isinstance(node, ast.Subscript) and is_text(node.slice):
        name = node.slice.value
    elif isinstance(node, ast.Attribute):
        name = node.attr
    else:
        return None
    root = node.value
    while not isinstance(root, ast.Name):  # down through .groupby(...), [mask], .loc[...]
        if isinstance(root, ast.Call):
            root = root.func
        elif isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        else:
            return None
    return _text_column(root.id, name, namespace)


def _texts(node: ast.AST) -> list[str]:
    if is_text(node):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [element.value for element in node.elts if is_text(element)]
    return []


def _other_spellings(values: Any, wanted: list[str]) -> tuple[int, list[str]] | None:
    """(rows missed, the other spellings) of the wanted labels in `values`, or None when there are none."""
    counts = values[values.map(lambda value: isinstance(value, str))].value_counts()
    if len(counts) > _MAX_LABELS:
        return None
    read = {text.strip().casefold() for text in wanted}
    others = [str(label) for label in counts.index if label not in wanted and label.strip().casefold() in read]
    missed = int(sum(counts[label] for label in others))
    return (missed, others) if others else None


def repeats_not_dropped(question: str, tree: ast.Module, namespace: dict[str, Any], variables: list[str]) -> list[str]:
    """The question asks to count each thing once, a frame the code read repeats rows, and no code dropped them."""
    if not ONCE_ASKED.search(question):
        return []
    if any(is_method_call(node, *_DEDUPLICATING) for node in ast.walk(tree)):
        return _repeats_counted_in_part(tree, namespace)
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    repeating = [
        (frame_name, frame, repeated)
        for frame_name, frame in data_frames(namespace)
        if frame_name in read and frame_name in variables and len(frame) <= _MAX_CHECKED_ROWS
        if (repeated := int(frame.duplicated().sum()))
    ]
    for frame_name, frame, _ in repeating:  # the frame the code counted, where it was made from one of these
        if said := _made_with_repeats(tree, namespace, frame_name, frame):
            return said
    if repeating:
        frame_name, _, repeated = repeating[0]
        return [
            f"{frame_name} has {_rows_that_repeat(repeated)} an earlier row exactly, "
            "and the question asks to count each once, but the code used every row: drop the repeated rows "
            f"first (into a new variable: {frame_name}.drop_duplicates()), then compute the answer again"
        ]
    return []


_REPEATS_COUNTED = re.compile(r"\bhow many\b.*\b(duplicat\w*|repeat\w*)", re.IGNORECASE)
_REPEATS_EXCLUDED = re.compile(r"\b(not|without|excluding|except|ignoring)\b", re.IGNORECASE)


def distinct_rows_for_repeats(question: str, answer: Any, namespace: dict[str, Any], variables: list[str]) -> list[str]:
    """ "How many rows are duplicates?" answered with the number of distinct rows (`len(orders.drop_duplicates())`:
    330 for 16 repeats, answered in one step and accepted in the messy run)."""
    if not _REPEATS_COUNTED.search(question) or not _is_count(answer):
        return []
    if ONCE_ASKED.search(question) or _REPEATS_EXCLUDED.search(question):  # the distinct rows are what is asked
        return []
    for frame_name, frame in data_frames(namespace):
        if frame_name not in variables or len(frame) > _MAX_CHECKED_ROWS:
            continue
        repeated = int(frame.duplicated().sum())
        if repeated and int(answer) == len(frame) - repeated != repeated:
            return [
                f"{answer} is the number of distinct rows of {frame_name} (what {frame_name}.drop_duplicates() "
                f"keeps), but the question asks how many rows repeat an earlier one: "
                f"{frame_name}.duplicated().sum() counts them"
            ]
    return []


def _is_count(value: Any) -> bool:
    """A whole number (Python's or numpy's), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)  # numpy's integers are Integral


def _rows_that_repeat(count: int) -> str:
    return f"{count} rows that repeat" if count > 1 else "1 row that repeats"


def _made_with_repeats(tree: ast.Module, namespace: dict[str, Any], source: str, frame: Any) -> list[str]:
    """The doubt said of the frame the code counted, where the code made it from `source` with every column of it
    and more (a merge): its repeated rows are `source`'s. Told to drop `orders`' repeats, the measured run rebound
    the merge's name to `orders.drop_duplicates()` and lost the merged-in column."""
    for node in ast.walk(tree):
        chain = _counting_chain(node)
        made = namespace.get(chain[0]) if chain and chain[0] != source else None
        if value_kind(made) != "DataFrame" or len(made) > _MAX_CHECKED_ROWS:
            continue
        if not set(frame.columns) < set(made.columns) or not (repeated := int(made.duplicated().sum())):
            continue  # a merge adds columns; a frame of the same columns is rows of `source` (said of `source`)
        name = chain[0]
        return [
            f"{name} has {_rows_that_repeat(repeated)} an earlier row exactly (made from "
            f"{source}, which repeats rows), and the question asks to count each once, but the code used every row: "
            f"drop them first, {name} = {name}.drop_duplicates(), then compute the answer again from {name}"
        ]
    return []


def _repeats_counted_in_part(tree: ast.Module, namespace: dict[str, Any]) -> list[str]:
    """A total or count over a frame that still repeats rows, where other code of the answer dropped them: the
    average of the measured messy run took the sum over every Laptop row and divided by the count without
    repeats."""
    deduplicated = _deduplicated_names(tree)
    for node in ast.walk(tree):
        chain = _counting_chain(node)
        if chain is None or chain[0] in deduplicated or any(method in _DEDUPLICATING for method in chain[1]):
            continue
        frame = namespace.get(chain[0])
        if value_kind(frame) != "DataFrame" or len(frame) > _MAX_CHECKED_ROWS:
            continue
        repeated = int(frame.duplicated().sum())
        if repeated:
            return [
                f"{ast.unparse(node)} counts the {repeated} row{'s' if repeated > 1 else ''} of {chain[0]} that repeat "
                f"an earlier row, though other code of the answer dropped repeats: compute every part of the answer "
                f"from the rows without repeats ({chain[0]}.drop_duplicates())"
            ]
    return []


def _deduplicated_names(tree: ast.Module) -> set[str]:
    """The names bound, in order, to values made from rows without repeats (a column of `orders.drop_duplicates()`
    may repeat values, and its rows are still distinct orders)."""
    names: set[str] = set()
    for statement in tree.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            continue
        value = statement.value
        read = {node.id for node in ast.walk(value) if isinstance(node, ast.Name)}
        if read & names or any(is_method_call(node, *_DEDUPLICATING) for node in ast.walk(value)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names |= {node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)}
    return names


def _counting_chain(node: ast.AST) -> tuple[str, list[str]] | None:
    """(the root name, the methods called on the way) of a sum, mean, count or size whose value repeated rows
    change (`laptops['amount'].sum()`, `len(laptops)`, `laptops.shape[0]`), or None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and node.args:
        target = node.args[0]
    elif is_method_call(node, *_COUNTING):
        target = node.func.value
    elif isinstance(node, ast.Attribute) and node.attr in ("shape", "size") and isinstance(node.ctx, ast.Load):
        target = node.value
    else:
        return None
    methods: list[str] = []
    while isinstance(target, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(target, ast.Call):
            if isinstance(target.func, ast.Attribute):
                methods.append(target.func.attr)
            target = target.func
        target = target.value if isinstance(target, (ast.Attribute, ast.Subscript)) else target
    return (target.id, methods) if isinstance(target, ast.Name) else None


def spellings_counted_apart(answer: Any, code: str, namespace: dict[str, Any], variables: list[str]) -> list[str]:
    """An answer whose labels are one label written several ways (a dict with keys ' BUSINESS' and 'Business'),
    or a label whose column also writes it otherwise, from code that never read the labels as a person does."""
    if _reads_labels_as_a_person(code):
        return []
    labels = _answer_labels(answer)
    split = _split_groups(labels, "the answer's groups", code, namespace, variables)
    if split:
        return split
    for frame_name, frame in data_frames(namespace):
        if frame_name not in variables:
            continue
        for label in labels:
            found = _column_with_other_spellings(frame, label)
            if found:
                column, others = found
                shown = ", ".join(repr(text) for text in others[:_SHOWN])
                return [
                    f"{frame_name}[{column!r}] also writes {label!r} as {shown}, and the code counted each spelling "
                    f"apart: group or count the labels as a person reads them, {_read_as_a_person(frame_name, column)}"
                ]
    return []


def groups_split_by_spelling(tree: ast.Module, code: str, namespace: dict[str, Any], variables: list[str]) -> list[str]:
    """A dict or Series the step bound whose keys are one label written several ways, said after the step: the
    messy run grouped totals by a column of labels written 21 ways, was told only to go on from the result, and
    spent its last steps printing the 22 groups."""
    if _reads_labels_as_a_person(code):
        return []
    for name in dict.fromkeys(target.id for target in _bound_names(tree)):
        split = _split_groups(_group_keys(namespace.get(name)), f"{name}'s keys", code, namespace, variables)
        if split:
            return split
    return []


def _group_keys(value: Any) -> list[str]:
    """The text keys of a dict or of a Series' index (its first labels), else []."""
    if isinstance(value, dict):
        return _answer_labels(value)
    if value_kind(value) == "Series":
        return [key for key in value.index[:_MAX_LABELS] if isinstance(key, str)]
    return []


def _bound_names(tree: ast.Module) -> list[ast.Name]:
    return [
        target
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
        if isinstance(target, ast.Name)
    ]


def _reads_labels_as_a_person(code: str) -> bool:
    return bool(_SPACES_DROPPED.search(code) and _ONE_CASE.search(code)) or "clean_labels(" in code


def _split_groups(
    labels: list[str], what: str, code: str, namespace: dict[str, Any], variables: list[str]
) -> list[str]:
    """Why the `labels` (`what`: "the answer's groups") are one label written several ways, with the grouping to
    write instead; [] when no two of them are."""
    split = _same_label_keys(labels)
    if not split:
        return []
    shown = ", ".join(repr(label) for label in split[:_SHOWN])
    holder = _column_holding(split[0], namespace, variables)
    how = f", {_read_as_a_person(*holder)}," if holder else " (strip the spaces, one case)"
    return [
        f"{what} {shown} are one label written several ways: group by the labels as a person reads "
        f"them{how} so each label is counted once{_regrouped(code, holder[1]) if holder else ''}"
    ]


def _regrouped(code: str, column: str) -> str:
    """Where the code groups by `column` (`orders.groupby("region")`), the same grouping by the labels as a person
    reads them, to write in its place, or "". Told only the expression to group by, the 1.5B model grouped by the
    column as before for four steps (the messy run's total per region)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if not (is_method_call(node, "groupby") and node.args and isinstance(node.func.value, ast.Name)):
            continue
        key = node.args[0]
        keys = key.elts if isinstance(key, ast.List) and len(key.elts) == 1 else [key]
        if (is_text(keys[0]) and keys[0].value == column) or (frame_column(keys[0]) or ("", ""))[1] == column:
            labels = ast.parse(_read_as_a_person(node.func.value.id, column), mode="eval").body
            regrouped = ast.Call(node.func, [labels, *node.args[1:]], node.keywords)
            return f": write {ast.unparse(regrouped)} where the code has {ast.unparse(node)}"
    return ""


def _read_as_a_person(frame_name: str, column: str) -> str:
    """The expression that reads a column's labels without their spaces and case (title case: 'North')."""
    return f"{frame_name}[{column!r}].str.strip().str.title()"


def _column_holding(label: str, namespace: dict[str, Any], variables: list[str]) -> tuple[str, str] | None:
    """(frame, column) of the pointed-at frames' text column that holds `label`, or None."""
    for frame_name, frame in data_frames(namespace):
        if frame_name not in variables:
            continue
        for position in range(frame.shape[1]):
            values = frame.iloc[:, position]
            if (values.dtype.kind == "O" or str(values.dtype) in ("str", "string")) and (values == label).any():
                return frame_name, str(frame.columns[position])
    return None


def _answer_labels(answer: Any) -> list[str]:
    if isinstance(answer, str):
        return [answer]
    if isinstance(answer, dict):
        return [key for key in answer if isinstance(key, str)]
    if isinstance(answer, (list, tuple)):
        return [item for item in answer if isinstance(item, str)]
    return []


def _same_label_keys(labels: list[str]) -> list[str]:
    seen: dict[str, list[str]] = {}
    for label in labels:
        seen.setdefault(label.strip().casefold(), []).append(label)
    return next((spellings for spellings in seen.values() if len(spellings) > 1), [])


def _column_with_other_spellings(frame: Any, label: str) -> tuple[str, list[str]] | None:
    for position in range(frame.shape[1]):
        values = frame.iloc[:, position]
        if not (values.dtype.kind == "O" or str(values.dtype) in ("str", "string")):
            continue
        found = _other_spellings(values, [label])
        if found and label in set(values.dropna()):
            return str(frame.columns[position]), found[1]
    return None
