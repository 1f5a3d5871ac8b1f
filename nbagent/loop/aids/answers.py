"""Checks of a small model's final answer: is it an answer at all, and to the question that was asked?

A 1.5B model's wrong answers to data questions are mostly of a few kinds (measured on
benchmarks/data_questions.py): no value or an error message handed back as the answer; a whole
column; a row number where the data's id was asked (`revenue.idxmax()` of a frame whose index
counts rows); an id looked up as a row number (`customers.loc[customer_id]`); numbers where names
were asked; a value the question names ("the South region", "May 2024") never selected, or one
it does not name selected anyway; a variable the question points at never used. Each check says
what is wrong in one sentence, with the line to write where there is one. The form a question asks for
(two things at once, a date) is checked in `answer_kinds`; that a "which region" answer is a region of the
data (not a row number, a date or "none found") in `answer_labels`; that "improved the most" was not answered
with the largest fall in `directions`. `CodeLoop` refuses the answer once per problem, so a model that is sure
can answer the same again — unless the doubt is a `Contradiction`: the data proves the answer wrong as it
stands (its groups are one label written several ways, it totals numbers written as text, it counts repeated
rows the question said to count once, it is one thing where "which … and how many" asks two, a number where the
question demands a name, a total of a frame whose rows with a value were dropped in place, a month the question
names from code that reads no date, a year the question names from code that writes none), and such an answer
never stands: told twice, the run ends without one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .amounts import counted_for_an_amount, label_for_an_amount, mean_over_gaps
from .answer_kinds import asks_two_things, both_things_missing, certainly_one_thing, date_missing
from .answer_labels import ManyForOne, label_problems, one_row_for_a_total
from .bindings import through_wrappers
from .chart_checks import periods_held
from .code_checks import is_method_call, is_text
from .data_card import data_frames, filled_text, holds_text, is_number, owner_frame, text_kind, value_kind
from .directions import direction_problems
from .doubts import Contradiction, Mended, ProvedUntidy, Untidy
from .hints.code_names import series_of
from .merged_sides import other_side_read
from .selections import empty_selection_lines
from .signs import negative_total_subtracted
from .untidy_answers import (
    blank_groups,
    blanks_not_counted,
    distinct_rows_for_repeats,
    gaps_counted_after_dropna,
    gaps_subtracted_from_rows,
    kept_rows_counted_for_missing,
    label_spellings_missed,
    repeats_not_dropped,
    spellings_counted_apart,
    text_totalled,
    whole_rows_dropped_for_a_total,
)

__all__ = ["AnswerContext", "Contradiction", "answer_problem", "answer_problems"]

_LONG_ANSWER_ROWS = 24  # a Series answer longer than this is a column, not a per-group result
_ERROR_ANSWER = re.compile(
    r"^\s*(error\b|an error\b|traceback\b|exception\b|\w*(error|exception)\s*:|(i am |i'm )?(unable|cannot|can't)\b)",
    re.IGNORECASE,
)
# str() of what a plotting call returns: the messy run answered a chart question with str(series.plot(kind="bar"))
_PLOT_OBJECT_TEXT = re.compile(
    r"^\s*\[?\s*(?:(?:Axes|AxesSubplot|Figure|Text|Line2D|BarContainer)\(|<(?:matplotlib|Axes|Figure|BarContainer)\b)"
)
# anything of the code that may read a date (a column named order_date, .dt, a month's name in a variable) keeps
# a month never picked a doubt: only code that reads no date at all cannot have picked it
_DATE_READ = re.compile(r"\.dt\b|datetime|period|resample|strftime|timestamp|date|month|time", re.IGNORECASE)
_ARG_MAXES = frozenset({"idxmax", "idxmin"})
_PAIRED = {"idxmax": "max", "max": "max", "idxmin": "min", "min": "min"}  # one half of (which one, how much)
_MAX_CATEGORIES = 30  # a text column with more distinct values than this holds names or notes, not categories
_NAMES_ASKED = re.compile(r"\bnames?\b", re.IGNORECASE)
# the question demands a name in so many words: a number cannot be that answer ("answer with the client's name")
_NAME_DEMANDED = re.compile(
    r"\b(?:answer|reply|respond)\s+with\b[^?.;]*?\bnames?\b|\bwhat\s+(?:is|was|are|were)\s+(?:the|their|its)\s+"
    r"(?:\w+(?:'s)?\s+)?names?\b",
    re.IGNORECASE,
)
_NAMED_THING = re.compile(r"\b(\w+?)(?:'s)? names?\b", re.IGNORECASE)  # "product names", "the customer's name"
_PER_GROUP = r"\b(each|every|per|by|all|daily|weekly|monthly|quarterly|yearly|annual)\b"  # "monthly revenue"
_ONCE_EACH = re.compile(r"\b(each|every)\s+\w+\s+once\b", re.IGNORECASE)
_DEFINED_PRODUCT = re.compile(r"\b(?P<quantity>\w+)\s*\(\s*(?P<left>\w+)\s*[×*xX]\s*(?P<right>\w+)\s*\)")
_EXCLUSION_ASKED = re.compile(r"\b(not|except|excluding|other than|outside|besides|but)\b", re.IGNORECASE)
_PERCENT_ASKED = re.compile(r"\bpercent(age)?\b|\bin %|%\?", re.IGNORECASE)
_POSITIONAL = re.compile(r"\.iloc\b|\[\s*-\d+\s*\]|\.shift\(|\.pct_change\(|\.diff\(")
_MONTH_NAMES = "January February March April May June July August September October November December".split()
_MONTHS = {name.lower(): number for number, name in enumerate(_MONTH_NAMES, start=1)}  # English, whatever the locale
_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d{2})(?![\d.])")
_DATE_SAMPLE = 2_000  # the rows of a text column read as dates to find the years it holds
_MONTH_NAME = re.compile(rf"\b({'|'.join(_MONTH_NAMES)})\b")  # capitalized: "may" is not May


@dataclass
class AnswerContext:
    """What an answer is checked against.

    question: the person's words (the task without the variables' descriptions).
    variables: the names the question points at (the variables described to the model).
    code: the code of this task's steps that ran without error, the answering step's last.
    namespace: the namespace after the answering step ran.
    given: the question's variables as the task gave them, before any code of the agent's ran (the code may have
        rebound a name to a frame without the column a "which <thing>" answer is a value of).
    """

    question: str
    variables: list[str]
    code: str
    namespace: dict[str, Any]
    given: dict[str, Any] = field(default_factory=dict)

    @property
    def as_given(self) -> dict[str, Any]:
        """The namespace with the question's variables as the task gave them."""
        return {**self.namespace, **self.given} if self.given else self.namespace

    @cached_property
    def text_columns(self) -> list[tuple[str, str, Any]]:
        """(frame, column, distinct values) of the pointed-at frames' text columns, read once for all the checks."""
        found = []
        for frame_name, frame in data_frames(self.namespace):
            if frame_name not in self.variables:
                continue
            for position, column in enumerate(frame.columns):
                values = frame.iloc[:, position]  # also when two columns share a name
                if holds_text(values):
                    found.append((frame_name, str(column), values.dropna().unique()))
        return found

    @cached_property
    def values_named(self) -> list[tuple[str, str, str]]:
        """(frame, column, value) of the data's values the question names, read as a person reads them (' north' and
        'North ' are North; a plural counts), read once for the checks of selected and excluded values."""
        named = []
        for frame_name, column, raw in _categories(self):
            value = raw.strip()
            if re.search(rf"\b{re.escape(value)}(s|es)?\b", self.question, re.IGNORECASE):
                named.append((frame_name, column, value))
        return named

    @cached_property
    def date_columns(self) -> list[tuple[str, str]]:
        """(frame, column) of the pointed-at frames' date columns: where a date asked for is found."""
        return [
            (frame_name, str(column))
            for frame_name, frame in data_frames(self.namespace)
            if frame_name in self.variables
            for column, dtype in frame.dtypes.items()
            if getattr(dtype, "kind", "") == "M"
        ]


