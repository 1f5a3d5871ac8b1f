"""`OpenAIServerModel` and `AzureOpenAIServerModel`: any OpenAI-compatible chat-completions server.

smolagents 1.26 names them `OpenAIModel` and `AzureOpenAIModel` (the `...ServerModel` names are its
older aliases): both names work here, for the same classes.

The `openai` client's own retries are switched off (`max_retries=0`, unless `client_kwargs` sets it):
ours back off the same way for every provider and end in one `ModelError` that says what to check.
"""

from __future__ import annotations

import os
from typing import Any

from .api import ApiModel
from .cancellable_http import cut_on_cancel
from .retry import RETRYABLE_STATUS, ErrorInfo, RetryPolicy

__all__ = ["OpenAIServerModel", "OpenAIModel", "AzureOpenAIServerModel", "AzureOpenAIModel", "describe_openai_error"]


def _provider_message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(getattr(err, "message", None) or err)


def _retry_after(err: Any) -> float | None:
    response = getattr(err, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def describe_openai_error(err: BaseException, timeout: float | None) -> ErrorInfo | None:
    """Classify exceptions raised by the `openai` client (None: not one of its own)."""
    import openai

    if isinstance(err, openai.APITimeoutError):
        return ErrorInfo(True, f"no answer within the timeout ({timeout}s)")
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        return ErrorInfo(
            status in RETRYABLE_STATUS, _provider_message(err), status=status, retry_after=_retry_after(err)
        )
    if isinstance(err, openai.APIResponseValidationError):
        return ErrorInfo(
            False,
            f"the response is not a valid chat completion ({err})",
            hint="that the server speaks the OpenAI chat-completions protocol",
        )
    if isinstance(err, openai.APIConnectionError):
        cause = err.__cause__ or err.__context__
        return ErrorInfo(True, f"connection failed ({cause or err})")
    name = type(err).__name__
    if name.endswith(("ProtocolError", "ReadError", "ConnectError", "NetworkError", "RemoteProtocolError")):
        return ErrorInfo(True, f"connection broke ({name}: {err})")  # httpx errors raised while streaming
    if "Timeout" in name:
        return ErrorInfo(True, f"no answer within the timeout ({timeout}s)")
    return None


def _cancellable_http_client(asynchronous: bool) -> dict[str, Any]:
    """openai's own default HTTP client, with connections a Stop cuts (nbagent/models/cancellable_http.py);
    `client_kwargs={"http_client": ...}` replaces it (then a stopped call is abandoned, not cut)."""
    if asynchronous:
        return {}
    import openai

    http_client = openai.DefaultHttpxClient()
    return {"http_client": http_client} if cut_on_cancel(http_client) else {}


class OpenAIServerModel(ApiModel):
    """A model behind an OpenAI-compatible server (OpenAI, vLLM, llama.cpp's server, Ollama, ...).

    Args:
        model_id: the model name the server knows.
        api_base: the server's base URL, e.g. `http://127.0.0.1:8000/v1` (default: OpenAI's).
        api_key: the key (default: `$OPENAI_API_KEY`; a local server accepts any value). Never logged or saved.
        organization, project: OpenAI account scoping.
        client_kwargs: more arguments for `openai.OpenAI`.
        timeout, retry: see `ApiModel`.
        **kwargs: completion parameters sent on every call (temperature, max_tokens, ...).
    """

    provider_name = "OpenAI-compatible server"

    def __init__(
        self,
        model_id: str,
        api_base: str | None = None,
        api_key: str | None = None,
        organization: str | None = None,
        project: str | None = None,
        client_kwargs: dict[str, Any] | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        flatten_messages_as_text: bool = False,
        timeout: float | None = 120,
        retry: RetryPolicy | dict[str, Any] | int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            model_id=model_id,
            timeout=timeout,
            retry=retry,
            custom_role_conversions=custom_role_conversions,
            flatten_messages_as_text=flatten_messages_as_text,
            **kwargs,
        )
        self.api_base = api_base
        self.organization = organization
        self.project = project
        self.client_kwargs = dict(client_kwargs or {})
        key = api_key or os.environ.get("OPENAI_API_KEY") or ("not-needed" if api_base else None)
        self._secrets = [key] if key else []
        self.client = self._make_client(key)

    def _make_client(self, api_key: str | None, asynchronous: bool = False) -> Any:
        import openai

        options = {
            "timeout": self.timeout,
            "max_retries": 0,
            **_cancellable_http_client(asynchronous),
            **self.client_kwargs,
        }
        client_class = openai.AsyncOpenAI if asynchronous else openai.OpenAI
        try:
            return client_class(
                base_url=self.api_base, api_key=api_key, organization=self.organization, project=self.project, **options
            )
        except openai.OpenAIError as err:
            raise ValueError(f"OpenAIServerModel: {err} (pass api_key= or set OPENAI_API_KEY)") from None

    @property
    def endpoint(self) -> str:
        return str(self.client.base_url).rstrip("/")

    def _init_args(self) -> dict[str, Any]:
        return {
            "api_base": self.api_base,
            "organization": self.organization,
            "project": self.project,
            "client_kwargs": self.client_kwargs,
        }

    def _create(self, **params: Any) -> Any:
        return self.client.chat.completions.create(**params)

    async def _acreate(self, **params: Any) -> Any:
        key = self._secrets[0] if self._secrets else None
        client = self._async_client_for_this_loop(lambda: self._make_client(key, asynchronous=True))
        return await client.chat.completions.create(**params)

    def _describe_error(self, err: BaseException) -> ErrorInfo:
        return describe_openai_error(err, self.timeout) or super()._describe_error(err)


class AzureOpenAIServerModel(OpenAIServerModel):
    """A deployment on Azure OpenAI.

    Args:
        model_id: the deployment name.
        azure_endpoint: `https://<resource>.openai.azure.com` (default: `$AZURE_OPENAI_ENDPOINT`).
        api_key: default `$AZURE_OPENAI_API_KEY`. Never logged or saved.
        api_version: default `$OPENAI_API_VERSION`.
    """

    provider_name = "Azure OpenAI"

    def __init__(
        self,
        model_id: str,
        azure_endpoint: str | None = None,
        api_key: str | None = None,
        api_version: str | None = None,
        client_kwargs: dict[str, Any] | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        timeout: float | None = 120,
        retry: RetryPolicy | dict[str, Any] | int | None = None,
        **kwargs: Any,
    ) -> None:
        self.azure_endpoint = azure_endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT")
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION")
        api_key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
        super().__init__(
            model_id=model_id,
            api_key=api_key,
            client_kwargs=client_kwargs,
            custom_role_conversions=custom_role_conversions,
            timeout=timeout,
            retry=retry,
            **kwargs,
        )

    def _make_client(self, api_key: str | None, asynchronous: bool = False) -> Any:
        import openai

        options = {
            "timeout": self.timeout,
            "max_retries": 0,
            **_cancellable_http_client(asynchronous),
            **self.client_kwargs,
        }
        client_class = openai.AsyncAzureOpenAI if asynchronous else openai.AzureOpenAI
        try:
            return client_class(
                azure_endpoint=self.azure_endpoint, api_key=api_key, api_version=self.api_version, **options
            )
        except (openai.OpenAIError, ValueError) as err:
            raise ValueError(
                f"AzureOpenAIServerModel: {err} (pass azure_endpoint=, api_key= and api_version=, or set "
                "AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY and OPENAI_API_VERSION)"
            ) from None

    def _init_args(self) -> dict[str, Any]:
        return {
            "azure_endpoint": self.azure_endpoint,
            "api_version": self.api_version,
            "client_kwargs": self.client_kwargs,
        }


# smolagents 1.26's names for the same classes.
OpenAIModel = OpenAIServerModel
AzureOpenAIModel = AzureOpenAIServerModel
