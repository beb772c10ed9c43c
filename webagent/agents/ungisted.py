"""The base of agents that show no gists (``raw-html-paper``, ``mindact``): the page is
segmented only for the diagnostics (which fragments hold the gold, which were shown), with
the default settings and every element kept, whatever the budget."""

from __future__ import annotations

from webagent.agents.pipeline import PageAgent
from webagent.agents.settings import AgentSettings
from webagent.gist.cache import GistCache
from webagent.html.segment import SegmentSettings
from webagent.model.client import Model


class UngistedAgent(PageAgent):
    def __init__(
        self, settings: AgentSettings, model: Model, gist_cache: GistCache | None = None
    ) -> None:
        # PageAgent's plan fits gists and reopened fragments into the budget: none are shown
        self.settings = settings
        self.model = model
        self.gist_cache = gist_cache
        self.name = settings.agent
        default = SegmentSettings(keep_wrappers=True)
        depth = default.depth if settings.depth is None else settings.depth
        self._segment_settings = default.model_copy(update={"depth": depth})
