"""A "which/who <thing>" answer is a value of the data: a label of the column that holds the things.

Users saw a small model answer "Which region …?" with a row number (`61`, from `revenue.idxmax()` of a frame whose
index counts rows), with a date, or with a sentence saying nothing was found. The question's noun names the column
("which region" → `region`, "which customer" → `customer`, `customer_id`, `customer_name` or a `name` column, "who"
→ a column of names; singular or plural, any case) in the frames the task points at; the answer, or the part of it
that names the thing, must be one of that column's values (compared as a person reads them: 'north ' is North, '017'
is 17). Where no column matches the noun, it must be some label of the data: a value of a text column or of an
index. A dict answer whose keys are column names (`{'region': 61, 'revenue': 2162.4}`) is read key by key.

Each refusal says which column holds the things and three of its values, never the line that would answer.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from .data_card import data_frames, holds_text, is_number, value_kind
from .doubts import Contradiction

__all__ = ["ManyForOne", "label_problems", "one_row_for_a_total"]

_STOP = frozenset(
    "is was were are be been has had have did does do of the a an one ones in on at to for from with by and or "
    "that this these those there their its it top most least best worst highest lowest largest smallest biggest "
    "more less many much two three four five first last may might can could would should will must shall not "
    "if".split()
)
# which month/day/… is a date question (answer_kinds.date_missing): the date is the answer there
_DATE_NOUNS = frozenset(
    "month months day days date dates year years week weeks quarter quarters weekday weekdays time times hour hours "
    "period periods season seasons deadline deadlines timestamp minute minutes".split()
)
_PERSON_NOUNS = frozenset(
    "customer customers client clients employee employees person people user users student students player players "
    "member members seller sellers salesperson rep reps owner owners author authors agent agents manager managers "
    "staff worker workers buyer buyers patient patients".split()
)
_PERSON_COLUMNS = frozenset({"name", "fullname", "person", "who"})
_ASKED = re.compile(
    r"\b(?P<word>which|what|who|whose)\b(?P<rest>(?:\s+(?:one\s+)?of\s+the)?(?:\s+[A-Za-z]\w*){0,3})", re.I
)
_DICT_FROM = re.compile(
    r"\b(?:dict|dictionary|mapping)\s+(?:from|of|mapping)\s+(?:each\s+)?(?P<noun>[A-Za-z]\w*)", re.I
)
_ANSWER_SENTENCE = re.compile(r"(?:^|[.?!]\s+)(?:answer|give|reply|return)\b[^.?!]*", re.I)
_NOTHING_FOUND = re.compile(
    r"\bnot\s+(?:be\s+)?found\b|\bno\b[^.?!]{0,40}\bfound\b|\bthere\s+(?:is|are|was|were)\s+no\b|\bnone\s+of\b|"
    r"\bno\s+(?:such|matching|data|results?|match)\b|\bcould\s*n[o']t\s+(?:find|determine)\b|\bnothing\b|"
    r"\bunable\s+to\s+(?:find|determine)\b|^\s*(?:none|n/?a|unknown)\s*\.?\s*$",
    re.I,
)
_DATE_TEXT = re.compile(
    r"^\s*(?:\d{4}-\d{1,2}(?:-\d{1,2})?(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}/\d{1,2}/\d{2,4}|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|"
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december)\s+\d{4})\s*$",
    re.I,
)
_MISSING = frozenset({"", "nan", "none", "null", "<na>", "na", "n/a", "nat"})
_EXAMPLES = 3
_MAX_LABELS = 200_000  # a column with more distinct values is read no further
_SHOWN = 40
_MANY_FOR_ONE = 3  # things listed for "which one … the most" (two may be a tie)
_FEW_LABELS = 50  # a column of categories, not of names or ids: an answer outside it is proved wrong


@dataclass
class _Holder:
    """The column (or index) that holds the things the question asks about, and its values as read."""

    frame: str
    column: str
    texts: set[str]
    numbers: set[float]
    examples: list[str]
    is_text: bool
    is_date: bool

    @property
    def where(self) -> str:
        shown = ", ".join(self.examples[:_EXAMPLES]) + (", …" if len(self.examples) > _EXAMPLES else "")
        return f"{self.frame}[{self.column!r}] ({shown})" if shown else f"{self.frame}[{self.column!r}]"


class ManyForOne(Contradiction):
    """Many things listed where the question asks for the one that comes first."""


def label_problems(answer: Any, question: str, variables: list[str], namespace: dict[str, Any], two: bool) -> list[str]:
    """Why `answer` is no value of the data the question's "which/who <thing>" asks for ([] if it may be one).

    `two`: the question asks two things at once (which one and how much), so a number beside the thing is right."""
    frames = [(name, frame) for name, frame in data_frames(namespace) if name in variables]
    if not frames:
        return []
    asked = _asked_thing(question)
    if isinstance(answer, dict) and answer:
        by_column = _dict_by_columns(answer, frames)
        if by_column is not None:
            return by_column
    if asked is None:
        return _dict_keys_problems(answer, question, frames)
    word, nouns = asked
    holders = _holders(nouns, word, question, frames)
    if word == "what" and not holders:  # "what is the total …": only "what region" asks for a thing
        return []
    noun = next((noun for noun in reversed(nouns) if any(_matches(h.column, [noun]) for h in holders)), None)
    noun = noun or (nouns[0] if nouns else "")
    thing = _singular(noun.lower()) if noun else "person"
    plural = noun.lower().endswith("s") and _singular(noun.lower()) != noun.lower()
    parts = _thing_parts(answer, two)
    if not plural and _MOST.search(question) and len([p for p in parts if not is_number(p)]) >= _MANY_FOR_ONE:
        return [  # "which client spent the most?" answered with every client's name
            ManyForOne(
                f"the question asks which one {thing} comes first, but the answer lists {_count(answer, parts)} of them: pick "
                f"the one (sort or idxmax the totals per {thing}, then take its {thing})"
            )
        ]
    for part in parts:
        problem = _part_problem(part, thing, holders, frames, namespace, plural)
        if problem:
            return [problem]
    return []


_MOST = re.compile(r"\b(most|highest|largest|biggest|top|least|lowest|smallest|fewest)\b", re.IGNORECASE)
# words that make "the most" a total over the thing's rows: a client spends over several orders
_TOTALLED = re.compile(
    r"\b(spen[dt]|sold|sells?|bought|buys?|earned|ordered|brought in|generated|paid|revenue|sales|total|overall|"
    r"in all|amount|orders|units)\b",
    re.IGNORECASE,
)
_PICKS = frozenset({"idxmax", "idxmin", "nlargest", "nsmallest", "max", "min", "sort_values", "argmax", "argmin"})
_GROUPINGS = frozenset({"groupby", "pivot_table", "value_counts", "resample", "crosstab", "agg", "aggregate"})


def one_row_for_a_total(question: str, tree: ast.Module, variables: list[str], namespace: dict[str, Any]) -> list[str]:
    """ "Which client spent the most?" answered from the single largest row: a client has several orders, so the
    most is a total per client (the messy run answered the client of the largest one order). Said only where the
    thing's column repeats in a frame the question names, and the code picks without grouping."""
    asked = _asked_thing(question)
    if asked is None or not asked[1] or not _MOST.search(question) or not _TOTALLED.search(question):
        return []
    methods = {
        node.func.attr for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    if not methods & _PICKS or methods & _GROUPINGS:
        return []
    for name, frame in data_frames(namespace):
        if name not in variables:
            continue
        for column, noun in ((column, noun) for column in frame.columns for noun in reversed(asked[1])):
            values = frame[column]
            if _matches(column, [noun]) and values.notna().sum() > values.nunique() > 1:
                thing = _singular(noun.lower())
                return [
                    f"the question asks which {thing} comes first over all its rows, but the code picked one row "
                    f"(the largest single value): a {thing} has several rows in {name} ({name}[{str(column)!r}] "
                    f"repeats), so total per {thing} first ({name}.groupby({str(column)!r})), then pick the largest"
                ]
    return []


# ---------------------------------------------------------------------------------------------- the question


def _asked_thing(question: str) -> tuple[str, list[str]] | None:
    """("which", ["customer", "segment"]) for "Which customer segment …"; None when no thing is asked for."""
    for found in _ASKED.finditer(question):
        word = found.group("word").lower()
        rest = re.sub(r"^\s+(?:one\s+)?of\s+the\b|^\s+(?:kind|type|sort)s?\s+of\b", "", found.group("rest"))
        nouns = []
        for noun in rest.split():
            if noun.lower() in _STOP:
                break
            nouns.append(noun)
            if len(nouns) == 2:
                break
        if any(noun.lower() in _DATE_NOUNS for noun in nouns):
            return None
        if word in ("who", "whose"):  # "who improved the most": a person, whatever the verb
            return word, []
        if nouns:
            return word, nouns
    return None


def _forms(noun: str) -> set[str]:
    noun = re.sub(r"[^a-z0-9]", "", noun.lower())
    return {noun, _singular(noun), noun + "s"} - {""}


def _singular(noun: str) -> str:
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if re.search(r"(ches|shes|sses|xes)$", noun):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss") and len(noun) > 3:
        return noun[:-1]
    return noun


def _key_of(column: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(column).lower())


def _matches(column: Any, nouns: list[str]) -> bool:
    key = _key_of(column)
    for noun in nouns:
        for form in _forms(noun):
            if key in (form, form + "id", form + "name", form + "code", form + "number", form + "no"):
                return True
    return False


def _holders(nouns: list[str], word: str, question: str, frames: list[tuple[str, Any]]) -> list[_Holder]:
    """The columns (and named indexes) of the frames that hold the things: the noun's column first."""
    person = word in ("who", "whose") or any(noun.lower() in _PERSON_NOUNS for noun in nouns)
    found: list[_Holder] = []
    for name, frame in frames:
        for position, column in enumerate(frame.columns):
            if _matches(column, nouns) or person and _is_person_column(column):
                found.append(_holder(name, str(column), frame.iloc[:, position]))
        index_name = getattr(frame.index, "name", None)
        if index_name is not None and _matches(index_name, nouns):
            found.append(_holder(name, str(index_name), frame.index.to_series()))
    if found:  # the column the answer is asked in ("Answer with its order_id") holds them too
        named = " ".join(_ANSWER_SENTENCE.findall(question))
        for name, frame in frames:
            for position, column in enumerate(frame.columns):
                if re.search(rf"\b{re.escape(str(column))}\b", named) and all(
                    (h.frame, h.column) != (name, str(column)) for h in found
                ):
                    found.append(_holder(name, str(column), frame.iloc[:, position]))
    exact = [h for h in found if any(_key_of(h.column) in _forms(noun) for noun in nouns)]
    return exact + [h for h in found if h not in exact]


def _is_person_column(column: Any) -> bool:
    key = _key_of(column)
    return key in _PERSON_COLUMNS or key.endswith("name") or key in _PERSON_NOUNS


def _holder(frame: str, column: str, values: Any) -> _Holder:
    distinct = values.dropna().unique()[:_MAX_LABELS]
    texts: set[str] = set()
    numbers: set[float] = set()
    examples: list[str] = []
    for value in distinct:
        kind, key = _read(value)
        if kind == "n":
            numbers.add(key)
        elif kind == "t":
            texts.add(key)
        shown = str(value).strip()
        if kind and shown and len(examples) < _EXAMPLES + 1 and shown not in examples:
            examples.append(shown[:_SHOWN])
    kind = getattr(values.dtype, "kind", "O")
    return _Holder(frame, column, texts, numbers, examples, is_text=bool(texts), is_date=kind == "M")


def _read(value: Any) -> tuple[str, Any]:
    """("n", 17.0) for a number (also '017'), ("t", "north") for text as a person reads it, ("", None) if missing."""
    if isinstance(value, bool) or value is None:
        return "", None
    if is_number(value):
        number = float(value)
        return ("", None) if math.isnan(number) else ("n", number)
    text = str(value).strip().casefold()
    if text in _MISSING:
        return "", None
    if re.fullmatch(r"[-+]?\d+(?:\.\d+)?", text):
        return "n", float(text)
    return "t", text


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) or getattr(getattr(value, "dtype", None), "kind", "-") in ("i", "u")


