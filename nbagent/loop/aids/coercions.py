"""Numbers lost to `errors="coerce"`: a conversion that read some of a column's numbers as missing, silently.

Measured on messy notebook data: `pd.to_numeric(orders["amount"].str.replace("$", ""), errors="coerce")` ran
without an error and turned every amount of a thousand or more ('$1,891.37': the ',' was still there) into NaN;
the chart drawn from it was wrong by a third and nothing said so. After a step that ran, each such conversion of a
column of the task's frames (as the task gave them) is read again: values the data card would read as numbers that
came out missing are counted, and the note names a few and the conversion that reads them all.

Told after the step, the model has already written the lossy numbers over the frame's own column (the messy run's
chart step did, and its later charts summed the amounts it had lost). So before a step runs, each such conversion of
a column of text numbers is also read ahead (`fix_lossy_conversions`): its text cleaning — literal
`.str.replace`, `.str.strip`, … — is played on the column's distinct values by nbagent's own code (a regex
`.str.replace` by which single characters it removes: the model's pattern never runs on the data in the kernel), and
when it would read numbers as missing that the one-line conversion reads, that line runs instead and the step says so.
A conversion that would fail on them instead (`.astype(float)` after taking out the ',' and not the '$', or on a
blank) runs as that line too: told by the error's hint, the model wrote the line at its next step anyway.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from .bindings import last_assignment
from .code_checks import CodeFix, Edit, fixed, frame_column, is_method_call, is_text
from .data_card import value_kind
from .reconversions import TEXT_CLEANINGS, column_assigned_before

__all__ = ["fix_lossy_conversions", "has_pandas", "number_conversion", "numbers_lost"]

_SHOWN = 2
_MAX_DISTINCT = 200_000  # distinct texts played through a cleaning; more, and the step runs as written
_NUMBER_CHARACTERS = frozenset("0123456789.-+eE ")


def number_conversion(column: str) -> str:
    """The line that reads a column of numbers written as text ('$1,891.37', blanks) as numbers: `column` is how the
    code names it (`orders['amount']`). Every hint and doubt about such a column gives this one line."""
    return f"pd.to_numeric({column}.str.replace(r'[$,]', '', regex=True), errors='coerce')"


def numbers_lost(tree: ast.Module, namespace: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """One line per `target = pd.to_numeric(<a given frame's text column, cleaned>, errors="coerce")` in `tree`
    whose result is missing where the column held a number."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and _coerced(node.value)):
            continue
        source = _source_column(node.value.args[0])
        result = _bound(node.targets[0], namespace)
        if source is None or result is None:
            continue
        line = _lost_line(source, given, result)
        if line:
            found.append(line)
    return found[:1]


