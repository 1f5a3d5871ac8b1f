"""The kernel side of the widget's buttons: a receive-only comm that is heard while a cell runs.

`ControlChannel` is a model-only ipywidgets comm the widget's buttons send
their commands on. Nothing in the kernel ever sends on it, and it is routed
to a subshell nbagent creates once per kernel, so its messages are handled on
that subshell's thread even while the main thread is busy with a cell, in any
front-end (the measurements and the reasons are in nbagent/control.py).

`attach_controls(widget, driver)` connects an `AgentWidget` (its `controls`
and `control_channel` traits) to a `RunDriver`. `watch_kernel_interrupt`
makes the kernel's interrupt (■) stop runs that advance on a worker thread
while the kernel is idle.

Why the widget's buttons reach Python while a cell runs — measured
-----------------------------------------------------------------
JupyterLab 4.6.6, ipykernel 7.4.0, anywidget 0.11.0, headless Chromium 156 via
Playwright; the same cases driven with jupyter_client; one click at ~1.7 s
into a cell that blocks for 5 s (`time.sleep` loop, or `Event.wait` while a
worker thread works):

| incoming message on ...                                   | Lab, comms over subshells (default) | no subshells: Lab `commsOverSubshells: disabled`, jupyter_client |
|-----------------------------------------------------------|-------------------------------------|-----------------------------------------------|
| (1) a widget the blocking cell does not touch             | queued; MainThread after the cell   | queued; MainThread after the cell             |
| (2) a widget the cell updates from the main thread        | queued; MainThread after the cell   | queued; MainThread after the cell             |
| (3) a widget updated by a worker, main in `Event.wait`    | queued; MainThread after the cell   | queued; MainThread after the cell             |
| (4a) separate receive-only comm, route cleared            | at once, on Lab's comm subshell     | queued; MainThread after the cell             |
| (4b) separate receive-only comm, routed to a subshell     | at once (< 0.05 s), nbagent's subshell | at once (< 0.05 s), nbagent's subshell     |
|      nbagent creates (`create_subshell_request`)          |                                     |                                               |
| kernel interrupt (■) during `time.sleep`/`Event.wait`     | KeyboardInterrupt in main, < 0.5 s  | same                                          |

Why (1)-(3) queue although Lab sends every widget message to a subshell:
ipykernel 7.4 routes a comm's incoming messages to the shell that last *sent*
on that comm (`Comm._reply_subshell_id`, read by `_reply_subshell_for`), and
the `comm_open` from the cell's main thread records the main shell. Any later
kernel-side send records the sender's parent: an `echo_update` of a front-end
trait change or the reply to a `request_state` (page reload) re-route to the
message's own subshell (Lab: still off the main thread; no-subshell
front-ends: back to the blocked main shell). (5) nbclient: there is nobody to
click; creating the subshell works (it uses the kernel's connection file),
`interrupt_on_timeout` raises KeyboardInterrupt in the cell (3.0 s for a 3 s
timeout) and the widget state is saved. An idle kernel ignores SIGINT
(ipykernel sets SIG_IGN between requests); a handler installed from the main
thread's event loop between requests receives it, and ipykernel's
pre/post_handler_hook save and restore that handler around every request.

The mechanism nbagent uses (this module, nbagent/notebook/driver.py):
* buttons send on a separate, receive-only `ControlChannel` comm, routed to a
  subshell nbagent creates through the public protocol (kernel_info's
  "kernel subshells" feature, `create_subshell_request` on the kernel's own
  control channel). The route is the private `Comm._reply_subshell_for`, fixed
  on the instance so no kernel-side send (ipywidgets may reply on the comm)
  moves it; tests/notebook/test_kernel_routing.py fails loudly when ipykernel
  changes it.
  Commands only flip flags here and call `request_stop`, which the sandbox
  makes interrupt code in any thread; they never run agent code themselves.
* (a) blocking `agent.run()` / `%%agent`: the run stays on the main thread
  (signals interrupt `time.sleep`, matplotlib works); commands arrive on the
  subshell thread; a paused run waits in the main thread; ■ raises
  KeyboardInterrupt there, which ends the run as stopped.
* (b) idle kernel (`agent.start(task)`, `%%agent --step`, re-run after a run
  ended): the run is set up in the calling cell (so its widget shows there),
  then a worker thread drives it and waits here while paused; the kernel stays
  free. ■ reaches it through a SIGINT handler installed from the main event
  loop (it passes SIGINT on when no such run is active).

What works where (measured: the first two rows; the others follow from the code):

| front-end / kernel                                   | buttons during a blocking cell (a)  | buttons, idle kernel (b) | ■ stops |
|------------------------------------------------------|-------------------------------------|--------------------------|---------|
| JupyterLab 4.6 + ipykernel 7.4                       | yes (browser tests)                 | yes                      | a, b    |
| same with comms over subshells disabled              | yes (nbagent's own subshell)        | yes                      | a, b    |
| VS Code, Notebook 7, other clients + ipykernel 7.4   | yes (same routing; not run here)    | yes                      | a, b    |
| ipykernel without `_reply_subshell_for` (< 7.4)      | only if the front-end's own subshell routing reaches Python; else after the cell | yes | a, b |
| ipykernel < 7 (no subshells)                         | no: handled when the cell ends      | yes                      | a, b    |
| nbclient / nbconvert --execute                       | nobody clicks; `agent.stop()` from code or `interrupt_on_timeout` | Python API | a |

Stop during a model call: the call runs on a helper thread under its own cancel
scope (nbagent/loop/model_calls.py), so the blocked cell waits in Python and hears
the comm and ■ at once, and our models end the call within a fraction of a second
(nbagent/models/cancel.py); a model class that ignores the scope is abandoned
after 1 s. Limits: code stuck in one long C call in the local executor is
stopped when the call returns (see nbagent/sandbox/guards/limits.py); re-running
from a step does not undo what later steps did to the namespace.
"""

