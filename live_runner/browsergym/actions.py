"""Live actions as BrowserGym high-level actions, and BrowserGym's errors as outcomes (pure).

=====================  ==================================================================
live action            BrowserGym (``browsergym.core.action.highlevel``)
=====================  ==================================================================
CLICK                  ``click(bid)``; at ``x,y``: ``mouse_click(X, Y)`` (the element's box)
TYPE                   a text field: ``clear(bid)``, ``focus(bid)``, ``keyboard_type(value)``
                       (key by key, as the executor types); a date, time or number field:
                       ``fill(bid, value)`` in its format (a date typed as the task words it:
                       ``live_runner.typed_values``); empty: ``clear(bid)``; then
                       ``press(bid, "Enter")`` when asked
SELECT                 ``select_option(bid, value)``; several (``a|b``) in a list that takes
                       them: ``select_option(bid, ["a", "b"])``
PRESS                  ``press(bid, key)``; on the page: ``keyboard_press(key)``
SCROLL                 ``scroll(dx, dy)``; in an element: ``hover(bid)`` then ``scroll(dx, dy)``
DRAG                   ``drag_and_drop(bid, target)``; by ``dx,dy``:
                       ``mouse_drag_and_drop(x, y, x + dx, y + dy)`` (the element's centre)
HOVER                  ``hover(bid)``
WAIT / GOTO / BACK     ``noop(ms)`` / ``goto(url)`` / ``go_back()``
STOP                   ``send_msg_to_user(answer)``
no usable action       ``noop()``
=====================  ==================================================================

An action that cannot be sent as it is (a TYPE into a read-only or disabled field, a value
the field cannot hold, a point on an element without a box) raises :class:`NotSendable`
with the reason; the step is then ``noop()`` and the agent is told why. Strings are written
as Python literals, which is what BrowserGym's action parser reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from live_runner.actions import (
    ActionOutcome,
    ElementLabel,
    FailureKind,
    LiveAction,
    LiveOp,
    select_values,
)
from live_runner.dom_snapshot import ElementInfo
from live_runner.observe import PageSnapshot
from live_runner.typed_values import InvalidValue, input_value, keyed
from webagent.method.act import point

#: pixels one SCROLL moves
SCROLL_PIXELS = 500
#: the BrowserGym action of a step without a usable action
NOOP = "noop()"
#: BrowserGym's action subsets these actions need (``HighLevelActionSet(subsets=...)``):
#: ``coord`` for a key on the page, a click at a point and a drag by an offset
ACTION_SUBSETS = ("chat", "bid", "nav", "coord")
_SCROLL = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
_FAILURES = (
    ("TimeoutError", FailureKind.TIMEOUT),
    ("Could not find element", FailureKind.ELEMENT_NOT_FOUND),
    ("not attached", FailureKind.DETACHED),
    ("intercepts pointer events", FailureKind.COVERED),
    ("not visible", FailureKind.NOT_VISIBLE),
    ("not enabled", FailureKind.DISABLED),
    ("disabled", FailureKind.DISABLED),
    ("not an <input>", FailureKind.NOT_EDITABLE),
    ("not editable", FailureKind.NOT_EDITABLE),
    ("Malformed value", FailureKind.INVALID_VALUE),
    ("did not find some options", FailureKind.NO_SUCH_OPTION),
    ("net::ERR_", FailureKind.NAVIGATION_ERROR),
)
_MAX_MESSAGE = 300


class NotSendable(ValueError):
    """An action BrowserGym would fail on (or wait for its timeout), and why."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class Sending:
    """What goes to BrowserGym for an agent's action: the action text, or ``noop()`` and why
    the action was not sent (``kind``); ``note`` says how a TYPE was converted."""

    action: LiveAction | None
    text: str
    kind: FailureKind | None = None
    why: str = ""
    note: str = ""


def prepare(action: LiveAction | None, why_invalid: str, page: PageSnapshot) -> Sending:
    """The BrowserGym action for ``action`` chosen on ``page``; an id that is no ``bid`` on
    the page, or an action BrowserGym would fail on, becomes ``noop()`` with its reason."""
    if action is None:
        return Sending(None, NOOP, why=why_invalid)
    for element_id in (action.element_id, action.drop_target()):
        if element_id and element_id not in page.elements:
            why = f"element {element_id!r} has no BrowserGym id (bid) on this page"
            return Sending(None, NOOP, FailureKind.ELEMENT_NOT_FOUND, why)
    try:
        text = to_browsergym(action, page)
    except NotSendable as exc:
        return Sending(action, NOOP, exc.kind, exc.message)
    return Sending(action, text, note=typed_note(action, page))


def to_browsergym(action: LiveAction | None, page: PageSnapshot | None = None) -> str:
    """The BrowserGym high-level action for ``action`` (``noop()`` for None). ``page`` (the
    page the action was chosen on) gives an input's type and an element's box."""
    if action is None:
        return NOOP
    bid, value = repr(action.element_id or ""), repr(action.value)
    info = page.elements.get(action.element_id or "") if page is not None else None
    op = action.op
    if op is LiveOp.CLICK:
        at = point(action.value) if action.value else None
        if at is None:
            return f"click({bid})"
        x, y = _corner(action, info)
        return f"mouse_click({_num(x + at[0])}, {_num(y + at[1])})"
    if op is LiveOp.TYPE:
        return _type(action, info)
    if op is LiveOp.SELECT:
        return _select(action, info)
    if op is LiveOp.PRESS:
        key = repr(action.value)
        return f"press({bid}, {key})" if action.element_id else f"keyboard_press({key})"
    if op is LiveOp.SCROLL:
        dx, dy = (SCROLL_PIXELS * d for d in _SCROLL[action.value])
        wheel = f"scroll({dx}, {dy})"
        return f"hover({bid})\n{wheel}" if action.element_id else wheel
    if op is LiveOp.DRAG:
        return _drag(action, info)
    if op is LiveOp.HOVER:
        return f"hover({bid})"
    if op is LiveOp.WAIT:
        return f"noop({round(float(action.value or '1') * 1000)})"
    if op is LiveOp.GOTO:
        return f"goto({value})"
    if op is LiveOp.BACK:
        return "go_back()"
    return f"send_msg_to_user({value})"  # STOP: the answer goes to the user's chat


