"""Shared fixtures: memories and scripted runs with errors, images, planning, managed agents (the view tests);
the IPython shell with `%load_ext nbagent` (the magic tests)."""

from __future__ import annotations

import gc
import os
import sys

# llama.cpp's OpenMP threads spin at every barrier while a peer thread waits for a core: with anything else on
# the machine (the other xdist worker) a SmolLM2 test file took 90-145 s instead of 23 s. Passive threads sleep
# there instead. Set before llama.cpp's libgomp loads, here and in every kernel, server and CLI a test starts.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import pytest
from PIL import Image

from nbagent import ActionStep, AgentMemory, PlanningStep, TaskStep, Timing, ToolCall
from nbagent.errors import AgentExecutionError
from nbagent.models.base import ChatMessage, TokenUsage


@pytest.fixture
def red_image() -> Image.Image:
    return Image.new("RGB", (6, 4), (200, 10, 30))


@pytest.fixture
def memory(red_image: Image.Image) -> AgentMemory:
    """Task with an image, a plan, an error step, an image step with edited code, a final answer."""
    memory = AgentMemory("system")
    memory.steps = [
        TaskStep(task="Plot the **squares**", task_images=[red_image]),
        PlanningStep(
            model_output_message=ChatMessage(role="assistant", content="1. compute\n2. plot"),
            plan="1. compute\n2. plot",
            timing=Timing(10.0, 11.0),
            token_usage=TokenUsage(10, 5),
        ),
        ActionStep(
            step_number=1,
            timing=Timing(11.0, 12.5),
            model_output="Thought: divide\n```python\nx = 1/0\n```",
            code_action="x = 1/0",
            model_code_action="x = 1/0",
            tool_calls=[ToolCall("python_interpreter", "x = 1/0", "call_1")],
            error=AgentExecutionError("Code execution failed at line 'x = 1/0': ZeroDivisionError: division by zero"),
            token_usage=TokenUsage(100, 20),
        ),
        ActionStep(
            step_number=2,
            timing=Timing(12.5, 14.0),
            model_output="Thought: plot\n```python\nimg = plot()\n```",
            code_action="img = plot(color='red')",
            model_code_action="img = plot()",
            edited_code_action="img = plot(color='red')",  # a person edited it at approval
            observations="Execution logs:\nplotted\n",
            observations_images=[Image.new("RGB", (8, 8), (0, 0, 255))],
            action_output=None,
            token_usage=TokenUsage(120, 25),
        ),
        ActionStep(
            step_number=3,
            timing=Timing(14.0, 14.5),
            model_output="Thought: done\n```python\nfinal_answer('1, 4, 9')\n```",
            code_action="final_answer('1, 4, 9')",
            action_output="1, 4, 9",
            is_final_answer=True,
            token_usage=TokenUsage(130, 10),
        ),
    ]
    return memory


@pytest.fixture
def ip():
    """The global IPython test shell with nbagent loaded and no widgets; the names a test adds are removed after."""
    from IPython.testing import globalipapp

    shell = globalipapp.start_ipython() or globalipapp.get_ipython()  # started once per process
    if "AgentMagics" not in shell.magics_manager.registry:
        shell.run_line_magic("load_ext", "nbagent")
    magics = shell.magics_manager.registry["AgentMagics"]
    magics.show_widget = False
    before = set(shell.user_ns)
    yield shell
    for name in set(shell.user_ns) - before:
        shell.user_ns.pop(name, None)
    magics.last_agent = None
    magics.show_widget = False


# ------------------------------------------------------------------------------------------------ parallel runs
# scripts/test.sh runs the suite on two pytest-xdist workers with `--dist loadgroup`, the groups being ours: a
# group runs whole, in collection order, on one worker. A test file is a group (its module fixtures - workers,
# kernels - start once, and nbval runs a notebook's cells in order in one kernel); the browser tests are one
# group (one JupyterLab and one Chromium for them all). The groups that take longest go first, so the two
# workers end together instead of one starting the browser tests when the other is done. (xdist's own
# `xdist_group` mark renames node ids, which pytest 9.2 no longer allows: the scheduler below reads the path.)

_FIRST = ("browser", "notebooks/", "tests/test_packaging.py")  # minutes each; most files take seconds


def parallel_group(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return "browser" if path.startswith("tests/browser/") else path


def _rank(group: str, slow_tests: int) -> tuple[int, int]:
    first = next((i for i, prefix in enumerate(_FIRST) if group.startswith(prefix)), len(_FIRST))
    return first, -slow_tests


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return parallel_group(nodeid)

    config.option.loadscopereorder = False  # keep the order the workers collected (below)
    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on the workers of `--dist loadgroup`
        return
    slow: dict[str, int] = {}
    for item in items:
        group = parallel_group(item.nodeid)
        slow[group] = slow.get(group, 0) + (item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: _rank(parallel_group(item.nodeid), slow[parallel_group(item.nodeid)]))  # stable


@pytest.fixture(autouse=True, scope="module")
def _litellm_clients_dropped():
    """LiteLLM keeps every API client it made in a process-wide cache: a test file's clients (their keys, pointed at
    its stopped loopback servers) outlived it, and every isolated worker started later in the same test process
    searched its memory for each of their keys (the secrets scrub: most of the suite's worker starts). Dropped after
    each file that filled the cache."""
    yield
    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    if cache is not None and getattr(cache, "cache_dict", None):
        cache.flush_cache()
        gc.collect()  # (the clients and their bound methods hold each other)
