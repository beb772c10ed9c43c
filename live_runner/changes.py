"""Did an action change the page? A cheap test on the observation's HTML (pure).

The page is what the agent reads: :mod:`live_runner.dom_snapshot`'s HTML, where every
element carries its id and its live state (values, checked, selected options, classes,
text). An action had *no visible effect* when no element changed between the page just before
it and the page after it (same ids, same start tags, same own text) — except elements that
also changed on their own between what the agent saw and the moment it acted: a clock, a
countdown (MiniWoB's "Time left"), a ticker. Their change says nothing about the action.

What the test cannot see, it does not judge (:func:`judged`): a SCROLL (the HTML does not
hold scroll positions; the op measures them itself), a DRAG (its effect is where things are,
and the HTML holds no inline styles), a HOVER, a key that only moves the focus (Tab), a CLICK
that focuses a text field, any action whose outcome changed the URL, opened a tab or
raised a dialog (:func:`unchanged`), and an action that ended a BrowserGym episode (the task
took it: what its page shows after says nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from live_runner.actions import ActionOutcome, LiveAction, LiveOp
from live_runner.observe import PageSnapshot

#: the operations whose effect shows in the page's HTML
_JUDGED = frozenset({LiveOp.CLICK, LiveOp.TYPE, LiveOp.SELECT, LiveOp.PRESS})
_FOCUS_KEYS = frozenset({"Tab", "Shift+Tab"})
_TEXT_FIELDS = frozenset({"textarea"})
_TEXT_INPUTS = frozenset({"text", "search", "email", "password", "tel", "url", "number", ""})
_TOKEN = re.compile(r"<(/?)([a-zA-Z][-a-zA-Z0-9]*)([^>]*)>|([^<]+)")
_ID = re.compile(r'\sbackend_node_id="([^"]*)"')
_VOID = frozenset(
    {"input", "img", "br", "hr", "area", "col", "embed", "source", "track", "wbr", "param"}
)


def element_states(html: str) -> dict[str, str]:
    """Each element id's start tag and own text (text outside any element with an id is
    its nearest such ancestor's)."""
    states: dict[str, list[str]] = {}
    open_tags: list[tuple[str, str | None]] = []
    for close, tag, rest, text in _TOKEN.findall(html):
        if text:
            owner = next((i for _, i in reversed(open_tags) if i is not None), None)
            if owner is not None and text.strip():
                states[owner].append(" ".join(text.split()))
        elif close:
            while open_tags and open_tags.pop()[0] != tag.lower():
                pass
        else:
            found = _ID.search(rest)
            element_id = found.group(1) if found else None
            if element_id is not None:
                states[element_id] = [f"<{tag}{rest}>"]
            if tag.lower() not in _VOID and not rest.endswith("/"):
                open_tags.append((tag.lower(), element_id))
    return {k: " ".join(v) for k, v in states.items()}


def changed(before: Mapping[str, str], after: Mapping[str, str]) -> set[str]:
    """Ids whose element appeared, went, or changed its start tag or own text."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def judged(action: LiveAction, page: PageSnapshot) -> bool:
    """Whether the page's HTML can show this action's effect (module doc)."""
    if action.op not in _JUDGED or (action.op is LiveOp.PRESS and action.value in _FOCUS_KEYS):
        return False
    if action.op is LiveOp.CLICK and action.element_id:
        info = page.elements.get(action.element_id)
        text_field = info is not None and (
            info.tag in _TEXT_FIELDS
            or (info.tag == "input" and info.attributes.get("type", "").lower() in _TEXT_INPUTS)
        )
        return not text_field  # a click into a text field focuses it: nothing to see
    return True


def unchanged(outcome: ActionOutcome, seen: str, before: str, after: str) -> bool:
    """No visible effect: the action succeeded, stayed on its URL with no tab or dialog, and
    every element that changed from ``before`` to ``after`` had changed on its own from
    ``seen`` (the page the agent read) to ``before`` (just before the action)."""
    if not outcome.ok or outcome.switched_page or outcome.dialogs:
        return False
    if outcome.url_after != outcome.url_before:
        return False
    start = element_states(before)
    moved = changed(start, element_states(after))
    return not moved or moved <= changed(element_states(seen), start)
