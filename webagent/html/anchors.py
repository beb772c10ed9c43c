"""Fragment boundaries that stay put when the page changes a little: local-maximum anchors.

Used when a page is too large for ``max_fragments`` fragments of ``max_fragment_tokens``, so
fragments must grow. Packing the units into evenly sized groups would make every boundary
depend on the token totals from the top of the page: one typed value would move all the
boundaries after it, and the gist cache would miss them all on the next step.

Instead every boundary between two units gets a *rank* read from the page near it: a hash of
the markup on its two sides, with a lean towards boundaries whose two sides meet high in the
tree (between sections rather than between list items). A boundary is cut when its rank is
the highest among all boundaries within ``window`` tokens on either side, so whether it is cut
depends only on the units within ``window`` tokens of it, and a local change moves only the
cuts near it. The window grows in fixed steps (a constant ratio from ``max_fragment_tokens /
2``, never a figure taken from the whole page) until there are at most ``limit`` fragments; a
larger window only removes cuts, so the step chosen changes only when the fragment count
crosses it.
"""

from __future__ import annotations

import zlib
from bisect import bisect_left, bisect_right
from itertools import accumulate, pairwise

from webagent.html.clean import CleanPage
from webagent.html.merge import Group
from webagent.html.paths import common_ancestor
from webagent.html.units import Unit

_GROWTH = 2 ** (1 / 8)  # window steps: eight per doubling
_CONTEXT_CHARS = 48  # markup read on each side of a boundary for its hash
_DEPTH_WEIGHT = 1 << 26  # one level shallower outweighs 1/64 of the hash range


def anchor_groups(page: CleanPage, units: list[Unit], limit: int, base: int) -> list[Group]:
    """At most ``limit`` contiguous groups of ``units``, cut at local-maximum boundaries."""
    candidates = [i for i in range(1, len(units)) if _may_cut(units[i - 1], units[i])]
    if limit <= 1 or not candidates:
        return _join(units, [])
    position = [0, *accumulate(u.tokens for u in units)]
    at = [position[i] for i in candidates]
    ranks = [_rank(page, units[i - 1], units[i]) for i in candidates]
    window = max(1.0, base / 2)
    while True:
        cuts = _local_maxima(at, ranks, window)
        if len(cuts) < limit:
            return _join(units, [candidates[k] for k in cuts])
        window *= _GROWTH


def _local_maxima(at: list[int], ranks: list[int], window: float) -> list[int]:
    """Candidates ranked above every other within ``window`` tokens (the earlier wins a tie)."""
    maxima = []
    for k, (where, rank) in enumerate(zip(at, ranks, strict=True)):
        lo = bisect_right(at, where - window)
        hi = bisect_left(at, where + window)
        if all(ranks[j] < rank or (ranks[j] == rank and j > k) for j in range(lo, hi) if j != k):
            maxima.append(k)
    return maxima


def _may_cut(left: Unit, right: Unit) -> bool:
    """An ancestor's open tag stays with what follows it, a close tag with what precedes it,
    and a unit holding nothing is never a fragment of its own."""
    closing = right.node < 0 and not right.forward
    return left.content and right.content and not left.forward and not closing


def _rank(page: CleanPage, left: Unit, right: Unit) -> int:
    """A hash of the markup on both sides, less a share for the depth of their lowest common
    ancestor: boundaries between sections tend to win over those between list items."""
    a = page.owner[_last_piece(page, left)]
    b = page.owner[_first_piece(page, right)]
    depth = page.depth[common_ancestor(page, a, b)]
    before = "".join(page.pieces[max(left.start, left.stop - 8) : left.stop])[-_CONTEXT_CHARS:]
    after = "".join(page.pieces[right.start : right.start + 8])[:_CONTEXT_CHARS]
    return zlib.crc32(f"{before}\x00{after}".encode()) - depth * _DEPTH_WEIGHT


def _join(units: list[Unit], cuts: list[int]) -> list[Group]:
    groups: list[Group] = []
    bounds = [0, *cuts, len(units)]
    for lo, hi in pairwise(bounds):
        group = Group.of(units[lo])
        for unit in units[lo + 1 : hi]:
            group.absorb(unit)
        groups.append(group)
    return groups


def _first_piece(page: CleanPage, unit: Unit) -> int:
    return next((i for i in range(unit.start, unit.stop) if page.pieces[i]), unit.start)


def _last_piece(page: CleanPage, unit: Unit) -> int:
    pieces = page.pieces
    return next((i for i in range(unit.stop - 1, unit.start - 1, -1) if pieces[i]), unit.start)
