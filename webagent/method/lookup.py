"""Look-up: the model chooses which fragments to reopen.

``parse_lookup_answer`` is a pure parser: JSON (``{"pages": [..]}`` / ``{"page": ..}``) or
free text, page numbers out of range, duplicates and junk are recorded as rejected, never
raised. ``lookup_parallel`` (ReadAgent-P) asks once for up to N fragments;
``lookup_sequential`` (ReadAgent-S) asks for one at a time, showing what is already open,
until the model says STOP or N are open.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from webagent.answers import find_json
from webagent.contracts import LookupRound
from webagent.html.fragment import Fragment
from webagent.method.levels import Section, fit_section_lines, flat_fits
from webagent.method.memory import (
    CutsAhead,
    FittedMemory,
    first_cut_counts,
    fit_memory,
    full_block,
    gist_line,
    memories_opening,
)
from webagent.model.base import Request
from webagent.model.calls import CallLog
from webagent.model.server_extras import AHEAD_CHARS
from webagent.prompts import load_template
from webagent.tokens import estimate_tokens, may_fit, prefetch, round_trips

_NAMED_NUMBER = re.compile(r"(?:part|page|fragment)s?\s*(?:#|no\.?|number)?\s*(\d+)", re.I)
_ANY_NUMBER = re.compile(r"(?<![\w.])(-?\d+)(?![\w.])")
_STOP = re.compile(r"\bstop\b", re.I)

PARALLEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pages": {"type": "array", "items": {"type": "integer"}},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["pages", "reason"],
}
SEQUENTIAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "page": {"type": "string", "maxLength": 8},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["page", "reason"],
}


def _from_json(text: str) -> tuple[list[object], bool, str | None] | None:
    data = find_json(text, lists=True)
    if isinstance(data, list):
        return data, False, None
    if not isinstance(data, dict):
        return None
    reason = data.get("reason") if isinstance(data.get("reason"), str) else None
    raw = data.get("pages", data.get("page", data.get("sections", [])))
    items = raw if isinstance(raw, list) else [raw]
    stop = any(isinstance(x, str) and _STOP.fullmatch(x.strip()) for x in items)
    return (
        [x for x in items if not (isinstance(x, str) and _STOP.fullmatch(x.strip()))],
        stop,
        reason,
    )


def _from_text(text: str) -> tuple[list[object], bool]:
    numbers: list[object] = [m for m in _NAMED_NUMBER.findall(text)]
    if not numbers:
        numbers = list(_ANY_NUMBER.findall(text))
    return numbers, bool(_STOP.search(text)) and not numbers


def parse_lookup_answer(
    text: str,
    n_fragments: int,
    max_pages: int,
    already_open: Sequence[int] = (),
    shown: Collection[int] | None = None,
) -> LookupRound:
    """Turn a look-up answer into 0-based fragment indices, recording what was refused
    (``shown``: the indices the prompt offered, where it offered only some)."""
    parsed = _from_json(text)
    if parsed is not None:
        items, stop, reason = parsed
    else:
        items, stop = _from_text(text)
        reason = None
    result = LookupRound(raw=text, stop=stop, reason=reason)
    if not items and not stop:
        result.rejected.append("no page number found in the answer")
    for item in items:
        try:
            number = int(str(item).strip())
        except ValueError:
            result.rejected.append(f"{item!r}: not a page number")
            continue
        result.requested.append(number)
        index = number - 1
        if not 0 <= index < n_fragments:
            result.rejected.append(f"{number}: out of range 1..{n_fragments}")
        elif shown is not None and index not in shown:
            result.rejected.append(f"{number}: not in the sections opened")
        elif index in result.accepted or index in already_open:
            result.rejected.append(f"{number}: duplicate")
        elif len(result.accepted) >= max_pages:
            result.rejected.append(f"{number}: over the limit of {max_pages}")
        else:
            result.accepted.append(index)
    return result


@dataclass(frozen=True)
class LookupQuery:
    """What a look-up needs: the step, the page's fragments and gists, and its limits.

    ``fragments`` are those the prompt shows: the page's, or (in a levelled memory) those
    of the sections opened; ``gists`` are indexed by ``Fragment.index``; ``n_fragments`` is
    the page's count (0: ``len(fragments)``); ``floor``: the least words a gist line keeps
    while ReadAgent-S opens fragments (``gist_floor_words``; 0: none); ``after``: the texts
    of the prompt a look-up memory may go into next (the act prompt's, around it), counted
    with each memory ReadAgent-S fits, so that whichever round ends the look-up, that
    prompt's count is known."""

    task: str
    previous: str
    fragments: Sequence[Fragment]
    gists: Sequence[str]
    max_pages: int
    budget_tokens: int
    max_tokens: int
    log: CallLog
    count_tokens: Callable[[str], int]
    n_fragments: int = 0
    floor: int = 0
    after: Callable[[str], Sequence[str]] | None = None
    act_budget: int = 0

    @property
    def page_size(self) -> int:
        return self.n_fragments or len(self.fragments)

    @property
    def shown(self) -> set[int] | None:
        """The fragments offered, where they are only some of the page's."""
        if len(self.fragments) == self.page_size:
            return None
        return {f.index for f in self.fragments}


def _format_gists(fragments: Sequence[Fragment], gists: Sequence[str]) -> str:
    return "\n".join(gist_line(f.index, gists[f.index]) for f in fragments)


def lookup_parallel(query: LookupQuery) -> tuple[list[int], list[LookupRound]]:
    task, previous, fragments, gists = query.task, query.previous, query.fragments, query.gists
    max_pages, log = query.max_pages, query.log
    template = load_template("lookup_parallel")
    request = Request(
        messages=template.render(
            task=task,
            previous_actions=previous,
            gists=_format_gists(fragments, gists),
            max_pages=max_pages,
        ),
        max_tokens=query.max_tokens,
        json_schema=PARALLEL_SCHEMA,
        schema_name="lookup",
        phase="lookup",
        prompt_version=template.version_tag,
    )
    answer = log.generate(request).text
    round_ = parse_lookup_answer(answer, query.page_size, max_pages, shown=query.shown)
    # what fits is decided where the memory is built (fit_memory), and recorded there
    return list(round_.accepted), [round_]


def lookup_sequential(query: LookupQuery) -> tuple[list[int], list[LookupRound]]:
    task, previous, fragments, gists = query.task, query.previous, query.fragments, query.gists
    max_pages, log = query.max_pages, query.log
    template = load_template("lookup_sequential")
    opened: list[int] = []
    rounds: list[LookupRound] = []
    # any fragment shown may be opened: counted at once here, not in a request a round
    prefetch(query.count_tokens, [full_block(f) for f in fragments])
    cuts_ahead: CutsAhead = {}  # the cuts' dry runs (first_cut_counts)
    while len(opened) < max_pages:
        memory = fit_memory(fragments, gists, opened, query.budget_tokens, query.count_tokens)
        request = Request(
            messages=template.render(
                task=task,
                previous_actions=previous,
                memory=memory.text,
                opened=", ".join(str(i + 1) for i in opened) or "none",
                remaining=max_pages - len(opened),
            ),
            max_tokens=query.max_tokens,
            json_schema=SEQUENTIAL_SCHEMA,
            schema_name="lookup",
            phase="lookup",
            prompt_version=template.version_tag,
        )
        answer = log.generate(request).text
        round_ = parse_lookup_answer(answer, query.page_size, 1, opened, shown=query.shown)
        round_.memory_edits = memory.edits
        rounds.append(round_)
        if round_.stop or not round_.accepted:
            break  # STOP, or an answer naming no new page: asking again would repeat it
        wanted = [*opened, *round_.accepted]
        _ask_next_round(query, wanted)
        fitted = fit_memory(
            fragments,
            gists,
            wanted,
            query.budget_tokens,
            query.count_tokens,
            prompt=query.after,
            then=partial(_next_fits_first, query, wanted, cuts_ahead),
        )
        refused = fitted.edits.reopen_refused
        if refused:
            round_.accepted = []
            round_.rejected += [f"{i + 1}: does not fit the context budget" for i in refused]
            break
        if query.floor and not _gists_keep_floor(query, fitted):
            round_.rejected += [
                f"{i + 1}: no room beside the other gists at {query.floor} words"
                for i in round_.accepted
            ]
            round_.accepted = []
            break
        opened = fitted.reopened
    return opened, rounds


def _ask_next_round(query: LookupQuery, opened: list[int]) -> None:
    """The memories the round after ``opened`` may show, one for each part it may open, as
    they read uncut where the byte estimate says they may fit (it runs high): counted with
    the next request, within ``AHEAD_CHARS``, so that a round whose memory was
    counted ahead costs no request of its own."""
    if not round_trips(query.count_tokens) or len(opened) >= query.max_pages:
        return
    fragments, gists = query.fragments, query.gists
    shown = set(opened)
    block = {f.index: estimate_tokens(full_block(f)) + 1 for f in fragments}
    line = {f.index: estimate_tokens(gist_line(f.index, gists[f.index])) + 1 for f in fragments}
    uncut = sum(block[i] if i in shown else line[i] for i in block)
    more = [
        f.index
        for f in fragments
        if f.index not in shown
        and may_fit(uncut - line[f.index] + block[f.index], query.budget_tokens)
    ]
    room, texts = AHEAD_CHARS, []
    for text in memories_opening(fragments, gists, opened, more):
        room -= len(text)
        if room < 0:
            break
        texts.append(text)
    prefetch(query.count_tokens, texts)


def _next_fits_first(query: LookupQuery, opened: list[int], cuts_ahead: CutsAhead) -> list[str]:
    """What the fits after this round first count where they shorten gists (the cut probes,
    known only once counted): the next round's memory with each part it may open, and the
    act memory (``act_budget``) if the look-up ends here (``first_cut_counts``, on the
    counts known once this round's cuts are). Within ``AHEAD_CHARS`` they go with this
    round's request, so that a round that cuts gists sends one request, not two."""
    fits: list[tuple[Sequence[int], int]] = []
    if query.act_budget > 0:
        fits.append((opened, query.act_budget))
    if len(opened) < query.max_pages:
        shown = set(opened)
        budget = query.budget_tokens
        fits += [([*opened, f.index], budget) for f in query.fragments if f.index not in shown]
    texts = first_cut_counts(query.fragments, query.gists, fits, query.count_tokens, cuts_ahead)
    room = AHEAD_CHARS
    for n, text in enumerate(texts):
        room -= len(text)
        if room < 0:
            return texts[:n]
    return texts


def _gists_keep_floor(query: LookupQuery, fitted: FittedMemory) -> bool:
    """Whether the next round's memory shows every closed fragment's gist at the floor."""
    opened = set(fitted.reopened)
    closed = [f.index for f in query.fragments if f.index not in opened]
    return flat_fits(query.gists, fitted.gists or [], fitted.edits, query.floor, closed)


SECTIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sections": {"type": "array", "items": {"type": "integer"}},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["sections", "reason"],
}


