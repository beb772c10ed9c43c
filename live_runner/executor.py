"""Perform live actions and report what happened — never raising for a page's failures.

A failed action (element gone or detached, covered, disabled, no such option, navigation
error, blocked navigation, a dialog, a declined submit) becomes an :class:`ActionOutcome`
that the loop shows the agent as its previous action on the next step, and that the trace
records. After each action the executor waits (boundedly) for the page to settle, follows a
new tab or popup, and leaves any page that slipped outside the allowed domains.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from live_runner.actions import ActionOutcome, ElementLabel, FailureKind, LiveAction, LiveOp
from live_runner.errors import ActionFailed
from live_runner.ops import OpContext, run_op
from live_runner.safety import BlockedRequest, ConfirmCallback, SecretStore
from live_runner.session import BrowserSession, SessionEvents

if TYPE_CHECKING:
    from live_runner.observe import PageSnapshot

log = logging.getLogger(__name__)

# Playwright error text -> failure kind, checked in this order
_ERROR_PATTERNS: tuple[tuple[str, FailureKind, str], ...] = (
    ("intercepts pointer events", FailureKind.COVERED, "element is covered by another element"),
    ("not attached to the dom", FailureKind.DETACHED, "element was removed from the page"),
    ("element is detached", FailureKind.DETACHED, "element was removed from the page"),
    ("element is not enabled", FailureKind.DISABLED, "element is disabled"),
    ("element is not editable", FailureKind.NOT_EDITABLE, "element cannot be typed into"),
    ("not an <input>", FailureKind.NOT_EDITABLE, "element cannot be typed into"),
    ("element is not visible", FailureKind.NOT_VISIBLE, "element is not visible"),
    ("outside of the viewport", FailureKind.NOT_VISIBLE, "element is outside the page"),
    ("net::err_", FailureKind.NAVIGATION_ERROR, ""),
    ("has been closed", FailureKind.BROWSER_ERROR, "the page was closed"),
)


class Executor:
    """Runs :class:`LiveAction` s in a :class:`BrowserSession`."""

    def __init__(
        self,
        session: BrowserSession,
        *,
        secrets: SecretStore | None = None,
        confirm: ConfirmCallback | None = None,
    ) -> None:
        self.session = session
        self.secrets = secrets or SecretStore()
        self.confirm = confirm

    def execute(self, action: LiveAction, snapshot: PageSnapshot | None = None) -> ActionOutcome:
        from playwright.sync_api import Error as PlaywrightError

        started = time.perf_counter()
        session = self.session
        session.drain()
        # blocks between actions (a page's own timer, say) are reported with this action
        earlier = session.guard.drain()
        label = _label(action, snapshot)
        outcome = ActionOutcome(action=action, label=label, ok=True, url_before=session.page.url)
        ctx = OpContext(session, session.settings, self.secrets, self.confirm, label)
        attempted = True
        try:
            run_op(ctx, action)
            outcome.note = ctx.note
            outcome.no_effect = bool(ctx.unchanged)
        except ActionFailed as exc:
            _fail(outcome, exc.kind, exc.message)
            attempted = exc.kind not in (FailureKind.ELEMENT_NOT_FOUND, FailureKind.DETACHED)
        except PlaywrightError as exc:
            _fail(outcome, *classify(exc, session.settings.action_timeout_s))
        if attempted and action.op is not LiveOp.STOP:
            self._after(outcome)
        outcome.blocked = [f"{b.url} ({b.reason}, before this action)" for b in earlier] + (
            outcome.blocked
        )
        outcome.message = self.secrets.redact(outcome.message)
        outcome.blocked = [self.secrets.redact(b) for b in outcome.blocked]
        outcome.url_after = self.secrets.redact(
            "" if session.page.is_closed() else session.page.url
        )
        outcome.url_before = self.secrets.redact(outcome.url_before)
        outcome.elapsed_s = time.perf_counter() - started
        log.info("action %s", self.secrets.redact(outcome.describe()))
        return outcome

    def _after(self, outcome: ActionOutcome) -> None:
        """Settle, follow new tabs, leave off-site pages, and report what pages did."""
        session = self.session
        if not session.restore_active():
            _fail(outcome, FailureKind.BROWSER_ERROR, "every tab was closed")
            return
        session.settle()
        events = session.drain()
        self._adopt_new_pages(outcome, events)
        if events.offsite_commits:
            self._leave_offsite(outcome)
        if session.page.url.startswith("chrome-error://"):
            self._leave_error_page(outcome)
        _report(outcome, events, session.guard.drain())

    def _adopt_new_pages(self, outcome: ActionOutcome, events: SessionEvents) -> None:
        from playwright.sync_api import Error as PlaywrightError

        for page in events.new_pages:
            if page.is_closed():
                continue
            try:
                page.wait_for_load_state(
                    "domcontentloaded", timeout=self.session.settings.settle_timeout_s * 1000
                )
            except PlaywrightError:
                log.debug("a new tab did not finish loading in time")
            blank = page.url in ("", "about:blank") and self.session.guard.pending()
            if blank or self.session.guard.policy.why_blocked(page.url) is not None:
                # its navigation was blocked (or it never loaded): nothing to follow
                page.close()
                # a background tab gets no animation frames, and Playwright waits for them
                self.session.page.bring_to_front()
                continue
            self.session.switch_to(page)
            outcome.switched_page = True
            self.session.settle()

    def _leave_error_page(self, outcome: ActionOutcome) -> None:
        """A failed navigation left Chromium's error page: go back to where the action began."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            self.session.page.go_back(wait_until="domcontentloaded")
        except PlaywrightError as exc:
            log.warning("could not leave the error page: %s", str(exc).splitlines()[0])

    def _leave_offsite(self, outcome: ActionOutcome) -> None:
        from playwright.sync_api import Error as PlaywrightError

        page = self.session.page
        if self.session.guard.policy.why_blocked(page.url) is None:
            return
        try:
            page.go_back(wait_until="domcontentloaded")
            if self.session.guard.policy.why_blocked(page.url) is not None:
                page.goto(outcome.url_before or "about:blank", wait_until="domcontentloaded")
        except PlaywrightError as exc:
            log.warning("could not leave an off-site page: %s", str(exc).splitlines()[0])


