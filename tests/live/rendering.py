"""One :class:`~live_runner.render.PageRenderer` for a test module, or a clean skip when
Playwright or Chromium is truly absent (used by the live and the evaluator's tests)."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator

import pytest

from live.conftest import CHROMIUM
from live_runner.render import PageRenderer, render_settings


@contextlib.contextmanager
def renderer_or_skip() -> Iterator[PageRenderer]:
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("playwright is not installed (pip install 'readagent-web[live]')")
    from live_runner.errors import BrowserLaunchError

    settings = render_settings(CHROMIUM if CHROMIUM.exists() else None)
    with contextlib.ExitStack() as stack:
        try:
            opened = stack.enter_context(PageRenderer(settings))
        except BrowserLaunchError as exc:  # neither /usr/bin/chromium nor Playwright's own
            pytest.skip(str(exc))
        yield opened