def typed(action: LiveAction, info: ElementInfo | None) -> str:
    """What a TYPE puts into the element: its value in the input's format (NotSendable when
    the field is read-only or disabled, or cannot hold the value)."""
    attrs = info.attributes if info is not None else {}
    what = f"element id={action.element_id}"
    if "disabled" in attrs:
        raise NotSendable(FailureKind.DISABLED, f"{what} is disabled")
    if "readonly" in attrs:
        raise NotSendable(
            FailureKind.NOT_EDITABLE,
            f"{what} is read-only: the page fills it from a picker or widget (click it and "
            "choose there, or use its keys)",
        )
    input_type = attrs.get("type", "text") if info is not None and info.tag == "input" else ""
    try:
        return input_value(input_type, action.value)
    except InvalidValue as exc:
        raise NotSendable(FailureKind.INVALID_VALUE, str(exc)) from exc


def typed_note(action: LiveAction | None, page: PageSnapshot | None) -> str:
    """The previous-action note of a TYPE converted to the field's format, else ``""``."""
    if action is None or action.op is not LiveOp.TYPE or page is None:
        return ""
    info = page.elements.get(action.element_id or "")
    try:
        value = typed(action, info)
    except NotSendable:
        return ""
    kind = info.attributes.get("type", "") if info is not None else ""
    return f"typed as {value}, the {kind} field's format" if value != action.value else ""


def _type(action: LiveAction, info: ElementInfo | None) -> str:
    bid = repr(action.element_id or "")
    value = typed(action, info)
    if not value:
        text = f"clear({bid})"
    elif info is not None and _keyed(info, value):
        text = f"clear({bid})\nfocus({bid})\nkeyboard_type({value!r})"
    else:
        text = f"fill({bid}, {value!r})"
    return f"{text}\npress({bid}, 'Enter')" if action.press_enter else text


def _keyed(info: ElementInfo, value: str) -> bool:
    editable = info.tag in ("input", "textarea") or "contenteditable" in info.attributes
    return editable and keyed(info.tag, info.attributes.get("type", "").lower(), value)


def _select(action: LiveAction, info: ElementInfo | None) -> str:
    bid = repr(action.element_id or "")
    several = select_values(action.value)
    if info is not None and "multiple" in info.attributes and len(several) > 1:
        return f"select_option({bid}, {several!r})"
    return f"select_option({bid}, {action.value!r})"


def _drag(action: LiveAction, info: ElementInfo | None) -> str:
    target = action.drop_target()
    if target is not None:
        return f"drag_and_drop({action.element_id or ''!r}, {target!r})"
    dx, dy = point(action.value) or (0.0, 0.0)
    x, y = _centre(action, info)
    return f"mouse_drag_and_drop({_num(x)}, {_num(y)}, {_num(x + dx)}, {_num(y + dy)})"


def _box(action: LiveAction, info: ElementInfo | None) -> tuple[float, float, float, float]:
    if info is None or info.bounds is None:
        raise NotSendable(
            FailureKind.NOT_VISIBLE,
            f"element id={action.element_id} has no box on the page to act at a point of",
        )
    return info.bounds


def _corner(action: LiveAction, info: ElementInfo | None) -> tuple[float, float]:
    x, y, _, _ = _box(action, info)
    return x, y


def _centre(action: LiveAction, info: ElementInfo | None) -> tuple[float, float]:
    x, y, width, height = _box(action, info)
    return x + width / 2, y + height / 2


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def failure_kind(error: str) -> FailureKind:
    """The failure BrowserGym's ``last_action_error`` describes."""
    for marker, kind in _FAILURES:
        if marker in error:
            return kind
    return FailureKind.BROWSER_ERROR


def sent_outcome(
    sending: Sending, label: ElementLabel | None, error: str, *, url_before: str, url_after: str
) -> ActionOutcome:
    """The outcome of a :class:`Sending` once BrowserGym ran it (``error``: its
    ``last_action_error``)."""
    return outcome(
        sending.action,
        label,
        error if sending.kind is None else "",
        url_before=url_before,
        url_after=url_after,
        why_invalid=sending.why,
        kind=sending.kind,
        note=sending.note,
    )


def outcome(
    action: LiveAction | None,
    label: ElementLabel | None,
    error: str,
    *,
    url_before: str,
    url_after: str,
    why_invalid: str = "",
    kind: FailureKind | None = None,
    note: str = "",
) -> ActionOutcome:
    """What came of one action, from BrowserGym's ``last_action_error`` after it ran (or,
    ``kind`` given, why it was not sent: the action is then reported, failed, as it was)."""
    if action is None:
        return ActionOutcome(
            action=None,
            ok=False,
            failure=kind or FailureKind.INVALID_ACTION,
            message=why_invalid or "the agent produced no action",
            url_before=url_before,
            url_after=url_after,
        )
    error = error.strip()
    first = error.splitlines()[0] if error else ""
    failed = bool(error) or kind is not None
    return ActionOutcome(
        action=action,
        label=label,
        ok=not failed,
        failure=(kind or failure_kind(error)) if failed else None,
        message=(why_invalid if kind is not None else first)[:_MAX_MESSAGE],
        note=note if not failed else "",
        url_before=url_before,
        url_after=url_after,
    )
