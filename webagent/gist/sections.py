"""Gists of sections: runs of adjacent fragments (or of smaller sections), for the memory's
levels (:mod:`webagent.method.levels`).

A section is gisted from the gists of what it holds, as ReadAgent gists a page from its
text: the model gister asks the model (``gist_sections`` template, several sections a call);
the extractive gister joins the leads of the parts' gists, sharing its words among them.
Both go through :class:`~webagent.gist.base.Gister`'s cache, keyed by the parts' gists.
"""

from __future__ import annotations

from collections.abc import Sequence

from webagent.errors import ModelError
from webagent.gist.base import Gister, Written
from webagent.gist.batch import answer_room, batch_schema, pack_batches, parse_batch_answer
from webagent.gist.extractive import ELLIPSIS, SEPARATOR
from webagent.gist.gister import BATCH_MARGIN_TOKENS, split_evenly
from webagent.html.fragment import Fragment
from webagent.model.base import Request
from webagent.model.calls import CallLog
from webagent.model.windows import within_window
from webagent.prompts import load_template
from webagent.tokens import TokenCounter, count_many

#: words each part's lead keeps at least in an extractive section gist
MIN_LEAD_WORDS = 3


def section_fragment(index: int, label: str, part_gists: Sequence[str]) -> Fragment:
    """A section as the gisters read it: its parts' gists, one numbered line each (what the
    cache key is made of; ``label`` names the parts, e.g. ``parts 12-40``)."""
    body = "\n".join(f"- {g}" for g in part_gists)
    return Fragment(index=index, path=label, html=body, text=body, element_ids=[], tokens=0)


def lead_words(gist: str, words: int) -> str:
    """The first ``words`` words of ``gist`` (``…`` marks a cut); a gist of fewer as it is."""
    parts = gist.removeprefix("[extractive] ").split()
    if len(parts) <= words:
        return " ".join(parts)
    return " ".join(parts[:words]) + ELLIPSIS


def extractive_section_gist(part_gists: Sequence[str], words: int) -> str:
    """The leads of the parts' gists, ``words`` words shared among them (each keeps at least
    ``MIN_LEAD_WORDS``; parts past the words are counted, not dropped silently)."""
    if not part_gists:
        return "(empty section)"
    share = max(MIN_LEAD_WORDS, words // len(part_gists))
    shown = max(1, words // share)
    leads = [lead_words(g, share) for g in part_gists[:shown]]
    rest = len(part_gists) - shown
    if rest > 0:
        leads.append(f"and {rest} more parts")
    return SEPARATOR.join(lead for lead in leads if lead) or "(empty section)"


class ExtractiveSectionGister(Gister):
    name = "extractive-sections"

    @property
    def version_tag(self) -> str:
        return "extractive-sections@1"

    def _gist_uncached(self, fragments: list[Fragment], log: CallLog) -> list[Written]:
        return [Written(extractive_section_gist(_part_gists(f), self.words)) for f in fragments]


class ModelSectionGister(Gister):
    """The model gists sections, several a call (as many as fit ``budget_tokens``); a
    section its answer leaves out takes its extractive gist, marked ``[extractive]``."""

    name = "model-sections"

    def __init__(self, words: int, max_tokens: int, batch: int, budget_tokens: int) -> None:
        super().__init__(words, max_tokens)
        self.batch = max(1, batch)
        self.budget_tokens = budget_tokens

    @property
    def version_tag(self) -> str:
        return load_template("gist_sections").version_tag

    def _gist_uncached(self, fragments: list[Fragment], log: CallLog) -> list[Written]:
        if not fragments:
            return []
        model = log.model
        template = load_template("gist_sections")
        empty = template.render(word_budget=self.words, count=len(fragments), sections="")
        overhead = model.count_message_tokens(empty) + BATCH_MARGIN_TOKENS
        budget = within_window(self.budget_tokens, model.context_window)
        # a section too long for a call of its own shows its parts' gists shortened
        room = budget - overhead - answer_room(1, self.max_tokens)
        fragments = [_within(f, room, model.count_tokens) for f in fragments]
        sizes = count_many(model.count_tokens, [_block(1, f) for f in fragments])

        def cost(index: int, first: int) -> tuple[int, int]:
            return sizes[index] + 1, 0

        batches = pack_batches(
            cost,
            len(fragments),
            overhead_tokens=overhead,
            gist_max_tokens=self.max_tokens,
            budget_tokens=budget,
            max_batch=self.batch,
        )
        requests = []
        for batch in batches:
            text = "\n\n".join(_block(n + 1, fragments[i]) for n, i in enumerate(batch))
            requests.append(
                Request(
                    messages=template.render(
                        word_budget=self.words, count=len(batch), sections=text
                    ),
                    max_tokens=answer_room(len(batch), self.max_tokens),
                    json_schema=batch_schema(len(batch), max_chars=4 * self.max_tokens),
                    schema_name="gists",
                    phase="gist",
                    prompt_version=template.version_tag,
                )
            )
        written: list[Written] = [Written("")] * len(fragments)
        for batch, result in zip(batches, log.generate_many(requests), strict=True):
            if isinstance(result, ModelError):
                raise result
            answers = parse_batch_answer(result.text, len(batch))
            shares = split_evenly(result.input_tokens + result.output_tokens, len(batch))
            for index, answer, share in zip(batch, answers, shares, strict=True):
                gist = " ".join((answer or "").split())
                if not gist:  # an empty gist would hide the section: fall back, visibly
                    parts = _part_gists(fragments[index])
                    gist = "[extractive] " + extractive_section_gist(parts, self.words)
                written[index] = Written(gist, share)
        return written


def _block(number: int, section: Fragment) -> str:
    return f"[Section {number}] ({section.path})\n{section.html}"


def _within(section: Fragment, room: int, count: TokenCounter) -> Fragment:
    """``section`` with its parts' gists cut to the most words (the same for all) at which
    its block fits ``room`` tokens."""
    if count(_block(1, section)) <= room:
        return section
    parts = _part_gists(section)
    words = max((len(g.split()) for g in parts), default=1)
    while words > 1:
        words = max(1, words * 3 // 4)
        shorter = section_fragment(
            section.index, section.path, [lead_words(g, words) for g in parts]
        )
        if count(_block(1, shorter)) <= room:
            return shorter
    return section_fragment(section.index, section.path, [lead_words(g, 1) for g in parts])


def _part_gists(section: Fragment) -> list[str]:
    return [line.removeprefix("- ") for line in section.html.split("\n") if line]


def build_section_gister(
    kind: str, words: int, max_tokens: int, batch: int, budget_tokens: int
) -> Gister:
    """The section gister that goes with the fragments' gister ``kind``."""
    if kind == "model":
        return ModelSectionGister(words, max_tokens, batch, budget_tokens)
    return ExtractiveSectionGister(words, max_tokens)
