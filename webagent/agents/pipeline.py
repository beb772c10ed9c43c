"""The step every agent shares: segment → build the page memory → act.

Agents differ only in ``build_memory``: what of the page the act prompt shows (all gists
with reopened fragments, gists alone, retrieved fragments, or the page cut to the budget).
Segmentation, budgets, the act prompt, validation and tracing are the same for all, and all
count tokens with the model's own counter (``Model.count_tokens``). ``build_memory`` returns
a memory that fits ``ctx.budget`` (``webagent.method.memory.fit_memory``) with what fitting changed;
nothing is cut here.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from webagent.agents.context import (
    format_previous,
    page_budget,
    previous_budget,
    reopen_room,
    segment_settings,
)
from webagent.agents.settings import AgentSettings
from webagent.contracts import (
    MIND2WEB_OPS,
    Agent,
    LookupRound,
    MemoryEdits,
    Observation,
    Op,
    SectionGist,
    StepTrace,
)
from webagent.errors import AwaitingAnswerError, ModelError, PageError
from webagent.gist.cache import GistCache
from webagent.html.fragment import Fragment, SegmentedPage, SegmentSettings
from webagent.html.segment import segment_html
from webagent.method.act import act_answer_room, act_messages, predict_action, repair_counts
from webagent.method.memory import shown_ids
from webagent.model.calls import CallLog
from webagent.model.client import Model
from webagent.tokens import prefetch


@dataclass
class StepContext:
    """What ``build_memory`` gets: the page, the prompt pieces and the budget for the page."""

    observation: Observation
    page: SegmentedPage
    previous: str
    budget: int
    log: CallLog
    trace: StepTrace
    reopen_room: int = 0

    def act_texts(self, memory: str) -> list[str]:
        """The act prompt's texts around ``memory``: what a fit of the act memory counts
        with its final count (``fit_memory(prompt=...)``), so the prompt then costs none."""
        observation = self.observation
        messages, _ = act_messages(observation.task, self.previous, memory, observation.actions)
        return [m.content for m in messages]


@dataclass
class Memory:
    text: str
    reopened: list[int] = field(default_factory=list)
    gists: list[str] = field(default_factory=list)
    lookup: list[LookupRound] = field(default_factory=list)
    edits: MemoryEdits = field(default_factory=MemoryEdits)
    read_whole: bool = False
    lookup_edits: MemoryEdits = field(default_factory=MemoryEdits)
    sections: list[SectionGist] = field(default_factory=list)
    #: the element ids an answer may name where the memory shows them; None: the ids of the
    #: segmented page (an agent that shows another view of the page, the tree, gives its own)
    ids: list[str] | None = None


class PageAgent(Agent):
    #: whether the act prompt shows gists (a budget too small for gists is then an error)
    shows_gists: bool = True
    #: why an act prompt of this agent may show no element id (the step's error then says it)
    no_ids_why: str = "no fragment open, no id in gists"

    def __init__(
        self, settings: AgentSettings, model: Model, gist_cache: GistCache | None = None
    ) -> None:
        self.settings = settings
        self.model = model
        self.gist_cache = gist_cache
        self.name = settings.agent
        #: the agent's own settings (``agent.options`` through its AgentSpec.settings class)
        self.own: BaseModel | None = None
        self._plan: SegmentSettings | None = None
        self._answer_room: dict[tuple[Op, ...], int] = {}

    def plan_segments(self) -> SegmentSettings:
        """How this agent segments a page: the plan its budget gives (``segment_settings``)."""
        return segment_settings(self.settings, self.model, self.shows_gists)

    @property
    def segment_plan(self) -> SegmentSettings:
        """:meth:`plan_segments`, made once, on first use: it counts with the model's counter,
        which may have to ask the endpoint (a failure there is then the step's model error)."""
        if self._plan is None:
            self._plan = self.plan_segments()
        return self._plan

    def answer_room(self, ops: tuple[Op, ...] = MIND2WEB_OPS) -> int:
        """Tokens an act prompt offering ``ops`` leaves free (``act_answer_room``), counted
        on first use."""
        room = self._answer_room.get(ops)
        if room is None:
            settings = self.settings
            room = act_answer_room(
                self.model, settings.act_max_tokens, settings.repair_attempts, ops
            )
            self._answer_room[ops] = room
        return room

    def ask_ahead(self, observation: Observation) -> list[str]:
        """What a step counts before it reads the page (the previous actions, the empty act
        prompt as it reads when all of them fit): counted in one request where each count
        is one (``prefetch``), so the budgets then cost none."""
        previous = "\n".join(observation.previous_actions) or "None"
        empty, _ = act_messages(observation.task, previous, "", observation.actions)
        return [*observation.previous_actions, *(m.content for m in empty)]

    def counted_after_segmenting(self, fragments: Sequence[Fragment]) -> list[str]:
        """What the step counts first from the page's fragments: counted with the fragments
        themselves (``segment_page``'s ``ahead``: their request to a remote counter). None
        unless the agent says so."""
        return []

    @abstractmethod
    def build_memory(self, ctx: StepContext) -> Memory:
        """The page as the act prompt shows it, within ``ctx.budget`` tokens."""

    def step(self, observation: Observation) -> StepTrace:
        trace = StepTrace(agent=self.name)
        log = CallLog(self.model)
        started = time.perf_counter()
        try:
            self._step(observation, trace, log)
        except AwaitingAnswerError as exc:
            trace.error, trace.error_class = str(exc), "awaiting_answer"
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
        prefetch(count, self.ask_ahead(observation))
        t0 = time.perf_counter()
        page = segment_html(
            observation.html, self.segment_plan, count, ahead=self.counted_after_segmenting
        )
        trace.timings["segment_s"] = time.perf_counter() - t0
        trace.n_fragments = len(page.fragments)
        trace.fragment_tokens = [f.tokens for f in page.fragments]
        trace.fragment_element_ids = [f.element_ids for f in page.fragments]
        trace.page_tokens = page.page_tokens

        history = previous_budget(self.settings, self.model)
        previous, dropped = format_previous(observation.previous_actions, history, count)
        ops = observation.actions
        budget_empty, _ = act_messages(observation.task, previous, "", ops)
        settings = self.settings
        budget = page_budget(self.model, settings, budget_empty, self.answer_room(ops))

        t0 = time.perf_counter()
        room = reopen_room(self.settings, self.segment_plan, count)
        ctx = StepContext(observation, page, previous, budget, log, trace, room)
        memory = self.build_memory(ctx)
        trace.timings["memory_s"] = time.perf_counter() - t0
        trace.gists, trace.reopened, trace.lookup = memory.gists, memory.reopened, memory.lookup
        trace.read_whole = memory.read_whole
        trace.lookup_edits, trace.sections = memory.lookup_edits, memory.sections
        trace.memory_edits = memory.edits.model_copy(update={"previous_dropped": dropped})
        text = memory.text
        trace.memory = text
        messages, version = act_messages(observation.task, previous, text, ops)
        shown = shown_ids(text, page.element_ids if memory.ids is None else memory.ids)
        repair = repair_counts(shown) if self.settings.repair_attempts else []
        # the act prompt and what a repair turn may count, with the memory's count
        prefetch(count, [*(m.content for m in messages), *repair])
        if count(text) > budget:  # fit_memory makes this impossible: say so if it ever is
            trace.error = f"the page memory is over its budget of {budget} tokens"
            trace.error_class = "memory_over_budget"
            return
        trace.shown_element_ids = shown
        trace.prompt_tokens = self.model.count_message_tokens(messages)
        if not trace.shown_element_ids:
            # nothing of the page the prompt shows names an id: no answer could be valid
            trace.error = f"the act prompt shows no element id ({self.no_ids_why})"
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
            ops=ops,
        )
        trace.timings["act_s"] = time.perf_counter() - t0
        trace.action, trace.error, trace.error_class = (
            result.action,
            result.error,
            result.error_class,
        )
