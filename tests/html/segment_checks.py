"""Invariants every segmentation must satisfy, checked against an independent reading of the
parsed tree (not the segmenter's own bookkeeping)."""

from __future__ import annotations

import re

from lxml import etree

from webagent.html import rules
from webagent.html.clean import CleanPage
from webagent.html.fragment import Fragment, SegmentedPage, SegmentSettings
from webagent.tokens import estimate_tokens

SHOWN_ID = re.compile(r"<[a-z][a-z0-9:_-]* id=([^ >]+)")
INTERACTIVE_XPATH = "//a | //button | //input | //select | //textarea | //option | //label"


def ids_shown(html: str) -> list[str]:
    return SHOWN_ID.findall(html)


def visible_interactive_ids(root: etree._Element) -> list[str]:
    """Ids (``backend_node_id`` or ``n<k>``) of interactive elements outside dropped/hidden
    subtrees, computed straight from the parsed tree."""
    order = {el: k for k, el in enumerate(root.iter(etree.Element), start=1)}
    found = []
    for el in root.xpath(INTERACTIVE_XPATH):
        if _dropped(el):
            continue
        found.append(el.get(rules.ID_ATTR) or f"n{order[el]}")
    return found


def _dropped(el: etree._Element) -> bool:
    """Inside a dropped subtree, or invisible by inherited CSS visibility (the nearest element
    up the tree whose style sets visibility decides)."""
    node: etree._Element | None = el
    visible: bool | None = None
    while node is not None:
        attrs = {k: v for k, v in node.attrib.items() if k in rules.WATCHED_ATTRS}
        if node.tag in rules.DROP_TAGS or rules.is_hidden(node.tag, attrs):
            return True
        if visible is None:
            visible = rules.visibility(attrs)
            if visible is False:
                return True
        parent = node.getparent()
        if parent is not None and parent.tag in rules.OPAQUE_TAGS:
            return True
        node = parent
    return False


def check_segmentation(
    page: CleanPage | None,
    result: SegmentedPage,
    settings: SegmentSettings,
    root: etree._Element | None = None,
) -> None:
    """Every kept element in exactly one fragment, in document order, shown exactly once;
    budgets kept or flagged; nothing of the text lost."""
    flat = [i for f in result.fragments for i in f.element_ids]
    assert flat == result.element_ids, "fragments do not partition the page's ids in order"
    assert len(set(flat)) == len(flat), "an id is in two fragments"
    for index, fragment in enumerate(result.fragments):
        assert fragment.index == index
        assert ids_shown(fragment.html) == fragment.element_ids, f"fragment {index} ids"
        assert set(fragment.interactive_ids) <= set(fragment.element_ids)
        assert fragment.html.strip(), f"fragment {index} is empty"
        assert fragment.oversized == (fragment.tokens > settings.max_fragment_tokens)
    if settings.max_fragments is None or result.fits_budget:
        for fragment in result.fragments:
            if fragment.oversized:
                assert page is not None
                assert indivisible(page, fragment, settings), fragment.index
    if result.fits_budget and settings.max_fragments is not None:
        assert len(result.fragments) <= settings.max_fragments
    if root is not None:
        interactive = visible_interactive_ids(root)
        fragment_of = {i: f.index for f in result.fragments for i in f.interactive_ids}
        missing = [i for i in interactive if i not in fragment_of]
        assert not missing, f"interactive elements in no fragment: {missing[:10]}"
        positions = [fragment_of[i] for i in interactive]
        assert positions == sorted(positions), "interactive elements out of document order"
    if page is not None:
        words = " ".join(f.text for f in result.fragments).split()
        assert words == _text_of(page.html()).split(), "text lost, duplicated or run together"


def indivisible(page: CleanPage, fragment: Fragment, settings: SegmentSettings) -> bool:
    """An oversized fragment must hold one thing that alone is over budget and cannot be
    split: a leaf element, one element's own tag plus its own text, or a run of one element's
    own text (no tag at all)."""
    if "<" not in fragment.html:
        return True
    index = {page.ids[n]: n for n in page.kept_nodes}
    half = settings.max_fragment_tokens // 2
    for element_id in fragment.element_ids:
        node = index[element_id]
        start, stop = page.p_open[node], page.p_end[node]
        if (
            page.height[node] == page.depth[node]
            and estimate_tokens(page.render(start, stop)) > half
        ):
            return True
        own = [page.pieces[i] for i in range(start, stop) if page.owner[i] == node]
        if estimate_tokens("".join(own)) > half:
            return True
    return False


def _text_of(html: str) -> str:
    return re.sub(r'<(?:[^>"]|"[^"]*")*>', " ", html).replace("&lt;", "<")
