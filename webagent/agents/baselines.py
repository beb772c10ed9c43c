"""Baselines that share ReadAgent's act prompt and budget.

``RawHtmlAgent``: the cleaned page in document order, cut to the page budget (the
beginning of the page is kept; what is cut is recorded). ``RetrievalAgent``: the top-k
fragments by BM25, embeddings or both fused, against task + previous actions, shown in page
order.
"""

from __future__ import annotations

from webagent.agents.pipeline import Memory, PageAgent, StepContext
from webagent.method.memory import fit_memory, whole_page
from webagent.method.retrieval import RetrievalQuery, build_retriever
from webagent.tokens import prefetch, truncate_to_tokens


class RawHtmlAgent(PageAgent):
    shows_gists = False
    chooses_fragments = False  # it keeps the page's beginning: no look-up to recall
    no_ids_why = "the beginning of the page that fits the budget holds none"

    def build_memory(self, ctx: StepContext) -> Memory:
        fragments = ctx.page.fragments
        whole = whole_page(fragments)
        count = self.model.count_tokens
        if sum(f.tokens for f in fragments) <= ctx.budget + len(fragments):  # may fit whole
            prefetch(count, ctx.act_texts(whole))
        text = truncate_to_tokens(whole, ctx.budget, count)
        # which fragments made it (wholly or in part) into the kept prefix
        kept, offset = [], 0
        for fragment in fragments:
            if offset >= len(text):
                break
            kept.append(fragment.index)
            offset += len(fragment.html) + 1
        ctx.trace.timings["kept_fraction"] = len(text) / max(len(whole), 1)
        return Memory(text=text, reopened=kept)


class RetrievalAgent(PageAgent):
    shows_gists = False
    no_ids_why = "the retrieved fragments hold none"

    def build_memory(self, ctx: StepContext) -> Memory:
        retriever = build_retriever(self.settings.retriever)
        query = RetrievalQuery.for_observation(ctx.observation)
        ranked = retriever.rank(query, ctx.page.fragments)[: self.settings.top_k]
        count = self.model.count_tokens
        fitted = fit_memory(
            ctx.page.fragments, None, ranked, ctx.budget, count, prompt=ctx.act_texts
        )
        return Memory(text=fitted.text, reopened=sorted(fitted.reopened), edits=fitted.edits)
