"""`TransformersModel`: a local model run by 🤗 transformers, with prefix KV-cache reuse across calls.

An agent re-sends the whole conversation at every step; on a CPU, recomputing that prefix is the
dominant cost. We keep the `DynamicCache` of the last call (prompt + generated tokens) and the
token ids it covers. The next call finds the longest common token prefix, crops a deep copy of the
cache to it and lets `generate` compute only the rest. An edited conversation simply shares a
shorter prefix (possibly none): the same code path, never a stale cache.

A Stop (the call's `CancelScope`, nbagent/models/cancel.py) ends a call between two decoder layers
(a long prompt's prefill is one forward pass) and between tokens (the stopping criteria); the kept
cache is untouched, since each call works on its own copy.
"""

from __future__ import annotations

import copy
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ._common import StopCutter, public_dict, tool_schemas
from .base import (
    TOOL_ROLE_CONVERSIONS,
    ChatMessage,
    ChatMessageStreamDelta,
    MessageRole,
    Model,
    ModelError,
    TokenUsage,
    get_clean_message_list,
    remove_stop_sequences,
)
from .cancel import CallCancelled, CancelScope, acquire, current_scope

__all__ = ["TransformersModel"]

# Chat-end tokens of common templates: generation stops on any of them that the vocabulary has.
_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "</s>")


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _import_torch_transformers() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as err:
        raise ModuleNotFoundError(
            "TransformersModel needs torch and transformers: `pip install 'jupyter-nbagent[transformers]'`."
        ) from err
    return torch, transformers


def _make_stop_criteria(
    transformers: Any, tokenizer: Any, prompt_len: int, stops: list[str], cancel: threading.Event
) -> Any:
    window = max((len(s) for s in stops), default=0) + 4  # a token is at least one character

    class StopOnText(transformers.StoppingCriteria):
        """Stop once the decoded new text contains a stop sequence (or the caller went away)."""

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            import torch

            done = cancel.is_set()
            if not done and stops:
                tail = input_ids[0, prompt_len:][-window:]
                text = tokenizer.decode(tail, skip_special_tokens=False)
                done = any(s in text for s in stops)
            return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)

    return StopOnText()


def _stop_between_layers(torch: Any, model: Any, scope_of: Any) -> None:
    """Check the running call's scope before each decoder layer (the model's longest `ModuleList`)."""
    stacks = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList)]
    if not stacks:
        return

    def check(_module: Any, _inputs: Any) -> None:
        scope = scope_of()
        if scope is not None:
            scope.check()

    for layer in max(stacks, key=len):
        layer.register_forward_pre_hook(check)


