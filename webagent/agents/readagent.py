"""ReadAgent on a web page: gist every fragment, look up what the task needs, act.

``ReadAgentP`` asks once for up to ``max_lookup`` fragments (ReadAgent-P); ``ReadAgentS``
reopens one at a time, seeing what is already open, until STOP (ReadAgent-S);
``GistOnlyAgent`` acts on the gists alone (the "gist memory" baseline, no look-up). Where no
gist of a page names a control by its id, its fragments with controls show their extractive
gists instead (``name_controls``), so its act prompt always offers ids to answer with.
Reopened fragments replace their gists in place. A page that fits the act prompt whole is
read whole by ReadAgent-P and -S (``read_whole_page``): the act prompt shows it as raw-html
does, with no gist and no look-up call, as a person reads a short page without skimming it.

Every memory is fitted to its prompt's budget by ``fit_memory`` under the model's counter: the
look-up prompt of ReadAgent-P holds all gists (shortened only if they exceed its budget), each
ReadAgent-S round holds the gists with what is open so far, and the act prompt holds the
reopened fragments with the gists shortened beside them (the segmentation plan keeps room for
``max_lookup`` fragments, so they fit), or the reopened fragments alone (``act_gists='none'``:
the act model chose from a reopened fragment on every step of the method table's answered
runs, never from a gist line, issue 39). With ``lookup_assist`` the model's picks come first and
the best retrieval hits fill the free slots up to ``max_lookup`` (recorded as ``assisted``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import cached_property

from webagent.agents.context import context_budget, page_budget
from webagent.agents.pipeline import Memory, PageAgent, StepContext
from webagent.contracts import LookupRound, MemoryEdits, Observation, SectionGist
from webagent.gist.base import Gister
from webagent.gist.extractive import extractive_gist
from webagent.gist.gister import build_gister
from webagent.gist.sections import build_section_gister, section_fragment
from webagent.html.fragment import Fragment, SegmentedPage
from webagent.method.levels import (
    Section,
    build_sections,
    fan_out,
    fit_section_lines,
    flat_fits,
    leaf_parts,
    section_text,
    walk,
)
from webagent.method.lookup import (
    LevelledPage,
    LookupQuery,
    lookup_parallel,
    lookup_sections,
    lookup_sequential,
)
from webagent.method.memory import (
    FittedMemory,
    draft_memory,
    fit_memory,
    full_block,
    shown_ids,
    whole_page,
)
from webagent.method.retrieval import RetrievalQuery, build_retriever
from webagent.model.base import Message
from webagent.model.calls import CallLog
from webagent.model.server_extras import AHEAD_CHARS
from webagent.prompts import load_template
from webagent.tokens import TokenCounter, prefetch


def name_controls(
    fragments: Sequence[Fragment],
    gists: Sequence[str],
    words: int,
    max_tokens: int,
    count_tokens: TokenCounter,
) -> list[str]:
    """The gists as written when any of them names a control of the page by its id. When none
    does, an act prompt of gists would show no id and no answer could be valid: each fragment
    with controls then takes its extractive gist, marked ``[extractive]`` as the model
    gister marks one that stands in for an empty answer (the cache keeps the model's gist)."""
    page_ids = [i for f in fragments for i in f.element_ids]
    if shown_ids("\n".join(gists), page_ids):
        return list(gists)
    return [
        "[extractive] " + extractive_gist(f, words, max_tokens, count_tokens)
        if f.interactive_ids
        else gist
        for f, gist in zip(fragments, gists, strict=True)
    ]


class GistOnlyAgent(PageAgent):
    chooses_fragments = False  # it reopens nothing: no look-up to recall

    @property
    def gist_cap(self) -> int:
        """The tokens a gist may take under the configured gister."""
        settings = self.settings
        if settings.gister == "extractive":
            return settings.extractive_max_tokens
        return settings.gist_max_tokens

    @cached_property
    def gister(self) -> Gister:
        settings = self.settings
        return build_gister(
            settings.gister,
            settings.gist_words,
            self.gist_cap,
            settings.gist_batch,
            context_budget(settings, self.model),
            view=settings.gist_view,
            ids=settings.gist_ids,
        )

    def counted_after_segmenting(self, fragments: Sequence[Fragment]) -> list[str]:
        """What gisting the fragments counts first (the extractive gister's gists)."""
        return self.gister.counted_first(fragments, self.model.name, self.gist_cache)

    def gists(self, ctx: StepContext) -> list[str]:
        t0 = time.perf_counter()
        gists = self.gister.gist_all(ctx.page.fragments, ctx.log, self.gist_cache)
        ctx.trace.timings["gist_s"] = time.perf_counter() - t0
        return gists

    def gists_naming_ids(self, ctx: StepContext, gists: Sequence[str]) -> list[str]:
        """The page's gists for an act prompt that reopens nothing: they must offer it ids to
        answer with (``name_controls``)."""
        words, cap = self.settings.gist_words, self.gist_cap
        return name_controls(ctx.page.fragments, gists, words, cap, self._count)

    def build_memory(self, ctx: StepContext) -> Memory:
        gists = self.gists_naming_ids(ctx, self.gists(ctx))  # nothing is reopened
        fitted = fit_memory(
            ctx.page.fragments, gists, (), ctx.budget, self._count, prompt=ctx.act_texts
        )
        return Memory(text=fitted.text, gists=gists, edits=fitted.edits)

    @property
    def _count(self) -> TokenCounter:
        """The model's counter itself (it counts many texts at once where that pays)."""
        return self.model.count_tokens


class ReadAgentP(GistOnlyAgent):
    lookup = staticmethod(lookup_parallel)
    chooses_fragments = True

    def build_memory(self, ctx: StepContext) -> Memory:
        fragments = ctx.page.fragments
        whole = self._whole_page(ctx)
        if whole is not None:
            return whole
        self._blocks_ahead(fragments)
        raw = self.gists(ctx)
        budget = self._lookup_budget(ctx.observation.task, ctx.previous)
        memory = self._flat_memory(fragments, raw, budget)
        t0 = time.perf_counter()
        if memory is not None:
            shown, gists, edits = list(fragments), memory.gists or [], memory.edits
            rounds: list[LookupRound] = []
            sections: list[SectionGist] = []
        else:  # the gists cannot all be shown at a useful length: levels (webagent.method.levels)
            levelled = self._levels(ctx, raw, budget)
            # the act prompt if the look-up opens no section, counted with the look-up's
            top = list(levelled.top)
            uncut = section_text(top, [levelled.gists[s] for s in top])
            prefetch(self._count, [uncut, *ctx.act_texts(uncut)])
            chosen, rounds, below = lookup_sections(
                self._query(ctx, fragments, raw, budget), levelled
            )
            sections = [
                SectionGist(start=s.start, end=s.end, depth=d + 1, gist=levelled.gists[s])
                for d, s in walk(levelled.top)
            ]
            if not chosen:  # the model opened no section: the act prompt shows them all
                return self._sections_only(
                    ctx, levelled, raw=raw, rounds=rounds, sections=sections, below=below
                )
            shown, fitted_parts = self._parts_within(chosen, rounds[-1], fragments, raw, budget)
            gists, edits = fitted_parts.gists or [], fitted_parts.edits
            edits.sections_shortened = below
        parallel = self.lookup is lookup_parallel
        picks, part_rounds = self.lookup(
            self._query(ctx, shown, gists if parallel else raw, budget)
        )
        rounds = [*rounds, *part_rounds]
        picks = self._assist(ctx, picks, rounds)
        ctx.trace.timings["lookup_s"] = time.perf_counter() - t0
        fitted = self._act_memory(ctx, shown, raw, picks)
        if len(shown) < len(fragments):
            inside = {f.index for f in shown}
            fitted.edits.outside_sections = [f.index for f in fragments if f.index not in inside]
        return Memory(
            text=fitted.text,
            reopened=sorted(fitted.reopened),
            gists=raw,
            lookup=rounds,
            edits=fitted.edits,
            lookup_edits=edits,
            sections=sections,
        )

    def _act_memory(
        self, ctx: StepContext, shown: Sequence[Fragment], raw: Sequence[str], picks: list[int]
    ) -> FittedMemory:
        """The act prompt's memory: the fragments reopened with the other gists beside them,
        or (``act_gists='none'``) the fragments reopened alone, the gists left out recorded
        as ``gists_omitted``; where nothing is reopened, the gists either way, naming ids."""
        alone = self.settings.act_gists == "none" and bool(picks)
        gists = None if alone else raw if picks else self.gists_naming_ids(ctx, raw)
        fitted = fit_memory(shown, gists, picks, ctx.budget, self._count, prompt=ctx.act_texts)
        if alone:
            opened = set(fitted.reopened)
            fitted.edits.gists_omitted = [f.index for f in shown if f.index not in opened]
        return fitted

    def _blocks_ahead(self, fragments: Sequence[Fragment]) -> None:
        """The look-up may open any part: their blocks go with the step's first memory
        request rather than with a request of their own when opened (``prefetch``), where
        they fill no more than a share of a batched request."""
        blocks = [full_block(f) for f in fragments]
        if sum(map(len, blocks)) <= AHEAD_CHARS:
            prefetch(self._count, blocks)

    def _flat_memory(
        self, fragments: Sequence[Fragment], raw: Sequence[str], budget: int
    ) -> FittedMemory | None:
        """The look-up memory of every gist, or None where the gists cannot all be shown
        with ``gist_floor_words`` words (told by the first layout where it already tells:
        ``draft_memory``)."""
        floor = self.settings.gist_floor_words
        if floor:
            draft = draft_memory(fragments, raw, (), budget, self._count)
            if not flat_fits(raw, draft.gists or [], draft.edits, floor):
                return None
        memory = fit_memory(fragments, raw, (), budget, self._count)
        if floor and not flat_fits(raw, memory.gists or [], memory.edits, floor):
            return None
        return memory

    def _parts_within(
        self,
        chosen: list[Section],
        last: LookupRound,
        fragments: Sequence[Fragment],
        raw: Sequence[str],
        budget: int,
    ) -> tuple[list[Fragment], FittedMemory]:
        """The parts of the sections ``chosen`` and their memory for the look-up prompt,
        each gist with ``gist_floor_words`` words: the last chosen give way where it would
        not (refused in ``last``, the round that chose them)."""
        floor = self.settings.gist_floor_words
        while True:
            parts = leaf_parts(chosen)
            shown = [fragments[i] for i in parts]
            fitted = fit_memory(shown, raw, (), budget, self._count)
            if len(chosen) == 1 or flat_fits(raw, fitted.gists or [], fitted.edits, floor, parts):
                return shown, fitted
            dropped = chosen.pop()
            last.rejected.append(f"section {dropped.label}: no room to show what it holds")
            last.sections.pop()

    def _query(
        self, ctx: StepContext, shown: Sequence[Fragment], gists: Sequence[str], budget: int
    ) -> LookupQuery:
        return LookupQuery(
            task=ctx.observation.task,
            previous=ctx.previous,
            fragments=shown,
            gists=gists,
            max_pages=self.settings.max_lookup,
            budget_tokens=budget,
            max_tokens=self.settings.lookup_max_tokens,
            log=ctx.log,
            count_tokens=self._count,
            n_fragments=len(ctx.page.fragments),
            floor=self.settings.gist_floor_words,
            after=ctx.act_texts,
            act_budget=ctx.budget,
        )

    def _levels(self, ctx: StepContext, raw: Sequence[str], budget: int) -> LevelledPage:
        """The page's sections, each gisted from what it holds, bottom-up."""
        settings, fragments = self.settings, ctx.page.fragments
        floor = settings.gist_floor_words
        width = fan_out(
            fragments,
            raw,
            budget,
            max_open=settings.max_lookup,
            floor=floor,
            count_tokens=self._count,
        )
        top = build_sections(fragments, width)
        gister = build_section_gister(
            settings.gister,
            settings.gist_words,
            self.gist_cap,
            settings.gist_batch,
            context_budget(settings, self.model),
        )
        gists: dict[Section, str] = {}
        by_depth = walk(top)
        for depth in sorted({d for d, _ in by_depth}, reverse=True):  # the smallest first
            level = [s for d, s in by_depth if d == depth]
            inputs = [
                section_fragment(
                    n,
                    s.label,
                    [gists[c] for c in s.children] or [raw[i] for i in range(s.start, s.end)],
                )
                for n, s in enumerate(level)
            ]
            written = gister.gist_all(inputs, ctx.log, self.gist_cache)
            gists.update(zip(level, written, strict=True))
        return LevelledPage(top=top, gists=gists, floor=floor)

    def _sections_only(
        self,
        ctx: StepContext,
        levelled: LevelledPage,
        *,
        raw: list[str],
        rounds: list[LookupRound],
        sections: list[SectionGist],
        below: list[int],
    ) -> Memory:
        """The act prompt when the look-up opened no section: the top sections' gists, or,
        where those name no control, the page's gists as an empty flat look-up leaves them
        (naming ids)."""
        top = list(levelled.top)
        lines = fit_section_lines(
            top, [levelled.gists[s] for s in top], ctx.budget, levelled.floor, self._count
        )
        if shown_ids(lines.text, ctx.page.element_ids):
            shortened = [top[n].start for n in lines.shortened] if lines.below_floor else []
            text = lines.text
            edits = MemoryEdits(
                outside_sections=list(range(len(ctx.page.fragments))),
                sections_shortened=shortened,
            )
        else:
            with_ids = self.gists_naming_ids(ctx, raw)
            fitted = fit_memory(
                ctx.page.fragments, with_ids, (), ctx.budget, self._count, prompt=ctx.act_texts
            )
            text, edits = fitted.text, fitted.edits
        return Memory(
            text=text,
            gists=raw,
            lookup=rounds,
            edits=edits,
            lookup_edits=MemoryEdits(sections_shortened=below),
            sections=sections,
        )

    def _whole_page(self, ctx: StepContext) -> Memory | None:
        """The page as raw-html shows it, if it fits the act prompt whole
        (``read_whole_page``): gists and a look-up would only cost calls to pick what fits."""
        fragments = ctx.page.fragments
        if not self.settings.read_whole_page or not fragments:
            return None
        # quick test first: joining the fragments saves at most a token or so per seam
        if sum(f.tokens for f in fragments) > ctx.budget + len(fragments):
            return None
        text = whole_page(fragments)
        prefetch(self._count, ctx.act_texts(text))  # counted with the page, where it pays
        if self._count(text) > ctx.budget:
            return None
        return Memory(text=text, reopened=[f.index for f in fragments], read_whole=True)

    def level_preview(self, page: SegmentedPage, task: str = "") -> list[tuple[int, Section]]:
        """The sections the look-up would show on ``page`` with extractive gists (no model
        call; a model's gists are shorter, so a page may read flat where this shows levels):
        ``(depth, section)``, top first; empty where the flat memory fits."""
        settings = self.settings
        words, cap = settings.gist_words, settings.extractive_max_tokens
        raw = build_gister("extractive", words, cap, ids=settings.gist_ids)
        gists = raw.gist_all(page.fragments, CallLog(self.model), None)
        budget = self._lookup_budget(task, "None")
        memory = fit_memory(page.fragments, gists, (), budget, self._count)
        floor = self.settings.gist_floor_words
        if not floor or flat_fits(gists, memory.gists or [], memory.edits, floor):
            return []
        width = fan_out(
            page.fragments,
            gists,
            budget,
            max_open=self.settings.max_lookup,
            floor=floor,
            count_tokens=self._count,
        )
        return walk(build_sections(page.fragments, width))

    def _lookup_budget(self, task: str, previous: str) -> int:
        """Tokens for the page in the look-up prompt (its template, task and answer aside)."""
        empty = self._empty_lookup(task, previous)
        return page_budget(self.model, self.settings, empty, self.settings.lookup_max_tokens)

    def _empty_lookup(self, task: str, previous: str) -> tuple[Message, ...]:
        """The look-up prompt with no page in it."""
        name = "lookup_parallel" if self.lookup is lookup_parallel else "lookup_sequential"
        template = load_template(name)
        values: dict[str, object] = {"task": task, "previous_actions": previous}
        if name == "lookup_parallel":
            values |= {"gists": "", "max_pages": self.settings.max_lookup}
        else:
            values |= {"memory": "", "opened": "none", "remaining": self.settings.max_lookup}
        return template.render(**values)

    def ask_ahead(self, observation: Observation) -> list[str]:
        previous = "\n".join(observation.previous_actions) or "None"
        empty = self._empty_lookup(observation.task, previous)
        return [*super().ask_ahead(observation), *(m.content for m in empty)]

    def _assist(self, ctx: StepContext, picks: list[int], rounds: list[LookupRound]) -> list[int]:
        """The model's picks, then the best retrieval hits in the free slots (if enabled)."""
        free = self.settings.max_lookup - len(picks)
        if self.settings.lookup_assist == "none" or free <= 0 or not rounds:
            return picks
        retriever = build_retriever(self.settings.lookup_assist)
        query = RetrievalQuery.for_observation(ctx.observation)
        ranked = retriever.rank(query, ctx.page.fragments)
        added = [i for i in ranked if i not in picks][:free]
        rounds[-1].assisted = added
        return [*picks, *added]


class ReadAgentS(ReadAgentP):
    lookup = staticmethod(lookup_sequential)
