"""Which Chromium BrowserGym starts, through BrowserGym's own hooks.

BrowserGym launches two browsers per episode from one process-wide Playwright: the task's
(``BrowserEnv(pw_chromium_kwargs=...)`` reaches its ``chromium.launch``) and the chat's
(``browsergym.core.chat.Chat``, which takes no launch options). Where Playwright's own
Chromium is not installed (``playwright install`` cannot download here), both must be told
the binary: :func:`browsergym_playwright` starts a Playwright, hands it to BrowserGym with
``browsergym.core._set_global_playwright`` (BrowserGym's setter for that instance) wrapped so
that a launch without an ``executable_path`` gets the chosen one, and restores what was set
before when the ``with`` block ends. Nothing else of Playwright or BrowserGym is changed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from live_runner.session import choose_chromium
from webagent.errors import MissingDependencyError

log = logging.getLogger(__name__)


class _BrowserType:
    """A Playwright ``BrowserType`` whose ``launch`` defaults ``executable_path``."""

    def __init__(self, inner: Any, executable_path: Path) -> None:
        self._inner = inner
        self._path = executable_path

    def launch(self, **kwargs: Any) -> Any:
        if kwargs.get("executable_path") is None:
            kwargs["executable_path"] = self._path
        return self._inner.launch(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Playwright:
    """A Playwright whose ``chromium`` launches the chosen binary; all else is the real one."""

    def __init__(self, inner: Any, executable_path: Path) -> None:
        self._inner = inner
        self.chromium = _BrowserType(inner.chromium, executable_path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _own_chromium(playwright: Any) -> str | None:
    try:
        return str(playwright.chromium.executable_path)
    except Exception:  # noqa: BLE001 - an unknown install layout: look elsewhere
        return None


@contextmanager
def browsergym_playwright(configured: Path | None) -> Iterator[Path | None]:
    """BrowserGym's Playwright for the ``with`` block; yields the Chromium binary it launches
    (None: Playwright's own). The choice is :func:`live_runner.session.choose_chromium`'s:
    the configured one, else Playwright's own if installed, else the system's on PATH."""
    try:
        import browsergym.core as bgym_core
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise MissingDependencyError("browsergym-core", "browsergym") from exc
    previous = bgym_core._PLAYWRIGHT
    started = sync_playwright().start() if previous is None else None
    real = previous if previous is not None else started
    try:
        choice = choose_chromium(configured, _own_chromium(real))
        log.info("browser: %s, %s", choice.path or "Playwright's Chromium", choice.why)
        bgym_core._set_global_playwright(
            _Playwright(real, choice.path) if choice.path is not None else real
        )
        yield choice.path
    finally:
        bgym_core._set_global_playwright(previous)
        if started is not None:
            started.stop()
