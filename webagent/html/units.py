"""Units: the pieces of a cleaned page cut at a DOM depth, before merging into fragments.

A *core* unit is the whole subtree of one element: an element at the split depth, or a
shallower one that has nothing at that depth below it. Between core units lie *gaps*: the open
and close tags and own text of their ancestors. A gap is cut at its first open tag: what comes
before (close tags, tail text) belongs with the unit before it, the rest (an ancestor's open tag
and the text it starts with) with the unit after it. Units cover every piece exactly once, in
document order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, compress, pairwise
from operator import not_

from webagent.html.clean import CleanPage
from webagent.tokens import ESTIMATE_TOKENS_PER_BYTE

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


class Sizer:
    """Token counts of piece ranges: prefix sums for the default estimate, or a real counter."""

    def __init__(self, page: CleanPage, count_tokens: Callable[[str], int] | None) -> None:
        self.page = page
        self.count_tokens = count_tokens
        self.prefix: list[int] = []
        if count_tokens is None:
            self.prefix = [0, *accumulate(_utf8_sizes(page.pieces))]

    def tokens(self, start: int, stop: int) -> int:
        if self.count_tokens is None:
            size = self.prefix[stop] - self.prefix[start]
            # the same arithmetic as estimate_tokens, on prefix sums of byte sizes
            return -(-size * ESTIMATE_TOKENS_PER_BYTE[0] // ESTIMATE_TOKENS_PER_BYTE[1])
        return self.count_tokens("".join(self.page.pieces[start:stop]))


def _utf8_sizes(pieces: list[str]) -> list[int]:
    """UTF-8 byte length of every piece (C-level loops; only non-ASCII pieces are encoded)."""
    sizes = list(map(len, pieces))
    ascii_flags = list(map(str.isascii, pieces))
    if not all(ascii_flags):
        for i in compress(range(len(pieces)), map(not_, ascii_flags)):
            sizes[i] = len(pieces[i].encode("utf-8"))
    return sizes


def split_units(page: CleanPage, node: int, split_depth: int, sizer: Sizer) -> list[Unit]:
    """Units covering the subtree of ``node``, cut at ``split_depth``."""
    units: list[Unit] = []
    cursor = page.p_open[node]
    index, stop = node, page.end[node]
    depth, height, end = page.depth, page.height, page.end
    while index < stop:
        if depth[index] >= split_depth or height[index] < split_depth:
            start = page.p_open[index]
            if start > cursor:
                units.extend(_gap(page, cursor, start, sizer))
            units.append(_core(page, index, sizer))
            cursor = page.p_end[index]
            index = end[index]
        else:
            index += 1
    if page.p_end[node] > cursor:
        units.extend(_gap(page, cursor, page.p_end[node], sizer))
    return units


def _core(page: CleanPage, node: int, sizer: Sizer) -> Unit:
    start, stop = page.p_open[node], page.p_end[node]
    # text inside a subtree always belongs to a kept element of that subtree
    content = page.kept_before[page.end[node]] > page.kept_before[node]
    tokens = sizer.tokens(start, stop)
    return Unit(start, stop, tokens, node, False, content, page.parent[node])


def _gap(page: CleanPage, start: int, stop: int, sizer: Sizer) -> list[Unit]:
    """The gap's pieces as small units: one per ancestor open tag (with the text that follows
    it; these go with what comes after) and one per run of close tags and tail text (these go
    with what came before)."""
    pieces, owner, p_open = page.pieces, page.owner, page.p_open
    if not any(pieces[start:stop]):
        return []  # only unwrapped elements: nothing to place
    cuts = [start]
    after_close = False
    for piece in range(start + 1, stop):
        text = pieces[piece]
        if not text:
            continue
        opens = p_open[owner[piece]] == piece
        if opens or (after_close and not text.startswith("</")):
            cuts.append(piece)
        after_close = not opens and text.startswith("</")
    cuts.append(stop)
    units = []
    for lo, hi in pairwise(cuts):
        first = next((i for i in range(lo, hi) if pieces[i]), lo)
        forward = p_open[owner[first]] == first and bool(pieces[first])
        units.append(Unit(lo, hi, sizer.tokens(lo, hi), -1, forward, _has_content(page, lo, hi)))
    return units


def _has_content(page: CleanPage, start: int, stop: int) -> bool:
    """A kept element opens, or text lies, in pieces ``[start, stop)``."""
    pieces, owner, p_open = page.pieces, page.owner, page.p_open
    for piece in range(start, stop):
        text = pieces[piece]
        if text and (p_open[owner[piece]] == piece or not text.startswith("</")):
            return True
    return False


def fit_units(page: CleanPage, units: list[Unit], max_tokens: int, sizer: Sizer) -> list[Unit]:
    """Split every core unit over ``max_tokens`` one level deeper, until it fits or cannot."""
    out: list[Unit] = []
    work = units[::-1]
    while work:
        unit = work.pop()
        node = unit.node
        if unit.tokens > max_tokens and node >= 0 and page.height[node] > page.depth[node]:
            work.extend(split_units(page, node, page.depth[node] + 1, sizer)[::-1])
        else:
            out.append(unit)
    return out
