"""`InferenceClientModel` over `huggingface_hub.InferenceClient` (+ the deprecated `HfApiModel`)."""

from __future__ import annotations

import warnings
from typing import Any

from .api import ApiModel
from .cancellable_http import cut_on_cancel
from .retry import RETRYABLE_STATUS, ErrorInfo, RetryPolicy

__all__ = ["InferenceClientModel", "HfApiModel"]


def _provider_message(response: Any) -> str | None:
    try:
        body = response.json()
    except Exception:  # not JSON, or already consumed: fall back to the client's own text
        return None
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        error = error.get("message") or error.get("error")
    return str(error) if error else None


class InferenceClientModel(ApiModel):
    """A model served by Hugging Face Inference Providers, or any server speaking the same protocol.

    Args:
        model_id: a Hub model id (ignored in the URL when `base_url` is given, but still sent as `model`).
        provider: an inference provider name ("auto" by default on the Hub side).
        token: an HF token (default: the logged-in token). Never logged or saved.
        timeout: seconds to wait for an answer.
        base_url: an OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8000/v1` (then `provider` is unused).
        client_kwargs: more arguments for `InferenceClient`.
        retry: see `ApiModel`.
        **kwargs: completion parameters sent on every call (temperature, max_tokens, ...).
    """

    provider_name = "Hugging Face inference"

    def __init__(
        self,
        model_id: str | None = None,
        provider: str | None = None,
        token: str | None = None,
        timeout: float | None = 120,
        base_url: str | None = None,
        client_kwargs: dict[str, Any] | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        api_key: str | None = None,
        bill_to: str | None = None,
        retry: RetryPolicy | dict[str, Any] | int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            model_id=model_id,
            timeout=timeout,
            retry=retry,
            custom_role_conversions=custom_role_conversions,
            **kwargs,
        )
        if token is not None and api_key is not None:
            raise ValueError(
                "Received both `token` and `api_key` arguments. InferenceClientModel takes one key: pass either."
            )
        from huggingface_hub import InferenceClient

        self.provider = provider
        self.base_url = base_url
        self.bill_to = bill_to
        self.client_kwargs = dict(client_kwargs or {})
        secret = token or api_key
        self._secrets = [secret] if secret else []
        self.client = InferenceClient(
            model=None if base_url else model_id,
            provider=None if base_url else provider,
            token=secret,
            timeout=timeout,
            base_url=base_url,
            bill_to=bill_to,
            **self.client_kwargs,
        )

    @property
    def endpoint(self) -> str:
        if self.base_url:
            return self.base_url.rstrip("/")
        return f"Hugging Face Inference Providers (provider={self.provider or 'auto'}, model={self.model_id})"

    def _init_args(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "base_url": self.base_url,
            "bill_to": self.bill_to,
            "client_kwargs": self.client_kwargs,
        }

    def _create(self, **params: Any) -> Any:
        if self.base_url is None:
            params.pop("model", None)  # the client already targets model_id through the provider
        # huggingface_hub sends through one shared httpx client: its reads end when this call's scope is
        # cancelled (outside a scope the wrapper only passes through)
        from huggingface_hub.utils import get_session

        cut_on_cancel(get_session())
        return self.client.chat_completion(**params)

    async def _acreate(self, **params: Any) -> Any:
        """Through `AsyncInferenceClient` (it needs `aiohttp`; without it, the sync client on a thread)."""
        try:
            import aiohttp  # noqa: F401  (AsyncInferenceClient's transport)
            from huggingface_hub import AsyncInferenceClient
        except ImportError:
            return await super()._acreate(**params)
        if self.base_url is None:
            params.pop("model", None)
        client = self._async_client_for_this_loop(
            lambda: AsyncInferenceClient(
                model=None if self.base_url else self.model_id,
                provider=None if self.base_url else self.provider,
                token=self._secrets[0] if self._secrets else None,
                timeout=self.timeout,
                base_url=self.base_url,
                bill_to=self.bill_to,
                **self.client_kwargs,
            )
        )
        return await client.chat_completion(**params)

    def _describe_error(self, err: BaseException) -> ErrorInfo:
        from huggingface_hub.errors import HfHubHTTPError, InferenceTimeoutError

        if isinstance(err, InferenceTimeoutError):
            return ErrorInfo(True, f"no answer within the timeout ({self.timeout}s)")
        if isinstance(err, HfHubHTTPError):
            response = getattr(err, "response", None)
            status = getattr(response, "status_code", None)
            message = _provider_message(response) or getattr(err, "server_message", None) or str(err).splitlines()[0]
            retry_after = None
            if response is not None and response.headers.get("retry-after"):
                try:
                    retry_after = float(response.headers["retry-after"])
                except ValueError:
                    pass
            return ErrorInfo(status in RETRYABLE_STATUS, message, status=status, retry_after=retry_after)
        name = type(err).__name__
        if name.endswith(("ProtocolError", "ReadError", "ConnectError", "NetworkError", "TransportError")):
            return ErrorInfo(True, f"connection failed ({name}: {err})")
        if "Timeout" in name:
            return ErrorInfo(True, f"no answer within the timeout ({self.timeout}s)")
        return super()._describe_error(err)


class HfApiModel(InferenceClientModel):
    """Deprecated alias of `InferenceClientModel` (its old smolagents name)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            "HfApiModel is deprecated: use InferenceClientModel (same arguments).", DeprecationWarning, stacklevel=2
        )
        super().__init__(*args, **kwargs)
