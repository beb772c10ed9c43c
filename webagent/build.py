"""One way to build a run: a :class:`RunConfig` in, the agent with its model and gist cache
out, closed again when the ``with`` block ends. Every command uses it; so can a library user.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from webagent.agents.registry import build_agent
from webagent.config import RunConfig
from webagent.contracts import Agent
from webagent.gist.cache import GistCache
from webagent.model import factory
from webagent.model.client import Model


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


@contextmanager
def open_agent(config: RunConfig) -> Iterator[OpenAgent]:
    """Build model, gist cache and agent from ``config``; close the model and cache after."""
    with factory.build_model(config.model) as model:
        cache = open_gist_cache(config)
        try:
            yield OpenAgent(
                config=config,
                agent=build_agent(config.agent, model, cache),
                model=model,
                gist_cache=cache,
            )
        finally:
            if cache is not None:
                cache.close()
