"""A short ancestor path for a fragment, e.g. ``body > div#main > form[name=search]``."""

from __future__ import annotations

from webagent.html.clean import CleanPage
from webagent.html.compiled import speedups

# fmt: off
_LANDMARKS = frozenset({
    "body", "header", "nav", "main", "footer", "aside", "form", "section", "article", "table",
    "ul", "ol", "dl", "dialog", "fieldset", "menu", "select",
})
# fmt: on
_MAX_STEPS = 4
_MAX_NAME = 30


class PathNamer:
    """Short ancestor paths of fragments of one page; each element is described once."""

    def __init__(self, page: CleanPage) -> None:
        self.page = page
        self._chains: dict[int, tuple[str, ...]] = {-1: ()}

    def path(self, start: int, stop: int) -> str:
        """Path to the lowest element holding pieces ``[start, stop)``; that element itself is
        left out when the fragment shows its tag (it is kept and held whole)."""
        shown = self._chain(holder(self.page, start, stop))
        if len(shown) > _MAX_STEPS:
            shown = (shown[0], "…", *shown[-(_MAX_STEPS - 1) :])
        return " > ".join(shown)

    def _chain(self, node: int) -> tuple[str, ...]:
        """Landmarks and page-named elements from the root down to ``node``, inclusive."""
        chains, page = self._chains, self.page
        missing = []
        while node not in chains:
            missing.append(node)
            node = page.parent[node]
        chain = chains[node]
        for step in reversed(missing):
            text = describe(page, step)
            # landmarks, and any element the page names (#id, role, name, aria-label)
            if page.tags[step] in _LANDMARKS or text != page.tags[step]:
                chain = (*chain, text)
            chains[step] = chain
        return chain


def describe(page: CleanPage, node: int) -> str:
    """``tag``, plus ``#id`` and one of ``[role=…]``, ``[name=…]``, ``[aria-label=…]``."""
    attrs = page.attrs[node]
    out = page.tags[node]
    html_id = attrs.get("id", "").strip()
    if html_id and len(html_id) <= _MAX_NAME and " " not in html_id:
        out += f"#{html_id}"
    for key in ("role", "name", "aria-label", "aria_label"):
        raw = attrs.get(key)
        value = " ".join(raw.split()) if raw else ""
        if value:
            out += f"[{key.replace('_', '-')}={value[:_MAX_NAME]}]"
            break
    return out


def holder(page: CleanPage, start: int, stop: int) -> int:
    """The element a path to pieces ``[start, stop)`` (not empty) ends at: the lowest one
    holding them, or its parent when the pieces show its own tag (it is kept and held whole);
    compiled where built (``speedups.holder``)."""
    if speedups is not None:
        return speedups.holder(page, start, stop)  # type: ignore[no-any-return]
    return _holder_python(page, start, stop)


def _holder_python(page: CleanPage, start: int, stop: int) -> int:
    pieces = page.pieces
    if not 0 <= start < stop <= len(pieces):
        raise ValueError(f"no pieces [{start}, {stop}) of {len(pieces)}")
    # the first and last pieces that are not unwrapped placeholders (most often the ends)
    first, last = start, stop - 1
    if not pieces[first]:
        first = next((i for i in range(start, stop) if pieces[i]), start)
    if not pieces[last]:
        last = next((i for i in range(stop - 1, start - 1, -1) if pieces[i]), stop - 1)
    node = common_ancestor(page, page.owner[first], page.owner[last])
    if page.kept[node] and page.p_open[node] >= start and page.p_end[node] <= stop:
        node = page.parent[node]  # the fragment shows this element's own tag
    return node


def common_ancestor(page: CleanPage, a: int, b: int) -> int:
    """The lowest element holding both nodes ``a`` and ``b``."""
    depth, parent = page.depth, page.parent
    while depth[a] > depth[b]:
        a = parent[a]
    while depth[b] > depth[a]:
        b = parent[b]
    while a != b:
        a, b = parent[a], parent[b]
    return a
