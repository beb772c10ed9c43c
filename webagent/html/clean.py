"""Clean a parsed page and flatten it, in one iterative walk, into a :class:`CleanPage`.

The walk drops junk and invisible subtrees (keeping their tail text), gives every element its
id (``backend_node_id`` when the page has one, else ``n<k>`` with ``k`` its 1-based position
among all elements of the parsed document), decides which elements are kept (see
:mod:`webagent.html.rules`) and renders the page as a flat list of string *pieces*: one open
tag, one close tag, and text runs. A subtree's compact HTML is a contiguous run of pieces,
which is what makes segmentation cheap.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable
from copy import deepcopy
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, islice
from typing import cast

from lxml import etree

from webagent.errors import PageError
from webagent.html import rules
from webagent.html.compiled import speedups
from webagent.html.parse import parse_html


@dataclass(slots=True)
class CleanPage:
    """A cleaned page: per-element arrays (preorder) and the rendered pieces."""

    pieces: list[str] = field(default_factory=list)
    owner: list[int] = field(default_factory=list)  # node whose content each piece is
    tags: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # every node's id, kept or not
    kept: list[bool] = field(default_factory=list)
    interactive: list[bool] = field(default_factory=list)
    attrs: list[dict[str, str]] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)  # node index just past the subtree
    p_open: list[int] = field(default_factory=list)  # piece of the open tag
    p_end: list[int] = field(default_factory=list)  # piece index just past the subtree
    height: list[int] = field(default_factory=list)  # deepest depth inside the subtree
    kept_nodes: list[int] = field(default_factory=list)  # kept node indices, document order
    kept_starts: list[int] = field(default_factory=list)  # their p_open, for bisection
    kept_before: list[int] = field(default_factory=list)  # kept nodes among nodes [0, i)

    @property
    def element_ids(self) -> list[str]:
        return list(map(self.ids.__getitem__, self.kept_nodes))

    @property
    def interactive_ids(self) -> list[str]:
        return [self.ids[i] for i in self.kept_nodes if self.interactive[i]]

    def kept_between(self, start: int, stop: int) -> slice:
        """Where in ``kept_nodes`` (and lists parallel to it, such as ``element_ids``) lie the
        kept nodes whose open tag is in pieces ``[start, stop)``."""
        return slice(bisect_left(self.kept_starts, start), bisect_left(self.kept_starts, stop))

    def render(self, start: int, stop: int) -> str:
        """Compact HTML of pieces ``[start, stop)``; close tags of elements opened before
        ``start`` are left out so the result never starts with a dangling ``</tag>``."""
        pieces = self.pieces[start:stop]
        if start < stop:
            p_open, p_end, parent = self.p_open, self.p_end, self.parent
            node = self.owner[start]
            while node >= 0:
                close = p_end[node] - 1
                if close >= stop:
                    break  # and so for every ancestor above: their close tags come later
                if (
                    p_open[node] < start <= close
                    and self.kept[node]
                    and self.tags[node] not in rules.VOID_TAGS
                ):
                    pieces[close - start] = " "  # keeps the words around it apart
                node = parent[node]
        return "".join(pieces).strip()

    def text(self, start: int, stop: int) -> str:
        """Visible text of pieces ``[start, stop)``: every tag read as a space, whitespace
        collapsed, ``&lt;`` (the one escape in text) undone. Text pieces never start with
        ``<``, tags always do (compiled: ``speedups.visible_text``, the same in one pass)."""
        if speedups is not None:
            return speedups.visible_text(self.pieces, start, stop)  # type: ignore[no-any-return]
        return _visible_text(self.pieces, start, stop)

    def html(self) -> str:
        """The whole cleaned page in compact form."""
        return "".join(self.pieces).strip()


def _visible_text(pieces: list[str], start: int, stop: int) -> str:
    """``CleanPage.text`` in Python (the twin of ``speedups.visible_text``)."""
    joined = "".join([" " if p and p[0] == "<" else p for p in pieces[start:stop]])
    return " ".join(joined.split()).replace("&lt;", "<")


def clean_page(html: bytes | str | etree._Element, keep_wrappers: bool = False) -> CleanPage:
    """Parse (unless given a tree) and clean a page. Raises PageError if nothing is visible."""
    if isinstance(html, etree._Element):
        root = _without_comments(html)
        # parsed pages never hold entity references; a caller's tree may
        page = _walk(root, keep_wrappers, next(root.iter(etree.Entity), None) is not None)
    else:
        page = _walk(parse_html(html), keep_wrappers)
    if not page.kept_nodes:
        raise PageError(
            f"page has no visible content after cleaning ({len(page.tags)} elements, all "
            "scripts, styles, hidden or empty)"
        )
    return page


def with_ids(html: bytes | str) -> str:
    """The page as HTML whose every element carries the id :func:`clean_page` gives it (its
    own ``backend_node_id``, else ``n<k>``), so that a copy of the page rewritten elsewhere
    (rendered in a browser, which drops hidden elements and adds implied ones) keeps them."""
    root = parse_html(html)
    number_elements(root)
    return etree.tostring(root, encoding="unicode", method="html")


def number_elements(root: etree._Element) -> None:
    """Write on every element of a parsed page without a ``backend_node_id`` the id
    :func:`clean_page` gives it, ``n<k>`` (``k`` its place in document order)."""
    for ordinal, el in enumerate(root.iter(), start=1):  # the walk's order and count
        if isinstance(el.tag, str) and not el.get(rules.ID_ATTR):
            el.set(rules.ID_ATTR, f"n{ordinal}")


def _without_comments(root: etree._Element) -> etree._Element:
    """The tree itself, or a copy without comments and processing instructions (the walk
    would lose their tail text); the caller's tree is never modified."""
    if next(root.iter(etree.Comment, etree.ProcessingInstruction), None) is None:
        return root
    copy = deepcopy(root)
    etree.strip_tags(copy, etree.Comment, etree.ProcessingInstruction)
    return copy


