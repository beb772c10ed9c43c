"""One way to build a run: a :class:`RunConfig` in, the agent with its model and gist cache
out, closed again when the ``with`` block ends. Every command uses it; so can a library user.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webagent.agents.context import context_budget
from webagent.agents.registry import build_agent
from webagent.config import RunConfig
from webagent.contracts import Agent
from webagent.gist.cache import GistCache
from webagent.model import factory
from webagent.model.client import Model
from webagent.model.tokenizer_profile import PROFILE_FILE


@dataclass
class OpenAgent:
    """An agent built from a :class:`RunConfig`, with what it holds open and its manifest."""

    config: RunConfig
    agent: Agent
    model: Model
    gist_cache: GistCache | None

    @property
    def manifest(self) -> dict[str, Any]:
        return {
            "agent": self.config.agent.manifest(),
            "model": self.config.model.manifest(),
            "config": self.config.manifest(),
        }


def open_gist_cache(config: RunConfig) -> GistCache | None:
    path = config.gist_cache.resolved_path()
    return GistCache(path) if path is not None else None


def tokenizer_profiles(config: RunConfig) -> Path | None:
    """Beside the gist cache, what servers' tokenizers took to learn (none without it)."""
    path = config.gist_cache.resolved_path()
    return path.parent / PROFILE_FILE if path is not None else None


@contextmanager
def open_model(
    config: RunConfig, *, planning: bool = False
) -> Iterator[tuple[Model, GistCache | None]]:
    """The model and gist cache of ``config``, closed after; a context budget the model's
    window cannot hold is refused here, before anything runs (``context_budget``).
    ``planning``: for a cost plan, which calls no model (``ModelSettings.planning``).
    Beside the gist cache, servers' tokenizer profiles are kept (``tokenizer_profiles``)."""
    update = {"tokenizer_profiles": tokenizer_profiles(config), "planning": planning}
    with factory.build_model(config.model.model_copy(update=update)) as model:
        context_budget(config.agent, model)
        cache = open_gist_cache(config)
        try:
            yield model, cache
        finally:
            if cache is not None:
                cache.close()


@contextmanager
def open_agent(config: RunConfig) -> Iterator[OpenAgent]:
    """Build model, gist cache and agent from ``config``; close the model and cache after."""
    with open_model(config) as (model, cache):
        with model.count_tokens.recording() as counted:
            agent = build_agent(config.agent, model, cache)
        model.keep_counts(counted)  # fixed texts: the next build counts them from the profile
        yield OpenAgent(config=config, agent=agent, model=model, gist_cache=cache)
