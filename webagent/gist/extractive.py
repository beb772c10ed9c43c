"""Extractive gists: no model; what a fragment says and the controls a task may need, by id.

A gist is built in order of what a task is likely to need, so that cutting it to a token
budget (here or when the memory shares its room out, :func:`webagent.method.memory.fit_memory`)
drops the least useful part first:

1. headings and the first words of the visible text (what the part is about);
2. form controls with the words a person would use for them (label, placeholder,
   aria-label, name, option names), then buttons, then selects;
3. each run of navigation links collapsed into its heading and a count;
4. the links themselves with their text, outside link runs first;
5. controls without any words (nothing tells what they do), by kind and id.

Without ids (``ids=False``, for a look-up that answers with part numbers) a control is named
by its kind and words alone and a control without words is left out; such a gist is cut as
one with ids is.

Items are separated by ``"; "`` so a cut falls between two of them. A gist over its budget
(:func:`cut_gist`) loses prose words before ids: the lead text, link-run headings and control
labels are cut to as few characters as it takes (down to ``MIN_LABEL_CHARS``), and only then are
items dropped from the end, so a tight budget still names as many controls as it can hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from lxml import etree, html

from webagent.gist.base import Gister, Written
from webagent.html.fragment import Fragment
from webagent.model.calls import CallLog
from webagent.tokens import (
    Counting,
    TokenCounter,
    alongside,
    fitting_search,
    round_trips,
    run_counting,
    together,
    truncation,
)

__all__ = [
    "ExtractiveGister",
    "cut_gist",
    "cut_gists",
    "cutting",
    "extractive_gist",
    "label_chars",
    "lead_and_controls",
    "shorten_labels",
]

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w")
#: elements whose content an HTML parser reads as raw text: an unclosed one would swallow the
#: rest of the fragment, so they are read as plain elements (a textarea as a text input)
_RAW_TEXT = re.compile(r"<(/?)(iframe|noscript|title|xmp|noembed|noframes)\b", re.I)
_TEXTAREA = re.compile(r"<textarea\b", re.I)
_FORM = {"input", "textarea", "select"}
_BOXES = {"checkbox", "radio"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6", "legend", "caption", "label", "summary"}
_LIST = {"ul", "ol", "nav", "menu", "dl", "table", "tbody"}
_LABEL_ATTRS = ("aria-label", "placeholder", "title", "alt", "value", "name")
#: of those, the ones written for people (a control's ``value`` and ``name`` come after its
#: <label>)
_HUMAN_ATTRS = _LABEL_ATTRS[:4]
#: a run of at least this many links under one list is summarised as heading + count
LINK_RUN = 4
SEPARATOR = "; "
ELLIPSIS = " …"
#: a gist over its budget keeps this many characters of each label (about two words) before
#: it loses items; labels are cut by characters, not words, so that scripts without spaces
#: between words are cut too
MIN_LABEL_CHARS = 12
#: one rendered control (``kind "label" id=N``) and one link-run summary, as :func:`cut_gist`
#: reads them back to shorten their labels
_CONTROL_ITEM = re.compile(r'^(?P<head>(?P<kind>[\w:-]+ )?")(?P<label>.*)(?P<tail>" id=[^\s;]+)$')
_BARE_ITEM = re.compile(r"^(?:[\w:-]+ )?id=[^\s;]+$")
_RUN_ITEM = re.compile(r'^(?P<head>\d+ links under ")(?P<label>.*)(?P<tail>")$')
#: a control named by its words alone, and a link run without a heading (a gist without ids)
_WORDS_ITEM = re.compile(r'^(?P<head>(?P<kind>[\w:-]+ )?")(?P<label>.*)(?P<tail>")$')
_COUNT_ITEM = re.compile(r"^\d+ links$")


def _words(text: str | None, n: int) -> str:
    parts = _SPACE.sub(" ", text or "").strip().split(" ")
    parts = [p for p in parts if p]
    return " ".join(parts[:n]) + (ELLIPSIS if len(parts) > n else "")


def _attr_label(el: etree._Element, names: tuple[str, ...] = _LABEL_ATTRS) -> str:
    for name in names:
        value = el.get(name)
        if value and value.strip() and not (name == "value" and el.get("type") == "hidden"):
            return value.strip()
    return ""


def _text(el: etree._Element) -> str:
    return _SPACE.sub(" ", "".join(str(t) for t in el.itertext())).strip()


def _is_box(el: etree._Element | None) -> bool:
    return el is not None and el.tag == "input" and el.get("type") in _BOXES


def _nearby_label(el: etree._Element) -> str:
    """The <label> next to a form control (compact HTML keeps no ``for``): a label between two
    controls names the checkbox or radio before it (their label follows them), else the
    control after it; otherwise the label before the control, else around it."""
    following, preceding = el.getnext(), el.getprevious()
    if following is not None and following.tag == "label":
        after = following.getnext()
        if _is_box(el) or after is None or after.tag not in _FORM:
            return _text(following)
    if preceding is not None and preceding.tag == "label" and not _is_box(preceding.getprevious()):
        return _text(preceding)
    parent = el.getparent()
    if parent is not None and parent.tag == "label":
        return _text(parent)
    return ""


@dataclass
class _Control:
    kind: str
    label: str
    element_id: str

    def render(self, words: int = 6, ids: bool = True) -> str:
        """``kind "label" id=N`` (``ids=False``: ``kind "label"``); links leave their kind out
        (most controls are links)."""
        label = _words(self.label, words)
        kind = "" if self.kind == "link" else self.kind + " "
        named = f'{kind}"{label}"' + (f" id={self.element_id}" if ids else "")
        return named if label else f"{kind}id={self.element_id}"


def _form_control(el: etree._Element, element_id: str) -> _Control:
    tag = el.tag
    kind = el.get("type", "text") if tag == "input" else tag
    kind = {"submit": "button", "image": "button", "text": "input"}.get(kind, kind)
    if tag == "input" and kind not in ("button", "checkbox", "radio"):
        kind = f"input:{kind}" if kind != "input" else "input"
    machine = _attr_label(el, _LABEL_ATTRS[len(_HUMAN_ATTRS) :])
    names = [x for x in (_attr_label(el, _HUMAN_ATTRS), _nearby_label(el), machine) if x]
    label = " / ".join(dict.fromkeys(names))
    if tag == "select":
        options = [_text(o) for o in el.iter("option") if _text(o)]
        shown = ", ".join(_words(o, 4) for o in options[:4])
        more = f" +{len(options) - 4}" if len(options) > 4 else ""
        label = f"{label} [{shown}{more}]" if options else label
        return _Control("select", label, element_id)
    return _Control(kind, label, element_id)


def _run_heading(container: etree._Element) -> str:
    label = container.get("aria-label") or ""
    if label:
        return label
    previous = container.getprevious()
    while previous is not None:
        if previous.tag in _HEADINGS or previous.tag in ("strong", "b", "p", "span", "div"):
            text = _text(previous)
            if text:
                return text
        previous = previous.getprevious()
    parent = container.getparent()
    return _run_heading(parent) if parent is not None and parent.tag not in ("div",) else ""


def _covered(el: etree._Element) -> bool:
    """An option inside its select, or a label beside/around a form control: named already."""
    if el.tag == "option":
        return any(a.tag == "select" for a in el.iterancestors())
    if el.tag != "label":
        return False
    if any(c.tag in _FORM for c in el.iterdescendants()):
        return True
    neighbours = (el.getprevious(), el.getnext())
    return any(n is not None and n.tag in _FORM for n in neighbours)


def _container(el: etree._Element) -> etree._Element | None:
    for ancestor in el.iterancestors():
        if ancestor.tag in _LIST:
            return ancestor
    return None


def _text_without(root: etree._Element, parts: list[etree._Element]) -> str:
    """The words of ``root`` outside the ``parts`` (and what they hold), punctuation left
    between them dropped."""
    skip = set(parts)

    def texts(el: etree._Element) -> Iterator[str]:
        if el.text and isinstance(el.tag, str):
            yield el.text
        for child in el:
            if child not in skip:
                yield from texts(child)
            if child.tail:
                yield child.tail

    words = _SPACE.sub(" ", " ".join(texts(root))).strip().split(" ")
    return " ".join(word for word in words if _WORD.search(word))


def _items(fragment: Fragment, words: int, ids: bool = True) -> list[str]:
    try:
        source = _TEXTAREA.sub('<input type="textarea"', _RAW_TEXT.sub(r"<\1span", fragment.html))
        root = html.fragment_fromstring(source, create_parent="div")
    except (etree.ParserError, ValueError):
        return [_words(fragment.text, words)] if fragment.text else []
    interactive = set(fragment.interactive_ids)
    # held while the fragment is read: lxml then makes each element's Python object once
    # (looking up its class) rather than on every walk over it
    elements = list(root.iter())
    headings = [_text(h) for h in root.iter(*_HEADINGS - {"label"}) if _text(h)]
    forms: list[_Control] = []
    buttons: list[_Control] = []
    selects: list[_Control] = []
    links: list[tuple[etree._Element | None, _Control]] = []
    for el in elements:
        element_id = el.get("id")
        if not isinstance(el.tag, str) or element_id is None or element_id not in interactive:
            continue
        if _covered(el):
            continue
        if el.tag in _FORM:
            control = _form_control(el, element_id)
            (selects if control.kind == "select" else forms).append(control)
        elif el.tag == "button" or el.get("role") in ("button", "tab", "switch"):
            buttons.append(_Control("button", _text(el) or _attr_label(el), element_id))
        else:
            label = _text(el) or _attr_label(el)
            links.append(
                (_container(el), _Control(el.tag if el.tag != "a" else "link", label, element_id))
            )
    runs: dict[int, list[_Control]] = {}
    containers: dict[int, etree._Element] = {}
    for container, control in links:
        if container is not None:
            runs.setdefault(id(container), []).append(control)
            containers[id(container)] = container
    # in page order (a set of id()s iterated in memory order: gists changed run to run)
    long_runs = [k for k, v in runs.items() if len(v) >= LINK_RUN]
    lead = " / ".join(dict.fromkeys(_words(h, 6) for h in headings[:2]))
    if not lead:  # the words around the controls: theirs are in their items already
        named = [el for el in elements if el.get("id") in interactive or _covered(el)]
        text = _text_without(root, named) if named else fragment.text
        lead = _words(text, max(words // 3, 3)) if _WORD.search(text or "") else ""
    items = [lead] if lead else []
    unnamed = [c for c in forms + buttons + selects + [c for _, c in links] if not c.label]
    forms, buttons, selects = ([c for c in group if c.label] for group in (forms, buttons, selects))
    links = [(container, c) for container, c in links if c.label]
    items += [c.render(ids=ids) for c in forms + buttons] + [c.render(14, ids) for c in selects]
    for key in long_runs:
        heading = _words(_run_heading(containers[key]), 5)
        items.append(
            f'{len(runs[key])} links under "{heading}"' if heading else f"{len(runs[key])} links"
        )
    in_runs = {id(c) for k in long_runs for c in runs[k]}
    items += [c.render(4, ids) for _, c in links if id(c) not in in_runs]
    items += [c.render(4, ids) for _, c in links if id(c) in in_runs]
    return (items + [c.render() for c in unnamed]) if ids else items


def cut_gist(gist: str, max_tokens: int, count_tokens: TokenCounter) -> str:
    """``gist`` within ``max_tokens``: prose words go before ids, then items, marked with ``…``.

    In a gist that names controls (``kind "label" id=N`` items, as :func:`extractive_gist`
    renders them), the lead text, run headings and labels are first cut to the most
    characters each (the same for all, at least ``MIN_LABEL_CHARS``) at which every item fits
    (:func:`shorten_labels`). What is still too long is cut between two items (else between
    words). A gist that names no control this way (a model's prose) is only cut at its end.
    """
    return cut_gists([(gist, max_tokens)], count_tokens)[0]


def cut_gists(wanted: Sequence[tuple[str, int]], count_tokens: TokenCounter) -> list[str]:
    """:func:`cut_gist` of each ``(gist, max_tokens)``, all searches counted side by side."""
    speculate = round_trips(count_tokens)
    return run_counting(count_tokens, [cutting(g, n, speculate) for g, n in wanted])


def cutting(
    gist: str, max_tokens: int, speculate: bool, line: Callable[[str], str] | None = None
) -> Counting[str]:
    """:func:`cut_gist` as a counting procedure (``speculate``: ask ahead; ``line``: what
    the caller counts next around the cut, asked for alongside each probe when speculating)."""
    shortest = shorten_labels(gist, MIN_LABEL_CHARS)
    whole, *ahead = yield first_counts(gist) if speculate else [gist]
    if whole <= max_tokens:
        return gist
    # the most characters per label at which the whole gist fits
    chars = label_chars(gist)
    known = [(chars, whole), (MIN_LABEL_CHARS, ahead[0])] if ahead else []
    search = fitting_search(
        MIN_LABEL_CHARS - 1,
        chars - 1,
        lambda n: shorten_labels(gist, n),
        max_tokens,
        speculate=speculate,
        known=known,
        size=lambda n: len(shorten_labels(gist, n)),  # the count follows the characters kept
    )
    items: str | None = None
    if speculate:  # the cut between items, needed where no label length fits, counted alongside
        between = _cutting_items(shortest, max_tokens, True, counts=(ahead[0], ahead[1]))
        if line is not None:
            search = alongside(search, line)
            between = alongside(between, lambda head: line(_cut_at_items(shortest, head)))
        low, items = yield from together([search, between])
    else:
        low = yield from search
    if low >= MIN_LABEL_CHARS:  # the search moved up only past lengths that fit
        return shorten_labels(gist, low)
    return items if items is not None else (yield from _cutting_items(shortest, max_tokens, False))


def first_counts(gist: str) -> list[str]:
    """What :func:`cutting` counts first against a remote counter: the gist, its labels at
    their shortest, the ellipsis."""
    return [gist, shorten_labels(gist, MIN_LABEL_CHARS), ELLIPSIS]


def label_chars(gist: str) -> int:
    """The longest label or prose item (in characters) of a gist that names controls, else 0."""
    parts = _item_parts(gist)
    return max(len(label) for _, label, _ in parts) if parts else 0


@lru_cache(maxsize=1 << 15)
def shorten_labels(gist: str, chars: int) -> str:
    """A gist that names controls with every label, run heading and prose item cut to
    ``chars`` characters (ids and kinds kept); any other gist as it is."""
    parts = _item_parts(gist)
    if parts is None:
        return gist
    return SEPARATOR.join(
        head + (_shorter(label, chars) if label else label) + tail for head, label, tail in parts
    )


@lru_cache(maxsize=1 << 12)
def _item_parts(gist: str) -> tuple[tuple[str, str, str], ...] | None:
    """Each item of a gist that names controls as ``_label_parts`` reads it, else None: read
    once per gist, whose labels a search cuts to many lengths."""
    items = gist.split(SEPARATOR)
    by_words = _names_by_words(items)
    if not by_words and not _names_controls(items):
        return None
    return tuple(_label_parts(item, by_words) for item in items)


def _cutting_items(
    gist: str, max_tokens: int, speculate: bool, counts: tuple[int, int] | None = None
) -> Counting[str]:
    """``gist`` cut between items (``counts``: of ``gist`` and ``ELLIPSIS``, where known)."""
    whole, ellipsis = counts or (yield [gist, ELLIPSIS])
    if whole <= max_tokens:
        return gist
    room = max_tokens - ellipsis
    if room <= 0:
        return ""
    head = yield from truncation(gist, room, speculate=speculate, whole=whole)
    return _cut_at_items(gist, head)


def _cut_at_items(gist: str, head: str) -> str:
    """``gist`` cut at the last item (else word) boundary within its prefix ``head``."""
    for boundary in (SEPARATOR, " "):
        at = gist.rfind(boundary, 0, len(head) + len(boundary))  # the head may end an item
        if at > 0:
            kept = gist[:at].rstrip(" ;|")
            return kept if kept.endswith(ELLIPSIS) else kept + ELLIPSIS
    return ""


@lru_cache(maxsize=1 << 12)
def lead_and_controls(gist: str) -> str:
    """The items of a gist up to its last form control, button or select with words (an
    extractive gist names them before its links), or ``""`` if it names none."""
    items = gist.split(SEPARATOR)
    by_words = _names_by_words(items)
    kinds = [n for n, item in enumerate(items) if (m := _control(item, by_words)) and m["kind"]]
    return SEPARATOR.join(items[: kinds[-1] + 1]) if kinds else ""


def _names_controls(items: list[str]) -> bool:
    return any(_CONTROL_ITEM.match(item) or _BARE_ITEM.match(item) for item in items)


def _names_by_words(items: list[str]) -> bool:
    """A gist without ids (``extractive_gist(..., ids=False)``): after its lead, only controls
    named by their words and link runs (the last item perhaps cut, marked ``…``)."""
    rest = items[1:]
    if not rest:
        return False
    rest[-1] = rest[-1].removesuffix(ELLIPSIS)
    named = [_WORDS_ITEM.match(item) is not None for item in rest]
    runs = [bool(_RUN_ITEM.match(item) or _COUNT_ITEM.match(item)) for item in rest]
    return any(named) and all(a or b for a, b in zip(named, runs, strict=True))


def _control(item: str, by_words: bool) -> re.Match[str] | None:
    """A control item: named by id, or (in a gist without ids) by its words."""
    return _CONTROL_ITEM.match(item) or (_WORDS_ITEM.match(item) if by_words else None)


def _label_parts(item: str, by_words: bool = False) -> tuple[str, str, str]:
    """An item as (before its label, the label, after it); prose is all label, a control
    without words has none."""
    if _BARE_ITEM.match(item):
        return item, "", ""
    match = _control(item, by_words) or _RUN_ITEM.match(item)
    if match is None:
        return "", item, ""
    return match["head"], match["label"], match["tail"]


def _shorter(text: str, n: int) -> str:
    """``text`` in at most ``n`` characters (between words where one ends past the middle),
    marked with ``…`` if it was (or now is) cut."""
    marked = text.endswith(ELLIPSIS)
    bare = text[: -len(ELLIPSIS)] if marked else text
    if len(bare) <= n:
        return text
    head = bare[:n]
    space = head.rfind(" ")
    if bare[n] != " " and space >= n // 2:
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def extractive_gist(
    fragment: Fragment,
    words: int,
    max_tokens: int | None = None,
    count_tokens: TokenCounter | None = None,
    ids: bool = True,
) -> str:
    """The fragment's gist: what it is about, then its controls by id (``ids=False``: by
    their words alone; see the module doc)."""
    gist = SEPARATOR.join(_items(fragment, words, ids)) or "(empty)"
    if max_tokens is None or count_tokens is None:
        return gist
    return cut_gist(gist, max_tokens, count_tokens) or "(empty)"


def _source(fragment: Fragment) -> tuple[str, str, tuple[str, ...]]:
    """What an extractive gist is written from."""
    return fragment.html, fragment.text, tuple(fragment.interactive_ids)


class ExtractiveGister(Gister):
    """No model: :func:`extractive_gist` of each fragment (``ids``: controls named by id), cut
    to ``max_tokens`` tokens under the model's own counter (the one every budget uses)."""

    name = "extractive"

    def __init__(self, words: int, max_tokens: int, ids: bool = True) -> None:
        super().__init__(words, max_tokens)
        self.ids = ids
        #: the uncut gists written for ``counted_first``, by what they are written from
        self._drafts: dict[tuple[str, str, tuple[str, ...]], str] = {}

    @property
    def version_tag(self) -> str:
        return "extractive@3" if self.ids else "extractive@3/no-ids"

    def _counted_first(self, fragments: list[Fragment]) -> list[str]:
        """What cutting each gist counts first (``first_counts``); the gists are kept for
        ``_gist_uncached``."""
        self._drafts = {_source(f): extractive_gist(f, self.words, ids=self.ids) for f in fragments}
        return [text for gist in self._drafts.values() for text in first_counts(gist)]

    def _gist_uncached(self, fragments: list[Fragment], log: CallLog) -> list[Written]:
        drafts, self._drafts = self._drafts, {}
        gists = [
            drafts.get(_source(f)) or extractive_gist(f, self.words, ids=self.ids)
            for f in fragments
        ]
        cut = cut_gists([(g, self.max_tokens) for g in gists], log.model.count_tokens)
        return [Written(g or "(empty)") for g in cut]
