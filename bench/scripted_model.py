"""A scripted model with the embedded model's real tokenizer, for cost figures without generation.

Prompt sizes and call counts depend on the page and the settings, not on the answers, except
for which fragments are reopened and how many look-up rounds ReadAgent-S makes. The answering
policy is fixed and reported with every table (``POLICY``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from benchkit import BUDGET, Step

from webagent.gist.batch import GistView, fragment_view, split_parts
from webagent.gist.extractive import extractive_gist
from webagent.html.fragment import Fragment, SegmentedPage
from webagent.html.reading import numbered_view
from webagent.method.memory import SHOWN_ID, shown_ids
from webagent.method.retrieval import BM25Retriever, RetrievalQuery
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend
from webagent.tokens import truncate_to_tokens

POLICY = {
    "gist": "per fragment (alone or in a numbered batch) the extractive gist of the fragment "
    "(visible text + up to 5 controls with ids, "
    "30 words), cut to gist_max_tokens=64 tokens: the length a 64-token model gist has; "
    "where the prompt numbers the controls, the same gist naming them by those numbers",
    "lookup_p": "reopen the max_lookup=5 fragments BM25 ranks first (task + last 3 actions)",
    "lookup_s_gold": "reopen BM25's ranking one fragment per call; STOP once a fragment holding "
    "the gold element is open (an oracle stop), at most max_lookup=5",
    "lookup_s_all": "reopen BM25's top 5 one per call, never STOP early (the upper bound)",
    "act": "the gold element if the act prompt shows it, else the first id shown; gold op/value",
    "lookup_oracle": "oracle look-up: the gold element's fragment first, then the next 4 by BM25 "
    "(task + last 3 actions); ReadAgent-S gets the same order one per call, never STOP early",
}
_PART = re.compile(r"<page_part>\n(.*)\n</page_part>", re.DOTALL)
#: a control's mark in the numbered reading view: ``[12`` before a space or ``]``
_NUMBER_MARK = re.compile(r"\[(\d+)(?=[\s\]])")


class CountingScripted(ScriptedBackend):
    """ScriptedBackend whose token counts come from a real tokenizer."""

    def __init__(self, script: Callable[[Request], str], counter: Callable[[str], int]) -> None:
        super().__init__(script, name="scripted+SmolLM2-tokenizer", context_window=BUDGET)
        self._counter = counter

    def count_tokens(self, text: str) -> int:
        return self._counter(text) if text else 0


@dataclass
class Script:
    """Answers for one step at a time: call ``begin`` before each agent step."""

    counter: Callable[[str], int]
    max_lookup: int = 5
    stop_at_gold: bool = True
    oracle: bool = False
    page: SegmentedPage | None = None
    step: Step | None = None
    ranked: list[int] = field(default_factory=list)
    gold_fragments: set[int] = field(default_factory=set)
    by_view: dict[str, Fragment] = field(default_factory=dict)
    s_round: int = 0

    def begin(self, step: Step, page: SegmentedPage, stop_at_gold: bool = True) -> None:
        self.step, self.page, self.stop_at_gold, self.s_round = step, page, stop_at_gold, 0
        # the gist prompt shows any of these (AgentSettings.gist_view); the numbered reading
        # view is found by its numbering from 1 (see _fragment_shown)
        views: tuple[GistView, ...] = ("reading", "reading-ids", "html")
        self.by_view = {fragment_view(f, v)[0]: f for f in page.fragments for v in views}
        self.ranked = BM25Retriever().rank(query_of(step), page.fragments)
        found = (page.fragment_of(i) for i in step.gold_ids)
        self.gold_fragments = {i for i in found if i is not None}
        if self.oracle:  # the gold's fragment first, then BM25's order
            gold = sorted(self.gold_fragments)
            self.ranked = gold + [i for i in self.ranked if i not in self.gold_fragments]

    def __call__(self, request: Request) -> str:
        text = request.messages[-1].content
        if request.phase == "gist":
            return self._gist(text)
        if request.phase == "lookup":
            return self._lookup(request)
        return self._act("\n".join(m.content for m in request.messages))

    def _gist(self, text: str) -> str:
        parts = split_parts(text)
        if parts:  # a batch: one gist per part number, in JSON
            return json.dumps({str(n): self._one_gist(h) for n, h in enumerate(parts, start=1)})
        match = _PART.search(text)
        return self._one_gist(match.group(1) if match else None)

    def _one_gist(self, shown: str | None) -> str:
        fragment, numbers = self._fragment_shown(shown) if shown is not None else (None, {})
        if fragment is None:
            return "(part of the page)"
        gist = truncate_to_tokens(extractive_gist(fragment, 30), 64, self.counter)
        if numbers:  # the same gist, naming each control by the number the prompt shows it with
            gist = SHOWN_ID.sub(lambda m: "id=" + numbers.get(m.group(1), m.group(1)), gist)
        return gist

    def _fragment_shown(self, shown: str) -> tuple[Fragment | None, dict[str, str]]:
        """The fragment a gist prompt shows as ``shown``, and the number it shows each of its
        controls' page ids as (none where the view shows page ids)."""
        if (fragment := self.by_view.get(shown)) is not None:
            numbered, ids = numbered_view(fragment)
            return fragment, _numbers(ids, 1) if numbered == shown else {}
        # a part of a batch: numbered on from the parts before it, so its first number is one
        # of the numbers it shows
        for first in dict.fromkeys(int(m.group(1)) for m in _NUMBER_MARK.finditer(shown)):
            shift = first - 1
            renumbered = _NUMBER_MARK.sub(lambda m, s=shift: f"[{int(m.group(1)) - s}", shown)
            fragment = self.by_view.get(renumbered)
            if fragment is not None:
                numbered, ids = numbered_view(fragment, first)
                if numbered == shown:
                    return fragment, _numbers(ids, first)
        return None, {}

    def _lookup(self, request: Request) -> str:
        if "pages" in (request.json_schema or {}).get("properties", {}):
            pages = [i + 1 for i in self.ranked[: self.max_lookup]]
            return json.dumps({"pages": pages, "reason": "bm25"})
        opened = self.ranked[: self.s_round]
        if (self.stop_at_gold and self.gold_fragments & set(opened)) or self.s_round >= len(
            self.ranked
        ):
            return json.dumps({"page": "STOP", "reason": "enough"})
        self.s_round += 1
        return json.dumps({"page": str(self.ranked[self.s_round - 1] + 1), "reason": "bm25"})

    def _act(self, prompt: str) -> str:
        if self.step is None or self.page is None:
            raise RuntimeError("Script.begin() must be called before the agent steps")
        shown = shown_ids(prompt, self.page.element_ids)
        gold = next((i for i in self.step.gold_ids if i in shown), None)
        element = gold or (shown[0] if shown else "none")
        value = self.step.value if self.step.op != "CLICK" else ""
        return json.dumps({"element_id": element, "op": self.step.op, "value": value or "x"})


def query_of(step: Step) -> RetrievalQuery:
    """What retrieval and the scripted look-up rank against: task + last 3 actions."""
    return RetrievalQuery.of(step.task, step.previous)


def scripted_model(script: Script) -> tuple[Model, CountingScripted]:
    backend = CountingScripted(script, script.counter)
    return Model(backend, sleep=lambda _: None), backend


def _numbers(ids: list[str], first: int) -> dict[str, str]:
    """The number a numbered view shows each page id as."""
    return {element_id: str(n) for n, element_id in enumerate(ids, start=first)}