def _is_date(value: Any) -> bool:
    name = type(value).__name__
    if name in ("Timestamp", "datetime", "date", "datetime64", "Period"):
        return True
    return isinstance(value, str) and _DATE_TEXT.match(value) is not None


# ---------------------------------------------------------------------------------------------- the answer


def _count(answer: Any, parts: list[Any]) -> int:
    try:
        return len(answer)
    except TypeError:
        return len(parts)


def _thing_parts(answer: Any, two: bool) -> list[Any]:
    """The parts of `answer` that name the thing: the answer itself, a list's items, a dict's or a Series' keys;
    beside text, numbers are amounts (a which-and-how-much pair), and so are they in a two-things question."""
    if isinstance(answer, dict):
        parts = list(answer)[:50]
    elif value_kind(answer) == "Series":
        parts = list(answer.index[:50])
    elif isinstance(answer, (list, tuple, set, frozenset)):
        parts = list(answer)[:50]
    elif value_kind(answer) in ("DataFrame", "ndarray"):
        return []
    else:
        return [] if two and is_number(answer) else [answer]
    numbers = [part for part in parts if is_number(part)]
    if two or len(numbers) < len(parts):
        return [part for part in parts if not is_number(part)]
    return parts


def _part_problem(
    part: Any,
    thing: str,
    holders: list[_Holder],
    frames: list[tuple[str, Any]],
    namespace: dict[str, Any],
    plural: bool,
) -> str:
    kind, key = _read(part)
    texts = _all(holders, "texts")
    if holders and (kind == "n" and key in _all(holders, "numbers") or kind == "t" and {key, _singular(key)} & texts):
        return ""  # (a plural reads as its label: "Consumers" for the Consumer segment)
    if type(part).__name__ == "Interval":  # a bin the code made ("which age group"): no label of a column
        return ""
    texts_first = sorted(holders, key=lambda holder: not holder.is_text) if kind == "t" else holders
    where = _where(texts_first, thing)
    shown = _shown(part)
    if isinstance(part, str) and _NOTHING_FOUND.search(part):
        if plural:  # "which regions met their target?": none may be the answer
            return ""
        return (
            f"the question asks which {thing}, but the answer says none was found ({shown}): one {thing} is the "
            f"answer. {where[0].upper()}{where[1:]}; print the values you compare, then answer with the {thing} itself"
        )
    if _is_date(part) and not any(h.is_date for h in holders):
        return f"the question asks which {thing}, but the answer {shown} is a date, not {_a(thing)}: {where}"
    if kind == "t":
        text_holders = [holder for holder in holders if holder.is_text]
        if _names_a_label(key, holders):
            return ""
        if not text_holders and _is_known_label(part, frames, namespace):  # a thing held by its id, named by name
            return ""
        said = f"the answer {shown} is not {_a(thing)} of the data: {where}"
        return Contradiction(said) if _shares_no_word(key, holders, thing) else said
    if kind == "n" and is_number(part):
        if not holders and (not _is_whole(part) or _is_known_label(part, frames, namespace)):
            return ""  # no column to read the things from: only a whole number no label has is a row number
        return _row_number_said(shown, thing, where)
    return ""


