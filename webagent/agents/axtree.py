"""``axtree``: the page's accessibility tree, as the field's agents read it, cut to the budget.

The observation of AgentLab's GenericAgent (BrowserGym's AXTree with ``bid``\\ s, visible and
clickable tags; :mod:`webagent.html.axtree`), with everything else of the toolkit's baselines:
the act prompt (the tree is its page), the budget arithmetic and token counter, the ids and
their validation, the repair turn and the trace. Like ``raw-html`` it keeps the **beginning**
of the page: the tree is cut at the last whole line that fits the page budget, and the trace
records how many lines were left out (``memory_edits.lines_cut``) and the kept fraction.

The tree comes with the observation (``Observation.axtree``): from a live tab (CDP), from
BrowserGym, or from a saved page rendered offline (``--render``). An observation without one
is a page error with the line :data:`NEEDS_AXTREE`, never an answer from another view of the
page. The page's HTML is still segmented, for the diagnostics only (which fragments hold the
gold, and which of them the kept tree shows).
"""

from __future__ import annotations

from webagent.agents.pipeline import Memory, StepContext
from webagent.agents.ungisted import UngistedAgent
from webagent.contracts import AXTree, MemoryEdits
from webagent.errors import PageError
from webagent.html.axtree import flatten_axtree
from webagent.method.memory import shown_ids
from webagent.tokens import TokenCounter, truncate_to_tokens

NEEDS_AXTREE = (
    "axtree reads the page's accessibility tree: give --render offline, or run it live "
    "(webagent run, miniwob, browsergym)"
)


class AXTreeAgent(UngistedAgent):
    """``axtree``: the accessibility tree in document order, its beginning kept."""

    chooses_fragments = False  # it keeps the tree's beginning: no look-up to recall
    reads_axtree = True

    def build_memory(self, ctx: StepContext) -> Memory:
        tree = ctx.observation.axtree
        if tree is None:
            raise PageError(NEEDS_AXTREE)
        whole = flatten_axtree(tree)
        count = self.model.count_tokens
        text = cut_lines(whole, ctx.budget, count)
        ctx.trace.page_tokens = count(whole)  # the tree, not the HTML
        ctx.trace.timings["kept_fraction"] = len(text) / max(len(whole), 1)
        ids = tree_ids(tree)
        shown = set(shown_ids(text, ids))
        kept = [f.index for f in ctx.page.fragments if shown & set(f.element_ids)]
        edits = MemoryEdits(lines_cut=_lines(whole) - _lines(text))
        return Memory(text=text, reopened=kept, edits=edits, ids=ids)


def cut_lines(text: str, budget: int, count: TokenCounter) -> str:
    """The longest run of whole lines from the start of ``text`` within ``budget`` tokens."""
    kept = truncate_to_tokens(text, budget, count)
    if kept == text:
        return text
    return kept[: max(kept.rfind("\n"), 0)]


def tree_ids(tree: AXTree) -> list[str]:
    """The element ids the tree's nodes carry, in tree order: the ids an answer may name."""
    return list(dict.fromkeys(n.element_id for n in tree.nodes if n.element_id is not None))


def _lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0
