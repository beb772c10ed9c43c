"""The reading view of a fragment: what the gister reads instead of its HTML.

A gist says what a part of the page is and names the controls a task may need, so the gister
needs the part's words and its controls' ids, not its markup. The reading view keeps exactly
that and drops the rest (tag names, wrapper ids):

* each interactive element (link, button, form control, ARIA widget) is marked where it
  starts, ``[ID]`` for a link and ``[ID kind attr="..."]`` for the others, with the
  attributes the compact HTML shows (labels, placeholders, names, values);
* other elements' labelling attributes (``alt``, ``aria-label``, ``title``) are kept as
  words in parentheses; block elements end a line, inline tags leave the text as it runs;
* the text is as the compact HTML has it (``<`` written ``&lt;``).

:func:`numbered_view` writes each mark's id as a short number instead (``[3 button]``), counting
on from a given first number, and returns the page ids the numbers stand for: a page's own ids
(``n4127``, a Mind2Web ``backend_node_id``) are several tokens each, and under tokenizers that
split digits one by one they are about a third of the view. The gister maps the numbers its
model names back to page ids (:func:`webagent.gist.batch.restore_ids`), whether it names them
``id=N`` or copies the view's own marks (``[N]``).

``bench/gist_cost.py`` measures what gisting then reads against the compact HTML. The view
is a rendering of :attr:`Fragment.html` (the compact format of
:func:`webagent.html.rules.open_tag`, where text never holds ``<`` and attribute values never
hold ``"``), so it is a pure function of it; :data:`MARK` finds the marks again.
"""

from __future__ import annotations

import re

from webagent.html.fragment import Fragment

#: one tag of the compact HTML: ``<tag id=ID attr="value" flag>`` or ``</tag>``
_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)((?:\s+[^\s=<>\"]+(?:=\"[^\"]*\"|=[^\s>\"]+)?)*)\s*/?>")
_ATTR = re.compile(r"([^\s=<>\"]+)(?:=\"([^\"]*)\"|=([^\s>\"]+))?")
_LABELS = ("alt", "aria-label", "title", "hint")  # hint: a live page's (rules.LIVE_ATTRS)
# fmt: off
BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
    "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})
# fmt: on
#: an interactive element's mark in a reading view: ``[ID`` then a space or ``]``
MARK = re.compile(r"\[([^\s\]]+)[\s\]]")
_SPACES = re.compile(r"[ \t]+")
_BREAKS = re.compile(r" *\n\s*")


def _marker(tag: str, attrs: list[tuple[str, str | None]], shown_id: str) -> str:
    """``[ID kind attr="v"]`` (a link: ``[ID attr="v"]``)."""
    parts = [shown_id]
    if tag != "a":
        parts.append(tag)
    parts += [key if value is None else f'{key}="{value}"' for key, value in attrs if key != "id"]
    return "[" + " ".join(parts) + "]"


def _attrs(raw: str) -> list[tuple[str, str | None]]:
    return [
        (m.group(1), m.group(2) if m.group(2) is not None else m.group(3))
        for m in _ATTR.finditer(raw)
    ]


def reading_view(fragment: Fragment) -> str:
    """The fragment's words, with its interactive elements marked by id (see module doc)."""
    return _render(fragment, None)[0]


def marked_view(fragment: Fragment) -> tuple[str, list[str]]:
    """:func:`reading_view`, and the ids of the marked elements in page order."""
    return _render(fragment, None)


def numbered_view(fragment: Fragment, first: int = 1) -> tuple[str, list[str]]:
    """:func:`reading_view` with the marks numbered ``first``, ``first + 1``, ... in page
    order, and the ids of the marked elements in that order (number ``first + k`` is
    ``ids[k]``)."""
    return _render(fragment, first)


def _render(fragment: Fragment, first: int | None) -> tuple[str, list[str]]:
    interactive = set(fragment.interactive_ids)
    marked: list[str] = []
    html = fragment.html
    out: list[str] = []
    pos = 0
    for match in _TAG.finditer(html):
        out.append(html[pos : match.start()])
        pos = match.end()
        closing, tag, raw = match.groups()
        if closing:
            out.append("\n" if tag in BLOCK_TAGS else "")
            continue
        attrs = _attrs(raw)
        element_id = next((v for k, v in attrs if k == "id"), None)
        if element_id is not None and element_id in interactive:
            shown = element_id if first is None else str(first + len(marked))
            marked.append(element_id)
            out.append(" " + _marker(tag, attrs, shown) + " ")
            continue
        labels = [v for k, v in attrs if k in _LABELS and v]
        out.append("\n" if tag in BLOCK_TAGS else "")
        if labels:
            out.append(" (" + "; ".join(dict.fromkeys(labels)) + ") ")
    out.append(html[pos:])
    return _BREAKS.sub("\n", _SPACES.sub(" ", "".join(out))).strip(), marked
