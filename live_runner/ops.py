"""One function per live operation. Each raises :class:`ActionFailed` for a failure it
recognises; the executor turns every failure (and any Playwright error) into an outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from live_runner.actions import ElementLabel, FailureKind, LiveAction, LiveOp
from live_runner.errors import ActionFailed, SecretError
from live_runner.jsfiles import load_js
from live_runner.locate import Located, locate, release
from live_runner.safety import ConfirmCallback, SecretStore
from live_runner.settings import BrowserSettings

if TYPE_CHECKING:
    from playwright.sync_api import Locator

    from live_runner.session import BrowserSession

#: how many candidate options a custom dropdown search looks at
_OPTION_CANDIDATES = 10


@dataclass
class OpContext:
    session: BrowserSession
    settings: BrowserSettings
    secrets: SecretStore
    confirm: ConfirmCallback | None
    label: ElementLabel | None


def run_op(ctx: OpContext, action: LiveAction) -> None:
    """Perform ``action`` on the active tab; raise ActionFailed when it cannot be done."""
    handlers: dict[LiveOp, Callable[[OpContext, LiveAction], None]] = {
        LiveOp.CLICK: _element_op(_click),
        LiveOp.TYPE: _element_op(_type),
        LiveOp.SELECT: _element_op(_select),
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


def _confirm_submit(ctx: OpContext, locator: Locator, action: LiveAction) -> None:
    if ctx.confirm is None:
        return
    target = locator.evaluate(load_js("submits_form"), action.press_enter)
    if not target:
        return
    what = ctx.label.render() if ctx.label else f"element id={action.element_id}"
    enter = "pressing Enter in " if action.press_enter else ""
    if not ctx.confirm(f"{action.op.value} {enter}{what} submits a form to {target}"):
        raise ActionFailed(FailureKind.DECLINED, "the user declined to submit the form")


def _click(ctx: OpContext, action: LiveAction, found: Located) -> None:
    locator = _locator(found)
    _confirm_submit(ctx, locator, action)
    locator.click()


def _type(ctx: OpContext, action: LiveAction, found: Located) -> None:
    locator = _locator(found)
    if not found.editable:
        hint = " (it is a <select>: use SELECT)" if found.tag == "select" else ""
        raise ActionFailed(
            FailureKind.NOT_EDITABLE,
            f"element id={action.element_id} is a <{found.tag}> that cannot be typed into{hint}",
        )
    try:
        text = ctx.secrets.resolve(action.value)
    except SecretError as exc:
        raise ActionFailed(FailureKind.SECRET, str(exc)) from exc
    locator.fill(text)
    if action.press_enter:
        _confirm_submit(ctx, locator, action)
        locator.press("Enter")


def _select(ctx: OpContext, action: LiveAction, found: Located) -> None:
    locator = _locator(found)
    if found.tag != "select":
        _select_custom(ctx, action, locator)
        return
    match = locator.evaluate(load_js("find_option"), action.value)
    index = int(match.get("index", -1))
    if index < 0:
        options = ", ".join(repr(o) for o in match.get("options", [])[:15])
        raise ActionFailed(
            FailureKind.NO_SUCH_OPTION, f"no option {action.value!r}; the options are: {options}"
        )
    locator.select_option(index=index)


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


def _scroll(ctx: OpContext, action: LiveAction) -> None:
    if action.element_id:
        found = locate(ctx.session, action.element_id)
        if found.failure is not None or found.locator is None:
            raise ActionFailed(found.failure or FailureKind.ELEMENT_NOT_FOUND, found.message)
        try:
            found.locator.evaluate(load_js("scroll_element"), action.value)
        finally:
            release(ctx.session, found)
        return
    step = ctx.settings.viewport_height * 0.8
    ctx.session.page.mouse.wheel(0, -step if action.value == "up" else step)


def _wait(ctx: OpContext, action: LiveAction) -> None:
    ctx.session.page.wait_for_timeout(float(action.value or "1") * 1000)


def _locator(found: Located) -> Locator:
    if found.locator is None:  # locate() sets a failure whenever it has no locator
        raise ActionFailed(FailureKind.ELEMENT_NOT_FOUND, found.message or "element not found")
    return found.locator
