"""Running one sample: a fresh, silent agent runs one task once; scorers grade its answer.

Only a run that ended with a final answer is scored; a run that ended otherwise (max steps, stopped,
timed out, stuck, failed) gets every scorer's minimum without calling it (nbagent.eval.outcomes).

`run_sample(job)` is what every engine executes (a thread, a process, a Dask worker). It never
raises for the agent's or a scorer's failures: they are recorded. It returns a `SampleOutcome`:
a JSON-able record (one line of results.jsonl) and the agent's `AgentMemory`.

Agents come as a factory (called once per sample) or as an agent object, which is re-created
per sample from its `to_dict()` so that samples never share memory or executor state. The
re-created agent reuses the object's model (a local model is loaded once per process), except a
`ScriptedModel` scripted with a list, which is rebuilt so that every sample starts at its first
answer. In another process (a process pool, Dask) the model is rebuilt from its `to_dict()`
once per process and model configuration.
"""

from __future__ import annotations

import json
import pickle
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nbagent.eval.outcomes import CANCELLED, NOT_RUN, fail_scores, run_end
from nbagent.eval.scorers import answer_key, apply_scorer
from nbagent.eval.tasks import Sample
from nbagent.views.state import is_forced_answer

__all__ = [
    "AgentSource",
    "SampleJob",
    "SampleOutcome",
    "RunningAgents",
    "normalize_agents",
    "run_sample",
    "sample_key",
    "check_picklable",
]

ERROR_STATES = frozenset({"error"})
Key = tuple[str, str, int]


def sample_key(agent: str, sample_id: str, epoch: int) -> Key:
    return (agent, sample_id, int(epoch))


# ---------------------------------------------------------------------------------------------- agents


class AgentSource:
    """Makes one fresh agent per sample, from a factory or from an agent's `to_dict()`."""

    def __init__(self, name: str, factory: Callable[[], Any] | None = None, agent: Any = None) -> None:
        self.name = name
        self.factory = factory
        self.agent_class: type | None = None
        self.agent_dict: dict[str, Any] | None = None
        self.model: Any = None  # the agent's model object, reused by the samples (None: rebuilt from the dict)
        if agent is not None:
            self.agent_class = type(agent)
            try:
                self.agent_dict = agent.to_dict()
                json.dumps(self.agent_dict, default=_refuse)
            except Exception as error:
                raise TypeError(
                    f"The agent {name!r} cannot be re-created per sample from its to_dict() "
                    f"({type(error).__name__}: {error}). Pass a factory instead, e.g. "
                    f"evaluate(lambda: CodeAgent(...), tasks): it is called once per sample."
                ) from None
            self.model = agent.model if _shareable(agent.model) else None

    def make(self) -> Any:
        if self.factory is not None:
            agent = self.factory()
            if not (hasattr(agent, "run") and hasattr(agent, "memory")):
                raise TypeError(f"The agent factory {self.name!r} returned a {type(agent).__name__}, not an agent")
            return agent
        assert self.agent_class is not None and self.agent_dict is not None
        model = self.model if self.model is not None else _model_for(self.agent_dict["model"])
        return self.agent_class.from_dict(self.agent_dict, model=model)

    def __getstate__(self) -> dict[str, Any]:
        # To another process the model travels pickled when it can (each sample gets its own copy);
        # otherwise (a loaded local model, an API client) it is rebuilt from its dict once per process.
        if self.model is not None and "_model_travels" not in self.__dict__:
            self._model_travels = _picklable(self.model)  # tried once, not for every job
        state = dict(self.__dict__)
        if not state.get("_model_travels"):
            state["model"] = None
        return state


def _picklable(value: Any) -> bool:
    try:
        import cloudpickle

        dumps = cloudpickle.dumps
    except ImportError:
        dumps = pickle.dumps
    try:
        dumps(value)
    except Exception:
        return False
    return True


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def _shareable(model: Any) -> bool:
    """Models are shared by the samples of a process, except a list-scripted ScriptedModel (it keeps its place)."""
    return not (type(model).__name__ == "ScriptedModel" and not callable(getattr(model, "responses", None)))


_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


def _model_for(model_dict: dict[str, Any]) -> Any:
    """A model rebuilt from its dict: once per process and configuration (list-scripted models: every time)."""
    import nbagent.models as models

    kind = model_dict.get("class", "")
    cls = getattr(models, kind, None) if kind else None
    if cls is None:
        raise ValueError(f"Cannot rebuild a model of class {kind!r} from its to_dict(); pass a factory instead")
    data = {k: v for k, v in model_dict.items() if k != "class"}
    if kind == "ScriptedModel":
        return cls.from_dict(data)
    key = json.dumps(model_dict, sort_keys=True, default=repr)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = cls.from_dict(data)
        return _MODELS[key]