def answer_problem(answer: Any, code: str = "") -> str | None:
    """Why `answer` is no answer to a data question, or None if it may be one.

    `None` or NaN; text that reads as an error ("KeyError: 'x'", "Error: …", "Unable to …"); a long table or
    column (with the product-of-totals mistake named when `code`, the code it comes from, multiplies a total);
    a dict or list holding pandas Series or DataFrames (a per-group value that stayed a column).
    """
    if answer is None:
        return "it gives no value (None)"
    if _is_nan(answer):
        return (
            "it is NaN, no number: a missing value went into the arithmetic (Python's sum() of values that include "
            "a gap, or a total of nothing); pandas' .sum() and .mean() of a column skip the gaps"
        )
    if isinstance(answer, str) and _ERROR_ANSWER.match(answer):
        return "it reads like an error message, not an answer"
    if isinstance(answer, str) and _PLOT_OBJECT_TEXT.match(answer):
        return (
            "it is the text of a matplotlib object, not data: answer with the values the chart plots (the Series or "
            "dict it was drawn from, e.g. .round(2).to_dict())"
        )
    if value_kind(answer) in ("Series", "DataFrame") and len(answer) > _LONG_ANSWER_ROWS:
        multiplied = "*" in code and ".sum(" in code
        return f"it has {len(answer)} rows, not a total, one value, or one value per group" + (
            " (note that a * b.sum() multiplies every value by the sum; the total is (a * b).sum())"
            if multiplied or not code
            else ""
        )
    values = answer.values() if isinstance(answer, dict) else answer if isinstance(answer, (list, tuple)) else ()
    if any(value_kind(value) in ("Series", "DataFrame") for value in values):
        return (
            "its values are whole pandas Series or DataFrames, not single values (sum or pick them first, "
            "e.g. a groupby(...).sum().to_dict())"
        )
    return None