def _text_piece(text: str, lead: bool | None) -> str:
    """Collapsed, escaped non-blank text. A leading space when ``lead`` is True, none when it
    is False, and where the page had one when it is None; a trailing space where the page had
    one."""
    clean = " ".join(text.split())
    if "<" in clean:
        clean = clean.replace("<", "&lt;")
    if lead or (lead is None and text[0].isspace()):
        clean = " " + clean
    if text[-1].isspace():
        clean += " "
    return clean


def _after_open(pieces: list[str], open_piece: int) -> bool:
    """Nothing but unwrapped (empty) pieces since ``open_piece``."""
    last = len(pieces) - 1
    while last > open_piece and not pieces[last]:
        last -= 1
    return last == open_piece


def _walk(root: etree._Element, keep_wrappers: bool, entities: bool = False) -> CleanPage:
    """The one pass over the tree: compiled (``speedups.walk``: the same walk over libxml2's
    nodes) where it was built and the tree is one it reads, else :func:`_walk_python`."""
    if speedups is not None and not entities:
        page = CleanPage()
        ordinal = speedups.walk(root, keep_wrappers, page, _RULES, _NUMBERED)
        if ordinal >= 0:
            return _finished(page, ordinal)
    return _walk_python(root, keep_wrappers, entities)


def _finished(page: CleanPage, ordinal: int) -> CleanPage:
    """The page with its kept-node indices, after a walk that read ``ordinal`` elements."""
    kept = page.kept
    page.kept_nodes = list(compress(range(len(kept)), kept))  # C-level loops, both
    page.kept_starts = list(map(page.p_open.__getitem__, page.kept_nodes))
    page.kept_before = [0, *accumulate(kept)]
    if ordinal >= len(_NUMBERED) and len(_NUMBERED) < _NUMBERED_MAX:
        _number(ordinal + 1)
    return page


