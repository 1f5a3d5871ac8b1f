"""The page is the person's: agent code neither changes nor talks through a live widget, comm or traitlets object.

A notebook variable can hold the widget that shows the run (anywidget's ``_esm`` is JavaScript the page runs, on the
origin that owns the kernel), another ipywidgets widget, a comm, or one of the kernel's traitlets objects (the shell,
the kernel, its session). Changing one rewrites what the person sees or runs code in their page:
``w.set_trait("_esm", "export default {render(){…}}")`` passed the private-attribute check because ``set_trait`` is
a public method, and ``w.run = {...}`` rewrote what the widget shows.

So, for such an object (:func:`frontend_kind`: its class, or any base, comes from traitlets, ipywidgets, anywidget,
comm, ipykernel, jupyter_client or zmq), agent code:

* may read plain values (a slider's ``value``);
* may not set or delete any attribute, public or private (``store_refusal``);
* may not load the methods that change traits, send or receive messages, open or close comms, or lead to the kernel
  (``FRONTEND_ATTRIBUTES``: ``set_trait``, ``trait_set``, ``set_state``, ``send``, ``open``,
  ``hold_trait_notifications``, ``observe``, ``comm``, ``kernel``...), however it spells the load (``w.send``,
  ``getattr(w, "send")``, ``operator.attrgetter``, the class, ``super()``): ``attribute_refusal``.

Both executors run these guards; in the isolated worker the objects are copies whose comms lead nowhere (the kernel's
sockets and session key are not the worker's), so even code past the guards cannot reach the live widget.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FRONTEND_ATTRIBUTES", "frontend_kind", "attribute_refusal", "store_refusal"]

#: The packages whose objects are the page's or the kernel's (a class or any base defined there).
FRONTEND_PACKAGES = frozenset({"traitlets", "ipywidgets", "anywidget", "comm", "ipykernel", "jupyter_client", "zmq"})

#: Attributes of such objects agent code may not load: they change traits, send or receive messages, open or close
#: a comm, register callbacks that would run later in the kernel, or lead to the kernel and its sockets.
FRONTEND_ATTRIBUTES: frozenset[str] = frozenset(
    {
        # traits
        "set_trait", "trait_set", "set_state", "send_state", "hold_trait_notifications", "hold_sync", "add_traits",
        "notify_change", "set_traits", "add_class", "remove_class", "update",
        # callbacks that would run later, outside any step
        "observe", "unobserve", "unobserve_all", "on_trait_change", "on_msg", "on_displayed", "on_close",
        "register_callback",
        # messages and comms
        "send", "send_bytes", "send_json", "send_multipart", "send_string", "open", "close", "close_all",
        "handle_msg", "publish_msg",
        # the way to the kernel
        "comm", "kernel", "shell", "session", "parent", "iopub_socket", "comm_manager", "widgets",
    }
)  # fmt: skip

_KINDS: dict[type, str] = {}  # a class's kind, judged once (a plain dict: a weak one costs a reference per lookup)
_MAX_KINDS = 4096  # classes agent code makes in a loop cannot grow it without bound


def _class(obj: Any) -> type:
    """The class judged: ``obj``'s, ``obj`` itself when it is a class, the instance's class behind a ``super()``."""
    if type(obj) is super:
        obj = getattr(obj, "__self_class__", None) or getattr(obj, "__thisclass__", None)
    return obj if isinstance(obj, type) else type(obj)


def frontend_kind(obj: Any) -> str:
    """ "a live widget" / "a comm" / "a traitlets object of the kernel" / "a kernel socket" when ``obj`` (an
    instance, a class, or a ``super()`` over one) is the page's or the kernel's; "" otherwise."""
    cls = _class(obj)
    kind = _KINDS.get(cls)
    if kind is None:
        if len(_KINDS) >= _MAX_KINDS:
            _KINDS.clear()
        kind = _KINDS[cls] = _kind_of(cls)
    return kind


def _kind_of(cls: type) -> str:
    roots = {str(getattr(c, "__module__", "") or "").split(".")[0] for c in getattr(cls, "__mro__", (cls,))}
    found = roots & FRONTEND_PACKAGES
    if not found:
        return ""
    if found & {"ipywidgets", "anywidget"}:
        return "a live widget"
    if "comm" in found or any(c.__name__.endswith("Comm") for c in cls.__mro__):
        return "a comm"
    if "zmq" in found:
        return "a kernel socket"
    return "a traitlets object of the kernel" if "traitlets" in found else "an object of the kernel"


def _said(obj: Any, kind: str) -> str:
    return f"{_class(obj).__name__!r} is {kind}"


def attribute_refusal(obj: Any, name: str) -> str | None:
    """Why agent code may not load ``obj.<name>`` (a name of ``FRONTEND_ATTRIBUTES``), or None."""
    kind = frontend_kind(obj) if name in FRONTEND_ATTRIBUTES else ""
    if not kind:
        return None
    return (
        f"{_said(obj, kind)}: the page and the kernel are the person's, so agent code cannot use its {name!r} "
        "(no changing traits, sending messages or reaching the kernel through it); read its values instead, "
        "e.g. slider.value"
    )


def store_refusal(obj: Any) -> str | None:
    """Why agent code may not set or delete attributes of ``obj``, or None."""
    kind = frontend_kind(obj)
    if not kind:
        return None
    return (
        f"{_said(obj, kind)}: the page and the kernel are the person's, so agent code cannot set or delete its "
        "attributes (what a widget shows or runs stays as the person's notebook made it); keep the value in a variable"
    )