def _is_nan(answer: Any) -> bool:
    """A float NaN (Python's or numpy's): the answer a total over a gap gives."""
    return isinstance(answer, float) and answer != answer  # np.float64 is a float


def answer_problems(answer: Any, context: AnswerContext) -> list[str]:
    """Every reason found to doubt `answer` to `context.question`, most certain first ([] if none)."""
    problem = answer_problem(answer, context.code)
    if problem and value_kind(answer) == "Series" and len(answer) > _LONG_ANSWER_ROWS:
        # a column of names for "which client spent the most": that it lists many for one says more than its length
        many = _guarded(label_problems, answer.tolist(), context.question, context.variables, context.as_given, False)
        problem = many[0] if many and isinstance(many[0], ManyForOne) else problem
    if problem:
        return [Contradiction(problem)]
    try:
        tree = ast.parse(context.code)
    except SyntaxError:
        return []
    row_number = _row_number_answer(answer, tree, context)
    two = asks_two_things(context.question)
    labels = (
        []
        if row_number
        else _guarded(label_problems, answer, context.question, context.variables, context.as_given, two)
    )
    checks = (
        row_number,
        date_missing(context.question, answer, context.date_columns),
        _both_things_missing(context.question, answer, tree),
        _id_looked_up_as_row_number(tree, context),
        *labels,
        *_untidy(label_spellings_missed, tree, context.namespace),
        *_untidy(text_totalled, tree, context.namespace),
        *_proved(kept_rows_counted_for_missing, context.question, tree),
        *_proved(gaps_counted_after_dropna, tree),
        *_proved(gaps_subtracted_from_rows, context.question, tree, _final_answer_argument(tree)),
        *_guarded(whole_rows_dropped_for_a_total, context.question, tree, context.namespace, context.given),
        *_untidy(blanks_not_counted, tree, context.namespace),
        *_untidy(spellings_counted_apart, answer, context.code, context.namespace, context.variables),
        *_untidy(repeats_not_dropped, context.question, tree, context.namespace, context.variables),
        *_proved(distinct_rows_for_repeats, context.question, answer, context.namespace, context.variables),
        *_guarded(direction_problems, answer, context.question, tree, _final_answer_argument(tree), context.namespace),
        *_guarded(other_side_read, context.question, context.variables, tree, context.namespace),
        *_proved(negative_total_subtracted, context.question, tree, context.namespace, answer),
        *_proved(counted_for_an_amount, context.question, tree),
        *_proved(label_for_an_amount, context.question, answer),
        *_guarded(mean_over_gaps, tree, context.namespace),
        *_guarded(one_row_for_a_total, context.question, tree, context.variables, context.namespace),
        *_guarded(empty_selection_lines, context.code, context.namespace),
        _numbers_for_names(answer, context),
        _grouped_unasked(answer, context),
        *[Untidy(found) for found in _guarded(blank_groups, answer)],
        *_unused_variables(context),
        *_values_not_selected(tree, context),
        *_values_excluded(tree, context),
        *_values_not_asked(tree, context),
        *_months_not_selected(context),
        *_guarded(_years_not_selected, context),
        _percent_not_computed(context),
        _definition_unread(context),
        _table_by_columns(answer, context),
    )
    return [found for found in checks if found]


