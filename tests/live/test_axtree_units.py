"""The pure half of live_runner.axtree, on CDP nodes written by hand: frames hang under their
iframes with ids kept apart, the visible share of a box, a password's text masked, and a node
tied to the page's id only where the page kept its element. The browser half is
tests/live/test_axtree.py."""

from __future__ import annotations

from typing import Any

from live_runner.axtree import ElementMarks, Viewport, merge_frames, tree_from_cdp
from live_runner.dom_snapshot import PASSWORD_MASK, ElementInfo, FrameInfo
from webagent.html.axtree import flatten_axtree


def cdp(node_id: str, role: str, name: str | None, *children: str, **more: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"nodeId": node_id, "role": {"value": role}, "childIds": list(children)}
    if name is not None:
        node["name"] = {"value": name}
    return {**node, **more}


def test_a_frame_s_tree_hangs_under_its_iframe_with_its_own_ids() -> None:
    main = [
        cdp("1", "RootWebArea", "Shop", "2", "3"),
        cdp("2", "Iframe", "Newsletter", backendDOMNodeId=40),
        cdp("3", "button", "Buy", backendDOMNodeId=41),
    ]
    inner = [
        cdp("1", "RootWebArea", "Join us", "2"),
        cdp("2", "button", "Join", backendDOMNodeId=7),
    ]
    frames = [
        FrameInfo(frame_id="A", url="u"),
        FrameInfo(frame_id="B", url="v", iframe_element_id=40),
    ]
    merged = merge_frames(frames, {"A": main, "B": inner})
    assert [n["nodeId"] for n in merged] == ["1", "2", "3", "f1:1", "f1:2"]
    assert merged[1]["childIds"] == ["f1:1"] and main[1]["childIds"] == []  # input untouched
    marks = {41: ElementMarks("n41", visible=True, clickable=True), 7: ElementMarks("n7")}
    assert flatten_axtree(tree_from_cdp(merged, marks, source="cdp")).split("\n") == [
        "RootWebArea 'Shop'",
        "\tIframe 'Newsletter'",  # its element is not on the page the agent reads: no id
        "\t\tRootWebArea 'Join us'",
        "\t\t\t[id=n7] button 'Join'",
        "\t[id=n41] button 'Buy', clickable, visible",
    ]
    orphan = [
        FrameInfo(frame_id="A", url="u"),
        FrameInfo(frame_id="C", url="w", iframe_element_id=9),
    ]
    assert len(merge_frames(orphan, {"A": main, "C": inner})) == 3  # no iframe: not shown


def test_the_visible_share_of_a_box() -> None:
    view = Viewport(0, 100, 800, 600)  # scrolled down by 100 px
    assert view.ratio((10, 150, 100, 50)) == 1.0
    assert view.ratio((10, 50, 100, 100)) == 0.5  # its top half is above the viewport
    assert view.ratio((10, 800, 100, 50)) == 0.0
    assert view.ratio((10, 150, 0, 50)) == 0.0 and view.ratio(None) == 0.0


def test_a_password_s_value_and_text_are_masked_and_secrets_redacted() -> None:
    nodes = [
        cdp("1", "RootWebArea", "Sign in to ada@example.org", "2", "4"),
        cdp("2", "textbox", "PIN", "3", value={"value": "4242"}, backendDOMNodeId=5),
        cdp("3", "StaticText", "••••"),
        cdp("4", "textbox", "Note", value={"value": "ada@example.org"}, backendDOMNodeId=6),
    ]
    info = ElementInfo(
        backend_node_id=5, tag="input", frame_id="A", frame_url="u", attributes={"type": "password"}
    )
    marks = {
        5: ElementMarks.of("n5", info, visible=True, clickable=True),
        6: ElementMarks("n6"),
    }
    redact = lambda text: text.replace("ada@example.org", "{{secret:EMAIL}}")  # noqa: E731
    tree = tree_from_cdp(nodes, marks, source="cdp", redact=redact)
    assert flatten_axtree(tree).split("\n") == [
        "RootWebArea 'Sign in to {{secret:EMAIL}}'",
        f"\t[id=n5] textbox 'PIN' value='{PASSWORD_MASK}', clickable, visible",
        f"\t\tStaticText '{PASSWORD_MASK}'",
        "\t[id=n6] textbox 'Note' value='{{secret:EMAIL}}'",
    ]
