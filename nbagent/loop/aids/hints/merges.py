"""Merge mistakes: a key one side lacks, or a key of two types (int64 and str).

A merge key one side lacks has a column that matches it on that side (a similar name, shared values): the
hint names the pairs that could match, with their dtypes, and the left_on=/right_on= form; keys of two types
get which side to convert, the direction chosen from the values.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from typing import Any

from ..code_checks import is_method_call
from ..data_card import frames_in, value_kind
from ..error_keys import merge_types, missing_keys
from .code_names import texts
from .failure import Failure, parsed, segment
from .values import DISTINCT, all_numbers, all_whole_numbers, examples, one_form, values_kind

__all__ = ["merge_hint"]


@dataclass
class _Merge:
    """A merge call of the failing code: each side's code and frame, and the keys each side is joined on."""

    left: str
    right: str
    left_frame: Any
    right_frame: Any
    left_keys: list[str]
    right_keys: list[str]
    function: bool  # pd.merge(a, b, …), not a.merge(b, …)
    extra: list[str]  # the call's other arguments (how="left", …), as written


def _merge_in(text: str, namespace: dict[str, Any]) -> _Merge | None:
    tree = parsed(text)
    for node in ast.walk(tree) if tree else ():
        if not is_method_call(node, "merge"):
            continue
        owner = node.func.value
        function = isinstance(owner, ast.Name) and value_kind(namespace.get(owner.id)) != "DataFrame"
        words = {word.arg: word.value for word in node.keywords if word.arg}
        sides = list(node.args[:2]) if function else [owner, *node.args[:1]]
        sides += [words[name] for name in (("left", "right") if function else ("right",)) if name in words]
        if len(sides) < 2:
            continue
        frames = [_frame_for(side, text, namespace) for side in sides[:2]]
        if frames[0] is None or frames[1] is None:
            continue
        on = texts(words["on"]) if "on" in words else []
        extra = [segment(text, word) for word in node.keywords if word.arg not in ("on", "left_on", "right_on")]
        return _Merge(
            left=segment(text, sides[0]),
            right=segment(text, sides[1]),
            left_frame=frames[0],
            right_frame=frames[1],
            left_keys=on or (texts(words["left_on"]) if "left_on" in words else []),
            right_keys=on or (texts(words["right_on"]) if "right_on" in words else []),
            function=function,
            extra=[part for part in extra if not part.startswith(("left=", "right="))],
        )
    return None


def _frame_for(node: ast.AST, text: str, namespace: dict[str, Any]) -> Any:
    """The frame a side of a merge is: a variable, or the first frame its code names (`deals[deals.x > 1]`)."""
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) == "DataFrame" else None
    named = frames_in(segment(text, node), namespace)
    return named[0][1] if named else None


def merge_hint(found: Failure) -> str:
    if ".merge(" not in found.statement:
        return ""
    types = merge_types(found.message)
    if found.cause != "KeyError" and not types:
        return ""
    merge = _merge_in(found.statement, found.namespace)
    if types:
        return _merge_types_hint(merge, types)
    if merge is None:
        return ""
    keys = [str(key) for key in missing_keys(found.message)]
    key = next((key for key in keys if key in merge.left_keys + merge.right_keys), None)
    return _merge_key_hint(merge, key) if key else ""


def _merge_key_hint(merge: _Merge, key: str) -> str:
    """A merge key one side (or both) lacks: the columns of each side that could match, and the left_on=/right_on= form."""
    left_has = key in map(str, merge.left_frame.columns)
    right_has = key in map(str, merge.right_frame.columns)
    if left_has != right_has:
        lacking, having = (merge.right, merge.left) if left_has else (merge.left, merge.right)
        first = f"Hint: `{lacking}` has no column {key!r} to merge on (`{having}` has it)."
    else:
        first = f"Hint: neither `{merge.left}` nor `{merge.right}` has a column {key!r} to merge on."
    pairs = _matching_columns(merge.left_frame, merge.right_frame, key)
    if not pairs:
        return (
            f"{first} No column of `{merge.left}` ({_typed_columns(merge.left_frame)}) shares a name or values with "
            f"one of `{merge.right}` ({_typed_columns(merge.right_frame)}): look for a table that links them."
        )
    said = "; ".join(
        f"`{merge.left}`.{left} ({merge.left_frame[left].dtype}) and `{merge.right}`.{right} "
        f"({merge.right_frame[right].dtype}): {why}"
        for left, right, why in pairs[:2]
    )
    left, right, _ = pairs[0]
    line = _merge_line(merge, left, right)
    convert = _conversion(
        (f"{merge.left}[{left!r}]", merge.left_frame[left]), (f"{merge.right}[{right!r}]", merge.right_frame[right])
    )
    return f"{first} The columns that could match: {said}.\nWrite {line}." + (f" {convert}" if convert else "")


def _merge_line(merge: _Merge, left: str, right: str) -> str:
    keys = [f"left_on={left!r}, right_on={right!r}"] if left != right else [f"on={left!r}"]
    if merge.function:
        return f"pd.merge({', '.join([merge.left, merge.right, *keys, *merge.extra])})"
    return f"{merge.left}.merge({', '.join([merge.right, *keys, *merge.extra])})"


def _typed_columns(frame: Any, limit: int = 8) -> str:
    said = [f"{column} ({dtype})" for column, dtype in list(frame.dtypes.items())[:limit]]
    return ", ".join(said) + (", …" if frame.shape[1] > limit else "")


