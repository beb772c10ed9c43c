"""What a live page shows that its words do not say, as attributes the agents read (pure).

A control without text (an icon: ``<span id="send-reply"></span>`` drawn by CSS, a star, a
trash can; a slider's handle; a tic-tac-toe cell) and a drawing's shapes carry their meaning
in attributes and in how the browser drew them. For a live page (CDP ids: ``webagent run``,
``webagent miniwob``, BrowserGym) :mod:`live_runner.dom_snapshot` adds, under the
``data-webagent-`` prefix that the cleaner shows without it (``webagent.html.rules.LIVE_ATTRS``):

* ``onclick`` on an element the browser says responds to clicks (CDP ``isClickable``: a
  listener attached by script, as BrowserGym's ``clickable`` mark) that is no link, button or
  form control already;
* ``hint``: words from the id and class (an image's file name) of an element without text or
  a name (``aria-label``, ``title``, ``alt``...) that is clickable, focusable, a shape or a
  swatch of colour: ``hint="send reply"``, ``hint="ttt 4 mark x"``;
* ``color``: a shape's fill, a small empty box's background (a colour name where the page
  wrote one or the colour is a basic named one, else ``rgb(r,g,b)``);
* ``at`` and ``size``: a shape's centre and box in its drawing's pixels (where ``CLICK`` with
  ``"x,y"`` on the drawing lands), a drawing's size; ``points`` for a line.

An SVG drawing is rendered as ``<drawing>`` with its shapes as ``<svg-circle>``,
``<svg-text>``..., since the cleaner reads an ``<svg>`` as one opaque element and a ``<text>``
as Mind2Web's text node. None of this applies to a saved page rendered offline
(``ids="page"``): offline rendering is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: the prefix of the attributes only a live observation writes (a page's own are dropped)
PREFIX = "data-webagent-"
#: tags that are controls already (the cleaner keeps and marks them)
_CONTROL_TAGS = frozenset(
    {"a", "button", "input", "select", "textarea", "option", "label", "summary", "html", "body"}
)
_NAMING = ("aria-label", "title", "alt", "placeholder", "aria-labelledby")
_ROLES = frozenset(
    {"button", "link", "checkbox", "radio", "tab", "menuitem", "option", "switch", "slider"}
)
#: SVG shapes (rendered with their geometry); other SVG elements are containers
SHAPES = frozenset(
    {"circle", "ellipse", "rect", "line", "polyline", "polygon", "path", "text", "image", "use"}
)
#: words of ids and classes that name styling, not meaning
_STYLE_WORDS = frozenset(
    {
        "ui", "corner", "all", "state", "default", "widget", "content", "clearfix", "pull",
        "col", "row", "xs", "sm", "md", "lg", "xl", "fa", "fas", "far", "fw", "glyphicon",
        "ng", "scope", "js", "is", "has", "the", "and", "of",
    }
)  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+|\d+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_-]+$")
_RAW_ID_CHARS = 24
_MAX_HINT_WORDS = 6
_SWATCH_MAX_SIDE = 300.0
_NO_SWATCH = frozenset(
    {"input", "select", "textarea", "button", "option", "canvas", "img", "video", "iframe"}
)
_BASIC_COLORS = {
    (0, 0, 0): "black",
    (255, 255, 255): "white",
    (255, 0, 0): "red",
    (0, 128, 0): "green",
    (0, 255, 0): "lime",
    (0, 0, 255): "blue",
    (255, 255, 0): "yellow",
    (0, 255, 255): "aqua",
    (255, 0, 255): "magenta",
    (128, 128, 128): "grey",
    (192, 192, 192): "silver",
    (128, 0, 0): "maroon",
    (128, 128, 0): "olive",
    (0, 128, 128): "teal",
    (0, 0, 128): "navy",
    (128, 0, 128): "purple",
    (255, 165, 0): "orange",
    (255, 192, 203): "pink",
    (165, 42, 42): "brown",
}
_RGB = re.compile(r"^rgba?\(\s*(\d+)[,\s]+(\d+)[,\s]+(\d+)(?:[,\s/]+([\d.]+%?))?\s*\)$")
_STYLE_DECL = re.compile(r"(?:^|;)\s*([-a-z]+)\s*:\s*([^;]+)")
Box = tuple[float, float, float, float]


def hint_words(attrs: dict[str, str], tag: str) -> str:
    """Words naming an element without text: its id's, its classes', an image's file name.
    An id that is no identifier (``(-2,2)``, a grid point's) is kept as it is."""
    element_id = attrs.get("id", "").strip()
    words: list[str] = []
    if element_id and not _IDENTIFIER.match(element_id) and len(element_id) <= _RAW_ID_CHARS:
        words.append(element_id)
        element_id = ""
    sources = [element_id, attrs.get("class", "")]
    if tag in ("img", "image", "input"):
        source = attrs.get("src", "") or attrs.get("href", "")
        sources.append(source.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    for source in sources:
        for word in _WORD.findall(_CAMEL.sub(" ", source)):
            lower = word.lower()
            if lower not in _STYLE_WORDS and lower not in words and len(words) < _MAX_HINT_WORDS:
                words.append(lower)
    return " ".join(words)


def is_named(attrs: dict[str, str], tag: str) -> bool:
    """Whether the page names the element in an attribute the agents are shown."""
    if any(attrs.get(key, "").strip() for key in _NAMING):
        return True
    return tag in ("input", "button") and bool(attrs.get("value", "").strip())


def wants_onclick(tag: str, attrs: dict[str, str], clickable: bool) -> bool:
    """A clickable element that the cleaner would not know for a control."""
    if not clickable or tag in _CONTROL_TAGS or "onclick" in attrs:
        return False
    return attrs.get("role", "").strip().lower() not in _ROLES


def is_control(tag: str, attrs: dict[str, str], clickable: bool) -> bool:
    """Clickable, focusable or a control by its tag or role."""
    tabindex = attrs.get("tabindex", "").strip()
    focusable = bool(tabindex) and tabindex.lstrip("-").isdigit() and not tabindex.startswith("-")
    role = attrs.get("role", "").strip().lower() in _ROLES
    return clickable or focusable or role or tag in _CONTROL_TAGS or tag == "img"


def css_color(text: str) -> str | None:
    """A colour as shown: the page's own word, a basic name, else ``rgb(r,g,b)``; None for
    none or transparent."""
    value = " ".join(text.split()).lower()
    if not value or value in ("none", "transparent", "currentcolor", "inherit", "initial"):
        return None
    match = _RGB.match(value)
    if match is None:
        return value if len(value) <= 40 else None  # a name or #hex the page wrote
    r, g, b, alpha = match.groups()
    if alpha is not None and float(alpha.rstrip("%")) == 0:
        return None
    rgb = (int(r), int(g), int(b))
    return _BASIC_COLORS.get(rgb) or f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"


def inline_style(attrs: dict[str, str], names: Iterable[str]) -> str | None:
    """The first of ``names`` that the element's ``style`` attribute declares."""
    declared = {k.lower(): v.strip() for k, v in _STYLE_DECL.findall(attrs.get("style", ""))}
    return next((declared[n] for n in names if n in declared), None)


def shape_color(attrs: dict[str, str]) -> str | None:
    """A shape's fill (else its stroke), from its attributes or inline style."""
    for name in ("fill", "stroke"):
        color = css_color(attrs.get(name, "") or inline_style(attrs, (name,)) or "")
        if color is not None:
            return color
    return None


def swatch_color(
    tag: str, attrs: dict[str, str], computed: str | None, box: Box | None
) -> str | None:
    """The background of a small empty box (the inline style, else the computed one); none
    for a form control, a canvas or an image, whose background says nothing."""
    if tag in _NO_SWATCH or box is None:
        return None
    if box[2] > _SWATCH_MAX_SIDE or box[3] > _SWATCH_MAX_SIDE:
        return None
    inline = inline_style(attrs, ("background-color", "background"))
    return css_color(inline or "") or css_color(computed or "")


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def geometry(tag: str, attrs: dict[str, str], box: Box | None, origin: Box) -> dict[str, str]:
    """``at`` (the centre) and ``size`` of a shape in its drawing's pixels; a line's
    ``points``."""
    if tag == "line":
        ends = [attrs.get(k, "0") for k in ("x1", "y1", "x2", "y2")]
        try:
            x1, y1, x2, y2 = (float(v) for v in ends)
        except ValueError:
            return {}
        return {"points": f"{_number(x1)},{_number(y1)} {_number(x2)},{_number(y2)}"}
    if box is None:
        return {}
    x, y, width, height = box
    centre_x, centre_y = x - origin[0] + width / 2, y - origin[1] + height / 2
    return {
        "at": f"{_number(centre_x)},{_number(centre_y)}",
        "size": f"{_number(width)}x{_number(height)}",
    }


def drawing_size(box: Box | None) -> dict[str, str]:
    return {"size": f"{_number(box[2])}x{_number(box[3])}"} if box else {}


def prefixed(marks: dict[str, str]) -> dict[str, str]:
    """The marks as the HTML carries them (``onclick`` as it is, the rest prefixed)."""
    return {(k if k == "onclick" else PREFIX + k): v for k, v in marks.items()}