def _row_number_said(shown: str, thing: str, where: str) -> str:
    return (
        f"the question asks which {thing}, but the answer {shown} is not {_a(thing)} of the data (a number like this "
        f"is a row number or a count): {where}; answer with the {thing} itself"
    )


def _where(holders: list[_Holder], thing: str) -> str:
    if not holders:
        return f"answer with {_a(thing)} as the data writes it (a value of a text column or of an index)"
    return f"the {_plural(thing)} are in {holders[0].where}"


def _a(thing: str) -> str:
    return f"an {thing}" if thing[:1].lower() in "aeiou" else f"a {thing}"


def _plural(thing: str) -> str:
    if thing == "person":
        return "names"
    return thing[:-1] + "ies" if thing.endswith("y") and thing[-2:-1] not in "aeiou" else thing + "s"


def _shown(part: Any) -> str:
    text = repr(part) if isinstance(part, str) else str(part)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _all(holders: list[_Holder], field: str) -> set:
    return set().union(*(getattr(holder, field) for holder in holders))


def _names_a_label(text: str, holders: list[_Holder]) -> bool:
    """`text` ("The North region", "customer 17") names one of the holders' values as a word."""
    words = set(re.findall(r"[-+]?\d+(?:\.\d+)?", text))
    if any(float(word) in _all(holders, "numbers") for word in words):
        return True
    labels = _all(holders, "texts")
    if len(labels) > 5000:  # a long column of names: only the whole text, read as a label, counts
        return False
    return any(len(label) > 1 and re.search(rf"(?<!\w){re.escape(label)}(?!\w)", text) for label in labels)


