"""Saving and loading agents: `agent.json`, `prompts.yaml`, `tools/<name>.py`, `managed_agents/<name>/`.

The folder layout follows smolagents' so that a saved agent reads the same;
the model is saved by class name and its `to_dict()` (which never holds keys),
tools as standalone Python source. Loading a folder runs the tools' code, so
`from_hub` needs `trust_remote_code=True`, as in smolagents.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from nbagent._version import DISTRIBUTION_NAME, __version__
from nbagent.tools import Tool

if TYPE_CHECKING:
    from nbagent.loop import AgentLoop as MultiStepAgent  # base.py imports this module

__all__ = ["agent_to_dict", "agent_from_dict", "save_agent", "load_agent", "push_agent_to_hub", "agent_from_hub"]

_COMMON_OPTIONS = (
    "max_steps",
    "verbosity_level",
    "planning_interval",
    "name",
    "description",
    "instructions",
    "provide_run_summary",
    "return_full_result",
)
_KIND_OPTIONS = {
    "CodeAgent": ("additional_authorized_imports", "executor_type", "executor_kwargs", "max_print_outputs_length"),
    "ToolCallingAgent": ("max_tool_threads",),
}


def agent_to_dict(agent: MultiStepAgent) -> dict[str, Any]:
    """The agent as a dict; managed agents as a list of dicts, as smolagents writes them."""
    kind = type(agent).__name__
    return {
        "class": kind,
        "nbagent_version": __version__,
        "tools": [tool.to_dict() for name, tool in agent.tools.items() if name != "final_answer"],
        "model": _model_to_dict(agent.model),
        "managed_agents": [managed.to_dict() for managed in agent.managed_agents.values()],
        "prompt_templates": agent.prompt_templates,
        **{option: getattr(agent, option, None) for option in _COMMON_OPTIONS + _KIND_OPTIONS.get(kind, ())},
        **_limits_and_policy(agent),
    }


def _limits_and_policy(agent: MultiStepAgent) -> dict[str, Any]:
    """nbagent's own options: the time limit (0: none, as `max_time` reads it) and a permission policy that is a
    word (a function cannot be saved: the loaded agent asks, the default)."""
    max_time = getattr(agent, "max_time", None)
    policy = getattr(agent, "on_permission", None)
    return {
        "max_time": 0 if max_time is None else max_time,
        "on_permission": policy if isinstance(policy, str) else None,
    }


def _model_to_dict(model: Any) -> dict[str, Any]:
    """The model as `{"class": ..., **its to_dict()}` (flat: nbagent.eval rebuilds models from it);
    `model_from_dict` also reads smolagents' `{"class": ..., "data": {...}}`."""
    to_dict = getattr(model, "to_dict", None)
    if to_dict is None:
        raise TypeError(f"The model {type(model).__name__} has no to_dict(), so an agent using it cannot be saved")
    data = to_dict()
    if not isinstance(data, dict):  # a mock, or a model whose to_dict() is not a dict: smolagents' shape
        return {"class": type(model).__name__, "data": data}
    return {**data, "class": type(model).__name__}


def agent_from_dict(cls: type, agent_dict: dict[str, Any], **overrides: Any) -> MultiStepAgent:
    kind = agent_dict.get("class", cls.__name__)
    agent_cls = _agent_class(kind) if cls.__name__ in ("MultiStepAgent", kind) else cls
    agent_dict = _renamed_options(agent_dict)
    saved = _COMMON_OPTIONS + _KIND_OPTIONS.get(kind, ()) + ("max_time", "on_permission")
    options = {k: agent_dict[k] for k in saved if agent_dict.get(k) is not None}
    options["prompt_templates"] = agent_dict.get("prompt_templates")
    if "model" not in overrides:
        options["model"] = model_from_dict(agent_dict["model"])
    options["tools"] = [Tool.from_dict(tool) for tool in agent_dict.get("tools", [])]
    if "managed_agents" not in overrides:
        managed = agent_dict.get("managed_agents") or []
        managed = managed.values() if isinstance(managed, dict) else managed  # nbagent < 0.3 wrote a dict
        options["managed_agents"] = [agent_from_dict(_agent_class(sub["class"]), sub) for sub in managed]
    options.update(overrides)
    return agent_cls(**options)


# Agent classes by name, filled by `MultiStepAgent.__init_subclass__` (a saved agent names its class).
AGENT_CLASSES: dict[str, type] = {}


def _renamed_options(agent_dict: dict[str, Any]) -> dict[str, Any]:
    """Options under the names older smolagents versions saved them with (v1.9: `authorized_imports`)."""
    if "authorized_imports" in agent_dict and "additional_authorized_imports" not in agent_dict:
        agent_dict = {**agent_dict, "additional_authorized_imports": agent_dict["authorized_imports"]}
    return agent_dict


def _agent_class(kind: str) -> type:
    cls = AGENT_CLASSES.get(kind)
    if cls is None:
        raise ValueError(f"Unknown agent class '{kind}'. Supported agents: {', '.join(sorted(AGENT_CLASSES))}")
    return cls


