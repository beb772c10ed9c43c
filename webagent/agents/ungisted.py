"""The base of agents that show no gists (``raw-html-paper``, ``mindact``): the page is
segmented only for the diagnostics (which fragments hold the gold, which were shown), with
the default settings and every element kept, whatever the budget."""

from __future__ import annotations

from webagent.agents.pipeline import PageAgent
from webagent.html.segment import SegmentSettings


class UngistedAgent(PageAgent):
    def plan_segments(self) -> SegmentSettings:
        # PageAgent's plan fits gists and reopened fragments into the budget: none are shown
        default = SegmentSettings(keep_wrappers=True)
        depth = default.depth if self.settings.depth is None else self.settings.depth
        return default.model_copy(update={"depth": depth})
