"""Observe the active tab: HTML whose elements carry CDP ``backendNodeId`` ids, and more.

One ``DOMSnapshot.captureSnapshot`` call reads every same-process frame and open shadow root
with layout and styles (a few milliseconds); :mod:`live_runner.dom_snapshot` turns it into
HTML the offline ``webagent`` pipeline reads unchanged. The ids are the ones the executor
resolves with ``DOM.resolveNode``, so an id means the same element offline and live.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from live_runner.actions import ElementLabel
from live_runner.axtree import read_axtree
from live_runner.dom_snapshot import ElementInfo, FrameInfo, snapshot_to_page
from live_runner.locate import locate, release
from live_runner.safety import SecretStore
from live_runner.snapshot_doc import LIVE_STYLES
from webagent.contracts import AXTree

if TYPE_CHECKING:
    from live_runner.session import BrowserSession

SCHEMA_VERSION = 1
_INPUT_ROLES = {
    "checkbox": "checkbox",
    "radio": "radio",
    "submit": "button",
    "button": "button",
    "reset": "button",
    "image": "button",
    "search": "searchbox",
}
_TAG_ROLES = {
    "a": "link",
    "button": "button",
    "select": "combobox",
    "textarea": "textbox",
    "option": "option",
    "img": "img",
    "li": "listitem",
}


class PageSnapshot(BaseModel):
    """What the agent sees of the active tab at one moment."""

    schema_version: int = SCHEMA_VERSION
    url: str
    title: str
    html: str = Field(description="visible DOM; every element has backend_node_id")
    elements: dict[str, ElementInfo] = Field(description="id -> frame, tag, bounds, text")
    frames: list[FrameInfo]
    capture_s: float = 0.0
    screenshot: bytes | None = Field(default=None, exclude=True, repr=False)
    axtree: AXTree | None = Field(
        default=None,
        exclude=True,
        repr=False,
        description="the accessibility tree, ids as in html (made when an agent reads it)",
    )

    def label(self, element_id: str) -> ElementLabel | None:
        """Mind2Web's ``[role]  text`` for an id, or None when the id is not on the page."""
        info = self.elements.get(element_id)
        return element_label(info) if info is not None else None

    def find(self, text: str, tag: str | None = None) -> list[str]:
        """Ids of elements whose own label text equals ``text`` (case-insensitive)."""
        wanted = " ".join(text.split()).lower()
        return [
            element_id
            for element_id, info in self.elements.items()
            if (tag is None or info.tag == tag) and element_label(info).text.lower() == wanted
        ]


def element_label(info: ElementInfo) -> ElementLabel:
    attrs = info.attributes
    role = attrs.get("role") or (
        _INPUT_ROLES.get(attrs.get("type", "text"), "textbox")
        if info.tag == "input"
        else _TAG_ROLES.get(info.tag, info.tag)
    )
    text = (
        attrs.get("aria-label")
        or (info.label if info.tag != "button" else "")
        or info.text
        or attrs.get("placeholder")
        or (attrs.get("value", "") if info.tag in ("input", "button") else "")
        or attrs.get("title")
        or attrs.get("alt")
        or attrs.get("name")
        or attrs.get("hint")  # words of its id and class (live_runner.live_marks)
        or ""
    )
    return ElementLabel(role=role, text=" ".join(text.split()))


def observe(
    session: BrowserSession,
    secrets: SecretStore | None = None,
    *,
    screenshot: bool = True,
    axtree: bool = False,
) -> PageSnapshot:
    """Snapshot the active tab. Secret values are masked in the HTML and in the screenshot.
    ``axtree``: read its accessibility tree too (:mod:`live_runner.axtree`), same ids."""
    secrets = secrets or SecretStore()
    started = time.perf_counter()
    cdp = session.cdp()
    raw = cdp.send(
        "DOMSnapshot.captureSnapshot",
        {"computedStyles": list(LIVE_STYLES), "includeDOMRects": False},
    )
    page = snapshot_to_page(raw, secrets.redact)
    size = (session.settings.viewport_width, session.settings.viewport_height)
    tree = (
        read_axtree(cdp, raw, page, size, source="cdp", redact=secrets.redact) if axtree else None
    )
    capture_s = time.perf_counter() - started
    image = _screenshot(session, page.elements, secrets) if screenshot else None
    return PageSnapshot(
        url=secrets.redact(session.page.url),
        title=page.title,
        html=page.html,
        elements=page.elements,
        frames=page.frames,
        capture_s=capture_s,
        screenshot=image,
        axtree=tree,
    )


def _screenshot(
    session: BrowserSession, elements: dict[str, ElementInfo], secrets: SecretStore
) -> bytes | None:
    """The viewport as JPEG, with fields holding a secret painted over."""
    from playwright.sync_api import Error as PlaywrightError

    masked = [
        element_id
        for element_id, info in elements.items()
        if "{{secret:" in info.attributes.get("value", "")
        or (info.tag == "input" and info.attributes.get("type") == "password")
    ]
    found = [locate(session, element_id) for element_id in masked]
    locators = [f.locator for f in found if f.locator is not None]
    try:
        return session.page.screenshot(type="jpeg", quality=70, mask=locators, timeout=5000)
    except PlaywrightError:
        return None  # a screenshot is a convenience: a page that refuses one still runs
    finally:
        for f in found:
            release(session, f)