def _both_things_missing(question: str, answer: Any, tree: ast.Module) -> str:
    """The "which … and how much?" doubt; proved when the answer holds one thing beyond doubt (the messy run's
    'consumer' for "which segment has the most clients, and how many", answered again after the doubt)."""
    found = both_things_missing(question, answer, _pair_line(tree))
    return Contradiction(found) if found and certainly_one_thing(question, answer) else found


def _proved(check: Callable[..., list[str]], *args: Any) -> list[str]:
    """A check whose findings the data proves."""
    return [found if isinstance(found, Contradiction) else Contradiction(found) for found in _guarded(check, *args)]


def _untidy(check: Callable[..., list[str]], *args: Any) -> list[str]:
    """A check whose findings the data proves, and cleaning the data the code read answers (`untidy_answers`)."""
    return [ProvedUntidy(found) for found in _guarded(check, *args)]


def _guarded(check: Callable[..., list[str]], *args: Any) -> list[str]:
    """A check over any data a notebook holds: one that trips over odd data says nothing, and the others still run."""
    try:
        return check(*args)
    except Exception:
        return []


# ---------------------------------------------------------------------------------------------- row numbers


def _row_number_answer(answer: Any, tree: ast.Module, context: AnswerContext) -> str:
    """`final_answer(revenue.idxmax())` where `revenue`'s index counts rows: a row number, not the data's id."""
    argument = _final_answer_argument(tree)
    call = _arg_max(through_wrappers(argument, tree)) if argument is not None else None
    series = _named_value(call.func.value, context.namespace) if call else None
    if value_kind(series) != "Series" or type(series.index).__name__ != "RangeIndex":
        return ""
    name, method = ast.unparse(call.func.value), call.func.attr
    column_of = call.func.value  # `monthly['amount'].idxmax()`: the row is `monthly`'s
    owner = column_of.value.id if isinstance(column_of, ast.Subscript) else owner_frame(series, context.namespace)
    owner = owner or "the_table"
    column = _column_named_in(context.question, context.namespace.get(owner)) or "the_column"
    return (
        f"{name}.{method}() is a row number ({answer}): the index of `{name}` counts the rows 0, 1, 2, …, it is "
        f'not a value of the data. Read the value from that row: {owner}.loc[{name}.{method}(), "{column}"]'
    )


def _pair_line(tree: ast.Module) -> str:
    """`final_answer({per.idxmax(): per.max()})` when the answer is one half of that pair (`per.idxmax()`,
    `per.max()`, or a name assigned one of them), else ""."""
    argument = _final_answer_argument(tree)
    node = through_wrappers(argument, tree) if argument is not None else None
    if not (is_method_call(node, *_PAIRED) and isinstance(node.func.value, ast.Name)):
        return ""
    name, extreme = node.func.value.id, _PAIRED[node.func.attr]
    return f"final_answer({{{name}.idx{extreme}(): {name}.{extreme}()}})"


