"""Fixtures for live-runner tests: the authored pages on 127.0.0.1, an "off-site" server on
``localhost`` (a different host to the browser), one Chromium per module, a fresh context
(session) per test. Tests skip cleanly only when Playwright or Chromium is truly absent."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from live.pages import PageServer
from live_runner.miniwob import html_root
from live_runner.safety import DomainPolicy, NavigationGuard, SecretStore
from live_runner.session import BrowserSession
from live_runner.settings import BrowserSettings, MiniWobSettings

CHROMIUM = Path("/usr/bin/chromium")


def browser_settings(**overrides: Any) -> BrowserSettings:
    """Short timeouts: a covered element fails in one second, not five."""
    values: dict[str, Any] = {
        "executable_path": CHROMIUM if CHROMIUM.exists() else None,
        "action_timeout_s": 1.0,
        "navigation_timeout_s": 10.0,
        "settle_timeout_s": 1.0,
        "settle_quiet_ms": 100,
    }
    values.update(overrides)
    return BrowserSettings(**values)


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    """The site under test (http://127.0.0.1:PORT) with ``offsite`` pointing elsewhere."""
    offsite = PageServer("127.0.0.1").start()
    site = PageServer("127.0.0.1").start()
    site.offsite = offsite.origin.replace("127.0.0.1", "localhost")
    site.offsite_server = offsite  # type: ignore[attr-defined]
    yield site
    site.stop()
    offsite.stop()


@pytest.fixture(scope="session")
def offsite_hits(pages: PageServer) -> list[str]:
    return pages.offsite_server.hits  # type: ignore[attr-defined,no-any-return]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("playwright is not installed (pip install 'readagent-web[live]')")
    from live_runner.errors import BrowserLaunchError
    from live_runner.session import open_browser

    with contextlib.ExitStack() as stack:
        try:
            launched = stack.enter_context(open_browser(browser_settings()))
        except BrowserLaunchError as exc:  # neither /usr/bin/chromium nor Playwright's own
            pytest.skip(str(exc))
        yield launched


@pytest.fixture
def make_session(browser: Any) -> Iterator[Callable[..., BrowserSession]]:
    """``make_session(policy=None, secrets=None, **browser_overrides)``: a new context."""
    opened: list[BrowserSession] = []

    def make(
        policy: DomainPolicy | None = None,
        secrets: SecretStore | None = None,
        **overrides: Any,
    ) -> BrowserSession:
        guard = NavigationGuard(policy or DomainPolicy(["127.0.0.1"]))
        redact = (secrets or SecretStore()).redact
        session = BrowserSession(browser, browser_settings(**overrides), guard, redact)
        opened.append(session)
        return session

    yield make
    for session in opened:
        session.close()


@pytest.fixture(scope="module")
def miniwob_root() -> Path:
    pytest.importorskip("miniwob", reason="pip install 'readagent-web[live]'")
    return html_root(MiniWobSettings(tasks=("click-button",), seeds=(0,), out_dir=Path(".")))
