from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from webagent.agents.registry import reads_axtree
from webagent.contracts import RenderedPage

PAGES = Path(__file__).parent / "pages"


@pytest.fixture(scope="session")
def flights_html() -> str:
    return (PAGES / "flights.html").read_text(encoding="utf-8")


class ReadAs:
    """The page as an agent reads it: as saved, or, for an agent that reads the
    accessibility tree, rendered in Chromium with its tree (``--render``; the test skips
    when Chromium is truly absent). Chromium starts at the first page that needs it."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack
        self._renderer: Any = None
        self._rendered: dict[str, RenderedPage] = {}

    def __call__(self, agent: str, html: str) -> RenderedPage:
        if not reads_axtree(agent):
            return RenderedPage(html=html)
        if html not in self._rendered:
            if self._renderer is None:
                from live.rendering import renderer_or_skip

                self._renderer = self._stack.enter_context(renderer_or_skip())
            self._rendered[html] = self._renderer.render_page(html, "a test page", axtree=True)
        return self._rendered[html]


@pytest.fixture(scope="session")
def read_as() -> Iterator[ReadAs]:
    with contextlib.ExitStack() as stack:
        yield ReadAs(stack)
