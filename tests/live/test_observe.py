"""Observe: ids are CDP backendNodeIds, invisible elements are left out, iframes and open
shadow roots are read, live form state is shown, and the offline pipeline reads the result."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from lxml import html as lxml_html

from live.pages import PageServer
from live_runner.observe import observe
from live_runner.session import BrowserSession
from webagent.html.fragment import SegmentSettings
from webagent.html.segment import segment_html

pytestmark = pytest.mark.browser


def _cdp_ids_by_html_id(session: BrowserSession) -> dict[str, int]:
    """backendNodeId of every element with an ``id`` attribute, through every frame and
    shadow root, from CDP's own DOM.getDocument (independent of the snapshot code)."""
    root = session.cdp().send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
    found: dict[str, int] = {}

    def walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield node
        for key in ("children", "shadowRoots"):
            for child in node.get(key, []):
                yield from walk(child)
        if "contentDocument" in node:
            yield from walk(node["contentDocument"])

    for node in walk(root):
        attrs = node.get("attributes", [])
        pairs = dict(zip(attrs[::2], attrs[1::2], strict=True))
        if "id" in pairs:
            found[pairs["id"]] = node["backendNodeId"]
    return found


def _ids_in_snapshot(page_html: str) -> dict[str, str]:
    root = lxml_html.fromstring(page_html)
    return {
        str(e.get("id")): str(e.get("backend_node_id"))
        for e in root.iter()
        if isinstance(e.tag, str) and e.get("id")
    }


def test_ids_are_cdp_backend_node_ids(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/widgets.html")
    snapshot = observe(session, screenshot=False)
    expected = _cdp_ids_by_html_id(session)
    shown = _ids_in_snapshot(snapshot.html)
    # main document, same-origin iframe and open shadow root alike
    for html_id in ("log", "vanish", "nl-email", "nl-join", "logout", "scroller"):
        assert shown[html_id] == str(expected[html_id]), html_id
    root = lxml_html.fromstring(snapshot.html)
    every_id = [e.get("backend_node_id") for e in root.iter() if isinstance(e.tag, str)]
    assert all(every_id), "every element carries backend_node_id"
    assert len(every_id) == len(set(every_id)) == len(snapshot.elements)
    assert set(every_id) == set(snapshot.elements)


def test_invisible_elements_are_left_out(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/form.html")
    snapshot = observe(session, screenshot=False)
    text = lxml_html.fromstring(snapshot.html).text_content()
    assert "HIDDEN-PROMO" not in snapshot.html  # display: none
    assert "Ghost text" not in text  # visibility: hidden ...
    assert "but this part shows" in text  # ... with a visible child
    assert "Clipped away" not in text  # zero-size box with overflow: hidden
    assert "Vegetarian" not in text  # closed custom dropdown (display: none list)
    assert "script" not in snapshot.html and "customElements" not in snapshot.html
    # the native select's options have no box of their own but are kept
    assert "Four people" in text
    assert snapshot.title == "Book a table — Riverside Bistro"


def test_iframe_and_shadow_root_content_is_included(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/widgets.html")
    snapshot = observe(session)
    ids = _ids_in_snapshot(snapshot.html)
    join, logout, frame = ids["nl-join"], ids["logout"], ids["frame"]
    assert snapshot.elements[join].frame_url.endswith("/frame.html")
    assert snapshot.elements[logout].in_shadow
    assert not snapshot.elements[ids["log"]].in_shadow
    assert [f.url.rsplit("/", 1)[-1] for f in snapshot.frames] == ["widgets.html", "frame.html"]
    assert snapshot.frames[1].iframe_element_id == int(frame)
    # the iframe is a <div iframe=...> around the frame's body, so HTML parsers read it
    frame_div = lxml_html.fromstring(snapshot.html).xpath(f"//*[@backend_node_id='{frame}']")[0]
    assert frame_div.tag == "div" and frame_div.get("iframe") == "/frame.html"
    assert "Newsletter email" in frame_div.text_content()
    assert snapshot.label(logout) is not None and snapshot.label(logout).render() == (
        "[button]  Sign out"
    )
    assert snapshot.screenshot is not None and snapshot.screenshot[:2] == b"\xff\xd8"


def test_live_form_state_is_shown(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/form.html")
    page = session.page
    page.fill("#name", "Grace Hopper")
    page.fill("#password", "hunter22")
    page.fill("#notes", "Near the door")
    page.check("#terrace")
    page.select_option("#party", "4")
    snapshot = observe(session, screenshot=False)
    root = lxml_html.fromstring(snapshot.html)

    def by_id(html_id: str) -> Any:
        return root.get_element_by_id(html_id)

    assert by_id("name").get("value") == by_id("name").get("input_value") == "Grace Hopper"
    assert by_id("password").get("value") == "********"  # password values are never shown
    assert "hunter22" not in snapshot.html
    assert by_id("notes").text_content() == "Near the door"
    assert by_id("terrace").get("checked") == "checked"
    selected = [o.text_content() for o in by_id("party").iter("option") if o.get("selected")]
    assert selected == ["Four people"]  # the live choice, not the markup's default
    assert snapshot.label(by_id("name").get("backend_node_id")).render() == "[textbox]  Full name"


def test_offline_pipeline_reads_the_snapshot(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/widgets.html")
    snapshot = observe(session, screenshot=False)
    segmented = segment_html(snapshot.html, SegmentSettings(depth=4, max_fragment_tokens=200))
    ids = _ids_in_snapshot(snapshot.html)
    assert set(segmented.element_ids) <= set(snapshot.elements)
    interactive = {i for f in segmented.fragments for i in f.interactive_ids}
    for html_id in ("nl-email", "nl-join", "logout", "next", "vanish"):
        assert ids[html_id] in interactive, html_id