@dataclass(frozen=True)
class LevelledPage:
    """A page with levels (``webagent.method.levels``): its top sections, every section's gist,
    and the least words a gist line keeps."""

    top: Sequence[Section]
    gists: Mapping[Section, str]
    floor: int


def lookup_sections(
    query: LookupQuery, page: LevelledPage
) -> tuple[list[Section], list[LookupRound], list[int]]:
    """The sections the model looks into, level by level, until those chosen hold only
    fragments: their sections, the rounds, and the numbers of the sections whose gists had
    to be cut below the floor (an edit; empty when every line kept ``floor`` words).

    Each round shows the sections of one level (numbered from 1) and the model picks up to
    ``max_pages``; the children of those it picks make the next level. An answer that picks
    none ends the look-up with nothing chosen."""
    template = load_template("lookup_sections")
    level: list[Section] = list(page.top)
    rounds: list[LookupRound] = []
    below: list[int] = []
    depth = 1
    while level:
        budget = query.budget_tokens
        fitted = fit_section_lines(
            level, [page.gists[s] for s in level], budget, page.floor, query.count_tokens
        )
        if fitted.below_floor:
            below += [level[n].start for n in fitted.shortened]
        request = Request(
            messages=template.render(
                task=query.task,
                previous_actions=query.previous,
                sections=fitted.text,
                max_sections=query.max_pages,
            ),
            max_tokens=query.max_tokens,
            json_schema=SECTIONS_SCHEMA,
            schema_name="lookup",
            phase="lookup",
            prompt_version=template.version_tag,
        )
        answer = query.log.generate(request).text
        round_ = parse_lookup_answer(answer, len(level), query.max_pages)
        chosen = [level[i] for i in round_.accepted]
        round_.accepted = []  # no fragment is reopened by a section round
        round_.level = depth
        round_.sections = [[s.start, s.end] for s in chosen]
        rounds.append(round_)
        if not chosen or all(not s.children for s in chosen):
            return chosen, rounds, below
        level = [c for s in chosen for c in (s.children or (s,))]
        # the next prompt shows what the chosen hold, each line with ``floor`` words: the
        # last chosen give way where it would not (refused, in the round)
        while (
            len(chosen) > 1
            and fit_section_lines(
                level, [page.gists[s] for s in level], budget, page.floor, query.count_tokens
            ).below_floor
        ):
            dropped = chosen.pop()
            round_.rejected.append(f"section {dropped.label}: no room to show what it holds")
            round_.sections.pop()
            level = [c for s in chosen for c in (s.children or (s,))]
        depth += 1
    return [], rounds, below
