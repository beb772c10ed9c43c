"""Build an agent by name: the one place that maps names to classes."""

from __future__ import annotations

from webagent.agents.baselines import RawHtmlAgent, RetrievalAgent
from webagent.agents.pipeline import PageAgent
from webagent.agents.readagent import GistOnlyAgent, ReadAgentP, ReadAgentS
from webagent.agents.settings import AGENT_NAMES, AgentSettings
from webagent.contracts import Agent
from webagent.gist.cache import GistCache
from webagent.model.client import Model

_CLASSES: dict[str, type[PageAgent]] = {
    "readagent-p": ReadAgentP,
    "readagent-s": ReadAgentS,
    "raw-html": RawHtmlAgent,
    "gist-only": GistOnlyAgent,
    "retrieval": RetrievalAgent,
}

__all__ = ["AGENT_NAMES", "AgentSettings", "build_agent"]


def build_agent(
    settings: AgentSettings, model: Model, gist_cache: GistCache | None = None
) -> Agent:
    return _CLASSES[settings.agent](settings, model, gist_cache)