def normalize_agents(agents: Any) -> dict[str, AgentSource]:
    """A factory, an agent, a list of them, or a dict `name -> factory | agent` -> `{name: AgentSource}`."""
    if isinstance(agents, Mapping):
        items = [(str(name), value) for name, value in agents.items()]
    elif isinstance(agents, (list, tuple)):
        items = [(_default_name(value), value) for value in agents]
    else:
        items = [(_default_name(agents), agents)]
    if not items:
        raise ValueError("agents is empty: pass an agent factory, an agent, or a dict name -> factory | agent")
    sources: dict[str, AgentSource] = {}
    for name, value in items:
        unique, n = name, 1
        while unique in sources:
            n += 1
            unique = f"{name}_{n}"
        if _is_agent(value):
            sources[unique] = AgentSource(unique, agent=value)
        elif callable(value):
            sources[unique] = AgentSource(unique, factory=value)
        else:
            raise TypeError(
                f"The agent {name!r} is a {type(value).__name__}: pass an agent, or a factory (a callable with no "
                "arguments returning a fresh agent)"
            )
    return sources


def _is_agent(value: Any) -> bool:
    return hasattr(value, "run") and hasattr(value, "memory") and hasattr(value, "to_dict")


def _default_name(value: Any) -> str:
    if _is_agent(value):
        return getattr(value, "name", None) or type(value).__name__
    name = getattr(value, "__name__", None) or type(value).__name__
    return "agent" if name in ("<lambda>", "partial", "function") else str(name)


def check_picklable(what: str, value: Any, where: str, dumps: Callable[[Any], bytes] = pickle.dumps) -> None:
    """A clear error when `value` cannot travel to another process."""
    try:
        dumps(value)
    except Exception as error:
        raise TypeError(
            f"{what} cannot be pickled, and {where} runs samples in other processes "
            f"({type(error).__name__}: {error}). Define it at the top level of a module the workers can import "
            "(with Dask, a function from the notebook works if it captures nothing unpicklable, such as a loaded "
            "model: create the model inside the factory, cached per process with functools.cache), "
            "or run on threads (executor=None)."
        ) from None


# ---------------------------------------------------------------------------------------------- one sample


@dataclass
class SampleJob:
    agent: str
    source: AgentSource
    sample: Sample
    epoch: int
    scorers: dict[str, Callable[..., Any]]
    reproducible: bool = False  # record whether the run's program gives its answer (`agent.to_code()`)

    @property
    def key(self) -> Key:
        return sample_key(self.agent, self.sample.id, self.epoch)


@dataclass
class SampleOutcome:
    record: dict[str, Any]
    memory: Any = None

    @property
    def key(self) -> Key:
        return sample_key(self.record["agent"], self.record["id"], self.record["epoch"])


