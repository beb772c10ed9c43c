"""The raw-HTML baseline of the ReadAgent paper (Table 10): the page as given, cut to the budget.

ReadAgent's appendix E compared against Mind2Web's ``cleaned_html`` *as released*, truncated
to the model's context. The project's ``raw-html`` agent shows something else: the page after
this toolkit's cleaning, in its compact rendering (131,822 → 16,820 tokens on average on the
real pages here), a much stronger baseline. This agent is the paper's one, so that a number
can be set beside Table 10:

- the observation's HTML exactly as given, in document order, its beginning kept and the rest
  cut at the page budget (the same budget arithmetic and act prompt as every other agent);
- one textual change, so that the shared act prompt's id convention holds: the attribute
  name ``backend_node_id=`` is shown as ``id=`` (the values, and everything else, unchanged).

The page is still segmented (with wrappers kept, so that every id of the page is valid), but
only for the diagnostics: which fragments hold the gold, and which of them were kept.

A page whose elements carry no ``backend_node_id`` (a saved page) is not Mind2Web's
``cleaned_html``: shown as given it would name no element (and its beginning is mostly
``<head>``), so the step ends at once with one line that says what the agent needs and that
``raw-html`` is the agent for such a page (:data:`NEEDS_IDS`).
"""

from __future__ import annotations

import re

from webagent.agents.pipeline import Memory, StepContext
from webagent.agents.ungisted import UngistedAgent
from webagent.contracts import Observation, StepTrace
from webagent.method.memory import shown_ids
from webagent.model.calls import CallLog
from webagent.tokens import truncate_to_tokens

_ID_ATTRIBUTE = re.compile(r"\bbackend_node_id=")
#: the step's error on a page without ids
NEEDS_IDS = (
    "raw-html-paper reads Mind2Web's cleaned_html, whose elements carry backend_node_id, "
    "and this page has none; use --agent raw-html, which cleans any page and names its "
    "elements n1, n2, ..."
)


def paper_page_text(html: str) -> str:
    """The page as the paper's baseline shows it: as given, ids named ``id=``."""
    return _ID_ATTRIBUTE.sub("id=", html)


class PaperRawHtmlAgent(UngistedAgent):
    """``raw-html-paper``: Mind2Web's ``cleaned_html`` as given, cut to the budget."""

    chooses_fragments = False  # it keeps the page's beginning: no look-up to recall
    no_ids_why = "the beginning of the page that fits the budget holds none"

    def _step(self, observation: Observation, trace: StepTrace, log: CallLog) -> None:
        if _ID_ATTRIBUTE.search(observation.html) is None:
            trace.error, trace.error_class = NEEDS_IDS, "no_ids_shown"
            return
        super()._step(observation, trace, log)

    def build_memory(self, ctx: StepContext) -> Memory:
        whole = paper_page_text(ctx.observation.html)
        ctx.trace.page_tokens = self.model.count_tokens(whole)  # the page as given
        text = truncate_to_tokens(whole, ctx.budget, self.model.count_tokens)
        shown = set(shown_ids(text, ctx.page.element_ids))
        kept = [f.index for f in ctx.page.fragments if shown & set(f.element_ids)]
        ctx.trace.timings["kept_fraction"] = len(text) / max(len(whole), 1)
        return Memory(text=text, reopened=kept)
