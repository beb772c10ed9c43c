"""Settings in, a ready :class:`Model` out, with record/replay wired around the backend."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from webagent.model.base import Backend
from webagent.model.client import Model
from webagent.model.registry import build_registered
from webagent.model.replay import RecordingBackend
from webagent.model.retry import RetryPolicy
from webagent.model.settings import ModelSettings


def build_backend(settings: ModelSettings) -> Backend:
    """The backend ``settings`` name (:mod:`webagent.model.registry`), wrapped in a recorder
    when ``record_to`` is set. Backends import their heavy dependencies only when built."""
    backend = build_registered(settings)
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
