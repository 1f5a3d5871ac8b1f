"""`LlamaCppModel`: GGUF models on the CPU through llama-cpp-python (optional extra `jupyter-nbagent[llamacpp]`; `nbagent setup` builds it for this CPU).

Prefix reuse across agent steps comes from llama.cpp itself: one `Llama` object keeps the
KV cache of its last sequence and, on the next call, evaluates only the tokens after the
longest common prefix. We keep that object for the model's lifetime and never reset it
(unless `reuse_cache=False`, used by benchmarks to measure the recompute cost); the states of
earlier prompts a newer one branched away from are kept too (`prompt_states.py`).

A Stop (the call's `CancelScope`, nbagent/models/cancel.py) aborts llama.cpp's decode between two
nodes of its compute graph, in prefill and in decoding alike (measured: ~20 ms after the Stop, where
one prompt batch of the 1.5B default takes ~6 s on 2 cores). The cache stays consistent: llama.cpp
drops the aborted batch's entries and llama-cpp-python counts only the batches that completed.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nbagent.sandbox.boundary.model_memory import remember_model_memory

from ._common import public_dict, tool_schemas
from .base import (
    TOOL_ROLE_CONVERSIONS,
    ChatMessage,
    ChatMessageStreamDelta,
    MessageRole,
    Model,
    ModelError,
    TokenUsage,
    get_clean_message_list,
)
from .cancel import CallCancelled, CancelScope, acquire, current_scope
from .prompt_states import PromptStates

#: Room for about four earlier prompts of 2,000 tokens with the 1.5B default (~28 KB of KV state per token).
DEFAULT_PROMPT_CACHE_BYTES = 256 << 20

__all__ = ["LlamaCppModel", "import_llama_cpp"]


def import_llama_cpp() -> Any:
    # llama.cpp's OpenMP threads spin-wait ~300k iterations at every barrier. On a shared 2-core machine
    # a spinning thread burns the time slice its partner needs: measured 92 s vs 13 s for the same call
    # at load 5. A short spin keeps most of the quiet-machine speed and degrades gracefully under load.
    # Read by libgomp when it loads, so it must be set before the first `import llama_cpp`.
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", "20000")
    try:
        import llama_cpp
    except ImportError as err:
        raise ModuleNotFoundError(
            "LlamaCppModel needs llama-cpp-python: `nbagent setup` builds it for this CPU (~5 CPU-minutes, once; "
            "`pip install 'jupyter-nbagent[llamacpp]'` builds it too, but with ggml's AMX kernels where the CPU has AMX)."
        ) from err
    return llama_cpp


def context_overflow_message(prompt_tokens: int, max_tokens: int, n_ctx: int) -> str:
    """What overflowed and what helps (a larger context, a shorter task; continuing would overflow again)."""
    larger = max(2 * n_ctx, 1024 * -(-(prompt_tokens + max_tokens) // 1024))
    return (
        f"The conversation is {prompt_tokens} tokens; with up to {max_tokens} new tokens it exceeds the context "
        f"window n_ctx={n_ctx}. What helps: a larger context (`%%agent --n-ctx {larger}`, or "
        f"LlamaCppModel(..., n_ctx={larger})), fewer or smaller variables in the task, or a new run "
        "(--continue sends the whole conversation again)."
    )


class LlamaCppModel(Model):
    """A local GGUF model run by llama.cpp, with streaming, stop sequences and prefix KV reuse.

    Args:
        model_path: path of a `.gguf` file.
        n_ctx: context window in tokens.
        n_threads: CPU threads (default: all cores).
        max_new_tokens: cap on generated tokens per call.
        temperature: 0 (default) is greedy decoding, reproducible run to run.
        reuse_cache: keep the KV cache of the previous call's prefix (the point of this class).
        prompt_cache_bytes: memory for the KV states of earlier prompts a newer one branched away from (a question
            about another frame's data card), put back when a prompt starts like one of them again; 0: only the
            last prompt is reused.
        verbose: llama.cpp's own logging (off: the default model must stay quiet).
        llama_kwargs: more keyword arguments for `llama_cpp.Llama`.
    """

    def __init__(
        self,
        model_path: str,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        max_new_tokens: int = 1024,
        temperature: float = 0.0,
        seed: int = 0,
        reuse_cache: bool = True,
        prompt_cache_bytes: int = DEFAULT_PROMPT_CACHE_BYTES,
        verbose: bool = False,
        llama_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        llama_cpp = import_llama_cpp()
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise ModelError(f"LlamaCppModel: no GGUF file at {model_path!r}.")
        super().__init__(flatten_messages_as_text=True, model_id=kwargs.pop("model_id", path.name), **kwargs)
        self.model_path = str(path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed
        self.reuse_cache = reuse_cache
        self.prompt_cache_bytes = prompt_cache_bytes
        # Weights read into memory once (not mmap'ed): page-cache eviction on a busy machine otherwise
        # made the first calls several times slower (185 s vs 55 s measured).
        self.llama_kwargs = {"use_mmap": False, **(llama_kwargs or {})}
        self.llm = remember_model_memory(  # its weights and caches: a worker's secrets scrub need not search them
            lambda: llama_cpp.Llama(
                model_path=self.model_path,
                n_ctx=n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                seed=seed,
                verbose=verbose,
                **self.llama_kwargs,
            ),
            _still_loaded,
        )
        self._formatter = self._make_formatter(llama_cpp)
        self._states = PromptStates(llama_cpp, self.llm, prompt_cache_bytes if reuse_cache else 0)
        self._lock = threading.Lock()  # one Llama object, one KV cache: calls must not interleave
        self._abort = _AbortFlag(llama_cpp, self.llm.ctx)

    def _make_formatter(self, llama_cpp: Any) -> Any:
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(f"{self.model_path} has no chat template in its metadata; LlamaCppModel needs one.")
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        def token_text(token_id: int) -> str:
            return self.llm.detokenize([token_id], special=True).decode("utf-8", errors="ignore")

        eos, bos = self.llm.token_eos(), self.llm.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            eos_token=token_text(eos) if eos >= 0 else "",
            bos_token=token_text(bos) if bos >= 0 else "",
        )

    def __repr__(self) -> str:
        return f"LlamaCppModel(model_path={self.model_path!r}, n_ctx={self.n_ctx}, n_threads={self.n_threads})"

    def to_dict(self) -> dict[str, Any]:
        return public_dict(
            type(self).__name__,
            {
                "model_path": self.model_path,
                "n_ctx": self.n_ctx,
                "n_threads": self.n_threads,
                "max_new_tokens": self.max_new_tokens,
                "temperature": self.temperature,
                "seed": self.seed,
                "reuse_cache": self.reuse_cache,
                "prompt_cache_bytes": self.prompt_cache_bytes,
                "llama_kwargs": self.llama_kwargs,
            },
        )

    # -- prompt -------------------------------------------------------------------------------------

    def prompt_tokens(
        self, messages: list[ChatMessage | dict[str, Any]], tools_to_call_from: list[Any] | None = None
    ) -> tuple[list[int], list[str]]:
        """Token ids of the rendered chat prompt and the template's own stop strings."""
        clean = get_clean_message_list(messages, role_conversions=TOOL_ROLE_CONVERSIONS, flatten_messages_as_text=True)
        rendered = self._formatter(messages=clean, tools=tool_schemas(tools_to_call_from))
        tokens = self.llm.tokenize(rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True)
        stops = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop] if rendered.stop else []
        return tokens, [s for s in stops if s]

    def _completion_args(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None,
        response_format: Any,
        tools_to_call_from: list[Any] | None,
        kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        tokens, template_stops = self.prompt_tokens(messages, tools_to_call_from)
        max_tokens = kwargs.pop("max_new_tokens", kwargs.pop("max_tokens", self.max_new_tokens))
        if len(tokens) + max_tokens > self.n_ctx:
            raise ModelError(context_overflow_message(len(tokens), max_tokens, self.n_ctx))
        args: dict[str, Any] = {
            "prompt": tokens,
            "stop": [*(stop_sequences or []), *template_stops],
            "max_tokens": max_tokens,
            "temperature": kwargs.pop("temperature", self.temperature),
            "seed": self.seed,
            **kwargs,
        }
        if response_format is not None:
            args["grammar"] = _grammar_for(response_format)
        return args

    # -- generation ---------------------------------------------------------------------------------

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        args = self._completion_args(messages, stop_sequences, response_format, tools_to_call_from, kwargs)
        with self._cancellable():
            self._before_call(args["prompt"])
            response = self.llm.create_completion(**args)
        usage = response.get("usage") or {}
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            content=response["choices"][0]["text"],
            raw=response,
            token_usage=TokenUsage(usage.get("prompt_tokens", len(args["prompt"])), usage.get("completion_tokens", 0)),
        )

    def generate_stream(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatMessageStreamDelta]:
        args = self._completion_args(messages, stop_sequences, response_format, tools_to_call_from, kwargs)
        with self._cancellable() as scope:
            self._before_call(args["prompt"])
            pieces: list[str] = []
            for chunk in self.llm.create_completion(stream=True, **args):
                scope.check()
                text = chunk["choices"][0].get("text") or ""
                if text:
                    pieces.append(text)
                    yield ChatMessageStreamDelta(content=text)
            generated = len(self.llm.tokenize("".join(pieces).encode("utf-8"), add_bos=False, special=True))
        yield ChatMessageStreamDelta(content="", token_usage=TokenUsage(len(args["prompt"]), generated))

    def _before_call(self, prompt: list[int]) -> None:
        if self.reuse_cache:
            self._states.prepare(prompt)
        else:
            self.llm.reset()

    @contextmanager
    def _cancellable(self) -> Iterator[CancelScope]:
        """Hold the model for one call that the current scope can abort (`CallCancelled`)."""
        scope = current_scope()
        with acquire(self._lock, scope):
            scope.check()
            arm = self._abort.arm()
            try:
                with scope.while_running(arm.trip):
                    yield scope
            except RuntimeError as failure:  # llama-cpp-python's "llama_decode returned 2": our abort
                if scope.cancelled:
                    raise CallCancelled(f"llama.cpp stopped: {scope.reason}") from failure
                raise
            finally:
                arm.disarm()
            scope.check()


