"""Which Chromium BrowserGym starts, through BrowserGym's own hooks.

BrowserGym launches two browsers per episode from one process-wide Playwright: the task's
(``BrowserEnv(pw_chromium_kwargs=...)`` reaches its ``chromium.launch``) and the chat's
(``browsergym.core.chat.Chat``, which takes no launch options). Where Playwright's own
Chromium is not installed (``playwright install`` cannot download here), both must be told
the binary: :func:`browsergym_playwright` starts a Playwright, hands it to BrowserGym with
``browsergym.core._set_global_playwright`` (BrowserGym's setter for that instance) wrapped so
that a launch without an ``executable_path`` gets the chosen one, and restores what was set
before when the ``with`` block ends.

Launching two Chromiums per episode is most of an episode's start (replaying episodes round
after round starts them again and again), so a launch with the same options as an earlier one
in the ``with`` block gets the same browser, lent: BrowserGym opens its own new context in it
(fresh cookies, storage and pages, the task's viewport, ``slow_mo`` and timeouts as before),
and its ``close`` closes the contexts opened through it instead of the browser. A browser that
died is launched again; every browser is closed when the block ends. Nothing else of
Playwright or BrowserGym is changed.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from live_runner.session import choose_chromium
from webagent.errors import MissingDependencyError

log = logging.getLogger(__name__)


class _Lent:
    """A shared browser as one episode sees it: ``close`` closes its own contexts only."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser
        self._contexts: list[Any] = []

    def new_context(self, **kwargs: Any) -> Any:
        context = self._browser.new_context(**kwargs)
        self._contexts.append(context)
        return context

    def close(self, **_kwargs: Any) -> None:
        for context in self._contexts:
            with contextlib.suppress(Exception):  # already closed, or the browser died
                context.close()
        self._contexts.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


class _BrowserType:
    """A Playwright ``BrowserType`` whose ``launch`` defaults ``executable_path`` and lends
    one browser per set of launch options."""

    def __init__(self, inner: Any, executable_path: Path | None, lend: bool) -> None:
        self._inner = inner
        self._path = executable_path
        self._lend = lend
        self._open: dict[str, Any] = {}

    def launch(self, **kwargs: Any) -> Any:
        if kwargs.get("executable_path") is None and self._path is not None:
            kwargs["executable_path"] = self._path
        if not self._lend:
            return self._inner.launch(**kwargs)
        key = json.dumps(kwargs, sort_keys=True, default=str)
        browser = self._open.get(key)
        if browser is None or not browser.is_connected():
            browser = self._open[key] = self._inner.launch(**kwargs)
        return _Lent(browser)

    def close_all(self) -> None:
        for browser in self._open.values():
            with contextlib.suppress(Exception):  # a browser that died is closed already
                browser.close()
        self._open.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Playwright:
    """A Playwright whose ``chromium`` launches the chosen binary, once per set of options;
    all else is the real one."""

    def __init__(self, inner: Any, executable_path: Path | None, lend: bool) -> None:
        self._inner = inner
        self.chromium = _BrowserType(inner.chromium, executable_path, lend)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _own_chromium(playwright: Any) -> str | None:
    try:
        return str(playwright.chromium.executable_path)
    except Exception:  # noqa: BLE001 - an unknown install layout: look elsewhere
        return None


@contextmanager
def browsergym_playwright(configured: Path | None, *, lend: bool = True) -> Iterator[Path | None]:
    """BrowserGym's Playwright for the ``with`` block; yields the Chromium binary it launches
    (None: Playwright's own). The choice is :func:`live_runner.session.choose_chromium`'s:
    the configured one, else Playwright's own if installed, else the system's on PATH.
    ``lend``: one browser per set of launch options, lent to every episode (module doc);
    False: a new browser for every launch, as BrowserGym itself does."""
    try:
        import browsergym.core as bgym_core
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise MissingDependencyError("browsergym-core", "browsergym") from exc
    previous = bgym_core._PLAYWRIGHT
    started = sync_playwright().start() if previous is None else None
    real = previous if previous is not None else started
    lending = None
    try:
        choice = choose_chromium(configured, _own_chromium(real))
        log.info("browser: %s, %s", choice.path or "Playwright's Chromium", choice.why)
        lending = _Playwright(real, choice.path, lend)
        bgym_core._set_global_playwright(lending)
        yield choice.path
    finally:
        if lending is not None:
            lending.chromium.close_all()
        bgym_core._set_global_playwright(previous)
        if started is not None:
            started.stop()
