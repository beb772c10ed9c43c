"""Gisting by the model, and :func:`build_gister`, which picks the model or the extractive
gister (:mod:`webagent.gist.extractive`).

The model gister puts several uncached fragments in one call (``webagent.gist.batch``); the
calls of a page go out concurrently, as many at once as the backend serves
(``Model.map_generate``). The cache around every gister is :class:`~webagent.gist.base.Gister`'s.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from webagent.errors import ModelError
from webagent.gist.base import Gister, Written
from webagent.gist.batch import (
    GistView,
    answer_room,
    batch_schema,
    fragment_view,
    pack_batches,
    parse_batch_answer,
    render_part,
    render_parts,
    restore_ids,
    view_marks,
)
from webagent.gist.extractive import ExtractiveGister, extractive_gist
from webagent.html.fragment import Fragment
from webagent.model.base import Request
from webagent.model.calls import CallLog
from webagent.model.client import Model
from webagent.model.windows import within_window
from webagent.prompts import load_template

_SPACE = re.compile(r"\s+")
#: tokens a batch keeps free beyond what the counter sees (chat template, part numbers)
BATCH_MARGIN_TOKENS = 32


class ModelGister(Gister):
    """The model writes the gists: ``batch`` fragments per call at most (``gist_batch``
    template), as many as fit ``budget_tokens``; ``batch=1`` is one call per fragment
    (``gist`` template). A gist a batch answer leaves out or garbles is re-asked alone.
    ``view`` is what the model reads of each fragment (``GistView``)."""

    name = "model"

    def __init__(
        self,
        words: int,
        max_tokens: int,
        batch: int = 1,
        budget_tokens: int | None = None,
        view: GistView = "reading",
    ) -> None:
        super().__init__(words, max_tokens)
        self.batch = max(1, batch)
        self.budget_tokens = budget_tokens
        self.view: GistView = view

    @property
    def version_tag(self) -> str:
        # both templates and the view define what a gist is; the batch size does not
        single, batch = load_template("gist"), load_template("gist_batch")
        return f"{single.version_tag}+{batch.version_tag}/{self.view}"

    def _gist_uncached(self, fragments: list[Fragment], log: CallLog) -> list[Written]:
        if not fragments:
            return []
        calls = self.requests(fragments, log.model)
        gists: list[str | None] = [None] * len(fragments)
        tokens = [0] * len(fragments)
        results = log.generate_many(calls.requests)
        for batch, ids, result in zip(calls.batches, calls.ids, results, strict=True):
            if isinstance(result, ModelError):
                raise result
            answers = (
                [result.text] if len(batch) == 1 else parse_batch_answer(result.text, len(batch))
            )
            shares = split_evenly(result.input_tokens + result.output_tokens, len(batch))
            for index, answer, share in zip(batch, answers, shares, strict=True):
                tokens[index] += share
                if answer is not None:
                    gists[index] = self.restore(answer, ids)
        retry = [i for i, g in enumerate(gists) if g is None]  # only batch answers leave gaps
        alone = [self.single_request(fragments[i]) for i in retry]
        results = log.generate_many([request for request, _ in alone]) if retry else []
        for index, (_, ids), result in zip(retry, alone, results, strict=True):
            if isinstance(result, ModelError):
                raise result
            tokens[index] += result.input_tokens + result.output_tokens
            gists[index] = self.restore(result.text, ids)
        # an empty answer would hide the fragment from look-up: fall back, visibly
        return [
            Written(g or "[extractive] " + extractive_gist(f, self.words), cost)
            for f, g, cost in zip(fragments, gists, tokens, strict=True)
        ]

    def restore(self, answer: str, ids: list[str]) -> str:
        """A gist as the model wrote it, its controls named by page id (``restore_ids``)."""
        return restore_ids(_SPACE.sub(" ", answer).strip(), view_marks(ids, self.view))

    def requests(self, fragments: list[Fragment], model: Model) -> GistCalls:
        """The batches of ``fragments`` (indices), the one request that gists each and the
        page ids of the numbers its prompt shows."""
        batches = self.batches(fragments, model)
        calls = [
            self.single_request(fragments[b[0]])
            if len(b) == 1
            else self.batch_request([fragments[i] for i in b])
            for b in batches
        ]
        return GistCalls(batches, [c[0] for c in calls], [c[1] for c in calls])

    def batches(self, fragments: list[Fragment], model: Model) -> list[list[int]]:
        """How ``fragments`` are grouped into calls: consecutive runs that fit the budget."""
        if self.batch == 1 or len(fragments) == 1:
            return [[i] for i in range(len(fragments))]
        template = load_template("gist_batch")
        empty = template.render(
            view_note=template.choice("view_note", self.view),
            word_budget=self.words,
            count=len(fragments),
            parts="",
        )
        # the margin covers the chat template's own tokens the counter does not see
        overhead = model.count_message_tokens(empty) + BATCH_MARGIN_TOKENS

        def cost(index: int, first: int) -> tuple[int, int]:
            part, ids = render_part(index + 1, fragments[index], view=self.view, first=first)
            return model.count_tokens(part) + 1, len(ids)

        budget = within_window(self.budget_tokens, model.context_window)
        return pack_batches(
            cost,
            len(fragments),
            overhead_tokens=overhead,
            gist_max_tokens=self.max_tokens,
            budget_tokens=budget,
            max_batch=self.batch,
        )

    def single_request(self, fragment: Fragment) -> tuple[Request, list[str]]:
        """The request that gists ``fragment`` alone, and the page ids of its numbers."""
        template = load_template("gist")
        shown, ids = fragment_view(fragment, self.view)
        request = Request(
            messages=template.render(
                view_note=template.choice("view_note", self.view),
                word_budget=self.words,
                path=fragment.path or "(page root)",
                fragment=shown,
            ),
            max_tokens=self.max_tokens,
            phase="gist",
            prompt_version=template.version_tag,
        )
        return request, ids

    def batch_request(self, fragments: list[Fragment]) -> tuple[Request, list[str]]:
        """The request that gists ``fragments`` in one call, and the page ids of its numbers."""
        template = load_template("gist_batch")
        parts, ids = render_parts(fragments, self.view)
        request = Request(
            messages=template.render(
                view_note=template.choice("view_note", self.view),
                word_budget=self.words,
                count=len(fragments),
                parts=parts,
            ),
            max_tokens=answer_room(len(fragments), self.max_tokens),
            json_schema=batch_schema(len(fragments), max_chars=4 * self.max_tokens),
            schema_name="gists",
            phase="gist",
            prompt_version=template.version_tag,
        )
        return request, ids


class GistCalls(NamedTuple):
    """The calls that gist a list of fragments: per call, the fragment indices it gists, its
    request and the page ids of the marks its prompt shows, in order (``ids[N - 1]`` for
    ``N`` in the numbered view; see ``view_marks``)."""

    batches: list[list[int]]
    requests: list[Request]
    ids: list[list[str]]


def split_evenly(total: int, count: int) -> list[int]:
    """``total`` shared among ``count`` as evenly as integers go (the first take the rest)."""
    share, rest = divmod(total, count)
    return [share + (k < rest) for k in range(count)]


def build_gister(
    kind: str,
    words: int,
    max_tokens: int,
    batch: int = 1,
    budget_tokens: int | None = None,
    *,
    view: GistView = "reading",
    ids: bool = True,
) -> Gister:
    """The ``"model"`` or ``"extractive"`` gister, writing gists of ``words`` words; the model
    gister puts up to ``batch`` fragments in one call, within ``budget_tokens``, and reads
    each fragment's ``view``; the extractive gister names controls by id or not (``ids``)."""
    if kind == "model":
        return ModelGister(words, max_tokens, batch, budget_tokens, view)
    return ExtractiveGister(words, max_tokens, ids)