def model_from_dict(info: dict[str, Any]) -> Any:
    """The model of a saved agent, by class name in `nbagent.models.MODEL_REGISTRY` (as smolagents looks it up).

    `info` is `{"class": ..., "data": {...}}` (smolagents, nbagent >= 0.3) or the older flat dict.
    """
    import nbagent.models as models

    kind = info.get("class")
    if kind == "HfApiModel":
        kind = "InferenceClientModel"  # smolagents' old name
    registry = models.MODEL_REGISTRY
    cls = registry.get(kind or "")
    if cls is None:
        raise ValueError(
            f"Unknown model class '{kind}'. Supported models: {', '.join(sorted(registry))} "
            "(or pass model=... when loading the agent)"
        )
    data = info["data"] if "data" in info else {k: v for k, v in info.items() if k != "class"}
    return cls.from_dict(data)


def save_agent(agent: MultiStepAgent, output_dir: str | Path) -> Path:
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    data = agent_to_dict(agent)
    tools_dir = folder / "tools"
    tools_dir.mkdir(exist_ok=True)
    for name, tool in agent.tools.items():
        if name != "final_answer":
            (tools_dir / f"{name}.py").write_text(tool.to_dict()["code"], encoding="utf-8")
    for name, managed in agent.managed_agents.items():
        save_agent(managed, folder / "managed_agents" / name)
    requirements = sorted({req for tool in data["tools"] for req in tool.get("requirements", [])})
    (folder / "requirements.txt").write_text("\n".join([DISTRIBUTION_NAME, *requirements]) + "\n", encoding="utf-8")
    (folder / "prompts.yaml").write_text(yaml.safe_dump(agent.prompt_templates, sort_keys=False, allow_unicode=True))
    saved = {k: v for k, v in data.items() if k not in ("prompt_templates", "managed_agents")}
    saved["tools"] = sorted(name for name in agent.tools if name != "final_answer")
    saved["managed_agents"] = {name: type(a).__name__ for name, a in agent.managed_agents.items()}
    (folder / "agent.json").write_text(json.dumps(saved, indent=2, default=repr), encoding="utf-8")
    return folder


def load_agent(cls: type, folder: Any, **overrides: Any) -> MultiStepAgent:
    """Load a saved agent from `folder` (a `Path`; `MultiStepAgent.from_folder` makes it)."""
    path = folder / "agent.json"
    if not path.exists():
        raise FileNotFoundError(f"{folder} is not a saved agent (no agent.json in it)")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tools"] = [
        {"name": name, "code": (folder / "tools" / f"{name}.py").read_text(encoding="utf-8"), "requirements": []}
        for name in data.get("tools", [])
    ]
    if data.get("prompt_templates") is None:  # nbagent keeps them in prompts.yaml only
        prompts = folder / "prompts.yaml"
        data["prompt_templates"] = yaml.safe_load(prompts.read_text(encoding="utf-8")) if prompts.exists() else None
    managed = [
        load_agent(_agent_class(kind), folder / "managed_agents" / name).to_dict()
        for name, kind in (data.get("managed_agents") or {}).items()
    ]
    data["managed_agents"] = managed
    return agent_from_dict(cls, data, **overrides)


def push_agent_to_hub(
    agent: MultiStepAgent,
    repo_id: str,
    commit_message: str = "Upload agent",
    private: bool | None = None,
    token: str | None = None,
    create_pr: bool = False,
    api: Any = None,
) -> str:
    """Save the agent and upload the folder as a Space (`api`: a `huggingface_hub.HfApi`, for tests or endpoints)."""
    from huggingface_hub import HfApi

    api = api or HfApi(token=token)
    api.create_repo(repo_id, private=private, exist_ok=True, repo_type="space", space_sdk="gradio")
    with tempfile.TemporaryDirectory() as tmp:
        save_agent(agent, tmp)
        info = api.upload_folder(
            repo_id=repo_id, folder_path=tmp, repo_type="space", commit_message=commit_message, create_pr=create_pr
        )
    return str(info)


def agent_from_hub(
    cls: type,
    repo_id: str,
    trust_remote_code: bool = False,
    token: str | None = None,
    download: Any = None,
    **overrides: Any,
) -> MultiStepAgent:
    """Download a saved agent (a Space, or a local folder path) and load it; its tools are code, so opt in."""
    if not trust_remote_code:
        raise ValueError(
            "Loading an agent from the Hub runs its tools' code. Read it first, then pass trust_remote_code=True."
        )
    if Path(repo_id).is_dir():
        return load_agent(cls, Path(repo_id), **overrides)
    if download is None:
        from huggingface_hub import snapshot_download as download
    with tempfile.TemporaryDirectory() as tmp:
        folder = download(repo_id=repo_id, repo_type="space", token=token, local_dir=tmp)
        local = Path(tmp) / "agent"
        shutil.copytree(folder, local)
        return load_agent(cls, local, **overrides)
