"""The kernel side of the widget's buttons: a receive-only comm that is heard while a cell runs.

`ControlChannel` is a model-only ipywidgets comm the widget's buttons send
their commands on. Nothing in the kernel ever sends on it, and it is routed
to a subshell nbagent creates once per kernel, so its messages are handled on
that subshell's thread even while the main thread is busy with a cell, in any
front-end (the measurements and the reasons are in nbagent/control.py).

`attach_controls(widget, controller)` connects an `AgentWidget` (its `controls`
and `control_channel` traits) to a `RunController`. `watch_kernel_interrupt`
makes the kernel's interrupt (■) stop runs that advance on a worker thread
while the kernel is idle.
"""

from __future__ import annotations

import signal
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets

from nbagent.control import INTERRUPT_REASON, ControlError

if TYPE_CHECKING:
    from nbagent.runner import RunController

__all__ = ["ControlChannel", "attach_controls", "control_subshell", "route_comm", "watch_kernel_interrupt"]

_SUBSHELL_TIMEOUT = 5.0
_subshell_lock = threading.Lock()
_subshell: dict[int, str | None] = {}  # id(kernel) -> nbagent's subshell id (None: the kernel has none)


def _kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def control_subshell() -> str | None:
    """The id of nbagent's subshell in this kernel, created on first use; None without subshell support.

    Created with a `create_subshell_request` on the kernel's own control channel
    (public protocol, JEP 91), so it works whatever the front-end.
    """
    kernel = _kernel()
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

    Uses ipykernel 7.4's private `_reply_subshell_id` (read by `_reply_subshell_for`);
    tests/control/test_kernel_routing.py fails when that changes. Returns how the comm is
    routed: "subshell" (nbagent's), "front-end" (the front-end's choice), or "main".
    """
    if not hasattr(comm, "_reply_subshell_for"):  # ipykernel < 7.4 routes by the message's header alone
        return "front-end"
    if subshell_id is not None:
        comm._reply_subshell_id = subshell_id
        return "subshell"
    try:
        del comm._reply_subshell_id
    except AttributeError:
        pass
    return "front-end"


class ControlChannel(ipywidgets.Widget):
    """A model-only comm that carries the widget's control commands to `on_command(content)`.

    Receive-only on purpose: a kernel-side send would re-route the comm to the sender's shell.
    ipywidgets itself may send (an echo of a front-end trait change, a reply to a page
    reload's request_state), so the route is set again after every incoming message.
    """

    def __init__(self, on_command: Callable[[dict[str, Any]], Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_command = on_command
        self._subshell_id = control_subshell()
        self.route = route_comm(self.comm, self._subshell_id) if self.comm is not None else "none"
        self.on_msg(self._on_custom_msg)

    def _handle_msg(self, msg: dict[str, Any]) -> None:
        try:
            super()._handle_msg(msg)
        finally:
            if self.comm is not None:
                route_comm(self.comm, self._subshell_id)

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "control":
            self._on_command(content)


def attach_controls(widget: Any, controller: RunController) -> Callable[[], None] | None:
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
        try:
            controller.handle_command(content)
        except ControlError as error:
            controller.message = str(error)
            show(controller.snapshot())

    channel = ControlChannel(on_command)
    widget.control_channel = channel
    handlers = getattr(widget, "control_handlers", None)
    if isinstance(handlers, list):  # the widget's own comm, if a front-end cannot reach the channel
        handlers.append(on_command)
    controller.add_listener(show)
    show(controller.snapshot())

    def detach() -> None:
        controller.remove_listener(show)
        if isinstance(handlers, list) and on_command in handlers:
            handlers.remove(on_command)
        with lock:
            widget.controls = {}
        widget.control_channel = None
        channel.close()

    return detach


# ---------------------------------------------------------------------------- kernel interrupt, idle kernel

_background: weakref.WeakSet[RunController] = weakref.WeakSet()
_previous_handler: list[Any] = [signal.SIG_IGN]
_installing = threading.Lock()


def watch_kernel_interrupt(controller: RunController) -> bool:
    """Make ■ (SIGINT to the kernel) stop `controller`'s worker-thread run while the kernel is idle.

    ipykernel ignores SIGINT between requests; a handler installed from the main
    thread's event loop receives it, and ipykernel restores it after each request.
    Returns False outside a kernel.
    """
    _background.add(controller)
    kernel = _kernel()
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
        for controller in running:
            controller.control.request_stop(INTERRUPT_REASON)
        return
    previous = _previous_handler[0]
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_DFL:
        raise KeyboardInterrupt
