"""Notebook-based evaluation: `evaluate(agents, tasks, scorers=...)` -> `EvalResults` (a DataFrame and more).

Modules, one job each:

- `tasks`: tasks in (list of dicts, DataFrame, .jsonl/.csv), `Sample`s out; column names and ids.
- `scorers`: `Score` and the built-in scorers (`exact_match`, `numeric`, `includes`, `regex`, `llm_judge`).
- `samples`: one sample: a fresh silent agent runs one task, scorers grade it; failures recorded.
- `outcomes`: did the run answer? A run without a final answer is a failure for every scorer (not scored).
- `engines`: where samples run: threads, any `concurrent.futures.Executor`, a Dask `Client`.
- `log`: the resumable log directory (eval.json, results.jsonl, memories/).
- `harness`: `evaluate()` itself: jobs, the wait loop, cancel on interrupt, resume.
- `intervals`: the 95% interval of a mean score inside its scale (Wilson, clipped t) and round axis ticks.
- `compare`: signal or noise: the paired test of two agents, the samples that vary between epochs, the one-epoch note.
- `results`: `EvalResults`: `.df`, `.summary()`, `.compare()`, `.memory()`, `.show()`, `EvalResults.load()`.
- `progress`: live progress: the protocol, `Tracker`, the notebook view and the tqdm view.
- `display`: the rich notebook display (summary, plot, clickable table) and its static HTML.
"""

from nbagent.eval import scorers
from nbagent.eval.harness import evaluate
from nbagent.eval.results import EvalResults
from nbagent.eval.scorers import Score
from nbagent.eval.tasks import Sample

__all__ = ["evaluate", "EvalResults", "Score", "Sample", "scorers"]
