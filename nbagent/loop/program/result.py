"""`RunProgram`: the program of a run, as `agent.to_code()` and `agent.to_function(name)` give it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunProgram"]


@dataclass
class RunProgram:
    """The plain Python program that reproduces a run's answer without the model.

    `code`: the program (None when the run has none: `reason` says why); `checked`: True when it was run once on
    copies of the run's inputs and gave the run's answer; `reason`: "reproduces the answer", or why it is not
    checked (it failed, gave another answer, was not asked to be checked). `inputs` are the notebook variables it
    reads, `tools` the tools it calls, `outputs` the names the task asked for that it binds besides `answer`, and
    `steps` the steps it keeps lines of. `str(program)` is the code with a first comment line saying whether it
    was checked: what "Copy as cell" inserts.
    """

    code: str | None
    checked: bool = False
    reason: str = ""
    inputs: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The first comment line: "# checked: …", "# unchecked: …" or "# no program: …"."""
        if self.code is None:
            return f"# no program: {self.reason}"
        return f"# checked: {self.reason}" if self.checked else f"# unchecked: {self.reason}"

    def __str__(self) -> str:
        return self.status + "\n" if self.code is None else f"{self.status}\n{self.code}"

    def __bool__(self) -> bool:
        return self.code is not None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython shows the program itself
        printer.text(str(self).rstrip("\n"))

    def state(self) -> dict[str, Any]:
        """As the widget's state and the static HTML keep it (nbagent/views/state.py: `run["program"]`)."""
        return {
            "text": str(self),
            "checked": self.checked if self.code is not None else None,
            "reason": self.reason,
            "inputs": list(self.inputs),
            "tools": list(self.tools),
        }