def _coerced(node: ast.AST) -> bool:
    """`pd.to_numeric(x, errors="coerce")`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_numeric"
        and len(node.args) == 1
        and any(
            k.arg == "errors" and isinstance(k.value, ast.Constant) and k.value.value == "coerce" for k in node.keywords
        )
    )


def _source_column(node: ast.AST) -> tuple[str, str] | None:
    """The `frame["col"]` at the root of `frame["col"].str.replace(...).str.strip()` (calls and attributes only)."""
    while not frame_column(node):
        if is_method_call(node):
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return None
    return frame_column(node)


def _bound(target: ast.AST, namespace: dict[str, Any]) -> Any:
    """What the step left in `target` (a name, or a frame's column)."""
    if isinstance(target, ast.Name):
        value = namespace.get(target.id)
        return value if value_kind(value) == "Series" else None
    read = frame_column(target)
    if read is None or value_kind(frame := namespace.get(read[0])) != "DataFrame" or read[1] not in frame.columns:
        return None
    return frame[read[1]]


def _lost_line(source: tuple[str, str], given: dict[str, Any], result: Any) -> str:
    from nbagent.data.cleaning import looks_like_number  # pandas is loaded: the values are a frame's

    frame_name, column = source
    frame = given.get(frame_name)
    if value_kind(frame) != "DataFrame" or column not in frame.columns:
        return ""
    texts = frame[column]
    if texts.dtype.kind in "iufb" or len(texts) != len(result) or not texts.index.equals(result.index):
        return ""
    numbers = texts.map(lambda value: isinstance(value, str) and looks_like_number(value))
    lost = texts[numbers & result.isna().to_numpy()]
    if lost.empty:
        return ""
    shown = ", ".join(repr(value) for value in lost.head(_SHOWN).tolist())
    ref = f"{frame_name}[{column!r}]"
    return (
        f"the conversion of {ref} read {len(lost)} of its numbers as missing ({shown}): errors='coerce' turns what "
        f"it cannot read into NaN, and their text still held a mark ('$', ','). Convert them all: "
        + number_conversion(ref)
    )


def fix_lossy_conversions(code: str, namespace: dict[str, Any]) -> CodeFix:
    """`code` with each `pd.to_numeric(<text cleaning of a notebook frame's column>, errors="coerce")` that would
    read some of the column's numbers as missing run as `number_conversion` (when that reads more of them), and
    each `<cleaning>.astype(float)` or `pd.to_numeric(<cleaning>)` that would fail on some of them ('$1,891.37'
    with the ',' taken out and the '$' left, a blank) too, said in the fix's notes. The messy run's first step
    failed this way in 3 questions of 20, each costing a step to read the hint and write the line it gives."""
    return fixed(code, lambda tree: _lossy_edits(code, tree, namespace))


def _lossy_edits(code: str, tree: ast.Module, namespace: dict[str, Any]) -> Iterator[Edit]:
    for node in ast.walk(tree):
        converted = _converted_text(node)
        if converted is None or not (has_pandas(code, namespace) or _calls_pd(node)):
            continue
        found = _lossy(node, converted, tree, namespace)
        if found:
            yield node, found[0], found[1]


def has_pandas(code: str, namespace: dict[str, Any]) -> bool:
    """Whether `pd` is pandas where the code runs (the full conversion is written with it)."""
    return getattr(namespace.get("pd"), "__name__", "") == "pandas" or "import pandas as pd" in code


def _calls_pd(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).startswith("pd.")


_FLOATS = frozenset({"float", "'float'", "'float64'", "np.float64", "numpy.float64", "'f8'"})


def _converted_text(node: ast.AST) -> ast.AST | None:
    """What `node` converts to numbers: `x` of `pd.to_numeric(x, errors="coerce")`, `x.astype(float)` or
    `pd.to_numeric(x)`; None for other nodes."""
    if _coerced(node) or (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_numeric"
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    if is_method_call(node, "astype") and len(node.args) == 1 and not node.keywords:
        return node.func.value if ast.unparse(node.args[0]).replace('"', "'") in _FLOATS else None
    return None


def _lossy(call: ast.Call, converted: ast.AST, tree: ast.Module, namespace: dict[str, Any]) -> tuple[str, str] | None:
    """(the conversion to run instead, why) for a lossy or failing conversion (`call`, of `converted`) of a notebook
    frame's text column, else None."""
    played = _cleaning_chain(converted)
    if played is None:
        return None
    (frame_name, column), steps = played
    frame = namespace.get(frame_name)
    if value_kind(frame) != "DataFrame" or column not in frame.columns:
        return None
    if last_assignment(frame_name, tree, before=call) is not None or column_assigned_before(
        frame_name, column, call, tree
    ):
        return None  # the code changed the frame or the column first: its values are not the notebook's
    texts = frame[column]
    if texts.dtype.kind in "biufcmM":
        return None
    distinct = [value for value in texts.dropna().unique().tolist() if isinstance(value, str)]
    if len(distinct) > _MAX_DISTINCT:
        return None
    theirs = _unread(distinct, steps)
    ref = f"{frame_name}[{column!r}]"
    if not _coerced(call):
        return _failing(texts, distinct, theirs, ref)
    if not theirs:
        return None
    if len(_unread(distinct, [("replace", r"[$,]", "", True)])) >= len(theirs):
        return None
    lost = texts[texts.isin(list(theirs))]
    why = (
        f"it would read {len(lost)} number{'s' if len(lost) != 1 else ''} of {ref} as missing ({_shown(lost)}): "
        f"{_marks_held(theirs)}errors='coerce' turns what it cannot read into NaN"
    )
    return number_conversion(ref), why


def _failing(texts: Any, distinct: list[str], theirs: dict[str, str], ref: str) -> tuple[str, str] | None:
    """(the conversion to run instead, why) for a conversion without errors='coerce' of a column of numbers written
    as text that would fail on some of them or on a blank, else None."""
    from nbagent.data.cleaning import looks_like_number

    if not distinct or sum(map(looks_like_number, distinct)) < len(distinct) / 2:
        return None  # not a column of numbers written as text: the code's own failure says more
    blanks = [text for text in distinct if not text.strip()]
    if not theirs and not blanks:
        return None
    failing = texts[texts.isin(list(theirs) or blanks)]
    marks = _marks(theirs)
    held = f" (their text would still hold {marks})" if marks else ""
    on_blanks = " and on its blanks" if theirs and blanks else ""
    return number_conversion(ref), (
        f"it would fail on {_shown(failing)} of {ref}{held}{on_blanks}: the full conversion reads every number and "
        "leaves the blanks missing"
    )


def _shown(values: Any) -> str:
    return ", ".join(repr(value) for value in values.drop_duplicates().head(_SHOWN).tolist())


def _marks(theirs: dict[str, str]) -> str:
    """The marks (not digits, signs, points) the cleaned texts would still hold: "'$', ','"."""
    return ", ".join(repr(mark) for mark in sorted({m for left in theirs.values() for m in left} - _NUMBER_CHARACTERS))


def _marks_held(theirs: dict[str, str]) -> str:
    marks = _marks(theirs)
    return f"their text would still hold {marks}, and " if marks else ""


def _cleaning_chain(node: ast.AST) -> tuple[tuple[str, str], list[tuple[str, str, str, bool]]] | None:
    """The `frame["col"]` at the root of `frame["col"].str.replace("$", "").str.strip()` with its cleanings in the
    order they run, each (method, argument, replacement, regex); None when any step is not one nbagent can play."""
    steps: list[tuple[str, str, str, bool]] = []
    while frame_column(node) is None:
        if is_method_call(node, "astype") and [ast.unparse(a) for a in node.args] == ["str"]:
            node = node.func.value
            continue
        step = _played_step(node)
        if step is None:
            return None
        steps.append(step)
        node = node.func.value.value
    return frame_column(node), steps[::-1]


def _played_step(node: ast.AST) -> tuple[str, str, str, bool] | None:
    """(method, argument, replacement, regex) of one `.str.<cleaning>(<literals>)`, else None."""
    if not (
        is_method_call(node, *TEXT_CLEANINGS)
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "str"
    ):
        return None
    method = node.func.attr
    named = {k.arg: k.value for k in node.keywords}
    if set(named) - {"pat", "repl", "regex", "to_strip", "prefix", "suffix"}:
        return None
    values = [*node.args, *(named[k] for k in ("pat", "repl", "to_strip", "prefix", "suffix") if k in named)]
    if not all(is_text(value) for value in values):
        return None
    texts = [value.value for value in values]
    regex = named.get("regex")
    if regex is not None and not (isinstance(regex, ast.Constant) and isinstance(regex.value, bool)):
        return None
    if method == "replace":
        return ("replace", *texts, bool(regex and regex.value)) if len(texts) == 2 else None
    return (method, texts[0] if texts else None, "", False) if len(texts) <= 1 else None


def _unread(distinct: list[str], steps: list[tuple[str, str, str, bool]]) -> dict[str, str]:
    """The texts that read as numbers (as `to_number` reads them) but not after `steps` and `pd.to_numeric`:
    {text: what the cleaning left of it}."""
    import pandas as pd

    from nbagent.data.cleaning import looks_like_number  # pandas is loaded: the values are a frame's

    numbers = [text for text in distinct if looks_like_number(text)]
    cleaned = [_played(text, steps) for text in numbers]
    if any(text is None for text in cleaned):
        return {}
    read = pd.to_numeric(pd.Series(cleaned, dtype=object), errors="coerce")
    return {text: left for text, left, gap in zip(numbers, cleaned, read.isna(), strict=True) if gap}


def _played(text: str, steps: list[tuple[str, str, str, bool]]) -> str | None:
    """`text` after the cleaning steps, or None when a step cannot be played."""
    for method, argument, replacement, regex in steps:
        if method == "replace" and regex:
            removed = _removed_characters(argument, replacement, text)
            if removed is None:
                return None
            text = "".join(character for character in text if character not in removed)
        elif method == "replace":
            text = text.replace(argument, replacement)
        elif argument is not None or method.endswith("strip"):
            text = getattr(text, method)(argument)
        else:
            return None  # removeprefix() without a prefix: the code fails anyway
    return text


def _removed_characters(pattern: str, replacement: str, text: str) -> set[str] | None:
    """The characters of `text` a regex replacement by "" removes, each tried alone (never the pattern on the whole
    text); None for a replacement that writes something, or a pattern that does not compile."""
    if replacement:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error:
        return None
    return {character for character in set(text) if compiled.fullmatch(character)}
