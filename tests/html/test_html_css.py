"""Inline styles are read as CSS declarations: property names whole, cascade, inheritance."""

from __future__ import annotations

import pytest

from webagent.errors import PageError
from webagent.html.clean import clean_page
from webagent.html.css import StyleEffect, declarations, style_effect


def test_backface_visibility_keeps_the_page() -> None:
    html = '<html><body style="-webkit-backface-visibility: hidden"><p>Hello</p></body></html>'
    assert clean_page(html).html() == "<p id=n3>Hello</p>"
    assert style_effect("-webkit-backface-visibility: hidden") == StyleEffect()
    assert style_effect("backface-visibility:hidden;content-visibility:hidden") == StyleEffect()


@pytest.mark.parametrize(
    "style",
    [
        "display : none !important",
        "DISPLAY:NONE",
        "color: red; display: none",
        "display:/* a comment */none",
        "display: block !important; display: none !important",
    ],
)
def test_display_none_drops_the_subtree(style: str) -> None:
    html = f'<body><p style="{style}">gone <a href=x>link</a></p><p>kept</p></body>'
    assert clean_page(html).html() == "<p id=n5>kept</p>"


@pytest.mark.parametrize(
    "style",
    [
        "/* display: none */ color: red",
        "display: none; display: block",  # the last declaration wins
        "display: none !important-ish",  # not an !important flag, not "none" either
        "display: flex",
        "x-display: none",
    ],
)
def test_styles_that_do_not_hide(style: str) -> None:
    html = f'<body><p style="{style}">shown</p></body>'
    assert "shown" in clean_page(html).html()


def test_important_beats_a_later_normal_declaration() -> None:
    assert style_effect("display: none !important; display: block").display_none
    assert not style_effect("visibility: hidden !important; visibility: visible").visible


def test_visible_child_of_hidden_parent_is_shown() -> None:
    html = (
        '<body><div style="visibility:hidden">secret <a href=x>hidden link</a>'
        '<span style="visibility: visible">shown <a href=y>link</a></span> also secret'
        "</div><p>after</p></body>"
    )
    page = clean_page(html)
    assert page.html() == "<span id=n5>shown <a id=n6>link</a></span><p id=n7>after</p>"
    assert page.interactive_ids == ["n6"]


def test_hidden_inherits_through_unstyled_descendants() -> None:
    html = (
        '<body><div style="visibility:collapse"><ul><li><button>no</button></li></ul>'
        '<div style="visibility:inherit"><button>still no</button></div></div><p>x</p></body>'
    )
    assert clean_page(html).html() == "<p id=n9>x</p>"


def test_visibility_hidden_everywhere_is_an_empty_page() -> None:
    with pytest.raises(PageError, match="no visible content"):
        clean_page('<body style="visibility: hidden"><p>a</p><p>b</p></body>')


def test_declarations_ignore_comments_and_garbage() -> None:
    style = "color:red;; /* visibility: hidden */ @x; visibility :  HIDDEN ; display"
    assert declarations(style) == {"visibility": "hidden"}
