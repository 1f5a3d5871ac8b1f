"""The small-model aids, in one room behind one seam (`Coach`): what a small model is told and checked on.

A 1.5B model answers data questions well when it is shown the data as it is, told what its mistake was in
the terms of the data, kept from repeating a failure, and asked again when its answer cannot be right.
Each aid is a general rule, named for what it checks; the code step calls them only through `Coach`.
Nothing here imports the rest of the loop.

Modules:
    coach         Coach: the seam the code step calls (messages, code checks, repeats, hints, answer doubts)
    data_card     what the model is told about each variable (a frame by its schema and a few rows), read before
                  the question
    history       what a small model reads at a step: the memory compacted, failed attempts in one line
    code_checks   a product of totals run as the total of the products; code that cannot be fixed surely
    repeats       failing code sent again (twice in a row, or as any earlier attempt) is not run, nor code that ran
                  and printed the same twice; the same failure looped ends the run
    hints/        after a failed step: the mistake named in the terms of the data (one module per kind of mistake)
    error_keys    what key or shape a pandas or numpy error names
    answers       a final answer checked against the question and the data
    doubts        Contradiction: a doubt the data proves, which never lets its answer stand; Untidy: one cleaning answers
    cleaned_program  the answer's own code on the task's frames cleaned first (repeats, text numbers, labels, dates)
    amounts       a count of rows, or a word, given for a question that asks how much
    kept_data     code that would take rows or columns out of a frame the task gave is not run
    own_names     a notebook variable the task did not give, bound by the code, gets a name of the code's own
    untidy_answers  gaps counted without blank texts; a label selected in one of its spellings; repeats counted;
                  groups of one label written several ways (also said after the step that made them)
    answer_kinds  the form a question asks for (two things at once, a date)
    answer_labels a "which/who <thing>" answer is a value of the column holding the things (no row number, date, "none"),
                  read from the frames as the task gave them
    directions    "improved the most", "biggest drop": the pick and the sign against the way the code's difference runs
    merged_sides  a column both frames of a merge have (amount_x, amount_y) read from the side the question does not ask about
    signs         a total of amounts all zero or below (refunds written '-$5.00') subtracted where the question takes it away
    chart_checks  a chart's marks against the groups the question asks for (249 bars for a monthly chart)
    coercions     numbers a conversion with errors="coerce" would read, or read, as missing ('$1,891.37' with the ','
                  left): run as the full conversion before the step, said after it
    reconversions text cleaning of a column that already holds numbers or dates runs as the column
    date_reads    text dates read as dates where the code would fail (`.dt`, `pd.to_datetime` of mixed formats) read in every format
"""

from .coach import Coach, Repeat

__all__ = ["Coach", "Repeat"]
