"""The guards' known sinks, closed (issue 19, item 7), through the public executors with the guards on.

pandas turns strings into code: its dispatching methods look a string up as an attribute (``df.agg("eval", 0, expr)``
ran ``df.eval`` in the worker, guards on), and ``eval``/``query`` evaluate an expression language with calls and the
caller's ``@variables``. And agent code could swallow its own final answer with ``try/finally`` (or a ``with`` block)
and keep running, or replace it. Each spelling below ran before; each must now be refused (or end the step), the
host must live, and the next call must work. The idioms data questions use must keep working.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor, PolicyError

GRANTS = ["pandas", "numpy", "operator", "matplotlib", "asyncio"]
FRAME = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6], 'n': ['xa', 'yb', 'xc']})\n"
DATES = "s = pd.Series([1, 2, 3], index=pd.date_range('2024-01-01', periods=3))\n"


@pytest.fixture(scope="module", params=["local", "isolated"])
def guarded(request: pytest.FixtureRequest) -> Iterator[Any]:
    """One executor per kind for the whole module (guards on): a fork per test would cost more than the tests."""
    if request.param == "local":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield LocalPythonExecutor(GRANTS)
        return
    executor = IsolatedPythonExecutor(additional_authorized_imports=GRANTS, timeout_seconds=10)
    yield executor
    executor.close()


def refusal(executor: Any, code: str) -> str:
    with pytest.raises(PolicyError) as caught:
        executor(FRAME + code)
    assert executor("6 * 7").output == 42  # the host lives and the next call works
    return str(caught.value)


# --- pandas' string dispatch -----------------------------------------------------------------------------------------

DISPATCH = {
    "agg eval": ("df.agg('eval', 0, 'a + 1')", "agg('eval')"),
    "aggregate query": ("df.aggregate('query', 0, 'a > 1')", "aggregate('query')"),
    "apply eval": ("df.apply('eval', 0, 'a + 1')", "apply('eval')"),
    "transform eval": ("df.transform('eval', 0, 'a + 1')", "transform('eval')"),
    "series agg": ("df['a'].agg('to_json')", "agg('to_json')"),
    "series apply": ("df['a'].apply('to_json')", "apply('to_json')"),
    "private attribute": ("df.agg('_mgr')", "agg('_mgr')"),
    "numpy fallback": ("df['a'].agg('save', 'x.npy')", "agg('save')"),
    "in a list": ("df.agg(['sum', 'eval'])", "agg('eval')"),
    "in a dict": ("df.agg({'a': 'to_json'})", "agg('to_json')"),
    "in a dict of lists": ("df.agg({'a': ['sum', 'to_json']})", "agg('to_json')"),
    "a Series of names": ("df.agg(pd.Series({'a': 'to_json'}))", "agg('to_json')"),
    "func keyword": ("df.agg(func='to_json')", "agg('to_json')"),
    "named aggregation": ("df.groupby('a').agg(t=('b', 'to_json'))", "agg('to_json')"),
    "NamedAgg": ("df.groupby('a').agg(t=pd.NamedAgg('b', 'to_json'))", "agg('to_json')"),
    "groupby agg": ("df.groupby('a').agg('pipe', print)", "agg('pipe')"),
    "groupby apply": ("df.groupby('a').apply('pipe', print)", "apply('pipe')"),
    "groupby column agg": ("df.groupby('a')['b'].agg('to_json')", "agg('to_json')"),
    "rolling agg": ("df.rolling(2).agg('pipe', print)", "agg('pipe')"),
    "resample agg": (DATES + "s.resample('D').agg('pipe', print)", "agg('pipe')"),
    "pivot_table method": ("df.pivot_table(index='a', values='b', aggfunc='to_json')", "pivot_table('to_json')"),
    "pd.pivot_table": ("pd.pivot_table(df, index='a', values='b', aggfunc=['sum', 'eval'])", "pivot_table('eval')"),
    "pd.crosstab": ("pd.crosstab(df['a'], df['b'], values=df['a'], aggfunc='apply')", "crosstab('apply')"),
    "unbound method": ("pd.DataFrame.agg(df, 'eval', 0, 'a + 1')", "agg('eval')"),
    "super()": (
        "class D(pd.DataFrame):\n    def f(self):\n        return super().agg('eval', 0, 'a + 1')\nD(df).f()",
        "agg('eval')",
    ),
    "getattr": ("getattr(df, 'apply')('eval', 0, 'a + 1')", "apply('eval')"),
    "methodcaller": ("import operator\noperator.methodcaller('agg', 'eval', 0, 'a + 1')(df)", "agg('eval')"),
    "str subclass": (
        "class S(str):\n    def __eq__(self, o):\n        return True\n    def __hash__(self):\n        return hash('sum')\n"
        "df.agg(S('eval'), 0, 'a + 1')",
        "agg('eval')",
    ),
}


@pytest.mark.parametrize("code, named", DISPATCH.values(), ids=DISPATCH.keys())
def test_string_dispatch_names_only_plain_reductions(guarded: Any, code: str, named: str) -> None:
    message = refusal(guarded, code)
    assert f"pandas' {named} is not allowed" in message
    assert "pass a function instead" in message  # what the model can do instead


EVAL_AND_FRIENDS = {
    "DataFrame.eval": ("df.eval('a + b')", "eval() is not available"),
    "DataFrame.eval unbound": ("pd.DataFrame.eval(df, 'a + b')", "eval() is not available"),
    "pandas.eval": ("pd.eval('1 + 1')", "pandas.eval"),
    "query @ scope": ("limit = 1\ndf.query('a > @limit')", "query('a > @limit') is not allowed"),
    "query call": ("df.query('a.agg(\"eval\") > 0')", "only the methods"),
    "query call hidden by a backtick in a string": (
        "df.query(\"n == 'q`' + a.to_json() + '`'\")",
        "is not allowed",
    ),
    "query dunder": ("df.query('a.__class__ == 1')", "attribute .__class__ is not allowed"),
    "query local_dict": ("df.query('a > x', local_dict={'x': 1})", "only the expression and inplace="),
    "query engine": ("df.query('a > 1', engine='python')", "only the expression and inplace="),
    "query level": ("df.query('a > 1', level=2)", "only the expression and inplace="),
    "query repeat": ("df.query('n == \"x\" * 100000000')", "repeating a string"),
    "Styler": ("df.style.format('{0.__class__}').to_html()", "DataFrame.style"),
    "Styler through the class": ("pd.DataFrame.style.fget(df)", "DataFrame.style"),
    "to_latex string formatters": (
        "def f():\n    pass\npd.DataFrame({'a': [f]}).to_latex(formatters={'a': '{0.__globals__}'})",
        "to_latex(formatters=) with a string is not allowed",
    ),
    "Styler module": ("from pandas.io.formats.style import Styler", "never available"),
    "pandas.core.apply": ("pd.core.apply.frame_apply(df, 'eval')", "never available"),
    "re-exported internals": ("from pandas.core.frame import reconstruct_and_relabel_result", "never available"),
    "plot backend keyword": ("df.plot(backend='this')", "plotting backend 'this' is not allowed"),
    "hist backend keyword": ("df.hist(backend='this')", "plotting backend 'this' is not allowed"),
    "plotting.backend option": ("pd.set_option('plotting.backend', 'this')", "plotting backend 'this' is not allowed"),
    "options attribute": ("pd.options.plotting.backend = 'this'", "plotting backend 'this' is not allowed"),
}


@pytest.mark.parametrize("code, words", EVAL_AND_FRIENDS.values(), ids=EVAL_AND_FRIENDS.keys())
def test_eval_query_and_styler_are_closed(guarded: Any, code: str, words: str) -> None:
    assert words in refusal(guarded, code)


IDIOMS = {
    "agg sum": ("df.agg('sum')['a']", 6),
    "agg list": ("df[['a', 'b']].agg(['mean', 'max']).loc['max', 'b']", 6),
    "agg dict": ("df.agg({'a': 'sum', 'b': ['min', 'max']}).loc['max', 'b']", 6),
    "agg function": ("df[['a', 'b']].agg(sum)['b']", 15),
    "groupby agg": ("df.groupby('n')['b'].agg(['mean', 'count'])['count'].sum()", 3),
    "named aggregation": ("df.groupby('a').agg(total=('b', 'sum'))['total'].sum()", 15),
    "NamedAgg": ("df.groupby('a').agg(total=pd.NamedAgg('b', 'sum'))['total'].sum()", 15),
    "transform": ("df.groupby('n')['b'].transform('sum').sum()", 15),
    "apply lambda": ("df.apply(lambda r: r['a'] * r['b'], axis=1).sum()", 32),
    "apply axis string": ("int(df[['a', 'b']].apply('sum', axis='columns').sum())", 21),
    "series map": ("df['a'].map({1: 'one'}).iloc[0]", "one"),
    "pivot_table": ("int(df.pivot_table(index='n', values='b', aggfunc='sum').values.sum())", 15),
    "resample": (DATES + "int(s.resample('D').agg('sum').sum())", 6),
    "query": ("int(df.query('a > 1')['b'].sum())", 11),
    "query and/in": ("len(df.query('a in [1, 3] and b > 4'))", 1),
    "query &": ("len(df.query('(a > 1) & (b < 6)'))", 1),
    "query str": ("len(df.query('n.str.startswith(\"x\")'))", 2),
    "query isin": ("len(df.query('n.isin([\"yb\"])'))", 1),
    "query backticks": ("len(pd.DataFrame({'a b': [1, 2]}).query('`a b` > 1'))", 1),
    "query expr keyword": ("len(df.query(expr='a > 2'))", 1),
    "to_latex": ("pd.DataFrame({'a': [1.5]}).to_latex(formatters={'a': '{:.1f}'.format}).count('1.5')", 1),
    "plot": (  # closed: an open figure in this process would leak into the next worker's fork
        "import matplotlib.pyplot as plt\nkind = type(df.plot(x='a', y='b')).__name__\nplt.close('all')\nkind",
        "Axes",
    ),
}


@pytest.mark.parametrize("code, expected", IDIOMS.values(), ids=IDIOMS.keys())
def test_the_idioms_of_data_questions_still_run(guarded: Any, code: str, expected: Any) -> None:
    assert guarded(FRAME + code).output == expected


# --- final_answer cannot be swallowed --------------------------------------------------------------------------------

SWALLOWS = {
    "finally raises": "try:\n    final_answer('A')\nfinally:\n    raise ValueError('swallowed')\nprint('after')",
    "finally answers again": "try:\n    final_answer('A')\nfinally:\n    final_answer('B')\nprint('after')",
    "finally returns": (
        "def f():\n    try:\n        final_answer('A')\n    finally:\n        return 2\nf()\nprint('after')\n"
        "final_answer('B')"
    ),
    "finally returns in a branch": (
        "def f(x):\n    try:\n        final_answer('A')\n    finally:\n        if x:\n            return 2\n"
        "f(1)\nprint('after')\nfinal_answer('B')"
    ),
    "loop: finally breaks": (
        "while True:\n    try:\n        final_answer('A')\n    finally:\n        break\nprint('after')\nfinal_answer('B')"
    ),
    "loop: finally continues": (
        "for i in range(3):\n    try:\n        if i == 0:\n            final_answer('A')\n    finally:\n"
        "        continue\nprint('after')\nfinal_answer('B')"
    ),
    "loop: nested finally": (
        "for i in range(2):\n    try:\n        try:\n            final_answer('A')\n        finally:\n"
        "            pass\n    finally:\n        break\nprint('after')\nfinal_answer('B')"
    ),
    "a task swallows": (
        "import asyncio\nasync def answer():\n    final_answer('A')\nasync def main():\n"
        "    await asyncio.gather(answer(), return_exceptions=True)\nasyncio.run(main())\nprint('after')\n"
        "final_answer('B')"
    ),
    "with block swallows": (
        "class Quiet:\n    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return True\n"
        "with Quiet():\n    final_answer('A')\nprint('after')\nfinal_answer('B')"
    ),
}


@pytest.mark.parametrize("code", SWALLOWS.values(), ids=SWALLOWS.keys())
def test_the_first_final_answer_ends_the_step(guarded: Any, code: str) -> None:
    result = guarded(code)
    assert (result.output, result.is_final_answer) == ("A", True)
    assert "after" not in result.logs  # nothing ran after the answer
    assert guarded("6 * 7").output == 42


def test_finally_without_an_answer_keeps_its_meaning(guarded: Any) -> None:
    code = (
        "def f():\n    try:\n        return 1\n    finally:\n        seen.append('cleanup')\n"
        "seen = []\nfor i in range(3):\n    try:\n        if i == 1:\n            continue\n    finally:\n"
        "        seen.append(i)\n[f(), seen]"
    )
    assert guarded(code).output == [1, [0, 1, 2, "cleanup"]]


def test_a_refused_answer_is_not_a_swallowed_one(guarded: Any) -> None:
    with pytest.raises(ExecutionError, match="ValueError: plain"):
        guarded("try:\n    x = 1\nfinally:\n    raise ValueError('plain')")


def test_the_users_own_plotting_backends_are_untouched() -> None:
    """The backend check binds agent code only: the kernel's own code loads backends as before."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        executor = LocalPythonExecutor(GRANTS)
    executor(FRAME + "df.plot")  # the agent's pandas: the backend loader is checked from here on
    from pandas.plotting import _core

    assert getattr(_core._load_backend, "nbagent_checked", False)
    with pytest.raises(ValueError, match="Could not find plotting backend") as caught:
        _core._load_backend("nbagent_no_such_backend")
    assert not isinstance(caught.value, PolicyError) and "not allowed" not in str(caught.value)
