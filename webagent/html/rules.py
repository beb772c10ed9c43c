"""What cleaning drops, keeps and shows: the rules of docs/SEGMENTATION.md as data.

An element is *dropped* (with its whole subtree, but not its tail text) when its tag is junk
(:data:`DROP_TAGS`) or it is invisible (:func:`is_hidden`). Of the rest, an element is *kept*
(rendered with its id) when it is interactive, has own visible text, or carries a salient
attribute; every other element is a pure wrapper and is unwrapped from the rendering.
"""

from __future__ import annotations

from webagent.html.css import style_effect

ID_ATTR = "backend_node_id"

# fmt: off
DROP_TAGS = frozenset({
    "script", "style", "noscript", "template", "meta", "link", "head", "base", "title",
    "param", "source", "track",
})
# children are decorative; the element itself stays (it may carry an aria-label)
OPAQUE_TAGS = frozenset({"svg", "math"})
# Mind2Web's cleaned_html wraps every text node in <text backend_node_id=...>; its text is
# treated as the own text of the enclosing element
TEXT_TAGS = frozenset({"text"})
VOID_TAGS = frozenset({
    "area", "br", "col", "embed", "hr", "img", "input", "keygen", "wbr", "iframe", "frame",
    "svg", "math",
})
INTERACTIVE_TAGS = frozenset({
    "a", "button", "input", "select", "textarea", "option", "label", "summary",
})
INTERACTIVE_ROLES = frozenset({
    "button", "link", "option", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "switch", "combobox", "textbox", "searchbox", "slider", "spinbutton",
    "listbox", "treeitem", "gridcell",
})
# fmt: on

# attribute shown to the model -> the name it is shown under
SHOWN_ATTRS = {
    "alt": "alt",
    "aria-label": "aria-label",
    "aria_label": "aria-label",
    "aria-description": "aria-description",
    "role": "role",
    "name": "name",
    "placeholder": "placeholder",
    "title": "title",
    "type": "type",
    "value": "value",
    "input_value": "value",
    "label": "label",
    "checked": "checked",
    "selected": "selected",
    "disabled": "disabled",
    "contenteditable": "contenteditable",
    "onclick": "onclick",
}
# what a live observation adds (live_runner.live_marks: words naming a control without text, a
# shape's colour and place), shown without the prefix. Live pages' own attributes with the
# prefix are dropped before, and no saved page or Mind2Web page carries one, so offline
# rendering is unchanged
LIVE_ATTRS = {f"data-webagent-{name}": name for name in ("hint", "color", "at", "size", "points")}
SHOWN_ATTRS.update(LIVE_ATTRS)
SHOWN_KEYS = frozenset(SHOWN_ATTRS)
# shown as a bare name (``checked``), unless the value is "false"
BOOLEAN_ATTRS = frozenset({"checked", "selected", "disabled", "contenteditable", "onclick"})
# shown attributes that on their own make an element worth keeping
KEEPING_ATTRS = frozenset(SHOWN_ATTRS) - BOOLEAN_ATTRS - {"type"}
# attributes that matter to the cleaner, looked at once per element
WATCHED_ATTRS = frozenset(SHOWN_ATTRS) | {"hidden", "aria-hidden", "style", "id", ID_ATTR}
MAX_ATTR_CHARS = 100
# the only keys each test below reads: an element with none of them passes it without a call
HIDING_KEYS = frozenset({"hidden", "aria-hidden", "type", "style"})  # is_hidden
ACTIVE_KEYS = frozenset({"onclick", "role", "contenteditable"})  # is_interactive, beyond the tag


def is_hidden(tag: str, attrs: dict[str, str]) -> bool:
    """Invisible with everything inside, by markup alone: hidden, aria-hidden, a hidden input,
    an inline ``display: none``. (``visibility`` is inherited and may be undone below: see
    :func:`visibility`.)"""
    if "hidden" in attrs or attrs.get("aria-hidden", "").strip().lower() == "true":
        return True
    if tag == "input" and attrs.get("type", "").strip().lower() == "hidden":
        return True
    style = attrs.get("style")
    return style is not None and style_effect(style).display_none


def drop_reason(tag: str, attrs: dict[str, str]) -> str | None:
    """Which rule drops this element with its subtree, in words (None: it is not dropped).

    For reports on what cleaning lost; agrees with :data:`DROP_TAGS`, :func:`is_hidden` and a
    ``visibility: hidden`` of its own (which a descendant may undo)."""
    if tag in DROP_TAGS:
        return f"inside <{tag}> (a dropped tag)"
    if "hidden" in attrs:
        return f"inside a <{tag} hidden> subtree"
    if attrs.get("aria-hidden", "").strip().lower() == "true":
        return f'inside an aria-hidden="true" <{tag}> subtree'
    if tag == "input" and attrs.get("type", "").strip().lower() == "hidden":
        return "a hidden <input>"
    if is_hidden(tag, attrs):
        return f"inside a display: none <{tag}> subtree"
    if visibility(attrs) is False:
        return f"inside a visibility: hidden <{tag}> subtree"
    return None


def visibility(attrs: dict[str, str]) -> bool | None:
    """The inline ``visibility`` of an element: False hidden, True visible, None inherited."""
    style = attrs.get("style")
    return None if style is None else style_effect(style).visible


def is_interactive(tag: str, attrs: dict[str, str]) -> bool:
    if tag in INTERACTIVE_TAGS or "onclick" in attrs:
        return True
    role = attrs.get("role")
    if role and role.strip().lower() in INTERACTIVE_ROLES:
        return True
    editable = attrs.get("contenteditable")
    return editable is not None and editable.strip().lower() != "false"


def has_keeping_attr(attrs: dict[str, str]) -> bool:
    return any(key in KEEPING_ATTRS and value.strip() for key, value in attrs.items())


def open_tag(tag: str, element_id: str, attrs: dict[str, str]) -> str:
    """``<tag id=ID attr="v">`` with only the shown attributes, in page order."""
    if SHOWN_KEYS.isdisjoint(attrs):
        return f"<{tag} id={element_id}>"
    parts = [f"<{tag} id={element_id}"]
    for key, raw in attrs.items():
        shown = SHOWN_ATTRS.get(key)
        if shown is None:
            continue
        if key in BOOLEAN_ATTRS:
            if raw.strip().lower() != "false":
                parts.append(f" {shown}")
            continue
        value = " ".join(raw.split())
        if not value:
            continue
        if len(value) > MAX_ATTR_CHARS:
            value = value[: MAX_ATTR_CHARS - 1] + "…"
        parts.append(f' {shown}="{value.replace(chr(34), "&quot;")}"')
    parts.append(">")
    return "".join(parts)


def escape_text(text: str) -> str:
    """Collapse whitespace and escape ``<`` so text can never read as a tag."""
    text = " ".join(text.split())
    if "<" in text:
        text = text.replace("<", "&lt;")
    return text
