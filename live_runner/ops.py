"""One function per live operation. Each raises :class:`ActionFailed` for a failure it
recognises; the executor turns every failure (and any Playwright error) into an outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from live_runner.actions import ElementLabel, FailureKind, LiveAction, LiveOp, select_values
from live_runner.errors import ActionFailed, SecretError
from live_runner.jsfiles import load_js
from live_runner.locate import Located, locate, release
from live_runner.safety import ConfirmCallback, SecretStore
from live_runner.settings import BrowserSettings
from live_runner.typed_values import InvalidValue, input_value, keyed
from webagent.method.act import point

if TYPE_CHECKING:
    from playwright.sync_api import Locator

    from live_runner.session import BrowserSession

#: how many candidate options a custom dropdown search looks at
_OPTION_CANDIDATES = 10
#: mouse moves a DRAG makes on its way (drag-and-drop libraries want to see it move)
_DRAG_STEPS = 12
#: the time a typed key may take, seconds (a long text gets a longer timeout)
_KEY_S = 0.05


@dataclass
class OpContext:
    session: BrowserSession
    settings: BrowserSettings
    secrets: SecretStore
    confirm: ConfirmCallback | None
    label: ElementLabel | None
    #: what the op did besides, for the previous-action line (e.g. a date's conversion)
    note: str = ""
    #: whether the op could tell for itself that nothing moved (a SCROLL at its end)
    unchanged: bool | None = None


def run_op(ctx: OpContext, action: LiveAction) -> None:
    """Perform ``action`` on the active tab; raise ActionFailed when it cannot be done."""
    handlers: dict[LiveOp, Callable[[OpContext, LiveAction], None]] = {
        LiveOp.CLICK: _element_op(_click),
        LiveOp.TYPE: _element_op(_type),
        LiveOp.SELECT: _element_op(_select),
        LiveOp.PRESS: _press,
        LiveOp.DRAG: _element_op(_drag),
        LiveOp.HOVER: _element_op(lambda ctx, action, found: _locator(found).hover()),
        LiveOp.GOTO: _goto,
        LiveOp.BACK: _back,
        LiveOp.SCROLL: _scroll,
        LiveOp.WAIT: _wait,
        LiveOp.STOP: lambda ctx, action: None,
    }
    handlers[action.op](ctx, action)


def _element_op(
    body: Callable[[OpContext, LiveAction, Located], None],
) -> Callable[[OpContext, LiveAction], None]:
    def run(ctx: OpContext, action: LiveAction) -> None:
        found = locate(ctx.session, action.element_id or "")
        if found.failure is not None or found.locator is None:
            raise ActionFailed(found.failure or FailureKind.ELEMENT_NOT_FOUND, found.message)
        try:
            body(ctx, action, found)
        finally:
            release(ctx.session, found)

    return run


def _confirm_submit(
    ctx: OpContext, locator: Locator, action: LiveAction, enter: bool = False
) -> None:
    if ctx.confirm is None:
        return
    enter = enter or action.press_enter
    target = locator.evaluate(load_js("submits_form"), enter)
    if not target:
        return
    what = ctx.label.render() if ctx.label else f"element id={action.element_id}"
    pressing = "pressing Enter in " if enter else ""
    if not ctx.confirm(f"{action.op.value} {pressing}{what} submits a form to {target}"):
        raise ActionFailed(FailureKind.DECLINED, "the user declined to submit the form")


def _click(ctx: OpContext, action: LiveAction, found: Located) -> None:
    locator = _locator(found)
    _confirm_submit(ctx, locator, action)
    at = point(action.value) if action.value else None
    if at is None:
        locator.click()
    else:
        locator.click(position={"x": at[0], "y": at[1]})


def _type(ctx: OpContext, action: LiveAction, found: Located) -> None:
    locator = _locator(found)
    _check_typeable(action, found)
    try:
        text = ctx.secrets.resolve(action.value)
    except SecretError as exc:
        raise ActionFailed(FailureKind.SECRET, str(exc)) from exc
    try:
        typed = input_value(found.input_type, text)
    except InvalidValue as exc:
        raise ActionFailed(FailureKind.INVALID_VALUE, ctx.secrets.redact(str(exc))) from exc
    if typed != text:
        ctx.note = f"typed as {typed}, the {found.input_type} field's format"
    if found.input_type == "range":  # a slider cannot be filled: set it, as its events would
        locator.evaluate(load_js("set_value"), typed)
    elif keyed(found.tag, found.input_type, typed):
        locator.fill("")  # then key by key, as a person types: pages that listen for keys
        if typed:  # (a terminal, an autocomplete) see every one
            timeout = max(ctx.settings.action_timeout_s, len(typed) * _KEY_S) * 1000
            locator.press_sequentially(typed, timeout=timeout)
    else:
        locator.fill(typed)
    if action.press_enter:
        _confirm_submit(ctx, locator, action)
        locator.press("Enter")


def _check_typeable(action: LiveAction, found: Located) -> None:
    """Fail at once, with the reason, where Playwright would wait for its timeout."""
    what = f"element id={action.element_id}"
    if not found.editable:
        hint = " (it is a <select>: use SELECT)" if found.tag == "select" else ""
        raise ActionFailed(
            FailureKind.NOT_EDITABLE, f"{what} is a <{found.tag}> that cannot be typed into{hint}"
        )
    if found.disabled:
        raise ActionFailed(FailureKind.DISABLED, f"{what} is disabled")
    if found.readonly:
        raise ActionFailed(
            FailureKind.NOT_EDITABLE,
            f"{what} is read-only: the page fills it from a picker or widget (click it and "
            "choose there, or use its keys)",
        )


def _select(ctx: OpContext, action: LiveAction, found: Located) -> None:
    locator = _locator(found)
    if found.tag != "select":
        _select_custom(ctx, action, locator)
        return
    wanted = [action.value]
    if found.multiple and len(select_values(action.value)) > 1:
        wanted = select_values(action.value)
    indexes = [_option_index(locator, value) for value in wanted]
    locator.select_option(index=indexes)


def _option_index(locator: Locator, value: str) -> int:
    match = locator.evaluate(load_js("find_option"), value)
    index = int(match.get("index", -1))
    if index < 0:
        options = ", ".join(repr(o) for o in match.get("options", [])[:15])
        raise ActionFailed(
            FailureKind.NO_SUCH_OPTION, f"no option {value!r}; the options are: {options}"
        )
    return index


def _select_custom(ctx: OpContext, action: LiveAction, control: Locator) -> None:
    """A custom dropdown, as a person would do it: open it, then click the option."""
    control.click()
    ctx.session.settle()
    page = ctx.session.page
    for frame in page.frames:
        groups = (
            frame.get_by_role("option", name=action.value, exact=True),
            frame.get_by_text(action.value, exact=True),
            frame.get_by_role("option", name=action.value),
        )
        for candidates in groups:
            for i in range(min(candidates.count(), _OPTION_CANDIDATES)):
                option = candidates.nth(i)
                if option.is_visible() and not _same_element(option, control):
                    option.click()
                    return
    raise ActionFailed(
        FailureKind.NO_SUCH_OPTION,
        f"opened the dropdown but no visible option reads {action.value!r}",
    )


def _same_element(a: Locator, b: Locator) -> bool:
    handle_a, handle_b = a.element_handle(), b.element_handle()
    if handle_a is None or handle_b is None:
        return False
    same: bool = handle_a.evaluate(load_js("same_element"), handle_b)
    return same


def _goto(ctx: OpContext, action: LiveAction) -> None:
    url = urljoin(ctx.session.page.url, action.value.strip())
    reason = ctx.session.guard.policy.why_blocked(url)
    if reason is not None:
        ctx.session.guard.record(url, reason, "navigation")
        return  # reported as a blocked navigation with the other blocks
    ctx.session.page.goto(url, wait_until="domcontentloaded")


def _back(ctx: OpContext, action: LiveAction) -> None:
    page = ctx.session.page
    before = page.url
    page.go_back(wait_until="domcontentloaded")
    if page.url == "about:blank" and before != "about:blank":
        page.go_forward(wait_until="domcontentloaded")  # the blank start of the tab
        raise ActionFailed(FailureKind.NAVIGATION_ERROR, "there is no previous page to go back to")
    if page.url == before:
        raise ActionFailed(FailureKind.NAVIGATION_ERROR, "there is no previous page to go back to")


def _press(ctx: OpContext, action: LiveAction) -> None:
    """A key (combination) in the element, which gets the focus first, or on the page."""
    if not action.element_id:
        ctx.session.page.keyboard.press(action.value)
        return

    def press(ctx: OpContext, action: LiveAction, found: Located) -> None:
        locator = _locator(found)
        if action.value == "Enter":
            _confirm_submit(ctx, locator, action, enter=True)
        locator.press(action.value)

    _element_op(press)(ctx, action)


def _drag(ctx: OpContext, action: LiveAction, found: Located) -> None:
    """Press on the element's centre, move (in steps) onto the target's centre or by the
    offset, release: what drag-and-drop and slider libraries listen for."""
    source = _centre(_locator(found), action.element_id or "")
    target_id = action.drop_target()
    if target_id is None:
        dx, dy = point(action.value) or (0.0, 0.0)
        goal = (source[0] + dx, source[1] + dy)
    else:
        found_target = locate(ctx.session, target_id)
        try:
            if found_target.locator is None:
                raise ActionFailed(
                    found_target.failure or FailureKind.ELEMENT_NOT_FOUND, found_target.message
                )
            goal = _centre(found_target.locator, target_id)
        finally:
            release(ctx.session, found_target)
    mouse = ctx.session.page.mouse
    mouse.move(*source)
    mouse.down()
    mouse.move(*goal, steps=_DRAG_STEPS)
    mouse.up()


def _centre(locator: Locator, element_id: str) -> tuple[float, float]:
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    if box is None:
        raise ActionFailed(FailureKind.NOT_VISIBLE, f"element id={element_id} is not visible")
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _scroll(ctx: OpContext, action: LiveAction) -> None:
    """Scroll the element (its content, by most of its size) or the page (a wheel turn);
    ``ctx.unchanged`` says whether anything moved (at the end, nothing does)."""
    if action.element_id:
        found = locate(ctx.session, action.element_id)
        if found.failure is not None or found.locator is None:
            raise ActionFailed(found.failure or FailureKind.ELEMENT_NOT_FOUND, found.message)
        try:
            moved = found.locator.evaluate(load_js("scroll_element"), action.value)
        finally:
            release(ctx.session, found)
    else:
        page = ctx.session.page
        before = page.evaluate(load_js("scroll_position"))
        step = (
            ctx.settings.viewport_width
            if action.value in ("left", "right")
            else ctx.settings.viewport_height
        ) * 0.8
        sign = -1 if action.value in ("up", "left") else 1
        horizontal = action.value in ("left", "right")
        page.mouse.wheel(sign * step if horizontal else 0, 0 if horizontal else sign * step)
        page.wait_for_timeout(_WHEEL_SETTLE_MS)
        moved = page.evaluate(load_js("scroll_position")) != before
    ctx.unchanged = not moved
    if not moved:
        ctx.note = f"nothing moved: already scrolled to the {_END[action.value]}"


#: a wheel turn scrolls smoothly; its position is read after this long
_WHEEL_SETTLE_MS = 200
_END = {"up": "top", "down": "bottom", "left": "left end", "right": "right end"}


def _wait(ctx: OpContext, action: LiveAction) -> None:
    ctx.session.page.wait_for_timeout(float(action.value or "1") * 1000)


def _locator(found: Located) -> Locator:
    if found.locator is None:  # locate() sets a failure whenever it has no locator
        raise ActionFailed(FailureKind.ELEMENT_NOT_FOUND, found.message or "element not found")
    return found.locator