def _id_looked_up_as_row_number(tree: ast.Module, context: AnswerContext) -> str:
    """`customers.loc[best]` where `best` is a customer_id (`spent.idxmax()`) but `customers`' index counts rows."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)):
            continue
        if node.value.attr not in ("loc", "at") or not isinstance(node.value.value, ast.Name):
            continue
        frame_name = node.value.value.id
        frame = context.namespace.get(frame_name)
        keys = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        call = _arg_max(through_wrappers(keys[0], tree)) if keys else None
        series = _named_value(call.func.value, context.namespace) if call else None
        if value_kind(frame) != "DataFrame" or type(frame.index).__name__ != "RangeIndex" or series is None:
            continue
        key_column = getattr(getattr(series, "index", None), "name", None)
        if key_column is None or key_column not in map(str, frame.columns):
            continue
        key = ast.unparse(keys[0])
        wanted = f", {ast.unparse(keys[1])}" if len(keys) > 1 else ""
        by_column = f'{frame_name}.loc[{frame_name}["{key_column}"] == {key}{wanted}].iloc[0]'
        said = (
            f"`{key}` is a {key_column}, but the index of `{frame_name}` counts the rows 0, 1, 2, …, so "
            f"{frame_name}.loc[{key}] is the row at that position, not that {key_column}. Find the row by its "
            f"column: {by_column}"
        )
        proved = _guarded(_other_row_read, frame, key_column, getattr(series, call.func.attr))
        return Mended(said, (ast.unparse(node), by_column)) if proved else said
    return ""


def _other_row_read(frame: Any, key_column: str, arg_max: Callable[[], Any]) -> bool:
    """The row at position `arg_max()` holds another `key_column` than that key, and a row holding it exists: the
    lookup read another row's values (the messy run's answer stood after its refusals ran out, the doubt unproved)."""
    key, column = arg_max(), frame[key_column]
    if not (column == key).any():
        return False
    return key not in frame.index or frame.loc[key, key_column] != key


def _final_answer_argument(tree: ast.Module) -> ast.AST | None:
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "final_answer"
    ]
    last = max(calls, key=lambda call: (call.lineno, call.col_offset), default=None)
    return last.args[0] if last is not None and last.args else None


def _arg_max(node: ast.AST) -> ast.Call | None:
    """`series.idxmax()` (or `idxmin`) of a named series or a frame's column (`monthly['amount']`), else None."""
    if not is_method_call(node, *_ARG_MAXES):
        return None
    of = node.func.value
    column = isinstance(of, ast.Subscript) and isinstance(of.value, ast.Name) and is_text(of.slice)
    return node if isinstance(of, ast.Name) or column else None


def _named_value(node: ast.AST, namespace: dict[str, Any]) -> Any:
    """The value of a name, or of a frame's column (`monthly['amount']`), in the namespace; else None."""
    return namespace.get(node.id) if isinstance(node, ast.Name) else series_of(node, namespace)


def _column_named_in(question: str, frame: Any) -> str | None:
    columns = [str(column) for column in getattr(frame, "columns", [])]
    return next((column for column in columns if re.search(rf"\b{re.escape(column)}\b", question)), None)


# ---------------------------------------------------------------------------------------------- what was asked


def _numbers_for_names(answer: Any, context: AnswerContext) -> str:
    values = list(answer) if isinstance(answer, (list, tuple)) else [answer]
    if not (values and all(is_number(value) for value in values) and _NAMES_ASKED.search(context.question)):
        return ""
    holder = _names_column(context)
    where = f"; the names are in {holder[0]}[{holder[1]!r}]" if holder else ""
    said = f"the question asks for names, but the answer is numbers{where}"
    return Contradiction(said) if holder and _NAME_DEMANDED.search(context.question) else said


def _names_column(context: AnswerContext) -> tuple[str, str] | None:
    """The text column the question's names come from: `product` for "product names", else a `name` column."""
    said = {word.lower() for word in _NAMED_THING.findall(context.question)}
    wanted = [word for word in said for word in (word, word.removesuffix("s"))] + ["name"]
    text_columns = [
        (frame, column) for frame, column, distinct in context.text_columns if len(distinct) and _is_word(distinct[0])
    ]
    for word in wanted:
        found = next(((frame, column) for frame, column in text_columns if column.lower() == word), None)
        if found:
            return found
    return None


def _unused_variables(context: AnswerContext) -> list[str]:
    """Variables the question names (not only described, as `--vars '*'` describes all) that the code never uses."""
    named = [name for name in context.variables if re.search(rf"\b{re.escape(name)}\b", context.question)]
    unused = [name for name in named if not re.search(rf"\b{re.escape(name)}\b", context.code)]
    return [f"the question points at `{name}`, but the code never uses it" for name in unused]


def _values_not_selected(tree: ast.Module, context: AnswerContext) -> list[str]:
    """Values of the data the question names ("the South region") that the code never mentions."""
    literals = {node.value for node in ast.walk(tree) if is_text(node)}
    quoted = " ".join(literals).lower()  # also inside a query string
    found: dict[str, str] = {}  # one problem per value, also when two frames hold it
    for frame_name, column, value in context.values_named:
        if value.lower() not in quoted:
            found.setdefault(
                value.lower(),
                f"the question names {value!r} (a value of {frame_name}[{column!r}]), but the code never selects it",
            )
    return list(found.values())


