"""Turn a CDP ``DOMSnapshot.captureSnapshot`` into HTML whose elements carry their ids.

Pure: no browser here, so it is tested on recorded snapshots too. The snapshot holds the
flattened (composed) tree of every same-process document — iframes as separate documents,
open shadow roots inline — with layout bounds and computed styles. What is kept:

* an element with a box of non-zero size whose ``visibility`` is visible;
* an element without such a box (``display: contents``, zero-size floats container,
  ``visibility: hidden`` parent) only when something inside it is kept;
* the options of a kept ``<select>`` (they have no box of their own);
* never: ``display: none`` subtrees, what a zero-size ``overflow: hidden`` box clips,
  scripts, styles, ``<head>``, pseudo-elements, closed shadow roots, SVG internals.

Every kept element carries ``backend_node_id`` (the CDP ``backendNodeId``) and its live
state: an input's current value (``value`` and Mind2Web's ``input_value``), ``checked``,
and an option's ``selected``. Password values are masked; secret values are redacted;
``style`` and event-handler attributes are dropped, except ``onclick`` (which marks a
clickable element for the cleaner). A page's own ``backend_node_id`` attributes are replaced
by the real ids, so a page cannot spoof them. An iframe becomes ``<div iframe="...">``
around its document's body, since HTML parsers read an iframe's children as text.

``ids="page"`` is for a saved page rendered offline (:mod:`live_runner.render`), whose
elements already carry the ids the rest of the toolkit knows them by: each kept element keeps
its own ``backend_node_id`` attribute instead (and ``elements`` is keyed by it), an element
without one (one the browser made, such as an implied ``<tbody>``) is left out with its
content kept in its place, and frames' documents are not read (a saved page's frames are not
part of it). Never use it on a live page: there the page's attributes are not to be trusted.

On a live page (``ids="cdp"``, BrowserGym's snapshot too) what the browser drew and its
words do not say is added as attributes (:mod:`live_runner.live_marks`: ``onclick`` on
elements with click listeners, ``hint`` words for controls without text, a shape's or
swatch's ``color``, a shape's ``at`` and ``size``), and an SVG drawing is rendered with its
shapes (``<drawing>``, ``<svg-circle>``...). A saved page (``ids="page"``) gets none of it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from live_runner import live_marks
from live_runner.snapshot_doc import SnapshotDoc, parse_documents

#: computed styles requested from CDP, in this order
_SKIP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "head", "meta", "link", "title", "base"}
)
_VOID = frozenset(
    {"input", "img", "br", "hr", "area", "col", "embed", "source", "track", "wbr", "param"}
)
ID_ATTR = "backend_node_id"
_STATE_ATTRS = frozenset({"value", "checked", "selected", ID_ATTR})
_CONTROLS = frozenset({"input", "select", "textarea", "button", "meter", "progress"})
_ATTR_NAME = re.compile(r"^[a-zA-Z_][-a-zA-Z0-9_.]*$")
_TAG_NAME = re.compile(r"^[a-z][-a-z0-9]*$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MAX_ATTR_CHARS = 300
_MAX_LABEL_TEXT = 120
_MAX_DEPTH = 400
#: the attributes ElementInfo keeps: what names an element, and what an action must know
_INFO_ATTRS = frozenset(
    {"role", "type", "aria-label", "placeholder", "name", "value", "title", "alt"}
    | {"readonly", "disabled", "multiple", "contenteditable", live_marks.PREFIX + "hint"}
)
PASSWORD_MASK = "********"


class ElementInfo(BaseModel):
    """Where a kept element lives and how an action line names it."""

    backend_node_id: int
    tag: str
    frame_id: str
    frame_url: str
    in_shadow: bool = False
    bounds: tuple[float, float, float, float] | None = Field(
        default=None, description="x, y, width, height in its frame's document"
    )
    text: str = Field(default="", description="visible text inside, shortened")
    label: str = Field(default="", description="a form control's <label> text")
    attributes: dict[str, str] = Field(default_factory=dict)


_PENDING = ElementInfo(backend_node_id=0, tag="", frame_id="", frame_url="")


class FrameInfo(BaseModel):
    frame_id: str
    url: str
    iframe_element_id: int | None = None


class SnapshotPage(BaseModel):
    html: str
    title: str
    elements: dict[str, ElementInfo]
    frames: list[FrameInfo]


Redact = Callable[[str], str]
#: whose ids the HTML carries: the browser's (CDP ``backendNodeId``) or the page's own attributes
IdSource = Literal["cdp", "page"]


@dataclass
class _Out:
    """One rendered node: its HTML and its visible text (for labels)."""

    html: str
    text: str
    kept: bool


@dataclass
class _Builder:
    docs: list[SnapshotDoc]
    redact: Redact
    ids: IdSource = "cdp"
    elements: dict[str, ElementInfo] = field(default_factory=dict)
    frames: list[FrameInfo] = field(default_factory=list)
    open_labels: list[str] = field(default_factory=list)
    wrapped: dict[str, str] = field(default_factory=dict)  # control key -> label key
    label_for: dict[tuple[int, str], str] = field(default_factory=dict)  # (doc, id) -> label
    control_ids: dict[tuple[int, str], str] = field(default_factory=dict)  # (doc, id) -> key
    drawings: list[live_marks.Box] = field(default_factory=list)  # open SVG drawings' boxes

    @property
    def live(self) -> bool:
        """A live page: its marks are added (a saved page's rendering stays as it was)."""
        return self.ids == "cdp"

    def key(self, doc: SnapshotDoc, node: int) -> str | None:
        """The id an element is shown with; None for one the saved page did not have."""
        if self.ids == "cdp":
            return str(doc.backend_ids[node])
        return next((v for k, v in doc.attrs[node] if k.lower() == ID_ATTR and v), None)

    def frame_doc(self, doc: SnapshotDoc, node: int) -> int | None:
        """The document of an iframe element (live pages only)."""
        return doc.content_doc.get(node) if self.ids == "cdp" else None

    def attach_labels(self) -> None:
        """Give each form control the text of its ``<label>`` (wrapping or ``for=``)."""
        pairs = list(self.wrapped.items()) + [
            (control, self.label_for[ref])
            for ref, control in self.control_ids.items()
            if ref in self.label_for
        ]
        for control, label in pairs:
            if control in self.elements and label in self.elements:
                self.elements[control].label = self.elements[label].text


def snapshot_to_page(
    raw: dict[str, Any], redact: Redact | None = None, ids: IdSource = "cdp"
) -> SnapshotPage:
    """HTML with ids, plus per-id element info, from a raw ``captureSnapshot`` result.
    ``ids="page"`` keeps a saved page's own ``backend_node_id`` attributes (module doc)."""
    strings: list[str] = raw["strings"]
    docs = parse_documents(raw)
    if not docs:
        return SnapshotPage(html="", title="", elements={}, frames=[])
    builder = _Builder(docs, redact or (lambda s: s), ids)
    builder.frames.append(FrameInfo(frame_id=docs[0].frame_id, url=docs[0].url))
    title = strings[raw["documents"][0]["title"]] if raw["documents"][0]["title"] >= 0 else ""
    out = _render_doc(builder, docs[0], depth=0)
    builder.attach_labels()
    return SnapshotPage(
        html=out.html,
        title=builder.redact(title),
        elements=builder.elements,
        frames=builder.frames,
    )


def _render_doc(b: _Builder, doc: SnapshotDoc, depth: int) -> _Out:
    root = doc.root_element("html")
    if root is None:
        return _Out("", "", kept=False)
    return _render_element(b, doc, root, depth=depth, force=True)


def _render_node(b: _Builder, doc: SnapshotDoc, node: int, depth: int, in_select: bool) -> _Out:
    kind = doc.types[node]
    if kind == 3:
        return _render_text(b, doc, node, in_select)
    if kind != 1 or node in doc.pseudo or doc.names[node].startswith("::"):
        return _Out("", "", kept=False)
    if doc.shadow.get(node) in ("closed", "user-agent"):
        return _Out("", "", kept=False)
    return _render_element(b, doc, node, depth=depth, force=in_select, in_select=in_select)


def _render_text(b: _Builder, doc: SnapshotDoc, node: int, in_select: bool) -> _Out:
    raw = doc.values[node]
    visible = in_select or (node in doc.layout and not doc.hidden_style(node))
    if not visible:
        return _Out(" " if raw.strip() == "" and raw else "", "", kept=False)
    text = " ".join(_CONTROL.sub("", b.redact(raw)).split())
    if not text:
        return _Out(" " if raw else "", "", kept=False)
    lead = " " if raw[:1].isspace() else ""
    trail = " " if raw[-1:].isspace() else ""
    return _Out(f"{lead}{html.escape(text, quote=False)}{trail}", text, kept=True)


def _render_element(
    b: _Builder,
    doc: SnapshotDoc,
    node: int,
    *,
    depth: int,
    force: bool,
    in_select: bool = False,
    out_tag: str | None = None,
) -> _Out:
    tag = doc.names[node].lower()
    if tag in _SKIP_TAGS or depth > _MAX_DEPTH:
        return _Out("", "", kept=False)
    if not _TAG_NAME.match(tag):
        tag = "span"
    visible = force or doc.self_visible(node, tag)
    key = b.key(doc, node)
    if key is None:  # a saved page's element the browser made: its content, in its place
        parts, texts, any_kept = _render_children(b, doc, node, depth, in_select)
        return _Out("".join(parts), " ".join(texts), kept=any_kept)
    b.elements[key] = _PENDING  # reserve document order; replaced or removed below
    _note_label(b, doc, node, tag, key)
    parts, texts, any_kept = [], [], False
    frame_doc = b.frame_doc(doc, node)
    if frame_doc is not None and visible and frame_doc < len(b.docs):
        inner = _render_frame(b, b.docs[frame_doc], doc, node, depth)
        parts.append(inner.html)
        texts.append(inner.text)
        any_kept = inner.kept
    elif (tag != "svg" or b.live) and not doc.clips_all(node):
        in_select = in_select or (tag == "select" and visible)
        drawing = b.live and tag == "svg"
        if drawing:
            b.drawings.append(doc.box(node) or (0.0, 0.0, 0.0, 0.0))
        parts, texts, any_kept = _render_children(b, doc, node, depth, in_select)
        if drawing:
            b.drawings.pop()
    if tag == "label":
        b.open_labels.pop()
    if tag == "textarea" and node in doc.text_value:
        value = _CONTROL.sub("", b.redact(doc.text_value[node]))
        parts, texts = [html.escape(value, quote=False)], [value]
    if not (visible or any_kept):
        b.elements.pop(key, None)  # (a saved page may repeat an id inside itself)
        return _Out("", "", kept=False)
    text = " ".join(" ".join(texts).split())[:_MAX_LABEL_TEXT]
    attrs = _attributes(b, doc, node, tag, key)
    if b.live:
        attrs.update(_live_marks(b, doc, node, tag, empty=not text and not any_kept))
    b.elements[key] = _element_info(doc, node, tag, text, attrs)
    out_tag = out_tag or ("div" if frame_doc is not None else _live_tag(b, tag))
    start = f"<{out_tag}" + "".join(f' {k}="{html.escape(v)}"' for k, v in attrs.items()) + ">"
    if tag in _VOID:
        return _Out(start, text, kept=True)
    return _Out(f"{start}{''.join(parts)}</{out_tag}>", text, kept=True)


def _live_tag(b: _Builder, tag: str) -> str:
    """An SVG drawing and its elements as the cleaner reads them (module doc)."""
    if not b.live or not (b.drawings or tag == "svg"):
        return tag
    return "drawing" if tag == "svg" else f"svg-{tag}"


def _live_marks(
    b: _Builder, doc: SnapshotDoc, node: int, tag: str, *, empty: bool
) -> dict[str, str]:
    """What the browser shows of an element that its markup does not say (live_marks)."""
    if tag in ("html", "body"):
        return {}
    page_attrs = {k.lower(): v for k, v in doc.attrs[node]}
    clickable = node in doc.clickable
    box = doc.box(node)
    shape = bool(b.drawings) and tag in live_marks.SHAPES
    marks: dict[str, str] = (
        {"onclick": ""} if live_marks.wants_onclick(tag, page_attrs, clickable) else {}
    )
    if tag == "svg":
        marks.update(live_marks.drawing_size(box))
    elif shape:
        color = live_marks.shape_color(page_attrs)
        marks.update({"color": color} if color else {})
        marks.update(live_marks.geometry(tag, page_attrs, box, b.drawings[-1]))
    elif empty:
        color = live_marks.swatch_color(tag, page_attrs, doc.style(node, "background-color"), box)
        marks.update({"color": color} if color else {})
    named = live_marks.is_named(page_attrs, tag) or _labelled(b, doc, tag, page_attrs)
    wanted = live_marks.is_control(tag, page_attrs, clickable) or shape or "color" in marks
    if empty and wanted and not named:
        hint = live_marks.hint_words(page_attrs, tag)
        marks.update({"hint": hint} if hint else {})
    return live_marks.prefixed({k: _clean_attr(v) for k, v in marks.items()})


def _labelled(b: _Builder, doc: SnapshotDoc, tag: str, attrs: dict[str, str]) -> bool:
    """A form control inside a ``<label>`` or named by one seen before it (``for=``)."""
    if tag not in _CONTROLS:
        return False
    return bool(b.open_labels) or (doc.index, attrs.get("id", "")) in b.label_for


def _render_children(
    b: _Builder, doc: SnapshotDoc, node: int, depth: int, in_select: bool
) -> tuple[list[str], list[str], bool]:
    """(HTML parts, visible texts, whether any child was kept)."""
    parts: list[str] = []
    texts: list[str] = []
    any_kept = False
    for child in doc.children[node]:
        out = _render_node(b, doc, child, depth + 1, in_select)
        any_kept = any_kept or out.kept
        parts.append(out.html)
        if out.text:
            texts.append(out.text)
    return parts, texts, any_kept


def _note_label(b: _Builder, doc: SnapshotDoc, node: int, tag: str, key: str) -> None:
    element_id = next((v for k, v in doc.attrs[node] if k.lower() == "id"), None)
    if tag == "label":
        b.open_labels.append(key)
        target = next((v for k, v in doc.attrs[node] if k.lower() == "for"), None)
        if target:
            b.label_for[(doc.index, target)] = key
    elif tag in _CONTROLS:
        if b.open_labels:
            b.wrapped[key] = b.open_labels[-1]
        if element_id:
            b.control_ids[(doc.index, element_id)] = key


def _render_frame(
    b: _Builder, frame: SnapshotDoc, parent: SnapshotDoc, node: int, depth: int
) -> _Out:
    b.frames.append(
        FrameInfo(
            frame_id=frame.frame_id, url=frame.url, iframe_element_id=parent.backend_ids[node]
        )
    )
    body = frame.root_element("body")
    if body is None:
        return _Out("", "", kept=False)
    return _render_element(b, frame, body, depth=depth + 1, force=True, out_tag="div")


def _attributes(b: _Builder, doc: SnapshotDoc, node: int, tag: str, key: str) -> dict[str, str]:
    attrs: dict[str, str] = {ID_ATTR: key}
    input_type = ""
    for name, value in doc.attrs[node]:
        lname = name.lower()
        if lname == "type":
            input_type = value.lower()
        if (
            not _ATTR_NAME.match(name)
            or (lname.startswith("on") and lname != "onclick")  # onclick marks clickables
            or lname.startswith("data-webagent")
            or lname == "style"
            or (lname in _STATE_ATTRS and not (lname == "value" and tag in ("option", "button")))
        ):
            continue
        if tag == "input" and lname == "value" and input_type in ("checkbox", "radio"):
            continue
        attrs[lname] = _clean_attr(b.redact(value))
    if b.frame_doc(doc, node) is not None:
        attrs["iframe"] = attrs.pop("src", "") or attrs.get("name", "") or "inline"
    _add_state(b, doc, node, attrs, tag=tag, input_type=input_type)
    return attrs


def _add_state(
    b: _Builder, doc: SnapshotDoc, node: int, attrs: dict[str, str], *, tag: str, input_type: str
) -> None:
    if tag == "input" and input_type in ("checkbox", "radio"):
        value = dict(doc.attrs[node]).get("value")
        if value is not None:
            attrs["value"] = _clean_attr(b.redact(value))
        if node in doc.checked:
            attrs["checked"] = "checked"
            attrs["input_checked"] = "true"
    elif tag == "input" and node in doc.input_value:
        value = doc.input_value[node]
        if input_type == "password" and value:
            value = PASSWORD_MASK
        value = _clean_attr(b.redact(value))
        attrs["value"] = value
        attrs["input_value"] = value
    elif tag == "option" and node in doc.selected:
        attrs["selected"] = "selected"
        attrs["option_selected"] = "true"


def _clean_attr(value: str) -> str:
    value = _CONTROL.sub("", value)
    return value if len(value) <= _MAX_ATTR_CHARS else value[: _MAX_ATTR_CHARS - 1] + "…"


def _element_info(
    doc: SnapshotDoc, node: int, tag: str, text: str, attrs: dict[str, str]
) -> ElementInfo:
    k = doc.layout.get(node)
    box = doc.bounds[k] if k is not None else None
    return ElementInfo(
        backend_node_id=doc.backend_ids[node],
        tag=tag,
        frame_id=doc.frame_id,
        frame_url=doc.url,
        in_shadow=node in doc.shadow,
        bounds=(box[0], box[1], box[2], box[3]) if box and len(box) == 4 else None,
        text=text,
        attributes={
            key.removeprefix(live_marks.PREFIX): value
            for key, value in attrs.items()
            if key in _INFO_ATTRS
        },
    )
