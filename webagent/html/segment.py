"""Page -> fragments: cut the cleaned DOM at a depth, split what is too big, merge what is tiny.

1. :func:`~webagent.html.units.split_units` cuts the page into subtrees at ``settings.depth``
   (plus the ancestor tags and text between them, so nothing is lost).
2. :func:`~webagent.html.units.fit_units` splits every subtree over ``max_fragment_tokens``
   one level deeper, repeatedly; a leaf that is still too big is flagged ``oversized``.
3. Adjacent units are merged greedily in document order when one side is under
   ``min_fragment_tokens`` (or is an ancestor's open/close tag), within the token budget.
4. If there are more than ``max_fragments``, the adjacent pair with the fewest tokens together
   is merged, again and again, while it fits ``max_fragment_tokens``. If that is not enough,
   ``overflow="keep_fragment_count"`` (the default: every gist must fit) re-packs the units into
   ``max_fragments`` groups when that keeps every one within ``max_fragment_tokens``; else
   fragments must grow, and they are cut at boundaries chosen from the page near them
   (:mod:`webagent.html.anchors`: stable across small changes); fragments over budget are
   flagged; ``"keep_fragment_tokens"`` keeps the fragments small and reports the
   excess count. Either way ``fits_budget``/``overflow`` say what did not fit.

Everything is deterministic: same bytes and settings, same fragments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import compress
from typing import NamedTuple

from lxml import etree

from webagent.html.anchors import anchor_groups
from webagent.html.clean import CleanPage, clean_page
from webagent.html.fragment import Fragment, SegmentedPage, SegmentSettings
from webagent.html.merge import Group, merge_small, merge_to_count, pack
from webagent.html.paths import PathNamer
from webagent.html.units import Sizer, Unit, fit_units, split_units
from webagent.tokens import count_many, estimate_tokens, prefetch, round_trips

__all__ = ["SegmentSettings", "segment_html", "segment_page", "segment_tree"]

TokenCounter = Callable[[str], int]
#: what a caller counts next from the fragments (``segment_page``'s ``ahead``)
Ahead = Callable[[Sequence[Fragment]], Sequence[str]]
_TRAILING_CLOSE = re.compile(r"(?:</[a-z0-9:_-]+>)+$")


def segment_html(
    html: str | bytes,
    settings: SegmentSettings,
    count_tokens: TokenCounter | None = None,
    *,
    ahead: Ahead | None = None,
) -> SegmentedPage:
    """Parse, clean and segment a page (raw HTML or Mind2Web ``cleaned_html``)."""
    raw_bytes = len(html) if isinstance(html, bytes) else len(html.encode("utf-8", "replace"))
    page = clean_page(html, keep_wrappers=settings.keep_wrappers)
    return segment_page(page, settings, count_tokens, raw_bytes=raw_bytes, ahead=ahead)


def segment_tree(
    root: etree._Element,
    settings: SegmentSettings,
    count_tokens: TokenCounter | None = None,
) -> SegmentedPage:
    """Segment an already parsed tree (it is read, not modified)."""
    page = clean_page(root, keep_wrappers=settings.keep_wrappers)
    return segment_page(page, settings, count_tokens, raw_bytes=0)


def segment_page(
    page: CleanPage,
    settings: SegmentSettings,
    count_tokens: TokenCounter | None = None,
    raw_bytes: int = 0,
    *,
    ahead: Ahead | None = None,
) -> SegmentedPage:
    """Segment a cleaned page.

    ``ahead``: what the caller will count next from the fragments (it is given them before
    they are counted: ``tokens`` 0, and a fragment over ``max_fragment_tokens`` may yet lose
    its trailing close tags); against a counter that makes round trips those texts are
    counted with the next request (``prefetch``): the fragments' own, where they need one."""
    sizer = Sizer(page, count_tokens)
    units = split_units(page, 0, settings.depth, sizer)
    units = fit_units(page, units, settings.max_fragment_tokens, sizer)
    counter = count_tokens or estimate_tokens
    groups = _group(page, units, settings, counter)
    namer = PathNamer(page)
    whole = page.html()
    kept = _KeptIds(page.element_ids, list(map(page.interactive.__getitem__, page.kept_nodes)))
    htmls = [page.render(g.start, g.stop) for g in groups]
    cap = settings.max_fragment_tokens
    if ahead is not None and round_trips(counter):
        uncounted = [(html, 0) for html in htmls]
        prefetch(counter, ahead(_fragments(page, namer, groups, uncounted, kept=kept, cap=cap)))
    rendered, page_tokens = _rendered_all(htmls, counter, cap, whole)
    fragments = _fragments(page, namer, groups, rendered, kept=kept, cap=cap)
    result = SegmentedPage(
        fragments=fragments,
        element_ids=kept.ids,
        page_tokens=page_tokens,
        raw_bytes=raw_bytes,
        depth=settings.depth,
        settings=settings.model_dump(),
    )
    return _judge(result, settings)