def _values_excluded(tree: ast.Module, context: AnswerContext) -> list[str]:
    """A value the question asks about ("orders from the West region") that the code only compares with `!=`: it
    kept every row but those (the messy run's West refunds summed over the other regions)."""
    if _EXCLUSION_ASKED.search(context.question):
        return []
    equal, unequal = set(), set()
    negated = {id(node.operand) for node in ast.walk(tree) if isinstance(node, ast.UnaryOp)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for op, comparator in zip(node.ops, node.comparators):
                if is_text(comparator):
                    (unequal if isinstance(op, ast.NotEq) else equal).add(comparator.value.strip().lower())
        elif is_method_call(node, "isin") and node.args and isinstance(node.args[0], (ast.List, ast.Tuple, ast.Set)):
            texts = {item.value.strip().lower() for item in node.args[0].elts if is_text(item)}
            (unequal if id(node) in negated else equal).update(texts)  # ~s.isin([...]) keeps every row but those
    found: dict[str, str] = {}
    for _, column, value in context.values_named:
        if value.lower() in unequal - equal:
            found.setdefault(
                value.lower(),
                f"the question asks about {value!r}, but the code leaves {value!r} out of {column} (!= or ~isin), "
                f"which keeps every row except those: select them with == instead",
            )
    return list(found.values())


def _values_not_asked(tree: ast.Module, context: AnswerContext) -> list[str]:
    """Values of the data the code compares with that the question does not name (an invented filter)."""
    compared = {
        comparator.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for comparator in node.comparators
        if is_text(comparator)
    }
    found: dict[str, str] = {}
    for _, column, value in _categories(context):
        asked = re.search(rf"\b{re.escape(value)}", context.question, re.IGNORECASE)
        if value in compared and not asked:
            found.setdefault(
                value,
                f"the code keeps only the rows where {column} is {value!r}, but the question does not ask for "
                f"{value!r}: drop that condition (keep the others)",
            )
    return list(found.values())


def _grouped_unasked(answer: Any, context: AnswerContext) -> str:
    """One value per region where the question asks for one number: a grouping the question never asked for."""
    if value_kind(answer) != "Series" or answer.index.name is None or len(answer) < 2:
        return ""
    key = str(answer.index.name)
    question = _ONCE_EACH.sub("", context.question)  # "counting each order once" asks for no group
    asked = re.search(rf"\b{re.escape(key)}|{_PER_GROUP}", question, re.IGNORECASE)
    return "" if asked else f"the answer has one value per {key}, but the question does not ask per {key}"


def _months_not_selected(context: AnswerContext) -> list[str]:
    """A month the question names ("May 2024") that the code never picks (no "05", 5 or "May" in it); proved when
    the code reads no date at all and the data holds other months (the messy run counted every order for "how many
    … in March", told twice, and answered with it)."""
    if _POSITIONAL.search(context.code):  # rev.iloc[-2]: the month may be picked by position
        return []
    found = []
    literals = _literals(context.code)
    for word in dict.fromkeys(_MONTH_NAME.findall(context.question)):
        number = _MONTHS[word.lower()]
        mentions = re.search(rf"(?<!\d)0?{number}(?!\d)|\b{word[:3]}", literals, re.IGNORECASE)
        if not mentions:
            found.append(
                _month_never_read(word, context) or f"the question names {word}, but the code never selects it"
            )
    return found


def _month_never_read(word: str, context: AnswerContext) -> str:
    """The proof that the code cannot have picked the month: it reads no date, and the data holds several months."""
    if _DATE_READ.search(context.code):
        return ""
    frames = [(name, frame) for name, frame in data_frames(context.namespace) if name in context.variables]
    held = _guarded(periods_held, frames, "M")
    if not held or held[0] < 2:
        return ""
    return Contradiction(
        f"the question names {word}, but the code never selects it: it reads no date, and {held[1]} holds "
        f"{held[0]} months"
    )


def _literals(code: str) -> str:
    """The numbers and texts `code` writes, one per line: what can select a month. A name is not (the measured
    run's `march = orders.drop_duplicates()` never picked March); code that does not parse is read whole."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    return "\n".join(str(node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant))


def _years_not_selected(context: AnswerContext) -> list[str]:
    """A year the question names ("signed up in 2023") that the code never picks, where the data holds others;
    proved when the code writes no year at all (the messy run counted every client for "signed up in 2023", told
    once, and sent the same count again, which a model sure of its answer may)."""
    if _POSITIONAL.search(context.code):
        return []
    found = []
    no_year = not _YEAR.search(_literals(context.code))  # none written at all: no year can have been picked
    for year in dict.fromkeys(_YEAR.findall(context.question)):
        where = _other_years(int(year), context) if year not in context.code else None
        if where:
            said = f"the question asks about {year}, but the code never selects it (the data holds other years)"
            said += f": keep only its rows first, where {where}.dt.year == {year}"
            found.append(Contradiction(said) if no_year else said)
    return found


def _other_years(year: int, context: AnswerContext) -> str | None:
    """The dates (as code, read as dates) of the pointed-at frames' first date column (or text column of dates) that
    holds a year other than `year`, or None."""
    import pandas as pd  # loaded: the frames are pandas

    for frame_name, frame in data_frames(context.namespace):
        if frame_name not in context.variables:
            continue
        for position in range(frame.shape[1]):
            values = frame.iloc[:, position]
            dates = f"{frame_name}[{str(frame.columns[position])!r}]"
            if values.dtype.kind != "M":
                if text_kind(filled_text(values.head(_DATE_SAMPLE))) != "dates":
                    continue
                values = pd.to_datetime(values.head(_DATE_SAMPLE), format="mixed", errors="coerce")
                dates = f"pd.to_datetime({dates}, format='mixed', errors='coerce')"
            years = set(values.dropna().dt.year.unique().tolist())
            if years - {year}:
                return dates
    return None


def _percent_not_computed(context: AnswerContext) -> str:
    """ "By how many percent…" answered with a difference or a ratio: no `100` nor `pct_change` in the code."""
    if not _PERCENT_ASKED.search(context.question) or re.search(r"\b100\b|pct_change|percent", context.code):
        return ""
    return "the question asks for a percentage, but the code never computes one (a part / the whole * 100)"


def _definition_unread(context: AnswerContext) -> str:
    """ "revenue (units × unit_price)" answered from code that never reads one of the two columns (the median of
    `units` given as the median revenue)."""
    defined = _DEFINED_PRODUCT.search(context.question)
    if not defined:
        return ""
    quantity, factors = defined.group("quantity"), [defined.group("left"), defined.group("right")]
    frames = [frame for name, frame in data_frames(context.namespace) if name in context.variables]
    columns = {str(column) for frame in frames for column in frame.columns}
    if any(factor not in columns for factor in factors):
        return ""
    unread = [factor for factor in factors if not _reads_column(factor, context.code)]
    if not unread:
        return ""
    return (
        f"the question counts {quantity} as {factors[0]} × {factors[1]}, but the code the answer comes from never "
        f"reads {unread[0]!r}: compute {quantity} for each row first, then the answer from it"
    )


def _table_by_columns(answer: Any, context: AnswerContext) -> str:
    """`{'order_id': {...}, 'client_id': {...}, 'amount': {...}}`: a whole table, one entry per column, from a
    total of every column (`groupby('segment').sum().to_dict()`), where one value per group was asked."""
    if isinstance(answer, dict) and answer and all(isinstance(v, dict) for v in answer.values()):
        keys, what = list(answer), "a whole table, one entry per column"
    elif value_kind(answer) == "Series":
        keys, what = list(answer.index), "one value per column"  # orders.isna().sum(): a count for every column
    else:
        return ""
    columns = {str(column) for _, frame in data_frames(context.namespace) for column in frame.columns}
    named = [str(key) for key in keys if str(key) in columns]
    if len(named) < 2 or len(named) < len(keys) / 2:
        return ""
    return (
        f"the answer is {what} ({', '.join(named[:4])}…): the code computed it for every column; pick the column "
        "the question asks about first (frame[column] before the total, or groupby(...)[column].sum())"
    )


def _reads_column(column: str, code: str) -> bool:
    """Whether `code` names `column` as a column: `['unit_price']`, `"unit_price"` (a groupby, a list) or `.unit_price`."""
    return re.search(rf"""['"]{re.escape(column)}['"]|\.{re.escape(column)}\b""", code) is not None


def _categories(context: AnswerContext) -> list[tuple[str, str, str]]:
    """(frame, column, value) for the text values of the pointed-at frames' category-like columns."""
    return [
        (frame_name, column, value)
        for frame_name, column, distinct in context.text_columns
        if len(distinct) <= _MAX_CATEGORIES
        for value in distinct
        if _is_word(value)
    ]


def _is_word(value: Any) -> bool:
    return isinstance(value, str) and len(value) > 1 and re.search(r"[A-Za-z]", value) is not None
