"""The page as the model reads it: numbered gists, with reopened fragments in place.

ReadAgent's memory is the list of gists in page order; a fragment the look-up reopens
replaces its gist at the same position. This module renders that text, fits it to the token
budget (``fit_memory``: reopened fragments first, then the gists share what is left, every
change recorded) and lists the element ids the model was shown.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from webagent.contracts import MemoryEdits
from webagent.gist.extractive import (
    ELLIPSIS,
    MIN_LABEL_CHARS,
    cutting,
    lead_and_controls,
    shorten_labels,
)
from webagent.html.fragment import Fragment
from webagent.tokens import (
    Counting,
    DryRun,
    TokenCounter,
    estimate_tokens,
    first_request,
    may_fit,
    prefetch,
    round_trips,
    run_counting,
    truncate_to_tokens,
)

#: an element id as prompts show it: ``id=ID`` in compact HTML, ``(id=ID)`` in a gist
SHOWN_ID = re.compile(r"\bid=\"?([^\s>\"',);\]]+)")


def gist_line(index: int, gist: str) -> str:
    return f"[Part {index + 1}] (gist) {gist}"


def full_block(fragment: Fragment) -> str:
    path = f" {fragment.path}" if fragment.path else ""
    return f"[Part {fragment.index + 1}] (full){path}\n{fragment.html}"


def render_memory(
    fragments: Sequence[Fragment], gists: Sequence[str], reopened: Iterable[int]
) -> str:
    return "\n".join(_memory_lines(fragments, gists, reopened))


def memories_opening(
    fragments: Sequence[Fragment],
    gists: Sequence[str],
    reopened: Iterable[int],
    more: Iterable[int],
) -> Iterator[str]:
    """``render_memory(fragments, gists, [*reopened, i])`` for each ``i`` of ``more`` in turn
    (each a fragment's index): the lines are rendered once for all of them."""
    lines = _memory_lines(fragments, gists, reopened)
    position = {f.index: n for n, f in enumerate(fragments)}
    for i in more:
        n = position[i]
        yield "\n".join([*lines[:n], full_block(fragments[n]), *lines[n + 1 :]])


def _memory_lines(
    fragments: Sequence[Fragment], gists: Sequence[str], reopened: Iterable[int]
) -> list[str]:
    opened = set(reopened)
    return [
        full_block(f) if f.index in opened else gist_line(f.index, gists[f.index])
        for f in fragments
    ]


def whole_page(fragments: Sequence[Fragment]) -> str:
    """The whole page, every fragment's compact HTML in page order, with no part headers."""
    return "\n".join(f.html for f in fragments)


def render_fragments(fragments: Sequence[Fragment], chosen: Iterable[int]) -> str:
    """Only the chosen fragments, in page order (retrieval and raw-HTML baselines)."""
    keep = set(chosen)
    return "\n".join(full_block(f) for f in fragments if f.index in keep)


@dataclass
class FittedMemory:
    """The memory as it fits the budget, and what fitting it changed (see MemoryEdits)."""

    text: str
    reopened: list[int]
    gists: list[str] | None
    edits: MemoryEdits = field(default_factory=MemoryEdits)


def fit_memory(
    fragments: Sequence[Fragment],
    gists: Sequence[str] | None,
    wanted: Sequence[int],
    budget_tokens: int,
    count_tokens: TokenCounter,
    *,
    prompt: Callable[[str], Sequence[str]] | None = None,
    then: Callable[[], Sequence[str]] | None = None,
) -> FittedMemory:
    """The memory within ``budget_tokens`` under ``count_tokens``, every change recorded.

    Reopened fragments are accepted in priority order while they fit the budget on their own;
    the first one is shown in part if it alone is larger (``reopen_cut``). The gists of the
    other fragments then share what is left: the longest are shortened first (cut between
    items); if even one-word gists do not fit, those farthest from a reopened fragment are
    left out (``gists_displaced``). With ``gists=None`` only reopened fragments are shown.
    The text is counted whole at the end, so the result fits by construction; against a
    remote counter ``prompt`` (the texts of the prompt around a memory) is counted with it.
    ``fragments`` may be some of a page's (a levelled memory's open sections): ``gists`` and
    ``wanted`` are indexed by ``Fragment.index``, and only ``fragments`` are shown.
    ``then``: what the caller will count next (asked once the layout is made, when the counts
    its shortening sent for are known), counted with the whole text's count.
    """
    if round_trips(count_tokens):
        prefetch(count_tokens, _ask_ahead(fragments, gists, wanted, budget_tokens, prompt))
    budget = budget_tokens
    for attempt in range(24):
        fitted = _fit(fragments, gists, wanted, budget, count_tokens)
        if prompt is not None and round_trips(count_tokens):
            prefetch(count_tokens, prompt(fitted.text))
        if then is not None and attempt == 0 and round_trips(count_tokens):
            prefetch(count_tokens, then())
        excess = count_tokens(fitted.text) - budget_tokens
        if excess <= 0 or budget <= 0:
            return fitted if excess <= 0 else _fit(fragments, gists, wanted, 0, count_tokens)
        # joining pieces can cost a token more than their sum: fit again, and where shortening
        # gains less than asked (cuts fall between items), ask for more each time
        budget -= excess if attempt < 8 else max(excess, 2 ** (attempt - 7))
    return _fit(fragments, gists, wanted, 0, count_tokens)


def draft_memory(
    fragments: Sequence[Fragment],
    gists: Sequence[str] | None,
    wanted: Sequence[int],
    budget_tokens: int,
    count_tokens: TokenCounter,
) -> FittedMemory:
    """The memory as :func:`fit_memory` first lays it out, before it counts the text whole.

    What fit_memory returns is this layout or the same fitted to a smaller budget: it leaves
    out every gist left out here, and where it leaves none out, no gist is longer there. A
    caller that needs every gist shown at some length learns that it will not be without
    the whole text's count (against a remote counter, a request)."""
    if round_trips(count_tokens):
        prefetch(count_tokens, _ask_ahead(fragments, gists, wanted, budget_tokens, None))
    return _fit(fragments, gists, wanted, budget_tokens, count_tokens)


#: a gist cut to a line budget: ``(index, gist, line_tokens)``
Cut = tuple[int, str, int]
#: cuts' dry runs (``first_cut_counts``), kept between the calls of one look-up
CutsAhead = dict[Cut, DryRun[tuple[str, int]]]


def first_cut_counts(
    fragments: Sequence[Fragment],
    gists: Sequence[str] | None,
    fits: Sequence[tuple[Sequence[int], int]],
    count_tokens: TokenCounter,
    cuts_ahead: CutsAhead | None = None,
) -> list[str]:
    """What the first request of each fit ``(wanted, budget_tokens)`` of these fragments would
    ask a remote counter (``tokens.first_request``): where it shortens gists, the first probes
    of every cut, each gist's cut to each line budget found once for all the fits (fits that
    open one part more or less share most of their cuts); else what it first counts, up to
    the whole text's count (not included: that text is known only once the cuts are).
    ``cuts_ahead``: the cuts' dry runs, kept from an earlier call (a look-up's rounds ask for
    many of the same cuts): each goes on from where it waited, and this call adds its own."""
    known = getattr(count_tokens, "known", None)
    if known is None or not round_trips(count_tokens):
        return []
    texts: dict[str, None] = {}
    cuts: dict[Cut, None] = {}
    uncut = _uncut_costs(fragments, gists, known)

    def stop(wanted: Sequence[Cut], count: TokenCounter) -> dict[int, Any]:
        cuts.update(dict.fromkeys(wanted))
        raise _Cut

    for wanted, budget in fits:
        if uncut is not None and uncut(wanted) <= budget:
            continue  # shown uncut: it counts nothing before the whole text

        def lay_out(
            dry: TokenCounter, wanted: Sequence[int] = wanted, budget: int = budget
        ) -> None:
            with contextlib.suppress(_Cut):
                _fit(fragments, gists, wanted, budget, dry, shorten=stop)

        texts.update(dict.fromkeys(first_request(count_tokens, lay_out)))
    runs = {} if cuts_ahead is None else cuts_ahead
    for cut in cuts:
        run = runs.get(cut)
        if run is None:
            run = runs[cut] = DryRun(_line_cut(cut, speculate=True))
        texts.update(dict.fromkeys(run.missing(known)))
    return list(texts)


def _uncut_costs(
    fragments: Sequence[Fragment],
    gists: Sequence[str] | None,
    known: Callable[[str], int | None],
) -> Callable[[Sequence[int]], int] | None:
    """The tokens the memory opening ``wanted`` takes uncut, as ``_fit`` adds them up (every
    block and gist line with its newline), from the counts ``known`` gives; None where one
    of them is not known."""
    if gists is None:
        return None
    line: dict[int, int] = {}
    for f in fragments:
        n = known(gist_line(f.index, gists[f.index]))
        if n is None:
            return None
        line[f.index] = n + 1
    lines = sum(line.values())
    by_index = {f.index: f for f in fragments}

    def cost(wanted: Sequence[int]) -> int:
        total = lines
        for i in dict.fromkeys(wanted):
            n = known(full_block(by_index[i]))
            if n is None:
                return 1 << 62  # not known: laid out in a dry run
            total += n + 1 - line[i]
        return total

    return cost


class _Cut(Exception):
    """A dry run of a fit has come to its cuts (``first_cut_counts``)."""


def _ask_ahead(
    fragments: Sequence[Fragment],
    gists: Sequence[str] | None,
    wanted: Sequence[int],
    budget: int,
    prompt: Callable[[str], Sequence[str]] | None,
) -> list[str]:
    """What fitting the memory is likely to count, for one request to a remote counter: the
    blocks wanted, every gist line, and then, by the byte estimate (which runs high), either
    the memory as it reads uncut (with its ``prompt``) or what shortening the gists counts
    first."""
    by_index = {f.index: f for f in fragments}
    blocks = {i: full_block(by_index[i]) for i in dict.fromkeys(wanted)}
    lines = {f.index: gist_line(f.index, gists[f.index]) for f in fragments} if gists else {}
    texts = [*blocks.values(), *lines.values()]
    estimate = sum(map(estimate_tokens, texts)) + len(texts)
    if estimate > budget and gists:  # may be cut (the estimate runs high: may fit too)
        texts += _floor_texts([f.index for f in fragments if f.index not in blocks], gists)
    if may_fit(estimate, budget):  # uncut
        shown = (blocks.get(f.index) or lines.get(f.index) for f in fragments)
        uncut = "\n".join(text for text in shown if text is not None)
        texts += [uncut, *(prompt(uncut) if prompt else ())]
    return texts


def _fit(
    fragments: Sequence[Fragment],
    gists: Sequence[str] | None,
    wanted: Sequence[int],
    budget: int,
    count: TokenCounter,
    *,
    shorten: Shorten | None = None,
) -> FittedMemory:
    edits = MemoryEdits()
    blocks: dict[int, str] = {}
    by_index = {f.index: f for f in fragments}
    used = 0
    for index in dict.fromkeys(wanted):
        block = full_block(by_index[index])
        cost = count(block) + 1
        if used + cost <= budget:
            blocks[index], used = block, used + cost
        elif not blocks and budget > 1:
            blocks[index] = truncate_to_tokens(block, budget - 1, count)
            used = budget
            edits.reopen_cut.append(index)
        else:
            edits.reopen_refused.append(index)
    if gists is None:
        text = "\n".join(blocks[f.index] for f in fragments if f.index in blocks)
        return FittedMemory(text, list(blocks), None, edits)
    closed = [f.index for f in fragments if f.index not in blocks]
    shown, left_out = _share_gists(
        closed, list(blocks), gists, budget - used, count=count, edits=edits, shorten=shorten
    )
    lines: list[str] = []
    for f in fragments:
        if f.index in blocks:
            lines.append(blocks[f.index])
        elif f.index in shown:
            lines.append(gist_line(f.index, shown[f.index]))
        elif f.index in left_out and not (lines and lines[-1].startswith(_LEFT_OUT)):
            lines.append(_left_out_line(f.index, left_out))
    return FittedMemory(
        "\n".join(lines), list(blocks), [shown.get(i, "") for i in range(len(gists))], edits
    )


#: how gists are cut to their line budgets (``Cut`` each), to the cut and its line's cost by
#: index (``_shorten``)
Shorten = Callable[[Sequence[Cut], TokenCounter], dict[int, tuple[str, int]]]

_LEFT_OUT = "[Parts "


def _left_out_line(first: int, left_out: set[int]) -> str:
    last = first
    while last + 1 in left_out:
        last += 1
    return f"{_LEFT_OUT}{first + 1}-{last + 1}] (gists left out: no room)"


def _share_gists(
    closed: list[int],
    opened: list[int],
    gists: Sequence[str],
    room: int,
    *,
    count: TokenCounter,
    edits: MemoryEdits,
    shorten: Shorten | None = None,
) -> tuple[dict[int, str], set[int]]:
    """Gists of the ``closed`` fragments within ``room`` tokens: shortened, then displaced.

    Shortening takes words before ids and links before form controls, across all gists:
    while every gist fits with its labels cut to ``MIN_LABEL_CHARS`` characters, each keeps
    all its ids and the labels share the rest of the room; else, while every gist fits with
    its lead, form controls, buttons and selects (``lead_and_controls``), each keeps those and
    its links share the rest; else everything shares the room. The room left above those
    floors goes to the longest gists last (a water level), the gists left out are the ones
    farthest from a reopened fragment.
    """
    cost = {i: _line_cost(i, gists[i], count) for i in closed}
    if sum(cost.values()) <= room:
        return {i: gists[i] for i in closed}, set()
    _prefetch_floors(closed, gists, count)
    floor = {i: _line_cost(i, ELLIPSIS.strip(), count) for i in closed}
    keep = list(closed)
    left_out: set[int] = set()
    by_distance = sorted(closed, key=lambda i: (-min((abs(i - o) for o in opened), default=0), -i))
    note = count(_left_out_line(0, {1})) + 1
    while keep and sum(floor[i] for i in keep) + note * _runs(left_out) > room:
        victim = by_distance.pop(0)
        keep.remove(victim)
        left_out.add(victim)
    edits.gists_displaced = sorted(left_out)
    if note * _runs(left_out) > room:  # not even the notes fit: the trace alone names them
        return {}, set()
    room -= note * _runs(left_out)
    # what each gist keeps at least: all its ids (``need``), its lead and form controls
    # (``forms``), nothing; the first of these floors whose sum fits is kept by every gist
    need = {
        i: min(cost[i], _need(i, shorten_labels(gists[i], MIN_LABEL_CHARS), count)) for i in keep
    }
    forms = {i: min(need[i], _forms_need(i, gists[i], count)) for i in keep}
    levels = [(need, cost), (forms, need), (dict.fromkeys(keep, 0), forms)]
    base, upper = next((b, u) for b, u in levels if sum(b[i] for i in keep) <= room)
    cap = _water_level([upper[i] for i in keep], room, [base[i] for i in keep])
    shown: dict[int, str] = {}
    for _ in range(16):
        target = {i: max(base[i], min(upper[i], cap)) for i in keep}
        cuts = (shorten or _shorten)(
            [(i, gists[i], target[i]) for i in keep if cost[i] > target[i]], count
        )
        shown = {i: cuts[i][0] if i in cuts else gists[i] for i in keep}
        total = sum(cuts[i][1] if i in cuts else cost[i] for i in keep)
        if total <= room or cap <= 1:
            break
        cut = sum(1 for i in keep if cost[i] > target[i])
        cap -= max(1, (total - room) // max(1, cut))
    edits.gists_shortened = sorted(i for i in keep if shown[i] != gists[i])
    return shown, left_out


def _prefetch_floors(closed: list[int], gists: Sequence[str], count: TokenCounter) -> None:
    """What shortening the gists counts first, counted together."""
    if round_trips(count):
        prefetch(count, _floor_texts(closed, gists))


def _floor_texts(closed: Sequence[int], gists: Sequence[str]) -> list[str]:
    texts = [_left_out_line(0, {1}), ELLIPSIS]
    for i in closed:
        texts += [gists[i], gist_line(i, ELLIPSIS.strip()), gist_line(i, "")]
        texts.append(shorten_labels(gists[i], MIN_LABEL_CHARS))
        head = lead_and_controls(gists[i])
        if head:
            texts.append(shorten_labels(head, MIN_LABEL_CHARS) + ELLIPSIS)
    return texts


def _line_cost(index: int, gist: str, count: TokenCounter) -> int:
    return count(gist_line(index, gist)) + 1


def _need(index: int, shortest: str, count: TokenCounter) -> int:
    """The tokens of a gist line showing ``shortest`` (as ``_shorten`` counts them)."""
    return count(gist_line(index, "")) + 1 + count(shortest)


def _forms_need(index: int, gist: str, count: TokenCounter) -> int:
    """The tokens of a gist line that keeps the gist's lead and form controls (labels at
    their shortest) and drops the rest; 0 for a gist that names no form control."""
    head = lead_and_controls(gist)
    if not head:
        return 0
    return _need(index, shorten_labels(head, MIN_LABEL_CHARS) + ELLIPSIS, count)


def _runs(indices: set[int]) -> int:
    return sum(1 for i in indices if i - 1 not in indices)


def _water_level(costs: list[int], room: int, base: list[int]) -> int:
    """The largest cap c with sum(max(b, min(cost, c))) <= room (costs shortened to c, none
    below its base)."""
    low, high = 0, max(costs, default=0)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(max(b, min(c, middle)) for c, b in zip(costs, base, strict=True)) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def _shorten(wanted: Sequence[Cut], count: TokenCounter) -> dict[int, tuple[str, int]]:
    """Each ``(index, gist, line_tokens)``'s gist cut to fit a line of ``line_tokens``, and
    the line's cost as ``_line_cost`` counts it (all of them counted side by side)."""
    speculate = round_trips(count)
    cuts = run_counting(count, [_line_cut(cut, speculate) for cut in wanted])
    return dict(zip([i for i, _, _ in wanted], cuts, strict=True))


def _line_cut(cut: Cut, speculate: bool) -> Counting[tuple[str, int]]:
    """One ``_shorten`` cut as a counting procedure: the line's prefix counted first."""
    index, gist, line_tokens = cut

    def line(shown: str) -> str:
        return gist_line(index, shown or ELLIPSIS.strip())

    (prefix,) = yield [gist_line(index, "")]
    room = line_tokens - prefix - 1
    shown = (yield from cutting(gist, room, speculate, line)) or ELLIPSIS.strip()
    (tokens,) = yield [line(shown)]
    return shown, tokens + 1


def shown_ids(text: str, page_ids: Iterable[str]) -> list[str]:
    """Ids of page elements that appear as ``id=...`` in what the model was shown."""
    valid = set(page_ids)
    seen: dict[str, None] = {}
    for match in SHOWN_ID.finditer(text):
        if match.group(1) in valid:
            seen.setdefault(match.group(1), None)
    return list(seen)
