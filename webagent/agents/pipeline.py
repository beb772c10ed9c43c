"""The step every agent shares: segment → build the page memory → act.

Agents differ only in ``build_memory``: what of the page the act prompt shows (all gists
with reopened fragments, gists alone, retrieved fragments, or the page cut to the budget).
Segmentation, budgets, the act prompt, validation and tracing are the same for all.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from dataclasses import dataclass, field

from webagent.act import act_messages, predict_action
from webagent.agents.context import format_previous, page_budget, segment_settings
from webagent.agents.settings import AgentSettings
from webagent.contracts import Agent, LookupRound, Observation, StepTrace
from webagent.errors import ModelError, PageError
from webagent.gist.cache import GistCache
from webagent.html.fragment import SegmentedPage
from webagent.html.segment import segment_html
from webagent.memory import shown_ids
from webagent.model.calls import CallLog
from webagent.model.client import Model
from webagent.tokens import truncate_to_tokens


@dataclass
class StepContext:
    """What ``build_memory`` gets: the page, the prompt pieces and the budget for the page."""

    observation: Observation
    page: SegmentedPage
    previous: str
    budget: int
    log: CallLog
    trace: StepTrace


@dataclass
class Memory:
    text: str
    reopened: list[int] = field(default_factory=list)
    gists: list[str] = field(default_factory=list)
    lookup: list[LookupRound] = field(default_factory=list)


class PageAgent(Agent):
    def __init__(
        self, settings: AgentSettings, model: Model, gist_cache: GistCache | None = None
    ) -> None:
        self.settings = settings
        self.model = model
        self.gist_cache = gist_cache
        self.name = settings.agent
        self._segment_settings = segment_settings(settings, model)

    @abstractmethod
    def build_memory(self, ctx: StepContext) -> Memory:
        """The page as the act prompt shows it, within ``ctx.budget`` tokens."""

    def step(self, observation: Observation) -> StepTrace:
        trace = StepTrace(agent=self.name)
        log = CallLog(self.model)
        started = time.perf_counter()
        try:
            self._step(observation, trace, log)
        except ModelError as exc:
            trace.error, trace.error_class = f"model error: {exc}", "model_error"
        except PageError as exc:
            trace.error, trace.error_class = f"page error: {exc}", "page_error"
        trace.calls = log.calls
        trace.usage = log.usage()
        trace.gist_cache_hits = log.cache_hits("gist")
        trace.timings["total_s"] = time.perf_counter() - started
        return trace

    def _step(self, observation: Observation, trace: StepTrace, log: CallLog) -> None:
        count = self.model.count_tokens
        t0 = time.perf_counter()
        page = segment_html(observation.html, self._segment_settings)
        trace.timings["segment_s"] = time.perf_counter() - t0
        trace.n_fragments = len(page.fragments)
        trace.fragment_tokens = [f.tokens for f in page.fragments]
        trace.fragment_element_ids = [f.element_ids for f in page.fragments]
        trace.page_tokens = page.page_tokens

        empty, _ = act_messages(observation.task, "", "")
        history_budget = self.settings.reserve_tokens - self.model.count_message_tokens(empty)
        previous = format_previous(observation.previous_actions, max(history_budget, 0), count)
        budget_empty, _ = act_messages(observation.task, previous, "")
        budget = page_budget(self.model, self.settings, budget_empty, self.settings.act_max_tokens)

        t0 = time.perf_counter()
        ctx = StepContext(observation, page, previous, budget, log, trace)
        memory = self.build_memory(ctx)
        trace.timings["memory_s"] = time.perf_counter() - t0
        trace.gists, trace.reopened, trace.lookup = memory.gists, memory.reopened, memory.lookup
        # the budget arithmetic above is exact up to chat-template details: make sure
        text = truncate_to_tokens(memory.text, budget, count)
        trace.memory = text
        trace.shown_element_ids = shown_ids(text, page.element_ids)

        messages, version = act_messages(observation.task, previous, text)
        trace.prompt_tokens = self.model.count_message_tokens(messages)
        if not trace.shown_element_ids:
            # nothing reopened and no gist names an id: no answer could be valid
            trace.error = "the act prompt shows no element id (no fragment open, no id in gists)"
            trace.error_class = "no_ids_shown"
            return
        t0 = time.perf_counter()
        result = predict_action(
            messages,
            version,
            trace.shown_element_ids,
            max_tokens=self.settings.act_max_tokens,
            repair_attempts=self.settings.repair_attempts,
            log=log,
        )
        trace.timings["act_s"] = time.perf_counter() - t0
        trace.action, trace.error, trace.error_class = (
            result.action,
            result.error,
            result.error_class,
        )
