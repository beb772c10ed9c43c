"""Settings in, a ready :class:`Model` out, with record/replay wired around the backend."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from webagent.errors import ConfigError
from webagent.model.base import Backend
from webagent.model.client import Model
from webagent.model.counters import chosen_counter
from webagent.model.replay import RecordingBackend, ReplayBackend
from webagent.model.retry import RetryPolicy
from webagent.model.settings import ModelSettings


def build_backend(settings: ModelSettings) -> Backend:
    """The backend ``settings`` name, wrapped in a recorder when ``record_to`` is set.

    Backends import their heavy dependencies (openai, llama_cpp) only when built.
    """
    backend: Backend
    if settings.backend == "replay":
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
    if settings.backend == "batch":
        from webagent.model.batch import BatchBackend

        return BatchBackend(settings)
    if settings.backend == "openai":
        from webagent.model.openai_backend import OpenAIBackend

        endpoints = settings.endpoints()
        if len(endpoints) > 1:
            from webagent.model.pool import ReplicaPool

            backend = ReplicaPool(
                [
                    OpenAIBackend(settings.model_copy(update={"base_url": url, "base_urls": ()}))
                    for url in endpoints
                ],
                per_endpoint=settings.concurrency,
                labels=endpoints,
            )
        else:
            backend = OpenAIBackend(settings)
    else:
        from webagent.model.llama_local import LlamaLocalBackend

        backend = LlamaLocalBackend(settings)
    if settings.record_to is not None:
        backend = RecordingBackend(backend, settings.record_to)
    return backend


def build_model(
    settings: ModelSettings,
    *,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> Model:
    """A :class:`Model` over the backend of ``settings``, with its timeout and retries."""
    policy = RetryPolicy(timeout_s=settings.timeout_s, max_retries=settings.max_retries)
    return Model(build_backend(settings), policy, sleep=sleep, rng=rng)