def _walk_python(  # noqa: PLR0915
    root: etree._Element, keep_wrappers: bool, entities: bool = False
) -> CleanPage:
    """The walk in Python. Hot path: written as a single loop with local names, as method
    calls per element would double its cost (see bench/bench_segment.py).

    The tree is read in document order by ``root.iter()`` (C-level, one turn of the loop per
    element): an element ends when the next one read is not inside it, and a skipped
    subtree is passed over by consuming its nodes from the iterator, their number counted by
    XPath (elements only: ``entities`` says the tree may also hold entity references)."""
    page = CleanPage()
    pieces, owner, tags, ids = page.pieces, page.owner, page.tags, page.ids
    kept, interactive, attrs_of = page.kept, page.interactive, page.attrs
    depth, parent, end, p_open, p_end, height = (
        page.depth,
        page.parent,
        page.end,
        page.p_open,
        page.p_end,
        page.height,
    )
    stack: list[int] = [-1]  # open elements, under a sentinel for "no parent"
    # the open elements themselves, under the root's parent (which never ends)
    open_els: list[etree._Element | None] = [root.getparent()]
    finish = cast(etree._Element, _Finish(open_els[0]))  # read after the last: ends them all
    hidden: set[int] = set()  # elements under visibility: hidden (never the sentinel)
    watched, drop, text_tags, opaque, stop, special = (
        rules.WATCHED_ATTRS,
        rules.DROP_TAGS,
        rules.TEXT_TAGS,
        rules.OPAQUE_TAGS,
        _STOP_TAGS,
        _SPECIAL_TAGS,
    )
    void, id_attr, active_tags = rules.VOID_TAGS, rules.ID_ATTR, rules.INTERACTIVE_TAGS
    open_tag, shown_keys, is_hidden = rules.open_tag, rules.SHOWN_KEYS, rules.is_hidden
    hiding, activating, keeping = rules.HIDING_KEYS, rules.ACTIVE_KEYS, rules.KEEPING_ATTRS
    no_attrs: dict[str, str] = {}
    closing: dict[str, str] = {}  # "</tag>" made once per tag: one string shared, not one each
    numbered = _NUMBERED  # "n<k>" made once per process: the f-string costs 5 % of the walk
    known = len(numbered)
    ordinal = 0
    nodes = root.iter()
    consume: Callable[[Iterable[object]], None] = deque[object](maxlen=0).extend  # in C
    for el in chain(nodes, (finish,)):
        up_el = el.getparent()
        while open_els[-1] is not up_el:  # the open elements that el is not inside end here
            done = open_els.pop()
            index = stack.pop()
            if kept[index]:  # interactive, salient or (set below) with own text
                tag = tags[index]
                attrs = attrs_of[index]
                pieces[p_open[index]] = (
                    open_tag(tag, ids[index], attrs)
                    if attrs and not shown_keys.isdisjoint(attrs)
                    else f"<{tag} id={ids[index]}>"
                )
                if tag not in void:
                    close = closing.get(tag)
                    if close is None:
                        close = closing[tag] = f"</{tag}>"
                    pieces.append(close)
                    owner.append(index)
                separate = False
            else:
                separate = True
            end[index] = len(tags)
            p_end[index] = len(pieces)
            up = stack[-1]
            if up >= 0 and height[index] > height[up]:
                height[up] = height[index]
            tail = done.tail  # type: ignore[union-attr]  # the sentinel is never ended
            if tail and up >= 0 and up not in hidden and not tail.isspace():
                # the tail of an element that left no tag behind needs a separator of its own
                lead = (not _after_open(pieces, p_open[up])) if separate else None
                pieces.append(_text_piece(tail, lead))
                owner.append(up)
                kept[up] = True
        if el is finish:
            break
        ordinal += 1
        tag = el.tag
        # three in four elements carry attributes, one in four a watched one
        keys = el.keys()
        if watched.isdisjoint(keys):
            attrs = no_attrs
        else:
            # a key's value is never None; the type is quoted, as cast() would otherwise
            # build a Callable[...] alias for every element with attributes (9 % of the walk)
            get = cast("Callable[[str], str]", el.get)
            attrs = {k: get(k) for k in keys if k in watched}
        up = stack[-1]
        visible = up not in hidden
        if attrs and "style" in attrs:
            own = rules.visibility(attrs)
            visible = visible if own is None else own
        if (
            (
                tag in special
                and tag in stop
                and (tag in drop or up >= 0 or not isinstance(tag, str))
            )
            or (attrs and not hiding.isdisjoint(attrs) and is_hidden(tag, attrs))
            or (not visible and not _may_show(el))
        ):
            if tag in text_tags and up >= 0 and visible and not (attrs and is_hidden(tag, attrs)):
                _mind2web_text(page, up, el.text)
            if len(el):
                inside = _descendants(el)
                ordinal += inside
                consume(islice(nodes, _nodes_inside(el) if entities else inside))
            tail = el.tail  # it ends here, leaving no tag behind
            if tail and up >= 0 and up not in hidden and not tail.isspace():
                pieces.append(_text_piece(tail, not _after_open(pieces, p_open[up])))
                owner.append(up)
                kept[up] = True
            continue
        index = len(tags)
        tags.append(tag)
        if not attrs:
            ids.append(numbered[ordinal] if ordinal < known else f"n{ordinal}")
            active = visible and tag in active_tags
            kept.append(active or (visible and keep_wrappers))
        else:
            ids.append(
                attrs.get(id_attr) or (numbered[ordinal] if ordinal < known else f"n{ordinal}")
            )
            if not visible:  # visibility: hidden, with a descendant that may be visible again
                active = False
                kept.append(False)
            else:
                active = tag in active_tags or (
                    not activating.isdisjoint(attrs) and rules.is_interactive(tag, attrs)
                )
                kept.append(
                    active
                    or keep_wrappers
                    or (not keeping.isdisjoint(attrs) and rules.has_keeping_attr(attrs))
                )
        if not visible:
            hidden.add(index)
        interactive.append(active)
        attrs_of.append(attrs)
        level = len(stack) - 1
        depth.append(level)
        height.append(level)
        parent.append(up)
        end.append(0)
        p_open.append(len(pieces))
        p_end.append(0)
        pieces.append("")
        owner.append(index)
        stack.append(index)
        open_els.append(el)
        if tag in special and tag in opaque:
            if len(el):
                inside = _descendants(el)
                ordinal += inside
                consume(islice(nodes, _nodes_inside(el) if entities else inside))
            continue
        text = el.text
        if text and visible and not text.isspace():
            clean = " ".join(text.split())  # _text_piece(text, lead=False), inlined
            if "<" in clean:
                clean = clean.replace("<", "&lt;")
            pieces.append(clean + " " if text[-1].isspace() else clean)
            owner.append(index)
            kept[index] = True
    return _finished(page, ordinal)


