"""A scripted gister with a real tokenizer, for the cost of gisting without generation.

What gisting a page costs (calls, prompt tokens) depends on the page and the settings, not on
the answers; the answers follow a fixed policy printed with every table that uses it
(``POLICY``), never an agent's result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.kit import BUDGET
from webagent.gist.batch import GistView, fragment_view, split_parts
from webagent.gist.extractive import extractive_gist
from webagent.html.fragment import Fragment, SegmentedPage
from webagent.html.reading import numbered_view
from webagent.method.memory import SHOWN_ID
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend
from webagent.tokens import truncate_to_tokens

POLICY = {
    "gist": "per fragment (alone or in a numbered batch) the extractive gist of the fragment "
    "(visible text + up to 5 controls with ids, 30 words), cut to gist_max_tokens=64 tokens: "
    "the length a 64-token model gist has; where the prompt numbers the controls, the same gist "
    "naming them by those numbers",
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
    """The gists of one page at a time: call ``begin`` before gisting a page."""

    counter: Callable[[str], int]
    by_view: dict[str, Fragment] = field(default_factory=dict)

    def begin(self, page: SegmentedPage) -> None:
        # the gist prompt shows any of these (AgentSettings.gist_view); the numbered reading
        # view is found by its numbering from 1 (see _fragment_shown)
        views: tuple[GistView, ...] = ("reading", "reading-ids", "html")
        self.by_view = {fragment_view(f, v)[0]: f for f in page.fragments for v in views}

    def __call__(self, request: Request) -> str:
        if request.phase != "gist":
            raise RuntimeError(f"the scripted gister answers gist requests, not {request.phase}")
        text = request.messages[-1].content
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


def scripted_model(script: Script) -> tuple[Model, CountingScripted]:
    backend = CountingScripted(script, script.counter)
    return Model(backend, sleep=lambda _: None), backend


def _numbers(ids: list[str], first: int) -> dict[str, str]:
    """The number a numbered view shows each page id as."""
    return {element_id: str(n) for n, element_id in enumerate(ids, start=first)}
