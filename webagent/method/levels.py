"""Levels of the page memory: sections of adjacent fragments, for pages too long to gist flat.

ReadAgent shows the gists of all fragments in one look-up prompt. On a page of hundreds of
fragments and a small window, fitting them would cut every gist to nothing. Where the flat
memory cannot show every gist with at least ``floor`` words (``flat_fits``), the page gets
levels: adjacent fragments are grouped into sections by the DOM (cut where neighbours share
the fewest ancestors, ``build_sections``), sections into larger sections until the top level
fits one prompt; each section is gisted from its parts' gists (``webagent.gist.sections``),
and the look-up picks sections first, then the parts inside them (ReadAgent applied again).
Pages whose gists fit are never grouped: they are read exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from webagent.contracts import MemoryEdits
from webagent.gist.extractive import ELLIPSIS
from webagent.html.fragment import Fragment
from webagent.tokens import TokenCounter, count_many

_PATH_SEP = " > "
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"


#: a word: a run of letters or digits (with what sticks to it), or one CJK character
_WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]*[^\W_][^\s{_CJK}]*")


@lru_cache(maxsize=1 << 14)
def gist_words(gist: str) -> int:
    """Words of a gist as a person reads them: punctuation and ``…`` (a cut) are none; each
    Chinese, Japanese or Korean character is one. Remembered: a step asks of the same gists
    once per memory it fits (``flat_fits``)."""
    return len(_WORD.findall(gist))


def cut_words(gist: str, words: int) -> str:
    """The first ``words`` words of ``gist``, ``…`` marking the cut."""
    for n, match in enumerate(_WORD.finditer(gist), start=1):
        if n == words:
            head = gist[: match.end()]
            return head if head.strip() == gist.strip() else head.rstrip() + ELLIPSIS
    return gist


def flat_fits(
    raw: Sequence[str],
    shown: Sequence[str],
    edits: MemoryEdits,
    floor: int,
    indices: Iterable[int] | None = None,
) -> bool:
    """Whether a memory showed every gist (of ``indices``; default all) with at least
    ``floor`` words (or whole, if shorter) and left none out."""
    if edits.gists_displaced:
        return False
    return all(
        gist_words(shown[i]) >= min(floor, gist_words(raw[i]))
        for i in (range(len(raw)) if indices is None else indices)
    )


@dataclass(frozen=True)
class Section:
    """Fragments ``start .. end - 1``; ``children`` are smaller sections, or none when the
    section's parts are the fragments themselves."""

    start: int
    end: int
    children: tuple[Section, ...] = ()

    @property
    def label(self) -> str:
        if self.end - self.start == 1:
            return f"part {self.start + 1}"
        return f"parts {self.start + 1}-{self.end}"


def _effective_paths(fragments: Sequence[Fragment]) -> list[list[str]]:
    """Each fragment's ancestor path; one with no path sits under the path before it."""
    paths: list[list[str]] = []
    last: list[str] = []
    for f in fragments:
        if f.path:
            last = f.path.split(_PATH_SEP)
        paths.append(last)
    return paths


def _shared(a: list[str], b: list[str]) -> int:
    depth = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        depth += 1
    return depth


def build_sections(fragments: Sequence[Fragment], fan_out: int) -> list[Section]:
    """The top level of a tree of sections over ``fragments``: at most ``fan_out`` sections,
    each holding at most ``fan_out`` children (sections or fragments), built bottom-up.
    Each run is cut where adjacent units share the fewest ancestors, among the cuts that
    leave each piece at least half full."""
    fan_out = max(2, fan_out)
    paths = _effective_paths(fragments)
    # depth of the common ancestor of fragments i-1 and i, for every boundary i
    seam = [0] + [_shared(paths[i - 1], paths[i]) for i in range(1, len(fragments))]
    units = [Section(i, i + 1) for i in range(len(fragments))]
    leaves = True
    while len(units) > fan_out or leaves:
        pieces = _chunk([seam[u.start] for u in units], fan_out)
        if leaves:  # the first level holds fragments: its sections have no children
            units = [Section(units[a].start, units[b - 1].end) for a, b in pieces]
            leaves = False
        else:
            units = [
                Section(units[a].start, units[b - 1].end, tuple(units[a:b])) for a, b in pieces
            ]
    return units


