"""`LiteLLMModel`: 100+ providers through LiteLLM (optional extra `jupyter-nbagent[litellm]`), and
`LiteLLMRouterModel`: a LiteLLM router spreading calls over several deployments of one model group."""

from __future__ import annotations

from typing import Any

from ._common import SECRET_KEYS
from .api import ApiModel
from .openai_server import describe_openai_error
from .retry import ErrorInfo, RetryPolicy

__all__ = ["LiteLLMModel", "LiteLLMRouterModel", "import_litellm"]

# These providers reject content given as a list of parts.
_TEXT_ONLY_PROVIDERS = ("ollama", "groq", "cerebras")


def import_litellm() -> Any:
    try:
        import litellm
    except ImportError as err:
        raise ModuleNotFoundError(
            "LiteLLMModel needs litellm: install it with `pip install 'jupyter-nbagent[litellm]'`."
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
        if flatten_messages_as_text is None:
            flatten_messages_as_text = model_id.startswith(_TEXT_ONLY_PROVIDERS)
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

    async def _acreate(self, **params: Any) -> Any:
        return await self._litellm.acompletion(
            api_base=self.api_base, api_key=self._api_key, timeout=self.timeout, num_retries=0, **params
        )

    def _describe_error(self, err: BaseException) -> ErrorInfo:
        # LiteLLM's exceptions subclass openai's, status codes included.
        return describe_openai_error(err, self.timeout) or super()._describe_error(err)


class LiteLLMRouterModel(LiteLLMModel):
    """Calls spread by a `litellm.Router` over the deployments of `model_list` named `model_id`.

    Args:
        model_id: the model group (a `model_name` of `model_list`).
        model_list: LiteLLM's deployment list, `[{"model_name": ..., "litellm_params": {"model": ...}}, ...]`.
        client_kwargs: more arguments for `litellm.Router` (e.g. `routing_strategy`).
        flatten_messages_as_text: default True when a deployment of the group is on a text-only provider.
        timeout, retry, requests_per_minute, **kwargs: see `ApiModel` (the router's own retries are off).
    """

    provider_name = "LiteLLM router"

    def __init__(
        self,
        model_id: str,
        model_list: list[dict[str, Any]],
        client_kwargs: dict[str, Any] | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        flatten_messages_as_text: bool | None = None,
        timeout: float | None = 120,
        retry: RetryPolicy | dict[str, Any] | int | None = None,
        **kwargs: Any,
    ) -> None:
        if flatten_messages_as_text is None:
            group = [d for d in model_list if d.get("model_name") == model_id]
            flatten_messages_as_text = any(
                str(d.get("litellm_params", {}).get("model", "")).startswith(_TEXT_ONLY_PROVIDERS) for d in group
            )
        super().__init__(
            model_id=model_id,
            custom_role_conversions=custom_role_conversions,
            flatten_messages_as_text=flatten_messages_as_text,
            timeout=timeout,
            retry=retry,
            **kwargs,
        )
        self.model_list = model_list
        self.client_kwargs = dict(client_kwargs or {})
        from litellm.router import Router

        self.client = Router(model_list=model_list, **{"num_retries": 0, **self.client_kwargs})
        self._secrets = [
            str(d["litellm_params"]["api_key"]) for d in model_list if d.get("litellm_params", {}).get("api_key")
        ]

    @property
    def endpoint(self) -> str:
        return f"LiteLLM router for {self.model_id}"

    def _init_args(self) -> dict[str, Any]:
        def without_secrets(deployment: dict[str, Any]) -> dict[str, Any]:
            params = {
                k: v
                for k, v in deployment.get("litellm_params", {}).items()
                if k not in SECRET_KEYS and not k.endswith(("_key", "token"))
            }
            return {**deployment, "litellm_params": params}

        return {"model_list": [without_secrets(d) for d in self.model_list], "client_kwargs": self.client_kwargs}

    def _create(self, **params: Any) -> Any:
        return self.client.completion(timeout=self.timeout, **params)

    async def _acreate(self, **params: Any) -> Any:
        return await self.client.acompletion(timeout=self.timeout, **params)