from __future__ import annotations

import signal
import threading
import weakref
from collections.abc import Callable
from typing import Any

import ipywidgets

from nbagent.loop.gates import INTERRUPT_REASON, ControlError

from .kernel import current_kernel

__all__ = ["ControlChannel", "attach_controls", "control_subshell", "route_comm", "watch_kernel_interrupt"]

_SUBSHELL_TIMEOUT = 5.0
_subshell_lock = threading.Lock()
_subshell: dict[int, str | None] = {}  # id(kernel) -> nbagent's subshell id (None: the kernel has none)


def control_subshell() -> str | None:
    """The id of nbagent's subshell in this kernel, created on first use; None without subshell support.

    Created with a `create_subshell_request` on the kernel's own control channel
    (public protocol, JEP 91), so it works whatever the front-end.
    """
    kernel = current_kernel()
    if kernel is None:
        return None
    with _subshell_lock:
        if id(kernel) not in _subshell:
            _subshell[id(kernel)] = _create_subshell(kernel)
        return _subshell[id(kernel)]


def _create_subshell(kernel: Any) -> str | None:
    try:
        features = kernel.kernel_info.get("supported_features", [])
    except Exception:
        return None
    if "kernel subshells" not in features:
        return None
    try:
        from ipykernel.connect import get_connection_file
        from jupyter_client import BlockingKernelClient

        client = BlockingKernelClient()
        client.load_connection_file(get_connection_file())
        client.start_channels(shell=False, iopub=False, stdin=False, hb=False, control=True)
    except Exception:
        return None
    try:
        request = client.session.msg("create_subshell_request", {})
        client.control_channel.send(request)
        while True:
            reply = client.control_channel.get_msg(timeout=_SUBSHELL_TIMEOUT)
            if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                content = reply["content"]
                return content.get("subshell_id") if content.get("status") == "ok" else None
    except Exception:
        return None
    finally:
        client.stop_channels()