def _label(action: LiveAction, snapshot: PageSnapshot | None) -> ElementLabel | None:
    if action.element_id is None or snapshot is None:
        return None
    return snapshot.label(action.element_id)


def _fail(outcome: ActionOutcome, kind: FailureKind, message: str) -> None:
    if not outcome.ok:
        return  # the first failure is the one that explains the rest
    outcome.ok, outcome.failure, outcome.message = False, kind, message


def classify(exc: Exception, timeout_s: float) -> tuple[FailureKind, str]:
    """A Playwright error as a failure kind and a message an agent can act on."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    text = str(exc)
    lower = text.lower()
    for pattern, kind, message in _ERROR_PATTERNS:
        if pattern in lower:
            if kind is FailureKind.NAVIGATION_ERROR:
                code = lower[lower.index("net::err_") :].split()[0].upper()
                return kind, f"navigation failed ({code})"
            return kind, message
    if isinstance(exc, PlaywrightTimeout):
        return FailureKind.TIMEOUT, f"the element did not become ready within {timeout_s:g} s"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return FailureKind.BROWSER_ERROR, first[:200]


def _report(outcome: ActionOutcome, events: SessionEvents, blocked: list[BlockedRequest]) -> None:
    navigations = [b for b in blocked if b.kind != "resource"]
    outcome.blocked = [f"{b.url} ({b.reason})" for b in blocked]
    outcome.dialogs = events.dialogs
    if navigations:
        first = navigations[0]
        _fail(
            outcome,
            FailureKind.BLOCKED_NAVIGATION,
            f"navigation to {first.url} was blocked: {first.reason}",
        )
    if events.failed_navigations:
        _fail(
            outcome,
            FailureKind.NAVIGATION_ERROR,
            f"navigation failed: {events.failed_navigations[0]}",
        )
    if events.dialogs:
        _fail(
            outcome,
            FailureKind.DIALOG,
            f"a dialog appeared and was dismissed ({events.dialogs[0]})",
        )
