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
``max_lookup`` fragments, so they fit). With ``lookup_assist`` the model's picks come first and
the best retrieval hits fill the free slots up to ``max_lookup`` (recorded as ``assisted``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from webagent.agents.context import context_budget, page_budget
from webagent.agents.pipeline import Memory, PageAgent, StepContext
from webagent.contracts import LookupRound
from webagent.gist.extractive import extractive_gist
from webagent.gist.gister import build_gister
from webagent.html.fragment import Fragment
from webagent.lookup import LookupQuery, lookup_parallel, lookup_sequential
from webagent.memory import fit_memory, shown_ids, whole_page
from webagent.prompts import load_template
from webagent.retrieval import RetrievalQuery, build_retriever
from webagent.tokens import TokenCounter


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

    def gists(self, ctx: StepContext) -> list[str]:
        t0 = time.perf_counter()
        settings = self.settings
        cap = self.gist_cap
        gister = build_gister(
            settings.gister,
            settings.gist_words,
            cap,
            settings.gist_batch,
            context_budget(settings, self.model),
            view=settings.gist_view,
        )
        gists = gister.gist_all(ctx.page.fragments, ctx.log, self.gist_cache)
        ctx.trace.timings["gist_s"] = time.perf_counter() - t0
        return gists

    def build_memory(self, ctx: StepContext) -> Memory:
        # nothing is reopened: the gists alone must offer the act prompt ids to answer with
        words, cap = self.settings.gist_words, self.gist_cap
        gists = name_controls(ctx.page.fragments, self.gists(ctx), words, cap, self._count)
        fitted = fit_memory(ctx.page.fragments, gists, (), ctx.budget, self._count)
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
        raw = self.gists(ctx)
        budget = self._lookup_budget(ctx)
        memory = fit_memory(fragments, raw, (), budget, self._count)
        gists = memory.gists or []
        t0 = time.perf_counter()
        picks, rounds = self.lookup(
            LookupQuery(
                task=ctx.observation.task,
                previous=ctx.previous,
                fragments=fragments,
                gists=gists if self.lookup is lookup_parallel else raw,
                max_pages=self.settings.max_lookup,
                budget_tokens=budget,
                max_tokens=self.settings.lookup_max_tokens,
                log=ctx.log,
                count_tokens=self._count,
            )
        )
        picks = self._assist(ctx, picks, rounds)
        ctx.trace.timings["lookup_s"] = time.perf_counter() - t0
        fitted = fit_memory(fragments, raw, picks, ctx.budget, self._count)
        return Memory(
            text=fitted.text,
            reopened=sorted(fitted.reopened),
            gists=raw,
            lookup=rounds,
            edits=fitted.edits,
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
        if self._count(text) > ctx.budget:
            return None
        return Memory(text=text, reopened=[f.index for f in fragments], read_whole=True)

    def _lookup_budget(self, ctx: StepContext) -> int:
        """Tokens for the page in the look-up prompt (its template, task and answer aside)."""
        name = "lookup_parallel" if self.lookup is lookup_parallel else "lookup_sequential"
        template = load_template(name)
        values: dict[str, object] = {"task": ctx.observation.task, "previous_actions": ctx.previous}
        if name == "lookup_parallel":
            values |= {"gists": "", "max_pages": self.settings.max_lookup}
        else:
            values |= {"memory": "", "opened": "none", "remaining": self.settings.max_lookup}
        empty = template.render(**values)
        return page_budget(self.model, self.settings, empty, self.settings.lookup_max_tokens)

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