def route_comm(comm: Any, subshell_id: str | None) -> str:
    """Route `comm`'s incoming messages to `subshell_id` (or, if None, to the subshell the front-end names).

    ipykernel 7.4 asks the comm's `_reply_subshell_for(data, default)` (private) where each
    incoming message goes, and every kernel-side send on the comm re-points it at the
    sender's shell. Setting it on the instance fixes the route for good: a send from the
    blocked main shell (an echo, a reply to a page reload) cannot send the next click to
    the main thread, not even for the moment between the send and the next message.
    tests/notebook/test_kernel_routing.py fails when ipykernel changes this. Returns how
    the comm is routed: "subshell" (nbagent's), "front-end" (the front-end's choice), or "main".
    """
    if not hasattr(comm, "_reply_subshell_for"):  # ipykernel < 7.4 routes by the message's header alone
        return "front-end"
    if subshell_id is not None:
        comm._reply_subshell_for = lambda _data, _default: subshell_id
        return "subshell"
    comm._reply_subshell_for = lambda _data, front_ends_choice: front_ends_choice
    return "front-end"


class ControlChannel(ipywidgets.Widget):
    """A model-only comm that carries the widget's control commands to `on_command(content)`.

    Receive-only on purpose. ipywidgets itself may send on it (an echo of a front-end trait
    change, a reply to a page reload's request_state); `route_comm` keeps such sends from
    moving the route.
    """

    def __init__(self, on_command: Callable[[dict[str, Any]], Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_command = on_command
        self._subshell_id = control_subshell()
        self.route = route_comm(self.comm, self._subshell_id) if self.comm is not None else "none"
        self.on_msg(self._on_custom_msg)

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "control":
            self._on_command(content)


def attach_controls(widget: Any, driver: Any) -> Callable[[], None] | None:
    """Give `widget` (an AgentWidget with `controls`/`control_channel` traits) working buttons.

    Returns `detach()`, which takes them away again (the widget then shows its run only), or
    None if the widget has no place for controls.
    """
    if not (widget.has_trait("controls") and widget.has_trait("control_channel")):
        return None
    lock = threading.Lock()

    def show(snapshot: dict[str, Any]) -> None:
        with lock:  # listeners fire on the run's thread and on the channel's thread
            widget.controls = snapshot

    def on_command(content: dict[str, Any]) -> None:
        if content.get("action") == "shown":  # a front end renders the widget: a person may answer its asks
            driver.widget_shown(widget)
            return
        try:
            driver.handle_command(content)
        except ControlError as error:
            driver.message = str(error)
            show(driver.snapshot())

    channel = ControlChannel(on_command)
    widget.control_channel = channel
    handlers = getattr(widget, "control_handlers", None)
    if isinstance(handlers, list):  # the widget's own comm, if a front-end cannot reach the channel
        handlers.append(on_command)
    driver.add_listener(show)
    show(driver.snapshot())

    def detach() -> None:
        driver.remove_listener(show)
        if isinstance(handlers, list) and on_command in handlers:
            handlers.remove(on_command)
        with lock:
            widget.controls = {}
        widget.control_channel = None
        channel.close()

    return detach


# ---------------------------------------------------------------------------- kernel interrupt, idle kernel

_background: weakref.WeakSet[Any] = weakref.WeakSet()  # RunDrivers (driver.py imports this module)
_previous_handler: list[Any] = [signal.SIG_IGN]
_installing = threading.Lock()


def watch_kernel_interrupt(driver: Any) -> bool:
    """Make ■ (SIGINT to the kernel) stop `driver`'s worker-thread run while the kernel is idle.

    ipykernel ignores SIGINT between requests; a handler installed from the main
    thread's event loop receives it, and ipykernel restores it after each request.
    Returns False outside a kernel.
    """
    _background.add(driver)
    kernel = current_kernel()
    loop = getattr(kernel, "io_loop", None)
    if loop is None:
        return False
    loop.add_callback(_install_handler, loop)
    return True


def _install_handler(loop: Any) -> None:
    with _installing:
        current = signal.getsignal(signal.SIGINT)
        if current is _on_sigint:
            return
        if current is signal.default_int_handler:  # inside a request: ipykernel puts its own back afterwards
            loop.call_later(0.05, _install_handler, loop)
            return
        _previous_handler[0] = current
        signal.signal(signal.SIGINT, _on_sigint)


def _on_sigint(signum: int, frame: Any) -> None:
    running = [c for c in list(_background) if c.in_background]
    if running:
        for driver in running:
            driver.gates.request_stop(INTERRUPT_REASON)
        return
    previous = _previous_handler[0]
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_DFL:
        raise KeyboardInterrupt