def _matching_columns(left: Any, right: Any, key: str) -> list[tuple[str, str, str]]:
    """(left column, right column, why) of the pairs that could be one key: same or similar names, shared values.

    The pairs with the key the code named come first, then the likeliest; values are compared in one form
    (17, '17' and '017' alike), so a key held as a number on one side and as text on the other still matches.
    """
    left_values = {str(column): _value_forms(left[column]) for column in list(left.columns)[:40]}
    right_values = {str(column): _value_forms(right[column]) for column in list(right.columns)[:40]}
    scored = []
    for left_column, ours in left_values.items():
        for right_column, theirs in right_values.items():
            likeness = _name_likeness(left_column, right_column)
            shared = len(ours & theirs)
            overlap = shared / min(len(ours), len(theirs)) if ours and theirs else 0.0
            if likeness < 0.75 and overlap < 0.5:
                continue
            named = "same name" if likeness == 1 else "similar names" if likeness >= 0.75 else ""
            compared = min(len(ours), len(theirs))
            values = (f"{shared} of {compared} values shared" if shared else "no values shared") if compared else ""
            why = ", ".join(part for part in (named, values) if part)
            keyed = key in (left_column, right_column)
            scored.append((keyed, overlap + likeness, left_column, right_column, why))
    scored.sort(key=lambda pair: (pair[0], pair[1]), reverse=True)
    best = scored[0][1] if scored else 0.0  # a pair much less likely than the best (small numbers alike) is noise
    return [(left, right, why) for keyed, score, left, right, why in scored if keyed or score >= best - 0.25]


def _value_forms(series: Any) -> set[str]:
    """A column's distinct values in one form; none for flags (two values or fewer) and booleans."""
    if series.dtype.kind == "b":
        return set()
    values = series.dropna().unique()[:DISTINCT]
    return {one_form(value) for value in values} if len(values) > 2 else set()


def _name_likeness(first: str, second: str) -> float:
    a, b = first.casefold(), second.casefold()
    if a == b:
        return 1.0
    shorter, longer = sorted((a, b), key=len)
    if len(shorter) >= 2 and re.search(rf"(^|_){re.escape(shorter)}(_|$)", longer):
        return 0.9  # rep and rep_id, id and client_id
    return difflib.SequenceMatcher(None, a, b).ratio()


def _merge_types_hint(merge: _Merge | None, types: tuple[str, str, str]) -> str:
    """Keys of two types (int64 and str): which side holds what, and which side to convert, chosen from the values."""
    left_type, right_type, key = types
    if merge is not None:
        left_key = key if key in map(str, merge.left_frame.columns) else (merge.left_keys or [key])[0]
        position = merge.left_keys.index(left_key) if left_key in merge.left_keys else 0
        right_key = merge.right_keys[position] if len(merge.right_keys) > position else left_key
        if left_key in map(str, merge.left_frame.columns) and right_key in map(str, merge.right_frame.columns):
            left = (f"{merge.left}[{left_key!r}]", merge.left_frame[left_key])
            right = (f"{merge.right}[{right_key!r}]", merge.right_frame[right_key])
            return (
                f"Hint: the merge key has a different type on each side: `{left[0]}` is {left_type} "
                f"({examples(left[1])}) and `{right[0]}` is {right_type} ({examples(right[1])}). "
                + (_conversion(left, right) or "Convert one side so both hold the same type.")
            )
    return (
        f"Hint: the merge key is {left_type} on the left and {right_type} on the right: convert one side, "
        "with .astype(int) when the text holds whole numbers or .astype(str) when it does not, so both hold the same type."
    )


def _into_a_new_frame(column: str, kind: str) -> str:
    """How to convert `column` (`clients['client_id']`) in a copy of its frame: the notebook's frame stays as it is
    (the line before, `clients['client_id'] = ….astype(int)`, changed the user's frame in two messy runs)."""
    frame, _, key = column.partition("[")
    name = key[:-1].strip("'\"")
    converted = f"{column}.astype({kind})"
    assigned = f"{name}={converted}" if name.isidentifier() else f"**{{{name!r}: {converted}}}"
    return f"into a new frame (your notebook's `{frame}` stays as it is): {frame}.assign({assigned})"


def _conversion(first: tuple[str, Any], second: tuple[str, Any]) -> str:
    """How to give two key columns one type, the direction chosen from their values ("" when they have one)."""
    kinds = {values_kind(first[1]): first, values_kind(second[1]): second}
    if len(kinds) < 2:
        return ""
    if "text" in kinds and "number" in kinds:
        (text, values), numbers = kinds["text"], kinds["number"][0]
        if all_whole_numbers(values):
            return f"Its text holds whole numbers, so convert the text, {_into_a_new_frame(text, 'int')}."
        if all_numbers(values):
            return f"Its text holds numbers, so convert the text, {_into_a_new_frame(text, 'float')}."
        return (
            f"The text is not all numbers, so convert the numbers with {numbers}.astype(str), "
            "and check the values are then written alike."
        )
    if "text" in kinds and "date" in kinds:
        text = kinds["text"][0]
        return f"Its text holds dates, so convert the text: {text} = pd.to_datetime({text})."
    return "They hold different kinds of values: convert one side with .astype(...) so both hold the same type."
