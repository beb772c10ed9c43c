"""The browser, a browsing session (one context, its tabs) and what happened in it.

There is no module-level Playwright: :func:`open_browser` starts one and closes it, and each
:class:`BrowserSession` owns one context with the navigation guard installed before any page
opens. Page events (dialogs, failed navigations, new tabs, off-site commits) are collected
here and drained by the executor after each action.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from live_runner.errors import BrowserLaunchError, LiveRunnerError
from live_runner.jsfiles import load_js
from live_runner.safety import NavigationGuard
from live_runner.settings import BrowserSettings
from webagent.errors import MissingDependencyError

if TYPE_CHECKING:
    from playwright.sync_api import Browser, CDPSession, Dialog, Frame, Page, Request

log = logging.getLogger(__name__)


@contextmanager
def open_browser(settings: BrowserSettings) -> Iterator[Browser]:
    """Start Playwright and Chromium; both are closed on exit."""
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise MissingDependencyError("playwright", "live") from exc
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=settings.executable_path,
                args=list(settings.args),
                headless=settings.headless,
            )
        except PlaywrightError as exc:
            where = settings.executable_path or "Playwright's own Chromium"
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BrowserLaunchError(
                f"could not start Chromium ({where}): {first}. Pass --browser-path with a "
                "Chromium binary (e.g. /usr/bin/chromium) or run: playwright install chromium"
            ) from exc
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class SessionEvents:
    """What pages did since the last drain."""

    dialogs: list[str] = field(default_factory=list)
    failed_navigations: list[str] = field(default_factory=list)
    new_pages: list[Page] = field(default_factory=list)
    offsite_commits: list[str] = field(default_factory=list)


class BrowserSession:
    """One browser context: its tabs, the active one, and a CDP session per tab."""

    def __init__(
        self,
        browser: Browser,
        settings: BrowserSettings,
        guard: NavigationGuard,
        redact: Callable[[str], str] = lambda s: s,
    ) -> None:
        self.settings = settings
        self.guard = guard
        self._redact = redact
        self.context = browser.new_context(
            viewport={"width": settings.viewport_width, "height": settings.viewport_height},
            service_workers="block",  # a service worker would answer requests past the guard
            accept_downloads=False,
        )
        self.context.set_default_timeout(settings.action_timeout_s * 1000)
        self.context.set_default_navigation_timeout(settings.navigation_timeout_s * 1000)
        guard.install(self.context)
        self._events = SessionEvents()
        self._cdp: dict[Page, CDPSession] = {}
        self._stack: list[Page] = []
        self.context.on("page", self._on_page)
        self.page = self.context.new_page()

    # -- pages -------------------------------------------------------------------------------

    def _on_page(self, page: Page) -> None:
        page.on("dialog", self._on_dialog)
        page.on("framenavigated", self._on_navigated)
        page.on("requestfailed", self._on_request_failed)
        if self._stack:
            self._events.new_pages.append(page)
        self._stack.append(page)

    def switch_to(self, page: Page) -> None:
        self.page = page
        page.bring_to_front()

    def restore_active(self) -> bool:
        """After the active tab closed, make the newest open tab active. False if none is."""
        self._stack = [p for p in self._stack if not p.is_closed()]
        if not self.page.is_closed():
            return True
        if not self._stack:
            return False
        self.switch_to(self._stack[-1])
        return True

    def cdp(self) -> CDPSession:
        """The CDP session of the active tab (made once per tab)."""
        session = self._cdp.get(self.page)
        if session is None:
            session = self.context.new_cdp_session(self.page)
            self._cdp[self.page] = session
        return session

    def goto(self, url: str) -> None:
        """Open ``url`` in the active tab and let it settle (the start of a run)."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            self.page.goto(url, wait_until="domcontentloaded")
        except PlaywrightError as exc:
            raise LiveRunnerError(f"could not open {url}: {_first_line(exc)}") from exc
        self.settle()

    def settle(self) -> None:
        """Wait, boundedly, for the active tab to load and its DOM to go quiet."""
        from playwright.sync_api import Error as PlaywrightError

        timeout_ms = self.settings.settle_timeout_s * 1000
        if timeout_ms <= 0 or self.page.is_closed():
            return
        with contextlib.suppress(PlaywrightError):  # a slow image must not stall the run
            self.page.wait_for_load_state("load", timeout=timeout_ms)
        try:
            self.page.evaluate(load_js("settle"), [self.settings.settle_quiet_ms, timeout_ms])
        except PlaywrightError:
            # navigated while waiting (the old document is gone): wait for the new one, once
            with contextlib.suppress(PlaywrightError):
                self.page.wait_for_load_state("domcontentloaded", timeout=timeout_ms)

    # -- events ------------------------------------------------------------------------------

    def _on_dialog(self, dialog: Dialog) -> None:
        message = self._redact(dialog.message)
        self._events.dialogs.append(f"{dialog.type}: {message}" if message else dialog.type)
        if dialog.type == "beforeunload":
            dialog.accept()
        else:
            dialog.dismiss()

    def _on_navigated(self, frame: Frame) -> None:
        if frame.parent_frame is not None:
            return
        reason = self.guard.policy.why_blocked(frame.url)
        if reason is not None:
            # a later redirect hop got past the request check: report it and leave the page
            self.guard.record(frame.url, reason, "committed")
            self._events.offsite_commits.append(frame.url)

    def _on_request_failed(self, request: Request) -> None:
        if not request.is_navigation_request():
            return
        error = request.failure or "failed"
        self._events.failed_navigations.append(f"{self._redact(request.url)}: {error}")

    def drain(self) -> SessionEvents:
        events, self._events = self._events, SessionEvents()
        return events

    def close(self) -> None:
        from playwright.sync_api import Error as PlaywrightError

        try:
            self.context.close()
        except PlaywrightError as exc:  # the browser is already gone: nothing left to close
            log.debug("closing the browser context failed: %s", _first_line(exc))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
