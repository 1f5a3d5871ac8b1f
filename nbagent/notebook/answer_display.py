"""The `%%agent --quiet` cell's answer, shown as a plain value: `25124.05`, not `np.float64(25124.05)`.

The cell's value stays the answer itself (`Out[n]`, `_`, `-o name` hold the numpy scalar); only the text
IPython shows for it is plain (`nbagent.text.plain_text`). IPython picks that text by type, so for the one
cell that shows the answer, the answer's type gets a printer that writes the plain text for that very object
and leaves every other object of the type as it was; it is removed after the cell.
"""

from __future__ import annotations

from typing import Any

from nbagent.text import plain_repr

__all__ = ["show_plainly"]

_MISSING = object()


class _OneAnswer:
    """The plain-text printers of one shell: the answer they stand for, and what each type had before."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.answer: Any = _MISSING
        self.previous: dict[type, Any] = {}  # type -> its printer before ours (None: it had none)

    def show(self, answer: Any) -> None:
        formatter = self.shell.display_formatter.formatters["text/plain"]
        self.answer = answer
        kind = type(answer)
        if kind not in self.previous:
            self.previous[kind] = formatter.type_printers.get(kind)
            formatter.for_type(kind, self._print)
        if self._restore not in self.shell.events.callbacks["post_run_cell"]:
            self.shell.events.register("post_run_cell", self._restore)

    def _print(self, value: Any, printer: Any, cycle: bool) -> None:
        if value is self.answer:
            printer.text(plain_repr(value))
            return
        before = self.previous.get(type(value))
        if before is not None:
            before(value, printer, cycle)
            return
        for base in type(value).__mro__[1:]:  # as IPython would have looked it up without ours
            inherited = printer.type_pprinters.get(base)
            if inherited is not None:
                inherited(value, printer, cycle)
                return
        printer.text(repr(value))

    def _restore(self, *_: Any) -> None:
        formatter = self.shell.display_formatter.formatters["text/plain"]
        for kind, before in self.previous.items():
            formatter.type_printers.pop(kind, None)
            if before is not None:
                formatter.type_printers[kind] = before
        self.previous.clear()
        self.answer = _MISSING
        self.shell.events.unregister("post_run_cell", self._restore)


_shells: dict[int, _OneAnswer] = {}


def show_plainly(shell: Any, answer: Any) -> None:
    """Let IPython show `answer`, the value of the cell now running, as plain text (nothing when it already is)."""
    if shell is None or plain_repr(answer) == repr(answer):
        return
    keeper = _shells.get(id(shell))
    if keeper is None or keeper.shell is not shell:
        keeper = _shells[id(shell)] = _OneAnswer(shell)
    keeper.show(answer)
