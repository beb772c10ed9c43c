"""The built-in backends, registered like any plug-in's (``pyproject.toml``,
``[project.entry-points."webagent.backends"]``): each spec imports its backend, and that
backend's heavy dependency (llama-cpp-python, openai), only when it is built."""

from __future__ import annotations

from pydantic import BaseModel

from webagent.errors import ConfigError
from webagent.model.base import Backend
from webagent.model.counters import chosen_counter
from webagent.model.registry import BackendSpec
from webagent.model.settings import ModelSettings


def _local(settings: ModelSettings, _options: BaseModel | None) -> Backend:
    from webagent.model.llama_local import LlamaLocalBackend

    return LlamaLocalBackend(settings)


def _openai(settings: ModelSettings, _options: BaseModel | None) -> Backend:
    from webagent.model.openai_backend import OpenAIBackend

    endpoints = settings.endpoints()
    if len(endpoints) <= 1:
        return OpenAIBackend(settings)
    from webagent.model.pool import ReplicaPool

    return ReplicaPool(
        [
            OpenAIBackend(settings.model_copy(update={"base_url": url, "base_urls": ()}))
            for url in endpoints
        ],
        per_endpoint=settings.concurrency,
        labels=endpoints,
    )


def _replay(settings: ModelSettings, _options: BaseModel | None) -> Backend:
    from webagent.model.replay import ReplayBackend

    if settings.replay_from is None:  # the settings validator already requires it
        raise ConfigError("backend 'replay' needs replay_from (a cassette file)")
    chosen = chosen_counter(settings.token_counter, settings.model_path)
    return ReplayBackend(
        settings.replay_from,
        name=settings.model,
        context_window=settings.context_window,
        max_concurrency=settings.concurrency,
        counter=chosen[1] if chosen else None,
    )


def _batch(settings: ModelSettings, _options: BaseModel | None) -> Backend:
    from webagent.model.batch import BatchBackend

    return BatchBackend(settings)


LOCAL = BackendSpec(
    "local",
    "the embedded llama.cpp model (default SmolLM2-135M, no key, no network)",
    _local,
    reads=("model_path", "n_ctx", "n_threads"),
)
OPENAI = BackendSpec(
    "openai",
    "any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp's server, Ollama)",
    _openai,
    reads=("base_url", "base_urls", "api_key"),
)
REPLAY = BackendSpec(
    "replay",
    "a recorded cassette or answers file; a miss fails",
    _replay,
    reads=("replay_from",),
)
BATCH = BackendSpec(
    "batch",
    "request rounds for the OpenAI Batch API, answered from files (eval, sweep, live suites)",
    _batch,
    reads=("batch_dir", "answers_from"),
)
