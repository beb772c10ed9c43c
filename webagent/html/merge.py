"""Units -> groups (future fragments): merge tiny neighbours, then honour a fragment count.

* :func:`merge_small`: greedy, in document order. A unit joins the group before it when the
  two fit ``max_tokens`` together and one of them is under ``min_tokens`` and they are
  siblings (or one is an ancestor's open/close tag; a unit holding nothing always joins).
  A second pass then merges the tiny groups left with their neighbours, siblings or not.
* :func:`merge_to_count`: while there are more than ``limit`` groups, merge the adjacent pair
  with the fewest tokens together, as long as the pair fits ``cap`` (a heap; O(n log n)).
* :func:`pack`: the fewest-largest split of units into at most ``limit`` contiguous groups
  (binary search on the largest group size; each probe is one greedy pass). Used only when
  the count can still be met within ``max_tokens`` this way; it depends on the whole page, so
  when fragments must grow past ``max_tokens`` anyway, :mod:`webagent.html.anchors` regroups
  the units instead, at boundaries that stay put across small changes.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from webagent.html.compiled import speedups
from webagent.html.units import ANY_PARENT, Unit


@dataclass(slots=True)
class Group:
    start: int  # first piece
    stop: int  # piece just past the group
    tokens: int
    forward: bool  # ends with an ancestor's open tag
    content: bool
    parent: int  # parent element of its subtrees (ANY_PARENT while it holds only gaps)

    @classmethod
    def of(cls, unit: Unit) -> Group:
        return cls(unit.start, unit.stop, unit.tokens, unit.forward, unit.content, unit.parent)

    def absorb(self, unit: Unit | Group) -> None:
        self.stop = unit.stop
        self.tokens += unit.tokens
        self.forward = unit.forward
        self.content = self.content or unit.content
        if self.parent == ANY_PARENT:
            self.parent = unit.parent


def merge_small(units: list[Unit], min_tokens: int, max_tokens: int) -> list[Group]:
    """Tiny siblings first, then whatever tiny groups remain with their neighbours."""
    groups: list[Group]
    if speedups is not None:
        groups = speedups.merge_siblings(units, min_tokens, max_tokens, Group, ANY_PARENT)
    else:
        groups = _merge_siblings(units, min_tokens, max_tokens)
    return _merge_tiny(groups, min_tokens, max_tokens)


def _merge_siblings(units: list[Unit], min_tokens: int, max_tokens: int) -> list[Group]:
    """Each unit joined to the group before it where the rules allow (the module's first
    pass; compiled where built: ``speedups.merge_siblings``)."""
    groups: list[Group] = []
    for unit in units:
        if groups:
            last = groups[-1]
            # an ancestor's open tag goes with what follows; its close tag with what precedes
            attach = last.forward or (unit.node < 0 and not unit.forward)
            siblings = ANY_PARENT in (last.parent, unit.parent) or last.parent == unit.parent
            tiny = last.tokens < min_tokens or unit.tokens < min_tokens
            if (
                not unit.content
                or not last.content
                or ((attach or (tiny and siblings)) and last.tokens + unit.tokens <= max_tokens)
            ):
                last.absorb(unit)
                continue
        groups.append(Group.of(unit))
    return groups


def _merge_tiny(groups: list[Group], min_tokens: int, max_tokens: int) -> list[Group]:
    merged: list[Group] = []
    for group in groups:
        if merged:
            last = merged[-1]
            tiny = last.tokens < min_tokens or group.tokens < min_tokens
            if tiny and last.tokens + group.tokens <= max_tokens:
                last.absorb(group)
                continue
        merged.append(group)
    return merged


def merge_to_count(groups: list[Group], limit: int, cap: int | None) -> list[Group]:
    """Merge the adjacent pair with the fewest tokens together until at most ``limit`` groups
    remain or no pair fits ``cap`` (None: no cap)."""
    size = len(groups)
    alive = [True] * size
    nxt = list(range(1, size + 1))
    prv = list(range(-1, size - 1))
    version = [0] * size
    heap = [(groups[i].tokens + groups[i + 1].tokens, i, 0, 0) for i in range(size - 1)]
    heapq.heapify(heap)
    count = size
    while count > limit and heap:
        total, left, v_left, v_right = heapq.heappop(heap)
        right = nxt[left]
        if not alive[left] or right >= size or (version[left], version[right]) != (v_left, v_right):
            continue  # stale pair
        if cap is not None and total > cap:
            break
        groups[left].absorb(groups[right])
        alive[right] = False
        nxt[left] = nxt[right]
        if nxt[left] < size:
            prv[nxt[left]] = left
        version[left] += 1
        count -= 1
        for a in (prv[left], left):
            b = nxt[a] if a >= 0 else size
            if a >= 0 and b < size:
                heapq.heappush(
                    heap, (groups[a].tokens + groups[b].tokens, a, version[a], version[b])
                )
    return [g for g, keep in zip(groups, alive, strict=True) if keep]


def pack(units: list[Unit], limit: int) -> list[Group]:
    """At most ``limit`` contiguous groups whose largest is as small as possible."""
    low = max((u.tokens for u in units), default=0)
    high = max(low, sum(u.tokens for u in units))
    while low < high:
        middle = (low + high) // 2
        if len(_greedy(units, middle)) <= limit:
            high = middle
        else:
            low = middle + 1
    return _greedy(units, low)


def _greedy(units: list[Unit], cap: int) -> list[Group]:
    groups: list[Group] = []
    for unit in units:
        if groups and (
            groups[-1].tokens + unit.tokens <= cap or not unit.content or not groups[-1].content
        ):
            groups[-1].absorb(unit)
        else:
            groups.append(Group.of(unit))
    return groups