class TransformersModel(Model):
    """A local causal LM through transformers: chat template, streaming, stop sequences, prefix KV reuse.

    Args:
        model_id: a local folder, a Hub id already in the local cache, or a `.gguf` file path.
        device_map: where to put the model (default: CPU).
        torch_dtype: "auto", "bfloat16", "float32" or a torch dtype. Default: bfloat16 on CPU (about 2x
            faster than float32 there and half the memory), "auto" elsewhere.
        trust_remote_code: allow the model repository's own code (off by default).
        max_new_tokens: cap on generated tokens per call.
        model_kwargs: more arguments for `from_pretrained`.
        gguf_file: a GGUF file name inside `model_id` (transformers dequantizes it; needs `gguf`, `accelerate`).
        reuse_cache: keep the KV cache of the previous call's prefix (the point of this class).
        **kwargs: generation parameters used on every call (e.g. `do_sample=True, temperature=0.7`).
    """

    def __init__(
        self,
        model_id: str | None = None,
        device_map: str | None = None,
        torch_dtype: Any = None,
        trust_remote_code: bool = False,
        max_new_tokens: int = 4096,
        model_kwargs: dict[str, Any] | None = None,
        gguf_file: str | None = None,
        reuse_cache: bool = True,
        max_tokens: int | None = None,
        **kwargs: Any,
    ) -> None:
        if not model_id:
            raise ValueError(
                "TransformersModel needs model_id= (a local folder, a cached Hub id or a .gguf path); "
                "for the offline default use nbagent.default_model()."
            )
        torch, transformers = _import_torch_transformers()
        path = Path(model_id).expanduser()
        if gguf_file is None and path.suffix.lower() == ".gguf" and path.is_file():
            model_id, gguf_file = str(path.parent), path.name
        super().__init__(flatten_messages_as_text=True, model_id=model_id, **kwargs)
        self.device_map = device_map
        self.torch_dtype = torch_dtype
        self.trust_remote_code = trust_remote_code
        self.max_new_tokens = max_tokens or max_new_tokens
        self.model_kwargs = dict(model_kwargs or {})
        self.gguf_file = gguf_file
        self.reuse_cache = reuse_cache
        self._transformers = transformers
        self._torch = torch
        self.tokenizer, self.model = self._load(model_id)
        self._eos_ids = self._end_token_ids()
        self._cache: Any = None
        self._cache_ids: list[int] = []
        self._lock = threading.Lock()
        self._scope: CancelScope | None = None  # the scope of the call that holds the lock (read between layers)
        _stop_between_layers(torch, self.model, lambda: self._scope)
        self.last_reused_tokens = 0  # tokens of the last prompt served from the cache (tests, benchmarks)

    # -- loading ------------------------------------------------------------------------------------

    def _dtype(self) -> Any:
        torch = self._torch
        on_cpu = self.device_map in (None, "cpu") and not torch.cuda.is_available()
        if self.torch_dtype is None:
            return torch.bfloat16 if on_cpu else "auto"
        if isinstance(self.torch_dtype, str) and self.torch_dtype != "auto":
            return getattr(torch, self.torch_dtype)
        return self.torch_dtype

    def _load(self, model_id: str) -> tuple[Any, Any]:
        transformers = self._transformers
        local = Path(model_id).expanduser().is_dir()
        common = {"trust_remote_code": self.trust_remote_code, "local_files_only": local or None}
        if self.gguf_file:
            common["gguf_file"] = self.gguf_file
        common = {k: v for k, v in common.items() if v is not None}
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(model_id, **common)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    model_id, dtype=self._dtype(), device_map=self.device_map, **common, **self.model_kwargs
                )
        except OSError as err:
            raise ModelError(
                f"TransformersModel could not load {model_id!r}{f' (gguf_file={self.gguf_file!r})' if self.gguf_file else ''}"
                f": {err}. Without network, pass a local folder or a GGUF file."
            ) from err
        model.eval()
        if not getattr(tokenizer, "chat_template", None):
            raise ModelError(f"{model_id!r} has no chat template: TransformersModel needs an instruct/chat model.")
        return tokenizer, model

    def _end_token_ids(self) -> list[int]:
        ids: set[int] = set()
        configured = self.model.generation_config.eos_token_id
        ids.update(configured if isinstance(configured, list) else [configured] if configured is not None else [])
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        vocab = self.tokenizer.get_vocab()
        ids.update(vocab[tok] for tok in _END_TOKENS if tok in vocab)
        return sorted(ids)

    def __repr__(self) -> str:
        gguf = f", gguf_file={self.gguf_file!r}" if self.gguf_file else ""
        return f"TransformersModel(model_id={self.model_id!r}{gguf}, dtype={self.model.dtype})"

    def to_dict(self) -> dict[str, Any]:
        return public_dict(
            type(self).__name__,
            {
                "model_id": self.model_id,
                "device_map": self.device_map,
                "torch_dtype": self.torch_dtype
                if isinstance(self.torch_dtype, (str, type(None)))
                else str(self.torch_dtype).removeprefix("torch."),
                "trust_remote_code": self.trust_remote_code,
                "max_new_tokens": self.max_new_tokens,
                "model_kwargs": self.model_kwargs,
                "gguf_file": self.gguf_file,
                "reuse_cache": self.reuse_cache,
                **self.kwargs,
            },
        )

    # -- prompt and cache ---------------------------------------------------------------------------

    def prompt_ids(
        self, messages: list[ChatMessage | dict[str, Any]], tools_to_call_from: list[Any] | None = None
    ) -> list[int]:
        """Token ids of the chat-templated conversation, ending with the assistant's turn opening."""
        clean = get_clean_message_list(messages, role_conversions=TOOL_ROLE_CONVERSIONS, flatten_messages_as_text=True)
        text = self.tokenizer.apply_chat_template(
            clean, tools=tool_schemas(tools_to_call_from), add_generation_prompt=True, tokenize=False
        )
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def reset_cache(self) -> None:
        self._cache, self._cache_ids = None, []

    def _cache_for(self, ids: list[int]) -> tuple[Any, int]:
        """A private copy of the kept cache, cropped to the longest prefix it shares with `ids`."""
        if not self.reuse_cache or self._cache is None:
            return None, 0
        shared = min(_common_prefix(self._cache_ids, ids), len(ids) - 1)  # at least one token left to compute
        if shared <= 0:
            return None, 0
        cache = copy.deepcopy(self._cache)
        extra = cache.get_seq_length() - shared
        try:
            if extra > 0:
                cache.crop(-extra)
        except (ValueError, RuntimeError):
            return None, 0  # a cache layer that cannot roll back (e.g. past its sliding window): recompute
        return cache, shared

    def _remember(self, sequence: list[int], cache: Any) -> None:
        if not self.reuse_cache or cache is None:
            return
        self._cache = cache
        self._cache_ids = sequence[: cache.get_seq_length()]

    def _generate_kwargs(
        self, ids: list[int], stop_sequences: list[str] | None, cancel: threading.Event, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], int]:
        torch = self._torch
        cache, shared = self._cache_for(ids)
        input_ids = torch.tensor([ids], device=self.model.device)
        params = {**self.kwargs, **kwargs}
        max_new = params.pop("max_new_tokens", params.pop("max_tokens", self.max_new_tokens))
        params.setdefault("do_sample", False)
        if not params["do_sample"]:
            params.update(temperature=None, top_p=None, top_k=None)
        stops = list(stop_sequences or [])
        criteria = _make_stop_criteria(self._transformers, self.tokenizer, len(ids), stops, cancel)
        generate_kwargs = {
            "input_ids": input_ids,
            "attention_mask": torch.ones_like(input_ids),
            "max_new_tokens": max_new,
            "eos_token_id": self._eos_ids,
            "pad_token_id": self.tokenizer.pad_token_id
            if self.tokenizer.pad_token_id is not None
            else self._eos_ids[0],
            "stopping_criteria": self._transformers.StoppingCriteriaList([criteria]),
            "past_key_values": cache,
            "use_cache": True,
            "return_dict_in_generate": True,
            **params,
        }
        return generate_kwargs, shared

    def _run(self, generate_kwargs: dict[str, Any]) -> Any:
        with self._torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.model.generate(**generate_kwargs)

    @contextmanager
    def _serving(self) -> Iterator[CancelScope]:
        """Hold the model for one call of the current cancel scope (the layers' check reads it)."""
        scope = current_scope()
        with acquire(self._lock, scope):
            scope.check()
            self._scope = scope
            try:
                yield scope
            finally:
                self._scope = None

    # -- generation ---------------------------------------------------------------------------------

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        if response_format is not None:
            raise ModelError("TransformersModel does not support response_format; use LlamaCppModel or an API model.")
        ids = self.prompt_ids(messages, tools_to_call_from)
        cancel = threading.Event()
        with self._serving() as scope, scope.while_running(cancel.set):
            generate_kwargs, self.last_reused_tokens = self._generate_kwargs(ids, stop_sequences, cancel, kwargs)
            out = self._run(generate_kwargs)
            scope.check()  # the stopping criteria ended generation early: no answer, and nothing kept
            sequence = out.sequences[0].tolist()
            self._remember(sequence, out.past_key_values)
        new = sequence[len(ids) :]
        text = remove_stop_sequences(self.tokenizer.decode(new, skip_special_tokens=True), stop_sequences)
        return ChatMessage(
            role=MessageRole.ASSISTANT, content=text, raw=out, token_usage=TokenUsage(len(ids), len(new))
        )

    def generate_stream(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatMessageStreamDelta]:
        if response_format is not None:
            raise ModelError("TransformersModel does not support response_format; use LlamaCppModel or an API model.")
        ids = self.prompt_ids(messages, tools_to_call_from)
        cancel = threading.Event()
        cutter = StopCutter(stop_sequences)
        with self._serving() as scope, scope.while_running(cancel.set):
            generate_kwargs, self.last_reused_tokens = self._generate_kwargs(ids, stop_sequences, cancel, kwargs)
            streamer = self._transformers.TextIteratorStreamer(
                self.tokenizer, skip_prompt=True, skip_special_tokens=True
            )
            result: dict[str, Any] = {}

            def work() -> None:
                try:
                    result["out"] = self._run({**generate_kwargs, "streamer": streamer})
                except BaseException as err:  # surfaced in the consumer's thread below
                    result["error"] = err
                    streamer.on_finalized_text("", stream_end=True)

            thread = threading.Thread(target=work, name="nbagent-generate", daemon=True)
            thread.start()
            try:
                for piece in streamer:
                    scope.check()
                    text = cutter.feed(piece)
                    if text:
                        yield ChatMessageStreamDelta(content=text)
                    if cutter.done:
                        cancel.set()  # the stop criteria ends generation at the next token
                tail = cutter.flush()
            finally:
                cancel.set()
                thread.join()
            scope.check()
            if isinstance(result.get("error"), CallCancelled):
                raise result["error"]
            if "error" in result:
                raise ModelError(f"TransformersModel generation failed: {result['error']}") from result["error"]
            sequence = result["out"].sequences[0].tolist()
            self._remember(sequence, result["out"].past_key_values)
        yield ChatMessageStreamDelta(content=tail or None, token_usage=TokenUsage(len(ids), len(sequence) - len(ids)))
