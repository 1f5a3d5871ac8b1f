"""smolagents' remote executors (`E2BExecutor`, `DockerExecutor`, `ModalExecutor`, `BlaxelExecutor`): not in nbagent.

Each runs the agent's code in a hosted sandbox or a container reached over the network; nbagent's boundary is the
isolated worker on this machine (`IsolatedPythonExecutor`, the default). They exist so that code written for
smolagents imports; constructing one raises a `RuntimeError` naming the service it would need and the executor
to use instead. A person who runs such a service can wrap it in a `PythonExecutor` subclass and pass it as
`CodeAgent(executor=...)`.
"""

from __future__ import annotations

from typing import Any

from .guards.executor import CodeOutput, PythonExecutor

__all__ = ["BlaxelExecutor", "DockerExecutor", "E2BExecutor", "ModalExecutor", "RemotePythonExecutor"]


class RemotePythonExecutor(PythonExecutor):
    """Base of the remote executors; constructing any of them says what it would need."""

    service = "a remote sandbox"

    def __init__(self, additional_imports: list[str] | None = None, logger: Any = None, **kwargs: Any) -> None:
        raise RuntimeError(
            f"{type(self).__name__} is not available in nbagent: it runs the agent's code in {self.service}, which "
            "nbagent neither installs nor tests. nbagent's own boundary is IsolatedPythonExecutor (the default "
            "executor: a confined worker process on this machine); to run the code elsewhere, subclass "
            "nbagent.PythonExecutor around your service and pass it as CodeAgent(executor=...)."
        )

    def send_tools(self, tools: Any) -> None:  # pragma: no cover - never constructed
        raise NotImplementedError

    def send_variables(self, variables: Any) -> None:  # pragma: no cover - never constructed
        raise NotImplementedError

    def __call__(self, code_action: str) -> CodeOutput:  # pragma: no cover - never constructed
        raise NotImplementedError


class E2BExecutor(RemotePythonExecutor):
    """Not available: needs E2B's hosted sandboxes (an E2B_API_KEY, the e2b-code-interpreter package, the network)."""

    service = "an E2B cloud sandbox (the e2b-code-interpreter package, an E2B_API_KEY and the network)"


class DockerExecutor(RemotePythonExecutor):
    """Not available: needs a Docker daemon running a Jupyter Kernel Gateway container."""

    service = (
        "a Docker container running Jupyter Kernel Gateway (a Docker daemon, the docker package, websocket-client)"
    )


class ModalExecutor(RemotePythonExecutor):
    """Not available: needs Modal's cloud sandboxes (a Modal account and token, the modal package, the network)."""

    service = "a Modal cloud sandbox (the modal package, a Modal token and the network)"


class BlaxelExecutor(RemotePythonExecutor):
    """Not available: needs Blaxel's hosted sandboxes (a Blaxel workspace and API key, the blaxel package)."""

    service = "a Blaxel cloud sandbox (the blaxel package, a Blaxel workspace and API key, the network)"
