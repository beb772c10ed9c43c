"""The Chromium that BrowserGym launches, for the tests that run its environments."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def chromium() -> Iterator[Path | None]:
    """The Chromium BrowserGym will launch; skips only when none can be started."""
    import browsergym.core as bgym_core
    from playwright.sync_api import Error as PlaywrightError

    from live_runner.browsergym.browser import browsergym_playwright

    with browsergym_playwright(None) as executable:
        try:
            bgym_core._get_global_playwright().chromium.launch().close()
        except PlaywrightError as exc:
            pytest.skip(f"no Chromium to start: {str(exc).splitlines()[0]}")
    yield executable