def _group(
    page: CleanPage, units: list[Unit], settings: SegmentSettings, counter: TokenCounter
) -> list[Group]:
    groups = merge_small(units, settings.min_fragment_tokens, settings.max_fragment_tokens)
    limit = settings.max_fragments
    if limit is None or len(groups) <= limit:
        return groups
    groups = merge_to_count(groups, limit, settings.max_fragment_tokens)
    if len(groups) > limit and settings.overflow == "keep_fragment_count":
        packed = pack(units, limit)
        cap = settings.max_fragment_tokens
        single = {(u.start, u.stop) for u in units if u.tokens > cap}
        if all(
            g.tokens <= cap
            or (g.start, g.stop) in single
            or _rendered(page, g, counter, cap)[1] <= cap
            for g in packed
        ):
            return packed  # only indivisible units are over: worth boundaries set page-wide
        return anchor_groups(page, units, limit, settings.max_fragment_tokens)
    return groups


class _KeptIds(NamedTuple):
    """The page's kept elements, in document order: their ids and whether each is
    interactive (a fragment's are a slice of each: ``CleanPage.kept_between``)."""

    ids: list[str]
    interactive: list[bool]


def _fragments(
    page: CleanPage,
    namer: PathNamer,
    groups: list[Group],
    rendered: list[tuple[str, int]],
    *,
    kept: _KeptIds,
    cap: int,
) -> list[Fragment]:
    """The groups' fragments, given each one's html and tokens (``_rendered_all``)."""
    fragments = []
    for index, (group, (html, tokens)) in enumerate(zip(groups, rendered, strict=True)):
        inside = page.kept_between(group.start, group.stop)
        element_ids = kept.ids[inside]
        fragment = Fragment(
            index=index,
            path=namer.path(group.start, group.stop),
            html=html,
            text=page.text(group.start, group.stop),
            element_ids=element_ids,
            interactive_ids=list(compress(element_ids, kept.interactive[inside])),
            tokens=tokens,
            oversized=tokens > cap,
        )
        fragments.append(fragment)
    return fragments


def _rendered(page: CleanPage, group: Group, counter: TokenCounter, cap: int) -> tuple[str, int]:
    """A group's html and its tokens."""
    html = page.render(group.start, group.stop)
    tokens = counter(html)
    if tokens > cap and _TRAILING_CLOSE.search(html):
        # close tags at the very end say nothing: drop them before calling a fragment too big
        html = _TRAILING_CLOSE.sub("", html)
        tokens = counter(html)
    return html, tokens


def _rendered_all(
    htmls: list[str], counter: TokenCounter, cap: int, whole: str
) -> tuple[list[tuple[str, int]], int]:
    """:func:`_rendered` of every group's html, and the tokens of the whole page's html,
    counted together in two ``count_many`` calls at most."""
    htmls = list(htmls)  # the caller's list stays as it was
    *counts, whole_tokens = count_many(counter, [*htmls, whole])
    cut = [
        n
        for n, (html, tokens) in enumerate(zip(htmls, counts, strict=True))
        if tokens > cap and _TRAILING_CLOSE.search(html)
    ]
    shorter = [_TRAILING_CLOSE.sub("", htmls[n]) for n in cut]
    for n, html, tokens in zip(cut, shorter, count_many(counter, shorter), strict=True):
        htmls[n], counts[n] = html, tokens
    return list(zip(htmls, counts, strict=True)), whole_tokens


def _judge(result: SegmentedPage, settings: SegmentSettings) -> SegmentedPage:
    problems = []
    oversized = [f.index for f in result.fragments if f.oversized]
    if oversized:
        problems.append(
            f"{len(oversized)} fragment(s) over max_fragment_tokens="
            f"{settings.max_fragment_tokens} (indices {oversized[:10]})"
        )
    if settings.max_fragments is not None and len(result.fragments) > settings.max_fragments:
        problems.append(
            f"{len(result.fragments)} fragments, more than max_fragments="
            f"{settings.max_fragments} even after merging"
        )
    if problems:
        result.fits_budget = False
        result.overflow = "; ".join(problems)
    return result
