"""OpenAIServerModel and InferenceClientModel against llama.cpp's real OpenAI-compatible server
(SmolLM2-135M-Instruct on 127.0.0.1), streaming included."""

from __future__ import annotations

import pytest

from nbagent.models.base import agglomerate_stream_deltas
from nbagent.models.hf_inference import InferenceClientModel
from nbagent.models.openai_server import OpenAIServerModel

pytestmark = pytest.mark.slow

MESSAGES = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "Name three colors of the rainbow."},
]
GREEDY = {"temperature": 0.0, "max_tokens": 40, "seed": 0}


@pytest.fixture(params=["openai", "hf"])
def server_model(request, llama_server):
    if request.param == "openai":
        return OpenAIServerModel("smollm2", api_base=llama_server, api_key="unused", timeout=60, **GREEDY)
    return InferenceClientModel("smollm2", base_url=llama_server, timeout=60, **GREEDY)


def test_generate_returns_text_and_usage(server_model):
    message = server_model.generate(MESSAGES)
    assert message.role.value == "assistant"
    assert isinstance(message.content, str) and message.content.strip()
    assert message.token_usage.input_tokens > 10
    assert 0 < message.token_usage.output_tokens <= GREEDY["max_tokens"]


def test_stream_matches_generate(server_model):
    whole = server_model.generate(MESSAGES)
    deltas = list(server_model.generate_stream(MESSAGES))
    streamed = agglomerate_stream_deltas(deltas)
    assert len([d for d in deltas if d.content]) > 2, "the answer arrived in one piece: not streamed"
    assert streamed.content == whole.content  # greedy decoding: same text either way
    # llama.cpp's server streams no usage: the model counts one token per chunk, prompt size unknown (0).
    assert streamed.token_usage.output_tokens == whole.token_usage.output_tokens
    assert streamed.token_usage.input_tokens in (0, whole.token_usage.input_tokens)


def test_stop_sequence_cuts_the_answer(server_model):
    full = server_model.generate(MESSAGES).content
    words = [w for w in full.split() if w.isalpha() and len(w) > 3 and full.find(w) > 0]
    assert words, f"no usable stop word in {full!r}"
    stop = words[0]
    cut = server_model.generate(MESSAGES, stop_sequences=[stop]).content
    assert cut == full[: full.find(stop)]
    streamed = agglomerate_stream_deltas(list(server_model.generate_stream(MESSAGES, stop_sequences=[stop])))
    assert streamed.content == cut


def code_agent_class():
    try:
        from nbagent.sandbox import LocalPythonExecutor  # noqa: F401
    except ImportError:
        pytest.skip("nbagent.sandbox (CodeAgent's executor) has not landed yet")
    from nbagent import CodeAgent

    return CodeAgent


@pytest.mark.parametrize("stream", [False, True])
def test_code_agent_runs_against_the_server(server_model, stream):
    """A real agent loop drives the model over HTTP; a 135M model solves nothing, but every step
    reaches the server, records the model's text and its token usage."""
    from nbagent.models.base import ChatMessageStreamDelta

    CodeAgent = code_agent_class()

    agent = CodeAgent(
        tools=[], model=server_model, max_steps=2, verbosity_level=0, show_widget=False, stream_outputs=stream
    )
    if stream:  # smolagents' rule: the model's deltas are in run(stream=True) with stream_outputs=True
        events = list(agent.run("What is 2**10?", stream=True))
        assert any(isinstance(e, ChatMessageStreamDelta) and e.content for e in events)
    else:
        agent.run("What is 2**10?")
    result = agent.last_result
    assert result.state in ("success", "max_steps_error")
    actions = [s for s in agent.memory.steps if type(s).__name__ == "ActionStep"]
    assert actions and all(s.model_output for s in actions)
    assert result.token_usage is not None and result.token_usage.output_tokens > 0


def test_agent_keeps_its_memory_when_the_server_fails(fault_server):
    """Retries exhausted mid-run: the run ends with one clear error, the steps before it intact."""
    from nbagent.models.retry import RetryPolicy

    CodeAgent = code_agent_class()

    model = OpenAIServerModel(
        "fake", api_base=fault_server.url, api_key="x", timeout=5, retry=RetryPolicy(max_retries=1, initial_delay=0.01)
    )
    fault_server.script = ["ok", ("status", 500, "model crashed")]
    agent = CodeAgent(tools=[], model=model, max_steps=3, verbosity_level=0, show_widget=False)
    from nbagent.errors import AgentGenerationError

    with pytest.raises(AgentGenerationError) as info:
        agent.run("Say hello.")
    assert "HTTP 500" in str(info.value) and "model crashed" in str(info.value)
    assert "after 2 attempts" in str(info.value)
    actions = [s for s in agent.memory.steps if type(s).__name__ == "ActionStep"]
    assert actions[0].model_output == "Hello from the fault server."
