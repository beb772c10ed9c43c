"""Cleaning: what is dropped, what keeps an id, how the model sees it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from webagent.errors import PageError
from webagent.html.clean import clean_page
from webagent.html.parse import parse_html

PAGE = """<html><head><title>t</title><script>x()</script></head><body id=top>
<div id=main class=wrap data-fathom="username"><div><div>
<h1>Hello <b>world</b>!</h1>
<form name=search><input type=hidden name=t value=1><label for=q>Find</label><input id=q
 name=q placeholder="Search &quot;all&quot;" value=""><select name=c><option value=a>All</option>
<option selected>Books &lt;new&gt;</option></select><button type=submit aria-label=Go><svg>
<path d=1/></svg></button></form>
<p hidden>secret</p><p aria-hidden=true>also secret</p><p style="color:red; DISPLAY : none">none
</p><span style="visibility:hidden">vh</span>
<div role=button onclick="f()"></div><div contenteditable=true></div><div contenteditable=false>
</div><img src=a.png><img src=b.png alt="A cat"><br><hr>
<!-- comment -->tail text
</div></div></div><noscript>enable js</noscript><template><a>t</a></template></body></html>"""

GOLDEN = (
    '<div id=n8><h1 id=n9>Hello <b id=n10>world</b>!</h1><form id=n11 name="search">'
    '<label id=n13>Find</label><input id=n14 name="q" placeholder="Search &quot;all&quot;">'
    '<select id=n15 name="c"><option id=n16 value="a">All</option><option id=n17 selected>'
    'Books &lt;new></option></select><button id=n18 type="submit" aria-label="Go"></button>'
    '</form><div id=n25 role="button" onclick></div><div id=n26 contenteditable></div>'
    '<img id=n29 alt="A cat"> tail text </div>'
)


def test_compact_rendering_golden() -> None:
    assert clean_page(PAGE).html() == GOLDEN


def test_ids_count_every_original_element_in_document_order() -> None:
    page = clean_page(PAGE)
    root = parse_html(PAGE)
    original = {f"n{k}": el for k, el in enumerate(root.iter(etree.Element), start=1)}
    for element_id in page.element_ids:
        assert element_id in original
    assert original["n14"].get("name") == "q"
    assert original["n18"].tag == "button"
    assert clean_page(PAGE).element_ids == page.element_ids  # stable


def test_hidden_and_junk_are_dropped_but_their_tails_kept() -> None:
    html = clean_page(PAGE).html()
    for gone in (
        "secret",
        "none",
        "vh",
        "x()",
        "enable js",
        ">t<",
        "<path",
        "fathom",
        "wrap",
        'id="',
        "main",
        "href",
        'value="1"',
    ):
        assert gone not in html
    assert "tail text" in html


def test_interactive_and_texted_elements_keep_ids_wrappers_do_not() -> None:
    page = clean_page(PAGE)
    assert page.interactive_ids == ["n13", "n14", "n15", "n16", "n17", "n18", "n25", "n26"]
    # the two pure wrapper divs (n6, n7) and the decorative <img> / <br> / <hr> have no id
    assert not {"n6", "n7", "n27", "n30", "n31"} & set(page.element_ids)


def test_keep_wrappers_shows_every_element() -> None:
    page = clean_page(PAGE, keep_wrappers=True)
    assert {"n1", "n5", "n6", "n7", "n30"} <= set(page.element_ids)


def test_backend_node_ids_and_mind2web_text_nodes() -> None:
    html = (
        '<html backend_node_id="1"><body backend_node_id="2"><div backend_node_id="3">'
        '<div backend_node_id="4"><text backend_node_id="5">Profile</text></div>'
        '<a backend_node_id="6" aria_label="Home"/><button backend_node_id="7" type="button">'
        '<span backend_node_id="8"><text backend_node_id="9">Go</text></span></button>'
        '<input backend_node_id="10" input_value="Boston" type="text"/></div></body></html>'
    )
    page = clean_page(html)
    assert page.html() == (
        '<div id=4>Profile</div><a id=6 aria-label="Home"></a><button id=7 type="button">'
        '<span id=8>Go</span></button><input id=10 value="Boston" type="text">'
    )
    assert page.interactive_ids == ["6", "7", "10"]


def test_text_is_escaped_and_collapsed() -> None:
    html = clean_page("<p>  a <  b\n\n c\u00a0d &lt;script&gt; </p>").html()
    assert html == "<p id=n3>a &lt; b c d &lt;script> </p>"


def test_long_attribute_values_are_cut() -> None:
    html = clean_page(f'<button title="{"x" * 500}">b</button>').html()
    assert 'title="' + "x" * 99 + '…"' in html


def test_page_with_nothing_visible_is_a_page_error() -> None:
    with pytest.raises(PageError, match="no visible content"):
        clean_page("<html><head><script>1</script></head><body><div hidden>x</div></body></html>")


def test_tree_input_with_comments_keeps_comment_tails() -> None:
    root = etree.fromstring("<html><body><p>a<!-- c -->b</p></body></html>", etree.HTMLParser())
    assert clean_page(root).html() == "<p id=n3>ab</p>"
    assert root.xpath("//comment()"), "the caller's tree is not modified"


def test_no_interactive_page_still_segments_its_text(pages_dir: Path) -> None:
    page = clean_page((pages_dir / "no_interactive.html").read_bytes())
    assert page.interactive_ids == []
    assert "Sargasso Sea" in page.html()
    assert 'alt="A glass eel held in a palm"' in page.html()