def _shares_no_word(text: str, holders: list[_Holder], thing: str) -> bool:
    """Proof, not doubt: the thing's own column (`segment` for "which segment") holds a few labels, and the answer
    shares no word with any label of the columns that hold the things (a client's name, or names a `sum()` joined,
    for a segment). Spellings a person reads as one label share a word ("Consumers", "consumer ", "CONSUMER")."""
    own = [h for h in holders if h.is_text and _key_of(h.column) in _forms(thing)]
    if not own or any(len(h.texts) > _FEW_LABELS or not all(map(_words, h.texts)) for h in own):
        return False  # many labels (names, ids), or codes ('B', 'C') a full word may stand for
    words = _words(text)
    return bool(words) and not any(words & _words(label) for label in _all(holders, "texts"))


def _words(text: str) -> set[str]:
    return {_singular(word) for word in re.findall(r"[a-z0-9]+", text.casefold()) if len(word) > 2}


def _is_known_label(part: Any, frames: list[tuple[str, Any]], namespace: dict[str, Any]) -> bool:
    """`part` is some label of the data: a value of a text column of the frames (a number: of any column), or of
    an index (not one that counts rows) of a pandas value the code made — a label the code derived counts too."""
    kind, key = _read(part)
    if not kind:
        return True
    for _, frame in frames:
        for position in range(len(frame.columns)):
            values = frame.iloc[:, position]
            text_column = holds_text(values)
            if (kind == "n" or text_column) and _holds(values, kind, key, contained=kind == "t" and text_column):
                return True
    for value in namespace.values():
        index = getattr(value, "index", None) if value_kind(value) in ("Series", "DataFrame") else None
        if index is not None and type(index).__name__ != "RangeIndex" and _holds(index, kind, key, contained=False):
            return True
        columns = getattr(value, "columns", None) if value_kind(value) == "DataFrame" else None
        if columns is not None and _holds(columns, kind, key, contained=False):
            return True
    return False