class _Finish:
    """Read by the walk after the last element: its parent is the walked root's parent, so
    every element still open ends before it."""

    __slots__ = ("_parent",)

    def __init__(self, parent: etree._Element | None) -> None:
        self._parent = parent

    def getparent(self) -> etree._Element | None:
        return self._parent


_NUMBERED_MAX = 1 << 16  # ~4 MB of strings at most
_NUMBERED: list[str] = []  # _NUMBERED[k] == f"n{k}", for the k seen so far


def _number(count: int) -> None:
    """Make ``_NUMBERED`` hold the ids of the first ``count`` ordinals (up to the cap); the
    list is replaced, never changed, so a walk in another thread keeps a consistent one."""
    global _NUMBERED  # noqa: PLW0603
    _NUMBERED = [f"n{k}" for k in range(min(max(count, 2 * len(_NUMBERED)), _NUMBERED_MAX))]


# tags that stop the walk at an element: junk, Mind2Web's <text> (below the root) and the
# tags lxml gives comments, processing instructions and entities (not strings)
_STOP_TAGS = rules.DROP_TAGS | rules.TEXT_TAGS | {etree.Comment, etree.PI, etree.Entity}
# the tags that take a second look: those that stop the walk and those it does not enter
_SPECIAL_TAGS = _STOP_TAGS | rules.OPAQUE_TAGS


_COUNT_DESCENDANTS = etree.XPath("count(descendant::*)")  # compiled once: el.xpath is 100x slower


def _descendants(el: etree._Element) -> int:
    """How many elements lie inside ``el`` (C-level, for the ids of a skipped subtree)."""
    return int(cast(float, _COUNT_DESCENDANTS(el)))  # XPath count() is a number


def _nodes_inside(el: etree._Element) -> int:
    """How many nodes ``el.iter()`` reads inside ``el``: its elements and entity references
    (which XPath does not see)."""
    return sum(1 for _ in el.iter()) - 1


# a descendant whose inline style names visibility (the only way back from visibility: hidden)
_may_show = etree.XPath(
    "boolean(descendant::*[contains(translate(@style, 'VISBLTY', 'visblty'), 'visibility')])"
)


def _mind2web_text(page: CleanPage, up: int, text: str | None) -> None:
    """Mind2Web's ``<text>`` node: its text is the own text of its parent element ``up``."""
    if text and not text.isspace():
        page.pieces.append(_text_piece(text, not _after_open(page.pieces, page.p_open[up])))
        page.owner.append(up)
        page.kept[up] = True


# what the compiled walk reads from this module and rules.py, in the order it unpacks them
_RULES = (
    rules.WATCHED_ATTRS,
    rules.DROP_TAGS,
    rules.TEXT_TAGS,
    rules.OPAQUE_TAGS,
    _STOP_TAGS,
    _SPECIAL_TAGS,
    rules.VOID_TAGS,
    rules.ID_ATTR,
    rules.INTERACTIVE_TAGS,
    rules.open_tag,
    rules.SHOWN_KEYS,
    rules.is_hidden,
    rules.HIDING_KEYS,
    rules.ACTIVE_KEYS,
    rules.KEEPING_ATTRS,
    rules.visibility,
    rules.is_interactive,
    rules.has_keeping_attr,
    _text_piece,
    _after_open,
    _mind2web_text,
)
