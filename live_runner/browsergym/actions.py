"""Live actions as BrowserGym high-level actions, and BrowserGym's errors as outcomes (pure).

``CLICK`` → ``click(bid)``, ``TYPE`` → ``fill(bid, value)`` (then ``press(bid, "Enter")``
when asked), ``SELECT`` → ``select_option(bid, value)``, ``SCROLL`` → ``scroll(0, ±dy)``,
``WAIT`` → ``noop(ms)``, ``GOTO`` → ``goto(url)``, ``BACK`` → ``go_back()``, ``STOP`` →
``send_msg_to_user(answer)``. A step without a usable action is ``noop()``. Strings are
written as Python literals, which is what BrowserGym's action parser reads.
"""

from __future__ import annotations

from live_runner.actions import ActionOutcome, ElementLabel, FailureKind, LiveAction, LiveOp

#: pixels one SCROLL moves
SCROLL_PIXELS = 500
#: the BrowserGym action of a step without a usable action
NOOP = "noop()"
#: BrowserGym's action subsets these actions need (``HighLevelActionSet(subsets=...)``)
ACTION_SUBSETS = ("chat", "bid", "nav")
_FAILURES = (
    ("TimeoutError", FailureKind.TIMEOUT),
    ("Could not find element", FailureKind.ELEMENT_NOT_FOUND),
    ("not attached", FailureKind.DETACHED),
    ("intercepts pointer events", FailureKind.COVERED),
    ("not visible", FailureKind.NOT_VISIBLE),
    ("not enabled", FailureKind.DISABLED),
    ("disabled", FailureKind.DISABLED),
    ("not an <input>", FailureKind.NOT_EDITABLE),
    ("did not find some options", FailureKind.NO_SUCH_OPTION),
    ("net::ERR_", FailureKind.NAVIGATION_ERROR),
)
_MAX_MESSAGE = 300


def to_browsergym(action: LiveAction | None) -> str:
    """The BrowserGym high-level action for ``action`` (``noop()`` for None)."""
    if action is None:
        return NOOP
    bid, value = repr(action.element_id or ""), repr(action.value)
    op = action.op
    if op is LiveOp.CLICK:
        return f"click({bid})"
    if op is LiveOp.TYPE:
        fill = f"fill({bid}, {value})"
        return f"{fill}\npress({bid}, 'Enter')" if action.press_enter else fill
    if op is LiveOp.SELECT:
        return f"select_option({bid}, {value})"
    if op is LiveOp.SCROLL:
        return f"scroll(0, {SCROLL_PIXELS if action.value == 'down' else -SCROLL_PIXELS})"
    if op is LiveOp.WAIT:
        return f"noop({round(float(action.value or '1') * 1000)})"
    if op is LiveOp.GOTO:
        return f"goto({value})"
    if op is LiveOp.BACK:
        return "go_back()"
    return f"send_msg_to_user({value})"  # STOP: the answer goes to the user's chat


def failure_kind(error: str) -> FailureKind:
    """The failure BrowserGym's ``last_action_error`` describes."""
    for marker, kind in _FAILURES:
        if marker in error:
            return kind
    return FailureKind.BROWSER_ERROR


def outcome(
    action: LiveAction | None,
    label: ElementLabel | None,
    error: str,
    *,
    url_before: str,
    url_after: str,
    why_invalid: str = "",
) -> ActionOutcome:
    """What came of one action, from BrowserGym's ``last_action_error`` after it ran."""
    if action is None:
        return ActionOutcome(
            action=None,
            ok=False,
            failure=FailureKind.INVALID_ACTION,
            message=why_invalid or "the agent produced no action",
            url_before=url_before,
            url_after=url_after,
        )
    error = error.strip()
    first = error.splitlines()[0] if error else ""
    return ActionOutcome(
        action=action,
        label=label,
        ok=not error,
        failure=failure_kind(error) if error else None,
        message=first[:_MAX_MESSAGE],
        url_before=url_before,
        url_after=url_after,
    )
