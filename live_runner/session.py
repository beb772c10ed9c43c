"""The browser, a browsing session (one context, its tabs) and what happened in it.

There is no module-level Playwright: :func:`open_browser` starts one and closes it, and each
:class:`BrowserSession` owns one context with the navigation guard installed before any page
opens. Page events (dialogs, failed navigations, new tabs, off-site commits) are collected
here and drained by the executor after each action.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from live_runner.errors import BrowserLaunchError, LiveRunnerError
from live_runner.jsfiles import load_js
from live_runner.safety import NavigationGuard
from live_runner.settings import BrowserSettings
from webagent.errors import MissingDependencyError

if TYPE_CHECKING:
    from playwright.sync_api import Browser, CDPSession, Dialog, Frame, Page, Request

log = logging.getLogger(__name__)

#: a system Chromium, looked for on PATH when Playwright's own browser is absent (Debian and
#: Ubuntu install ``chromium``; some distributions name it ``chromium-browser``)
SYSTEM_CHROMIUM = ("chromium", "chromium-browser")


@dataclass(frozen=True)
class ChromiumChoice:
    """The binary to launch (None: Playwright's own) and, in words, why it was chosen."""

    path: Path | None
    why: str


def choose_chromium(
    configured: Path | None,
    playwright_path: str | None,
    names: Sequence[str] = SYSTEM_CHROMIUM,
    which: Callable[[str], str | None] = shutil.which,
) -> ChromiumChoice:
    """Which Chromium to start: the configured one (``--browser-path`` or
    ``WEBAGENT_CHROMIUM``), else Playwright's own browser if it is installed, else a system
    Chromium on PATH (Debian's ``/usr/bin/chromium``), else Playwright's (whose launch error
    then says what to install)."""
    if configured is not None:
        return ChromiumChoice(configured, "as configured (--browser-path / WEBAGENT_CHROMIUM)")
    if playwright_path and Path(playwright_path).is_file():
        return ChromiumChoice(None, f"Playwright's own Chromium ({playwright_path})")
    for name in names:
        found = which(name)
        if found:
            return ChromiumChoice(
                Path(found), "the system's Chromium (Playwright's own browser is not installed)"
            )
    return ChromiumChoice(None, "Playwright's own Chromium (no system Chromium on PATH either)")


def _playwright_chromium_path(playwright: object) -> str | None:
    try:
        return str(playwright.chromium.executable_path)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an unknown install layout: look elsewhere
        return None


@contextmanager
def open_browser(settings: BrowserSettings) -> Iterator[Browser]:
    """Start Playwright and Chromium (see :func:`choose_chromium`); both are closed on exit.

    Which binary is used is logged: at INFO when it is the configured one or Playwright's, as
    a warning (shown without ``--verbose``) when Playwright's is absent and the system's is
    used instead.
    """
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise MissingDependencyError("playwright", "live") from exc
    with sync_playwright() as playwright:
        choice = choose_chromium(settings.executable_path, _playwright_chromium_path(playwright))
        system = choice.path is not None and settings.executable_path is None
        log.log(
            logging.WARNING if system else logging.INFO,
            "browser: %s, %s",
            choice.path or "Playwright's Chromium",
            choice.why,
        )
        try:
            browser = playwright.chromium.launch(
                executable_path=choice.path,
                args=list(settings.args),
                headless=settings.headless,
            )
        except PlaywrightError as exc:
            where = choice.path or "Playwright's own Chromium"
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
