"""Units: the pieces of a cleaned page cut at a DOM depth, before merging into fragments.

A *core* unit is the whole subtree of one element: an element at the split depth, or a
shallower one that has nothing at that depth below it. Between core units lie *gaps*: the open
and close tags and own text of their ancestors. A gap is cut at its first open tag: what comes
before (close tags, tail text) belongs with the unit before it, the rest (an ancestor's open tag
and the text it starts with) with the unit after it. Units cover every piece exactly once, in
document order.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from webagent.html.clean import CleanPage
from webagent.html.compiled import speedups
from webagent.tokens import ESTIMATE_TOKENS_PER_BYTE, count_many, round_trips

ANY_PARENT = -2


@dataclass(slots=True)
class Unit:
    start: int  # first piece
    stop: int  # piece just past the unit
    tokens: int
    node: int  # the subtree's root element, or -1 for a gap
    forward: bool  # a gap that opens an ancestor: it belongs with what follows
    content: bool  # holds a kept element or text (not only close tags / unwrapped placeholders)
    parent: int = ANY_PARENT  # parent element of ``node``; gaps fit anywhere


#: a unit's tokens before its count is filled in (``Sizer.fill``)
PENDING = -1


class Sizer:
    """Token counts of piece ranges: prefix sums for the default estimate, or a real counter.

    With a real counter ``tokens`` answers :data:`PENDING` and :meth:`fill` counts every
    pending unit of a list at once (``count_many``: one request where the counter takes
    several texts)."""

    def __init__(self, page: CleanPage, count_tokens: Callable[[str], int] | None) -> None:
        self.page = page
        self.count_tokens = count_tokens
        self.prefix = _utf8_prefix(page.pieces)  # UTF-8 bytes before each piece

    def tokens(self, start: int, stop: int) -> int:
        if self.count_tokens is None:
            return self.estimate(start, stop)
        return PENDING

    def estimate(self, start: int, stop: int) -> int:
        """``estimate_tokens`` of the pieces ``start:stop``, from the prefix sums of their
        byte sizes (no text joined)."""
        size = self.prefix[stop] - self.prefix[start]
        return -(-size * ESTIMATE_TOKENS_PER_BYTE[0] // ESTIMATE_TOKENS_PER_BYTE[1])

    def fill(self, units: list[Unit], ahead: Sequence[str] = ()) -> list[Unit]:
        """``units`` with every pending count filled in, all in one ``count_many`` (which also
        counts the texts ``ahead``: see :func:`_ahead`)."""
        if self.count_tokens is None:
            return units
        pending = [u for u in units if u.tokens == PENDING]
        pieces = self.page.pieces
        texts = ["".join(pieces[u.start : u.stop]) for u in pending]
        counts = count_many(self.count_tokens, texts, ahead)
        for unit, tokens in zip(pending, counts, strict=True):
            unit.tokens = tokens
        return units

    def text(self, unit: Unit) -> str:
        return "".join(self.page.pieces[unit.start : unit.stop])


#: how many levels below a split unit ``_ahead`` looks, and how much text it sends at most
LOOKAHEAD_LEVELS = 64
LOOKAHEAD_CHARS = 4_000_000
#: a part is looked into when its scaled estimate is over this share of ``max_tokens``: parts
#: of one parent differ in tokens per estimated token, and a part missed costs a request
LOOKAHEAD_MARGIN = 0.8


def _ahead(
    page: CleanPage, split: list[tuple[float, list[Unit]]], max_tokens: int, sizer: Sizer
) -> list[str]:
    """Texts of the parts, a few levels down, that the next levels will likely split: a part
    whose estimate, scaled by ``ratio`` (its split parent's tokens per estimated token; 1 for
    the first units, whose parent is not counted), is near or over ``max_tokens``. Counted
    with the next request where counting makes round trips; a wrong guess costs a text
    counted, never a decision."""
    if not _counts_ahead(sizer):
        return []
    height, depth = page.height, page.depth
    out: list[str] = []
    sent = 0
    for ratio, parts in split:
        level = parts
        for _ in range(LOOKAHEAD_LEVELS):
            over = [
                u
                for u in level
                if u.node >= 0
                and height[u.node] > depth[u.node]
                and ratio * sizer.estimate(u.start, u.stop) > max_tokens * LOOKAHEAD_MARGIN
            ]
            level = [p for u in over for p in split_units(page, u.node, depth[u.node] + 1, sizer)]
            texts = list(map(sizer.text, level))
            out += texts
            sent += sum(map(len, texts))
            if sent > LOOKAHEAD_CHARS:
                return out
            if not level:
                break
    return out


def _counts_ahead(sizer: Sizer) -> bool:
    """Whether texts are worth counting ahead: the sizer counts, and counting makes round
    trips (the texts ``_ahead`` sends are joined for it: only then)."""
    return sizer.count_tokens is not None and round_trips(sizer.count_tokens)


def _utf8_prefix(pieces: list[str]) -> array[int]:
    """The UTF-8 bytes before each piece and after the last, in one ``array("q")``
    (compiled, ``speedups.utf8_prefix``: counted from the code points, nothing encoded; here
    a C-level loop, as encoding is cheaper than telling the ASCII pieces apart first)."""
    if speedups is not None:
        return speedups.utf8_prefix(pieces)  # type: ignore[no-any-return]
    return array("q", [0, *accumulate(map(len, map(str.encode, pieces)))])


def split_units(page: CleanPage, node: int, split_depth: int, sizer: Sizer) -> list[Unit]:
    """Units covering the subtree of ``node``, cut at ``split_depth`` (counts may be
    :data:`PENDING`: see ``Sizer.fill``); compiled where built (``speedups.split_units``)."""
    if speedups is not None:
        return speedups.split_units(page, node, split_depth, sizer, Unit)  # type: ignore[no-any-return]
    return _split_units_python(page, node, split_depth, sizer)


def _split_units_python(page: CleanPage, node: int, split_depth: int, sizer: Sizer) -> list[Unit]:
    units: list[Unit] = []
    depth, height, end, p_open, p_end = page.depth, page.height, page.end, page.p_open, page.p_end
    kept_before, parent, tokens = page.kept_before, page.parent, sizer.tokens
    cursor = p_open[node]
    index, stop = node, end[node]
    while index < stop:
        if depth[index] >= split_depth or height[index] < split_depth:
            start = p_open[index]
            if start > cursor:
                units.extend(_gap(page, cursor, start, sizer))
            after, cursor = end[index], p_end[index]
            # a core unit; text inside a subtree always belongs to a kept element of it
            content = kept_before[after] > kept_before[index]
            units.append(
                Unit(start, cursor, tokens(start, cursor), index, False, content, parent[index])
            )
            index = after
        else:
            index += 1
    if p_end[node] > cursor:
        units.extend(_gap(page, cursor, p_end[node], sizer))
    return units


def _gap(page: CleanPage, start: int, stop: int, sizer: Sizer) -> list[Unit]:
    """The gap's pieces as small units: one per ancestor open tag (with the text that follows
    it; these go with what comes after) and one per run of close tags and tail text (these go
    with what came before).

    A unit is *forward* when its first non-empty piece opens an element, and holds content
    when one of its non-empty pieces is not a close tag (an open tag or text). One pass."""
    pieces, owner, p_open, tokens = page.pieces, page.owner, page.p_open, sizer.tokens
    units: list[Unit] = []
    lo = start
    forward: bool | None = None  # None until the unit has a non-empty piece
    content = False
    after_close = False  # the last non-empty piece (after the first) was a close tag
    for piece in range(start, stop):
        text = pieces[piece]
        if not text:
            continue
        opens = p_open[owner[piece]] == piece
        closes = not opens and text.startswith("</")
        if piece != start:
            if opens or (after_close and not closes):
                units.append(Unit(lo, piece, tokens(lo, piece), -1, bool(forward), content))
                lo, forward, content = piece, None, False
            after_close = closes
        if forward is None:
            forward = opens
        if not closes:
            content = True
    if forward is None and not units:
        return []  # only unwrapped elements: nothing to place
    units.append(Unit(lo, stop, tokens(lo, stop), -1, bool(forward), content))
    return units


def fit_units(page: CleanPage, units: list[Unit], max_tokens: int, sizer: Sizer) -> list[Unit]:
    """Split every core unit over ``max_tokens`` one level deeper, until it fits or cannot.

    Level by level: every unit still too big is split, and the counts of all their parts are
    filled in at once; the result is the same as splitting each unit in turn."""
    height, depth = page.height, page.depth
    out = sizer.fill(units, _ahead(page, [(1.0, units)], max_tokens, sizer))
    fresh: Iterable[int] = range(len(out))  # only units made by the last split can be over
    while True:
        over = [
            n
            for n in fresh
            if (u := out[n]).tokens > max_tokens and u.node >= 0 and height[u.node] > depth[u.node]
        ]
        if not over:
            return out
        parts = {n: split_units(page, out[n].node, depth[out[n].node] + 1, sizer) for n in over}
        ahead = _ahead(page, [(_ratio(out[n], sizer), parts[n]) for n in over], max_tokens, sizer)
        sizer.fill([u for split in parts.values() for u in split], ahead)
        out, fresh = _replace(out, over, parts)


def _ratio(unit: Unit, sizer: Sizer) -> float:
    """The unit's tokens per estimated token."""
    return unit.tokens / max(1, sizer.estimate(unit.start, unit.stop))


def _replace(
    units: list[Unit], over: list[int], parts: dict[int, list[Unit]]
) -> tuple[list[Unit], list[int]]:
    """``units`` with each unit at the positions ``over`` (ascending) replaced by its
    ``parts``, and the positions of those parts in the result."""
    out: list[Unit] = []
    fresh: list[int] = []
    kept_from = 0
    for n in over:
        out += units[kept_from:n]
        fresh += range(len(out), len(out) + len(parts[n]))
        out += parts[n]
        kept_from = n + 1
    out += units[kept_from:]
    return out, fresh