def _holds(values: Any, kind: str, key: Any, contained: bool) -> bool:
    distinct = values.unique()[:_MAX_LABELS] if hasattr(values, "unique") else values
    for value in distinct:
        found = _read(value)
        if found == (kind, key):
            return True
        if contained and found[0] == "t" and len(found[1]) > 2 and len(distinct) <= 5000:
            if re.search(rf"(?<!\w){re.escape(found[1])}(?!\w)", key):
                return True
    return False


# ---------------------------------------------------------------------------------------------- dict answers


def _dict_by_columns(answer: dict, frames: list[tuple[str, Any]]) -> list[str] | None:
    """`{'region': 61, 'revenue': 2162.4}`: each key that names a column of labels is checked against it; a row
    number there, with the other values read from that one row, is said so. None when no key names a column."""
    columns = {}
    for name, frame in frames:
        for position, column in enumerate(frame.columns):
            columns.setdefault(_key_of(column), (name, frame, position))
    keyed = [(key, columns[_key_of(key)]) for key in answer if isinstance(key, str) and _key_of(key) in columns]
    if not keyed:
        return None
    problems = []
    for key, (name, frame, position) in keyed:
        values = frame.iloc[:, position]
        if not _is_label_column(values, key):
            continue
        holder = _holder(name, str(frame.columns[position]), values)
        kind, read = _read(answer[key])
        if not kind or kind == "n" and read in holder.numbers or kind == "t" and read in holder.texts:
            continue
        if kind == "t" and _names_a_label(read, [holder]):
            continue
        thing = _singular(re.sub(r"[_ ]?(id|name|code)$", "", key.lower()) or key.lower())
        said = f"the answer's {key!r} is {_shown(answer[key])}, which is not {_a(thing)} of {holder.where}"
        row = _row_of(answer[key], frame)
        if row is not None:
            said += _one_row_values(answer, key, row, frame, name, thing)
        problems.append(said)
    return problems


