"""Write notebooks/evaluation.ipynb (kept as code so that it stays reviewable; stored without outputs).

    .venv/bin/python tests/eval/make_notebook.py

CI runs the notebook with nbval (`pytest notebooks --nbval-lax`); its asserts are the checks.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

PATH = Path(__file__).resolve().parents[2] / "notebooks" / "evaluation.ipynb"

CELLS = [
    new_markdown_cell(
        "# Evaluate agents in the notebook\n\n"
        "`evaluate(agents, tasks, scorers=...)` runs every agent on every task, scores the answers, shows a live "
        "table while it runs and returns `EvalResults`: a pandas DataFrame, a summary per agent, and every run, "
        "which opens in the same step widget as a live run. Plain Python, no magics: it works in any front-end."
    ),
    new_code_cell(
        "import tempfile\n"
        "from pathlib import Path\n\n"
        "import pandas as pd\n\n"
        "from nbagent import CodeAgent, ScriptedModel, default_model\n"
        "from nbagent.eval import EvalResults, evaluate\n"
        "from nbagent.eval.scorers import exact_match, numeric\n\n"
        "TASKS = [\n"
        '    {"id": "mul", "task": "What is 17 * 23?", "answer": 391, "kind": "arithmetic"},\n'
        '    {"id": "pow", "task": "What is 2 to the power of 20?", "answer": 1048576, "kind": "arithmetic"},\n'
        '    {"id": "sum100", "task": "What is the sum of the integers from 1 to 100?", "answer": 5050, "kind": "arithmetic"},\n'
        '    {"id": "seconds", "task": "How many seconds are there in one day?", "answer": 86400, "kind": "arithmetic"},\n'
        '    {"id": "fib", "task": "What is the 10th Fibonacci number, counting F(1) = F(2) = 1?", "answer": 55, "kind": "sequence"},\n'
        '    {"id": "prime", "task": "What is the largest prime number below 50?", "answer": 47, "kind": "sequence"},\n'
        '    {"id": "celsius", "task": "Convert 212 degrees Fahrenheit to Celsius.", "answer": 100, "kind": "units"},\n'
        '    {"id": "km", "task": "How many metres are in 3.5 kilometres?", "answer": 3500, "kind": "units"},\n'
        '    {"id": "reverse", "task": "Reverse the string \'notebook\'.", "answer": "koobeton", "kind": "text"},\n'
        '    {"id": "vowels", "task": "How many vowels (a, e, i, o, u) are in the word \'evaluation\'?", "answer": 6, "kind": "text"},\n'
        '    {"id": "upper", "task": "Write the word \'agent\' in upper case.", "answer": "AGENT", "kind": "text"},\n'
        '    {"id": "count_s", "task": "How many times does the letter \'s\' appear in \'mississippi\'?", "answer": 4, "kind": "text"},\n'
        "]\n"
        "pd.DataFrame(TASKS)"
    ),
    new_markdown_cell(
        "Tasks can also be a DataFrame or a `.jsonl` / `.csv` file. The prompt column is `task` (or `question`, "
        "`input`, `prompt`), the reference `answer` (or `expected`, `target`); `kind` is kept as metadata.\n\n"
        "## A scripted agent\n\n"
        "A `ScriptedModel` plays the model: it knows the answers, except two it gets wrong on purpose, so that "
        "there are failures to look at. An agent *factory* makes a fresh agent for every sample."
    ),
    new_code_cell(
        'ANSWERS = {t["task"]: t["answer"] for t in TASKS}\n'
        'ANSWERS["What is the largest prime number below 50?"] = 49  # wrong on purpose\n'
        "ANSWERS[\"How many vowels (a, e, i, o, u) are in the word 'evaluation'?\"] = 5  # wrong on purpose\n\n\n"
        "def scripted_answer(messages, **kwargs):\n"
        '    """Find the task in the conversation and write the code that answers it."""\n'
        "    content = messages[1].content\n"
        '    text = content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)\n'
        "    answer = next(a for question, a in ANSWERS.items() if question in text)\n"
        '    return f"Thought: I know this one.\\n```python\\nfinal_answer({answer!r})\\n```"\n\n\n'
        "def scripted_agent():\n"
        '    return CodeAgent(tools=[], model=ScriptedModel(scripted_answer, model_id="scripted"))'
    ),
    new_markdown_cell(
        "## Scorers\n\n"
        "Built-ins live in `nbagent.scorers` (`exact_match`, `numeric`, `includes`, `regex`, `llm_judge`); any "
        "callable `(answer, expected, sample)` returning a bool, a number, a `Score` or `None` (not scored) works."
    ),
    new_code_cell(
        "def close_number(answer, expected, sample):\n"
        '    """Within 1% of a numeric reference; text tasks are not scored."""\n'
        "    if isinstance(expected, str):\n"
        "        return None\n"
        "    return numeric(tol=0.01, relative=True)(answer, expected, sample)\n\n\n"
        "scorers = [exact_match(), close_number]"
    ),
    new_markdown_cell(
        "## Run it\n\n"
        "The cell shows a live table: done / total, the running score per agent, errors, tokens, elapsed and "
        "remaining time; rows appear as samples finish (the kernel's interrupt cancels and keeps the finished ones). "
        "With `log_dir`, every finished sample is appended to `results.jsonl` and its run saved at once."
    ),
    new_code_cell(
        'log_dir = Path(tempfile.mkdtemp()) / "arithmetic"\n'
        'results = evaluate({"scripted": scripted_agent}, TASKS, scorers=scorers, log_dir=log_dir)'
    ),
    new_markdown_cell(
        "The results show their summary, a plot of the score per agent and the table of samples: click a row to "
        "open that run's steps below it (in a saved notebook, a static table remains)."
    ),
    new_code_cell("results"),
    new_code_cell('summary = results.summary()\nassert summary.loc["scripted", "exact_match"] == 10 / 12\nsummary'),
    new_code_cell("results.df.head()"),
    new_markdown_cell("## Open a failing sample\n\nThe DataFrame finds it; `show()` opens its run in the step widget."),
    new_code_cell(
        "failing = results.df[results.df.exact_match < 1]\n"
        'assert sorted(failing.id) == ["prime", "vowels"]\n'
        'failing[["agent", "id", "task", "expected", "answer", "exact_match", "close_number"]]'
    ),
    new_code_cell('results.show("prime", agent="scripted")'),
    new_code_cell('memory = results.memory("prime", agent="scripted")\nprint(memory.steps[-1].code_action)'),
    new_markdown_cell(
        "## Resume\n\n"
        "Calling `evaluate` again with the same `log_dir` skips the finished samples (an interrupted evaluation "
        "goes on where it stopped; `retry_errors=True` re-runs errored ones). `EvalResults.load(log_dir)` reads "
        "a log back, in another session too."
    ),
    new_code_cell(
        'again = evaluate({"scripted": scripted_agent}, TASKS, scorers=scorers, log_dir=log_dir, progress=False)\n'
        "assert again.df.equals(results.df)\n"
        "EvalResults.load(log_dir).summary()"
    ),
    new_markdown_cell(
        "## Signal or noise: is one configuration better?\n\n"
        "A second scripted configuration counts the vowels of 'evaluation' differently from run to run, as a model "
        "that samples might: sometimes 6 (right), sometimes 5. Run once, it can look better than the first by one "
        "task. `compare()` pairs the two agents' samples by (task, epoch) and asks whether the per-task differences "
        "are more than noise: an exact sign-flip permutation test over tasks, with the 95% interval of the "
        "difference that the same test gives. With one epoch the display also says what it cannot tell."
    ),
    new_code_cell(
        "import itertools\n"
        "import threading\n\n"
        "draws, draws_lock = itertools.count(), threading.Lock()\n\n\n"
        "def sampled_answer(messages, **kwargs):\n"
        '    """Like scripted_answer, but the count of vowels changes from one run to the next."""\n'
        "    if \"'evaluation'\" not in str(messages[1].content):\n"
        "        return scripted_answer(messages)\n"
        "    with draws_lock:\n"
        "        vowels = 6 if next(draws) % 2 == 0 else 5\n"
        '    return f"Thought: I count them.\\n```python\\nfinal_answer({vowels})\\n```"\n\n\n'
        "def sampled_agent():\n"
        '    return CodeAgent(tools=[], model=ScriptedModel(sampled_answer, model_id="sampled"))\n\n\n'
        'once = evaluate({"scripted": scripted_agent, "sampled": sampled_agent}, TASKS, scorers=scorers)'
    ),
    new_code_cell(
        "comparison = once.compare()\n"
        'assert not comparison.significant.any() and "epochs=3" in once.note\n'
        'comparison[["agent", "baseline", "scorer", "tasks", "difference", "low", "high", "p_value", "verdict"]]'
    ),
    new_markdown_cell(
        "With `epochs=3` every (agent, task) runs three times: the samples whose answers differ between epochs are "
        "flagged (`nondeterministic`, marked *varies* in the table), and the comparison pairs epoch with epoch."
    ),
    new_code_cell(
        'thrice = evaluate({"scripted": scripted_agent, "sampled": sampled_agent}, TASKS, scorers=scorers, epochs=3)\n'
        "varying = thrice.df[thrice.df.nondeterministic]\n"
        'assert set(zip(varying.agent, varying.id)) == {("sampled", "vowels")} and thrice.note == ""\n'
        'varying[["agent", "id", "epoch", "answer", "exact_match"]]'
    ),
    new_code_cell("thrice"),
    new_markdown_cell(
        "## Two configurations: the scripted agent and the offline default model\n\n"
        "The offline default model (Qwen2.5-Coder-1.5B on llama.cpp, no key, no network) takes a few seconds per "
        "task on a CPU, so it runs on three of the tasks here. One model object serves all its samples; with "
        "`max_workers=1` the samples run one after another, which keeps llama.cpp's prompt cache warm. Three tasks "
        "and one epoch are too few to tell the two apart, and the display says so."
    ),
    new_code_cell(
        "model = default_model()\n\n\n"
        "def qwen_agent():\n"
        "    return CodeAgent(tools=[], model=model, max_steps=3)\n\n\n"
        'QUICK = [t for t in TASKS if t["id"] in ("mul", "pow", "reverse")]\n'
        'compared = evaluate({"scripted": scripted_agent, "qwen": qwen_agent}, QUICK, scorers=scorers, max_workers=1)'
    ),
    new_code_cell('assert len(compared.df) == 6 and list(compared.summary().index) == ["scripted", "qwen"]\ncompared'),
    new_markdown_cell("The summary is a DataFrame, so any plotting library works:"),
    new_code_cell(
        "summary = compared.summary()\n"
        "errors = [summary.exact_match - summary.exact_match_low, summary.exact_match_high - summary.exact_match]\n"
        'ax = summary.exact_match.plot.barh(xerr=errors, xlim=(0, 1), title="exact match (95% interval)", figsize=(5, 1.6))'
    ),
    new_markdown_cell(
        "## Beyond one machine: Dask\n\n"
        "`executor=` takes any `concurrent.futures.Executor` or a `dask.distributed.Client`. Here a local cluster "
        "of two worker processes runs the scripted agent; the factory defined in this notebook travels to the "
        "workers pickled (cloudpickle), and the scores are the same as on threads."
    ),
    new_code_cell(
        "from dask.distributed import Client, LocalCluster\n\n"
        'with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:\n'
        "    with Client(cluster) as client:\n"
        '        on_dask = evaluate({"scripted": scripted_agent}, TASKS, scorers=scorers, executor=client)\n'
        "assert on_dask.df.exact_match.equals(results.df.exact_match)\n"
        "on_dask.summary()"
    ),
    new_markdown_cell(
        'On a real cluster, connect to its scheduler instead: `Client("tcp://scheduler-host:8786")`. Every worker '
        "needs `nbagent` (the same version, `pip install 'jupyter-nbagent[dask]'`), the packages the agents' tools import, "
        "and the model's dependencies; for the offline default model, run `nbagent setup` on each worker. Models are not "
        "shipped: each worker process builds its own (create the model inside the factory, cached per process with "
        "`functools.cache`). Factories and scorers must be picklable; a clear error says which one is not."
    ),
]


def main() -> None:
    notebook = new_notebook(cells=CELLS)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, PATH)
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