def _still_loaded(llm: Any) -> bool:
    """Whether llama.cpp still holds the model and its context (``Llama.close()`` frees both)."""
    model, context = getattr(llm, "_model", None), getattr(llm, "_ctx", None)
    return getattr(model, "model", None) is not None and getattr(context, "ctx", None) is not None


class _AbortFlag:
    """llama.cpp's abort callback for one context: one flag byte, read without Python.

    llama.cpp asks the callback between the nodes of every compute graph, from its compute thread. A
    Python callback would need the GIL each time (thousands of times per batch; each wait for the GIL
    can last the interpreter's switch interval), so the callback is libc's `strlen` and its data a
    two-byte buffer: the length is 0 (go on) or 1 (abort), exactly the bool llama.cpp expects.
    """

    def __init__(self, llama_cpp: Any, ctx: Any) -> None:
        self._flag = ctypes.create_string_buffer(2)
        self._callback = llama_cpp.ggml_abort_callback(ctypes.cast(_strlen(), ctypes.c_void_p).value)
        llama_cpp.llama_set_abort_callback(ctx, self._callback, ctypes.cast(self._flag, ctypes.c_void_p))

    def arm(self) -> _ArmedCall:
        self._flag.value = b""
        return _ArmedCall(self._flag)


class _ArmedCall:
    """One call's side of the abort flag: `trip()` from the stopping thread, `disarm()` when the call ends.

    While a tripped call unwinds, llama.cpp logs the abort it was asked for as an error ("decode: removing
    memory module entries ..."), which llama-cpp-python prints into the notebook's cell: it is kept quiet.
    """

    def __init__(self, flag: Any) -> None:
        self._flag = flag
        self._lock = threading.Lock()
        self._live, self._tripped = True, False

    def trip(self) -> None:
        with self._lock:
            if self._live and not self._tripped:
                self._tripped = True
                _QUIET.enter()
                self._flag.value = b"\x01"

    def disarm(self) -> None:
        with self._lock:
            self._live = False
            self._flag.value = b""
            if self._tripped:
                _QUIET.leave()


