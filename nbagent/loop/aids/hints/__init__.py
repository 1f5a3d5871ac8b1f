"""Hints after a failed step: one or two lines that name the mistake, in the terms of the data.

`execution_hint` reads the error (`error_keys` reads pandas' and numpy's wordings) and the code's
failing statement against the namespace, and says the diagnosis, not the symptom: a row label missed
in the index is not a missing column, a misspelled method is not a column, a Series grouped by a
column name needs its table, a merge key one side lacks has a column that matches it on that side,
a text column compared with a number holds text. No hint carries code that could be pasted as an
answer (`final_answer(<a literal>)`); the lines it shows are built from the failing code's own names.
`silent_step_observation` says what a step that printed nothing made.

Modules:
    diagnose      execution_hint: the rules tried in order, the first that names the mistake speaks
    failure       Failure: what a hint reads (the error, the failing line and its statement, the code, the data)
    values        what a column or an index holds (numbers, dates, text), values written as code, in one form
    code_names    the frame, column or Series a piece of the failing code stands for
    grouping      a groupby multiplied, a Series grouped by a column name, a whole table totalled
    comparisons   & and | without parentheses, text compared with a number (or selecting nothing)
    conversions   numbers or dates written as text: the column's own values and the one conversion that reads them
    charts        a chart call given Period values, or totals that joined texts
    merges        a merge key one side lacks, or of two types: the columns that match, which side to convert
    lookups       a key not found, a misspelled method, a missing column, row numbers for an index
    row_labels    a row label missed in an index: its kind, its labels, the label in another type
    shapes        numpy 2's axis and shape errors, in the terms of the data
    code_errors   a name never defined, a SyntaxError in long code
    silent        what a step that printed nothing made
"""

from .diagnose import execution_hint
from .silent import NOTHING_PRINTED, silent_step_observation

__all__ = ["execution_hint", "silent_step_observation", "NOTHING_PRINTED"]
