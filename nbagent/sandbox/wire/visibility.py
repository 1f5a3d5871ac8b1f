"""Which of the notebook's variables the agent's code sees: what the task names, what it made, what a person allowed.

A shared namespace is what makes the agent useful, and what let a prompt-injected model read a variable nobody gave
it (``print(secret_token)``). So both executors hide the notebook's other names: the code sees

* the variables the task names (backticks, ``{}``, ``--vars``, ``additional_args``: :meth:`Visibility.share`),
* the names it bound itself (``created``),
* modules, and the functions and classes of libraries (whether it may *use* one is the import policy's question),
* and the names a person allowed after it asked (``granted``: a refusal of kind ``"variable"``, asked and granted
  like a file).

``Visibility(None)`` shares every name (``--vars '*'``, ``share_variables="*"``; the executors' default when no
agent
restricts them) except credentials. A **credential** (:func:`credential_reason`: a text named like one, or written in a
provider's key format, alone or inside a small container) is never shared unless the task names it: a person is not
even asked. The isolated worker takes every hidden name out of its namespace, and a hidden credential's bytes out of
its memory (``boundary/secrets.py``), so that code past the guards cannot read it either.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterable, Mapping
from typing import Any

from .capabilities import RefusedCapability

__all__ = [
    "Visibility",
    "credential_reason",
    "credential_texts",
    "describe_variable",
    "missing_name",
    "NOT_SHARED",
]

#: Names whose text values are credentials (``OPENAI_API_KEY``, ``secret_token``, ``db_password``, ``auth``...).
CREDENTIAL_NAME = re.compile(
    r"(?i)(?:^|_)(?:api_?key|apikey|access_?key|secret(?:_?key)?|private_?key|token|passw(?:or)?d|passphrase"
    r"|credentials?|auth(?:_?token)?|bearer|cookie|session_?key|client_?secret)(?:s)?(?:_|$)|secret|password"
)
#: Key formats of common providers: OpenAI/Anthropic (``sk-``), GitHub, AWS, Hugging Face, Slack, Google, Stripe,
#: GitLab, JSON web tokens, PEM private keys.
CREDENTIAL_FORMATS = (
    ("an API key (sk-…)", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("a Stripe key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)
_CONTAINER_ITEMS = 100  # a container is looked into only this far (a config dict, a list of keys; not a data set)
_TEXT_CHARS = 100_000  # longer texts are data (a document), searched for key formats only in their start
NOT_SHARED = "one of your notebook's variables that the task did not give the agent"
_MISSING_NAME = re.compile(r"\bNameError: name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")


def _text_reason(name: str, value: Any) -> str:
    if type(value) not in (str, bytes) or not value:
        return ""
    if CREDENTIAL_NAME.search(name) and len(value) >= 4 and len(value) <= 4096:
        return f"its name ({name}) says it holds a credential"
    text = value[:_TEXT_CHARS] if type(value) is str else value[:_TEXT_CHARS].decode("latin-1")
    for what, pattern in CREDENTIAL_FORMATS:
        if pattern.search(text):
            return f"its value looks like {what}"
    return ""


def credential_reason(name: str, value: Any) -> str:
    """Why the variable ``name`` holding ``value`` is a credential ("" when it is not): a text named like one or in a
    provider's format, or a small dict, list, tuple or set holding one (``{"api_key": "..."}``)."""
    reason = _text_reason(name, value)
    if reason or type(value) not in (dict, list, tuple, set, frozenset) or len(value) > _CONTAINER_ITEMS:
        return reason
    items = value.items() if type(value) is dict else ((name, item) for item in value)
    for key, item in items:
        if type(item) is str or type(item) is bytes:
            inner = _text_reason(key if type(key) is str else name, item)
            if inner:
                return f"it holds a credential ({inner})"
    return ""


def credential_texts(value: Any) -> list[Any]:
    """The str and bytes objects a credential variable holds (itself, or the items of its small container)."""
    if type(value) in (str, bytes):
        return [value]
    if type(value) not in (dict, list, tuple, set, frozenset) or len(value) > _CONTAINER_ITEMS:
        return []
    items = value.values() if type(value) is dict else value
    return [item for item in items if type(item) in (str, bytes)]