class _QuietLlamaLog:
    """Raises llama-cpp-python's log threshold while any aborted call unwinds (counted: calls may overlap)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._saved = logging.NOTSET

    def enter(self) -> None:
        logger = logging.getLogger("llama-cpp-python")
        with self._lock:
            if self._count == 0:
                self._saved = logger.level
                logger.setLevel(logging.CRITICAL + 1)
            self._count += 1

    def leave(self) -> None:
        with self._lock:
            self._count -= 1
            if self._count == 0:
                logging.getLogger("llama-cpp-python").setLevel(self._saved)


_QUIET = _QuietLlamaLog()


def _strlen() -> Any:
    try:
        return ctypes.CDLL(None).strlen  # POSIX: the process's own symbols include libc's
    except (OSError, TypeError, AttributeError):
        return ctypes.cdll.msvcrt.strlen  # Windows


def _grammar_for(response_format: dict[str, Any]) -> Any:
    """A llama.cpp grammar constraining output to JSON (`json_object`) or to a JSON schema (`json_schema`)."""
    import json

    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    kind = response_format.get("type")
    if kind == "json_object":
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    if kind == "json_schema":
        spec = response_format.get("json_schema", {})
        schema = spec.get("schema", spec)
        return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    raise ModelError(f"Unsupported response_format {response_format!r}: use type 'json_object' or 'json_schema'.")
