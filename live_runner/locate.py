"""Resolve an element id (a CDP ``backendNodeId``) to a Playwright locator in its frame.

``DOM.resolveNode`` finds the live node, a small script tags it with a one-off attribute, and
the frame that holds the tagged element gives the locator (CSS locators pierce open shadow
roots). Playwright then brings its own actionability checks: visible, stable, not covered.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from live_runner.actions import FailureKind
from live_runner.jsfiles import load_js

if TYPE_CHECKING:
    from playwright.sync_api import Locator

    from live_runner.session import BrowserSession

TARGET_ATTR = "data-webagent-target"


@dataclass
class Located:
    """A found element, or why it could not be found."""

    element_id: str
    locator: Locator | None = None
    tag: str = ""
    editable: bool = False
    #: an <input>'s type ("text" when it names none), else ""
    input_type: str = ""
    readonly: bool = False
    disabled: bool = False
    #: a <select multiple>
    multiple: bool = False
    object_id: str | None = None
    failure: FailureKind | None = None
    message: str = ""


def locate(session: BrowserSession, element_id: str) -> Located:
    from playwright.sync_api import Error as PlaywrightError

    found = Located(element_id)
    if not element_id.isdigit():
        found.failure = FailureKind.ELEMENT_NOT_FOUND
        found.message = f"there is no element with id={element_id} on this page"
        return found
    cdp = session.cdp()
    try:
        node = cdp.send("DOM.resolveNode", {"backendNodeId": int(element_id)})
        found.object_id = node["object"]["objectId"]
        token = f"{element_id}-{uuid.uuid4().hex[:10]}"
        result = _call(session, found.object_id, "tag_element", [TARGET_ATTR, token])
    except PlaywrightError:
        found.failure = FailureKind.ELEMENT_NOT_FOUND
        found.message = f"element id={element_id} is no longer on the page"
        return found
    if not result.get("connected"):
        found.failure = FailureKind.DETACHED
        found.message = f"element id={element_id} was removed from the page"
        return found
    found.tag, found.editable = str(result.get("tag", "")), bool(result.get("editable"))
    found.input_type = str(result.get("type", ""))
    found.readonly, found.disabled = bool(result.get("readonly")), bool(result.get("disabled"))
    found.multiple = bool(result.get("multiple"))
    selector = f'[{TARGET_ATTR}="{token}"]'
    for frame in session.page.frames:
        try:
            if frame.locator(selector).count() > 0:
                found.locator = frame.locator(selector).first
                return found
        except PlaywrightError:
            continue  # a frame that detached meanwhile
    found.failure = FailureKind.ELEMENT_NOT_FOUND
    found.message = f"element id={element_id} is in a part of the page that cannot be reached"
    return found


def release(session: BrowserSession, found: Located) -> None:
    """Remove the tag again (best effort: the page may have navigated away)."""
    from playwright.sync_api import Error as PlaywrightError

    if found.object_id is None or session.page.is_closed():
        return
    try:
        _call(session, found.object_id, "untag_element", [TARGET_ATTR])
    except PlaywrightError:
        return


def _call(session: BrowserSession, object_id: str, script: str, args: list[Any]) -> Any:
    reply = session.cdp().send(
        "Runtime.callFunctionOn",
        {
            "objectId": object_id,
            "functionDeclaration": load_js(script),
            "arguments": [{"value": a} for a in args],
            "returnByValue": True,
        },
    )
    if "exceptionDetails" in reply:
        return {}
    return reply.get("result", {}).get("value", {})
