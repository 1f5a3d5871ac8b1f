"""`await model.agenerate(...)` and `async for d in model.agenerate_stream(...)` against the real llama.cpp server
(the API models through their async clients: AsyncOpenAI, AsyncInferenceClient, litellm.acompletion)."""

from __future__ import annotations

import asyncio

import pytest

from nbagent.models import InferenceClientModel, ModelError, OpenAIServerModel, ScriptedModel
from nbagent.models.base import agglomerate_stream_deltas

MESSAGES = [{"role": "user", "content": "Name three colors of the rainbow."}]
GREEDY = {"temperature": 0.0, "max_tokens": 24, "seed": 0}


def api_model(kind: str, base: str):
    if kind == "openai":
        return OpenAIServerModel("smollm2", api_base=base, api_key="unused", timeout=60, **GREEDY)
    if kind == "hf":
        return InferenceClientModel("smollm2", base_url=base, timeout=60, **GREEDY)
    pytest.importorskip("litellm", reason="optional extra jupyter-nbagent[litellm] not installed")
    from nbagent.models.litellm_model import LiteLLMModel

    return LiteLLMModel("openai/smollm2", api_base=base, api_key="sk-unused", timeout=60, **GREEDY)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["openai", "hf", "litellm"])
def test_agenerate_matches_generate_and_leaves_the_loop_free(kind, llama_server):
    model = api_model(kind, llama_server)
    model.generate(MESSAGES)  # warm llama.cpp's prompt cache: a cold and a cached prompt may decode differently
    whole = model.generate(MESSAGES)

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        beat = asyncio.create_task(ticker())
        first, second = await asyncio.gather(model.agenerate(MESSAGES), model.agenerate(MESSAGES))
        deltas = [delta async for delta in model.agenerate_stream(MESSAGES)]
        beat.cancel()
        return first, second, deltas, ticks

    first, second, deltas, ticks = asyncio.run(main())
    assert first.content == second.content == whole.content
    assert first.token_usage.output_tokens == whole.token_usage.output_tokens > 0
    assert agglomerate_stream_deltas(deltas).content == whole.content
    assert ticks > 3, "the event loop was blocked while the model worked"


@pytest.mark.parametrize("kind", ["openai", "hf"])
def test_agenerate_failure_is_one_clear_model_error(kind, unused_port):
    model = api_model(kind, f"http://127.0.0.1:{unused_port}/v1")
    model.retry.max_retries = 1
    model.retry.initial_delay = 0.01

    async def stream() -> list:
        return [delta async for delta in model.agenerate_stream(MESSAGES)]

    for call in (lambda: model.agenerate(MESSAGES), stream):
        with pytest.raises(ModelError, match=r"failed after 2 attempts: no HTTP response"):
            asyncio.run(call())


def test_every_model_has_agenerate_and_agenerate_stream():
    model = ScriptedModel(["The answer is 4."])

    async def main():
        message = await model.agenerate([{"role": "user", "content": "2+2?"}])
        again = ScriptedModel(["The answer is 4."])
        deltas = [d async for d in again.agenerate_stream([{"role": "user", "content": "2+2?"}])]
        return message, deltas

    message, deltas = asyncio.run(main())
    assert message.content == "The answer is 4."
    assert agglomerate_stream_deltas(deltas).content == "The answer is 4." and len(deltas) > 1
