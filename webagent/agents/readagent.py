"""ReadAgent on a web page: gist every fragment, look up what the task needs, act.

``ReadAgentP`` asks once for up to ``max_lookup`` fragments (ReadAgent-P); ``ReadAgentS``
reopens one at a time, seeing what is already open, until STOP (ReadAgent-S);
``GistOnlyAgent`` acts on the gists alone (the "gist memory" baseline, no look-up).
Reopened fragments replace their gists in place.
"""

from __future__ import annotations

import time

from webagent.agents.context import context_budget
from webagent.agents.pipeline import Memory, PageAgent, StepContext
from webagent.gist.gister import build_gister
from webagent.lookup import LookupQuery, lookup_parallel, lookup_sequential
from webagent.memory import render_memory


class GistOnlyAgent(PageAgent):
    def gists(self, ctx: StepContext) -> list[str]:
        t0 = time.perf_counter()
        settings = self.settings
        gister = build_gister(
            settings.gister,
            settings.gist_words,
            settings.gist_max_tokens,
            settings.gist_batch,
            context_budget(settings, self.model),
        )
        gists = gister.gist_all(ctx.page.fragments, ctx.log, self.gist_cache)
        ctx.trace.timings["gist_s"] = time.perf_counter() - t0
        return gists

    def build_memory(self, ctx: StepContext) -> Memory:
        gists = self.gists(ctx)
        return Memory(text=render_memory(ctx.page.fragments, gists, ()), gists=gists)


class ReadAgentP(GistOnlyAgent):
    lookup = staticmethod(lookup_parallel)

    def build_memory(self, ctx: StepContext) -> Memory:
        gists = self.gists(ctx)
        t0 = time.perf_counter()
        reopened, rounds = self.lookup(
            LookupQuery(
                task=ctx.observation.task,
                previous=ctx.previous,
                fragments=ctx.page.fragments,
                gists=gists,
                max_pages=self.settings.max_lookup,
                budget_tokens=ctx.budget,
                max_tokens=self.settings.lookup_max_tokens,
                log=ctx.log,
                count_tokens=self.model.count_tokens,
            )
        )
        ctx.trace.timings["lookup_s"] = time.perf_counter() - t0
        text = render_memory(ctx.page.fragments, gists, reopened)
        return Memory(text=text, reopened=sorted(reopened), gists=gists, lookup=rounds)


class ReadAgentS(ReadAgentP):
    lookup = staticmethod(lookup_sequential)
