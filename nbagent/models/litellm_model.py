"""`LiteLLMModel`: 100+ providers through LiteLLM (optional extra `nbagent[litellm]`)."""

from __future__ import annotations

from typing import Any

from .api import ApiModel
from .openai_server import describe_openai_error
from .retry import ErrorInfo, RetryPolicy

__all__ = ["LiteLLMModel", "import_litellm"]


def import_litellm() -> Any:
    try:
        import litellm
    except ImportError as err:
        raise ModuleNotFoundError(
            "LiteLLMModel needs litellm: install it with `pip install 'nbagent[litellm]'`."
        ) from err
    return litellm


class LiteLLMModel(ApiModel):
    """A model reached through LiteLLM, named `provider/model` (e.g. `anthropic/claude-3-5-sonnet-latest`).

    Args:
        model_id: LiteLLM's model name.
        api_base, api_key: endpoint and key (default: LiteLLM reads the provider's environment variables).
            The key is never logged or saved.
        timeout, retry: see `ApiModel` (LiteLLM's own retries are off).
        **kwargs: completion parameters sent on every call.
    """

    provider_name = "LiteLLM"

    def __init__(
        self,
        model_id: str,
        api_base: str | None = None,
        api_key: str | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        flatten_messages_as_text: bool | None = None,
        timeout: float | None = 120,
        retry: RetryPolicy | dict[str, Any] | int | None = None,
        **kwargs: Any,
    ) -> None:
        self._litellm = import_litellm()
        if flatten_messages_as_text is None:  # these providers reject content given as a list of parts
            flatten_messages_as_text = model_id.startswith(("ollama", "groq", "cerebras"))
        super().__init__(
            model_id=model_id,
            timeout=timeout,
            retry=retry,
            custom_role_conversions=custom_role_conversions,
            flatten_messages_as_text=flatten_messages_as_text,
            **kwargs,
        )
        self.api_base = api_base
        self._api_key = api_key
        self._secrets = [api_key] if api_key else []

    @property
    def endpoint(self) -> str:
        return self.api_base or f"LiteLLM provider for {self.model_id}"

    def _init_args(self) -> dict[str, Any]:
        return {"api_base": self.api_base}

    def _create(self, **params: Any) -> Any:
        return self._litellm.completion(
            api_base=self.api_base, api_key=self._api_key, timeout=self.timeout, num_retries=0, **params
        )

    def _describe_error(self, err: BaseException) -> ErrorInfo:
        # LiteLLM's exceptions subclass openai's, status codes included.
        return describe_openai_error(err, self.timeout) or super()._describe_error(err)