def describe_variable(name: str, value: Any) -> str:
    """``str, 14 chars`` / ``DataFrame 400×6`` / ``dict of 3 items``: what a person is asked about, never its value."""
    kind = type(value).__name__
    if type(value) in (str, bytes):
        return f"{kind}, {len(value)} {'chars' if type(value) is str else 'bytes'}"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return f"{kind} {'×'.join(str(n) for n in shape)}"
    try:
        return f"{kind} of {len(value)} items"
    except Exception:
        return kind


def missing_name(error_text: str) -> str:
    """The name of ``NameError: name 'x' is not defined`` in an error's text ("" when there is none)."""
    found = _MISSING_NAME.search(error_text or "")
    return found.group(1) if found else ""


class Visibility:
    """The names of a shared namespace the agent's code may see; ``shared=None`` shares every name but credentials."""

    def __init__(self, shared: Iterable[str] | None = None) -> None:
        self.shared: frozenset[str] | None = None if shared is None else frozenset(shared)
        self.granted: set[str] = set()
        self.created: set[str] = set()
        self._verdicts: dict[str, tuple[Any, str]] = {}  # name -> (the text it held, credential_reason): texts are
        # immutable, so a name still bound to the same text object has the same verdict (a step costs no regex)

    def share(self, names: Iterable[str] | None) -> None:
        """A new run: these names (None: every name but credentials); grants end, what the agent made stays its own."""
        self.shared = None if names is None else frozenset(names)
        self.granted.clear()

    def named(self, name: str) -> bool:
        """The task (or a person) gave this name explicitly: a credential so named is shared."""
        return (self.shared is not None and name in self.shared) or name in self.granted or name in self.created

    def visible(self, name: str, value: Any) -> bool:
        if self.named(name) or isinstance(value, types.ModuleType) or _library_code(value):
            return True
        return self.shared is None and not self.credential(name, value)

    def credential(self, name: str, value: Any) -> str:
        """`credential_reason`, remembered for texts."""
        if type(value) not in (str, bytes):
            return credential_reason(name, value)
        seen = self._verdicts.get(name)
        if seen is not None and seen[0] is value:
            return seen[1]
        reason = credential_reason(name, value)
        self._verdicts[name] = (value, reason)
        return reason

    def hidden(self, namespace: Mapping[str, Any], candidates: Iterable[str] | None = None) -> dict[str, str]:
        """The names of ``namespace`` (or of ``candidates``) the code may not see -> what it is ("one of your
        notebook's variables that...", "a credential (...)...")."""
        names = namespace if candidates is None else candidates
        hidden = {}
        for name in list(names):
            value = namespace.get(name, _ABSENT)
            if value is _ABSENT or self.visible(name, value):
                continue
            credential = self.credential(name, value)
            hidden[name] = (
                f"a credential ({credential}), never shared unless the task names it" if credential else NOT_SHARED
            )
        return hidden

    def refusal(self, name: str, namespace: Mapping[str, Any]) -> RefusedCapability | None:
        """The ask for ``name`` after the code failed on it (None: not a hidden notebook variable)."""
        value = namespace.get(name, _ABSENT)
        if not name or value is _ABSENT or self.visible(name, value):
            return None
        credential = credential_reason(name, value)
        reason = (
            f"{credential}: a credential reaches the agent only when the task names it (`{name}`)"
            if credential
            else f"it is {NOT_SHARED}"
        )
        detail = describe_variable(name, value)
        return RefusedCapability("variable", name, reason, grantable=not credential, detail=detail)


_ABSENT = object()


def _library_code(value: Any) -> bool:
    """A function or class a library defined (``from sklearn.metrics import f1_score``, a numpy ufunc, a wrapped helper
    such as ``nbagent.data.to_number``): code like a module's, not the
    user's data (whether the code may use it is the import policy's question); the notebook's own are its variables."""
    if not callable(value) or not isinstance(getattr(value, "__name__", None), str):
        return False  # (an instance, a model or a client, has no name of its own: it is the user's object)
    module = getattr(value, "__module__", None)
    return isinstance(module, str) and module not in ("__main__", "builtins") and not module.startswith("__")