def _chunk(seams: Sequence[int], size: int) -> list[tuple[int, int]]:
    """``0 .. len(seams)`` in runs of at most ``size`` (at least half of it, but the last),
    each cut at the lowest seam its window offers (the latest of equals)."""
    n, half = len(seams), max(1, size // 2)
    pieces: list[tuple[int, int]] = []
    a = 0
    while n - a > size:
        window = range(a + half, min(a + size, n - half) + 1)
        cut = min(window, key=lambda i: (seams[i], -i))
        pieces.append((a, cut))
        a = cut
    pieces.append((a, n))
    return pieces


def fan_out(
    fragments: Sequence[Fragment],
    gists: Sequence[str],
    budget_tokens: int,
    *,
    max_open: int,
    floor: int,
    count_tokens: TokenCounter,
) -> int:
    """How many lines a section may hold: the look-up prompt of the parts shows the children
    of up to ``max_open`` sections, each line at ``floor`` words at least (its cost taken at
    the 90th percentile of the page's lines, so that a section of long lines fits too)."""
    lines = [f"[Part {f.index + 1}] (gist) {cut_words(gists[f.index], floor)}" for f in fragments]
    costs = sorted(c + 1 for c in count_many(count_tokens, lines))
    line = costs[min(len(costs) - 1, int(0.9 * len(costs)))] if costs else 1
    return max(2, budget_tokens // (max(1, line) * (max_open + 1)))


def section_line(number: int, section: Section, gist: str) -> str:
    return f"[Section {number}] ({section.label}) {gist}"


def section_text(sections: Sequence[Section], gists: Sequence[str]) -> str:
    """The numbered section lines, no gist cut: what :func:`fit_section_lines` gives where
    they fit."""
    return "\n".join(_section_lines(sections, gists, None))


def _section_lines(sections: Sequence[Section], gists: Sequence[str], cap: int | None) -> list[str]:
    """The numbered section lines, every gist cut to ``cap`` words (None: uncut)."""
    return [
        section_line(n + 1, s, g if cap is None else cut_words(g, cap))
        for n, (s, g) in enumerate(zip(sections, gists, strict=True))
    ]


@dataclass
class FittedLines:
    """Section lines within a budget: the text, and the sections whose gist was cut."""

    text: str
    shortened: list[int] = field(default_factory=list)
    below_floor: bool = False


def fit_section_lines(
    sections: Sequence[Section],
    gists: Sequence[str],
    budget_tokens: int,
    floor: int,
    count_tokens: TokenCounter,
) -> FittedLines:
    """The numbered section lines within ``budget_tokens``: every gist cut to the most words
    (the same cap for all) at which they fit; below ``floor`` only if even that does not fit
    (``below_floor``, an edit the trace records)."""

    def total(lines: list[str]) -> int:
        return sum(count_many(count_tokens, lines)) + len(lines)

    lines = _section_lines(sections, gists, None)
    if total(lines) <= budget_tokens:
        return FittedLines("\n".join(lines))
    low, high = 1, max((gist_words(g) for g in gists), default=1)
    while low < high:  # the largest cap that fits
        middle = (low + high + 1) // 2
        if total(_section_lines(sections, gists, middle)) <= budget_tokens:
            low = middle
        else:
            high = middle - 1
    lines = _section_lines(sections, gists, low)
    while lines and total(lines) > budget_tokens:  # not even one word each: the last go
        lines.pop()
    shortened = [n for n, g in enumerate(gists) if cut_words(g, low) != g]
    return FittedLines("\n".join(lines), shortened, below_floor=low < floor)


def leaf_parts(sections: Sequence[Section]) -> list[int]:
    """The fragments inside ``sections``, in page order."""
    return sorted({i for s in sections for i in range(s.start, s.end)})


def walk(sections: Sequence[Section]) -> list[tuple[int, Section]]:
    """Every section of the tree with its depth (0: the top level), top level first."""
    out: list[tuple[int, Section]] = []
    level: list[Section] = list(sections)
    depth = 0
    while level:
        out += [(depth, s) for s in level]
        level = [c for s in level for c in s.children]
        depth += 1
    return out