def _is_label_column(values: Any, key: str) -> bool:
    """A column of things (text, or ids), not of amounts."""
    text = holds_text(values)
    return text or bool(re.search(r"(^|_)(id|code|no|number)$|id$", key.lower()))


def _row_of(value: Any, frame: Any) -> int | None:
    if not is_number(value) or float(value) != int(value) or type(frame.index).__name__ != "RangeIndex":
        return None
    row = int(value)
    return row if 0 <= row < len(frame) else None


def _one_row_values(answer: dict, key: str, row: int, frame: Any, name: str, thing: str) -> str:
    """ ", and its 'revenue' 2162.4 is a value of that one row (row 61), not a total per region" when it is so."""
    record = frame.iloc[row]
    numbers = [float(v) for v in record.values if is_number(v) and not math.isnan(float(v))]
    candidates = numbers + [a * b for i, a in enumerate(numbers) for b in numbers[i + 1 :]]
    for other, value in answer.items():
        if other == key or not is_number(value):
            continue
        if any(math.isclose(float(value), c, rel_tol=1e-6, abs_tol=0.006) for c in candidates):
            return (
                f", and its {other!r} {_shown(value)} is a value of that one row of {name} (row {row}), not a total "
                f"per {thing}: group the rows by {key} first"
            )
    return " (a number like this is a row number)"


def _dict_keys_problems(answer: Any, question: str, frames: list[tuple[str, Any]]) -> list[str]:
    """ "Give a dict from region to revenue" answered with keys that are no regions (row numbers, say)."""
    asked = _DICT_FROM.search(question)
    if not (asked and isinstance(answer, dict) and answer):
        return []
    noun = asked.group("noun")
    holders = [h for h in _holders([noun], "which", "", frames) if _key_of(h.column) in _forms(noun)]
    if not holders:
        return []
    thing = _singular(noun.lower())
    for key in list(answer)[:50]:
        kind, read = _read(key)
        if (
            not kind
            or kind == "n"
            and read in _all(holders, "numbers")
            or kind == "t"
            and read in _all(holders, "texts")
        ):
            continue
        if kind == "t" and _names_a_label(read, holders):
            continue
        return [
            f"the answer's key {_shown(key)} is not {_a(thing)} of the data: the {_plural(thing)} are in "
            f"{holders[0].where}"
        ]
    return []
