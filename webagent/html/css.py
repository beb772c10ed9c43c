"""Inline ``style`` attributes read as CSS declarations (tinycss2), not searched as text.

Only two properties decide what the cleaner shows:

* ``display: none`` hides the element and everything inside it, whatever the children say;
* ``visibility: hidden`` (or ``collapse``) hides the element, but it is *inherited*: a
  descendant with ``visibility: visible`` is shown again, as in a browser.

Within one attribute the CSS cascade applies: an ``!important`` declaration beats a normal one,
and among equals the last wins. Comments are ignored and property names are matched whole, so
``-webkit-backface-visibility: hidden`` says nothing about visibility.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import tinycss2

_WATCHED = ("display", "visibility")
_HIDDEN = frozenset({"hidden", "collapse"})
_VISIBLE = frozenset({"visible", "initial"})  # the initial value of visibility is visible


@dataclass(frozen=True, slots=True)
class StyleEffect:
    """What an inline style does to visibility."""

    display_none: bool = False
    visible: bool | None = None  # False: visibility hidden; True: visible; None: inherited


NO_EFFECT = StyleEffect()


@lru_cache(maxsize=4096)
def style_effect(style: str) -> StyleEffect:
    """The effect of an inline ``style`` value on visibility (cached: pages repeat their
    styles, and the cleaner asks about each styled element twice)."""
    lowered = style.lower()
    if "display" not in lowered and "visibility" not in lowered:  # the names in _WATCHED
        return NO_EFFECT  # the common case, without parsing
    return _parsed_effect(lowered)


@lru_cache(maxsize=4096)
def _parsed_effect(style: str) -> StyleEffect:
    winners = declarations(style)
    display = winners.get("display")
    visibility = winners.get("visibility")
    visible = None
    if visibility in _HIDDEN:
        visible = False
    elif visibility in _VISIBLE:
        visible = True
    return StyleEffect(display_none=display == "none", visible=visible)


def declarations(style: str) -> dict[str, str]:
    """The winning value (whitespace-collapsed, lower case) of each watched property."""
    best: dict[str, tuple[bool, str]] = {}
    parsed = tinycss2.parse_blocks_contents(style, skip_comments=True, skip_whitespace=True)
    for node in parsed:
        if node.type != "declaration" or node.lower_name not in _WATCHED:
            continue
        tokens = [token for token in node.value if token.type != "comment"]
        value = " ".join(tinycss2.serialize(tokens).split()).lower()
        previous = best.get(node.lower_name)
        if previous is None or node.important or not previous[0]:
            best[node.lower_name] = (node.important, value)
    return {name: value for name, (_, value) in best.items()}