class RunningAgents:
    """The agents running in this process, so that a cancel can stop them (threads engine)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._agents: dict[Key, Any] = {}
        self.cancelled = threading.Event()

    def add(self, key: Key, agent: Any) -> None:
        with self._lock:
            self._agents[key] = agent

    def remove(self, key: Key) -> None:
        with self._lock:
            self._agents.pop(key, None)

    def stop_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            agents = list(self._agents.values())
        for agent in agents:
            try:
                agent.stop()
            except Exception:
                pass


_CANCELLED_RUNNING = "cancelled while running (the evaluation was interrupted)"


def run_sample(job: SampleJob, running: RunningAgents | None = None) -> SampleOutcome:
    """Run one (agent, task, epoch) and score it; failures are recorded, never raised."""
    sample = job.sample
    record = base_record(job)
    if running is not None and running.cancelled.is_set():
        record.update(state=CANCELLED, outcome=CANCELLED, error="cancelled before it started")
        return SampleOutcome(record)
    started = time.perf_counter()
    agent = None
    try:
        agent = job.source.make()
        agent.show_widget = False  # an evaluation's agents are silent: no widget, no console per sample
        agent.verbosity_level = -1
        if running is not None:
            running.add(job.key, agent)
            if running.cancelled.is_set():
                record.update(state=CANCELLED, outcome=CANCELLED, error="cancelled before it started")
                return SampleOutcome(record)
        result = _run(agent, sample)
    except Exception as error:
        record.update(
            state="error", outcome=NOT_RUN, error=_error_text(error), duration_s=time.perf_counter() - started
        )
        if running is not None and running.cancelled.is_set():  # a run the cancel broke off: re-run on resume
            record.update(state=CANCELLED, outcome=CANCELLED, error=_CANCELLED_RUNNING)
        return SampleOutcome(record, _memory(agent))
    finally:
        if running is not None:
            running.remove(job.key)
    record["duration_s"] = time.perf_counter() - started
    fill_from_result(record, result, agent)
    if running is not None and running.cancelled.is_set() and result.state in ("stopped", "error"):
        record.update(
            state=CANCELLED,
            answered=None,
            outcome=CANCELLED,
            error=_CANCELLED_RUNNING,
        )
    if record["answered"]:
        score_record(record, job.scorers, result.output, sample)
    elif record["answered"] is False:  # no final answer: a failure for every scorer, none of them called
        fail_scores(record, job.scorers)
    if job.reproducible:  # no answer: no program (NA)
        record["reproducible"] = _reproducible(agent) if record["answered"] else None
    return SampleOutcome(record, agent.memory)


def _reproducible(agent: Any) -> bool | None:
    """Whether the run's program (its code without the model, checked on copies of its inputs) gives its answer;
    None when it could not be asked (an agent without `to_code`, or one that failed)."""
    to_code = getattr(agent, "to_code", None)
    if to_code is None:
        return None
    try:
        return bool(to_code().checked)
    except Exception:  # the question is extra: it never fails the sample
        return None


def base_record(job: SampleJob) -> dict[str, Any]:
    sample = job.sample
    return {
        "agent": job.agent,
        "id": sample.id,
        "epoch": job.epoch,
        "task": sample.task,
        "expected": plain(sample.expected),
        "answer": None,
        "state": None,
        "answered": None,  # True: the run ended with a final answer; False: it ended without one; None: no run ended
        "outcome": None,  # nbagent.eval.outcomes.OUTCOMES
        "steps": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "duration_s": 0.0,
        "error": None,
        "scores": {name: None for name in job.scorers},
        "explanations": {},
        "scorer_errors": {},
        "metadata": {k: plain(v) for k, v in sample.metadata.items()},
    }


def _run(agent: Any, sample: Sample) -> Any:
    earlier = getattr(agent, "last_result", None)
    images = [_open_image(image) for image in sample.images] if sample.images else None
    try:
        return agent.run(sample.task, images=images, additional_args=sample.additional_args, return_full_result=True)
    except Exception:
        # A run can end and re-raise: a model failure (state "error"), `interrupt()` from a step callback
        # ("stopped"). Its result is this run's when the agent holds a new one.
        result = getattr(agent, "last_result", None)
        if result is not None and result is not earlier and getattr(result, "state", "success") != "success":
            return result
        raise


def fill_from_result(record: dict[str, Any], result: Any, agent: Any) -> None:
    record["state"] = result.state
    record["answered"], record["outcome"] = run_end(result.state, result.error)
    record["answer"] = plain(result.output)
    usage = result.token_usage
    record["input_tokens"] = int(getattr(usage, "input_tokens", 0) or 0)
    record["output_tokens"] = int(getattr(usage, "output_tokens", 0) or 0)
    # the steps the run took, as its widget counts them: the model's closing reply after max steps is no step
    record["steps"] = sum(not is_forced_answer(step) for step in agent.memory.action_steps())
    if result.state not in ("success", "max_steps_error") and result.error:  # stopped, timed out, stuck, error
        record["error"] = str(result.error)
    elif result.state == "max_steps_error":
        record["error"] = None  # the closing reply after max_steps is not an answer; `state` and `outcome` say so


def score_record(record: dict[str, Any], scorers: dict[str, Callable[..., Any]], answer: Any, sample: Sample) -> None:
    for name, scorer in scorers.items():
        try:
            score = apply_scorer(scorer, answer, sample.expected, sample)
        except Exception as error:
            record["scorer_errors"][name] = f"{type(error).__name__}: {error}"
            continue
        record["scores"][name] = score.value
        compared = answer if score.answer is None else score.answer  # what the scorer compared
        key = getattr(scorer, "answer_key", None)
        record.setdefault("answer_keys", {})[name] = key(compared) if callable(key) else answer_key(compared)
        if score.explanation:
            record["explanations"][name] = score.explanation


def _open_image(image: Any) -> Any:
    if isinstance(image, str):
        from PIL import Image

        with Image.open(image) as opened:
            return opened.copy()
    return image


def _memory(agent: Any) -> Any:
    return getattr(agent, "memory", None) if agent is not None else None


def _error_text(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


def plain(value: Any) -> Any:
    """A JSON-able copy of an answer: JSON values as they are, strings for anything else."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return str(value)  # AgentText and other str subclasses become plain str
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return value.item()
    if isinstance(value, (list, tuple)):
        items = [plain(v) for v in value]
        return items if all(_jsonable(v) for v in items) else str(value)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: plain(v) for k, v in value.items()}
        return items if all(_jsonable(v) for v in items.values()) else str(value)
    return str(value)


def _jsonable(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, list, dict))
