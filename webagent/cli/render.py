"""``--render``: read a saved page as headless Chromium shows it (docs/SEGMENTATION.md).

``segment``, ``act`` and ``eval`` all come through here. The browser is the live runner's,
found through the ``webagent.renderers`` entry point ``chromium``
(:func:`live_runner.render.open_renderer`): the library never imports the live runner, and
the browser side is imported only when a page is rendered.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from webagent.config import RunConfig
from webagent.errors import ConfigError
from webagent.plugins import RENDERERS, load

#: (page HTML, its name for errors) -> the rendered page's HTML
Render = Callable[[bytes | str, str], str]

RENDER_HELP = (
    "load the page offline in headless Chromium (scripts off, every request but the page "
    "blocked) and keep only what it renders: display:none, visibility:hidden and boxless "
    "elements are dropped, the others keep their ids (Chromium: $WEBAGENT_CHROMIUM, else as "
    "`webagent run` finds it; docs/SEGMENTATION.md)"
)


class Renderer(Protocol):
    def render(self, html: bytes | str, name: str) -> str: ...


def add_render_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--render", action="store_true", default=None, help=RENDER_HELP)


def render_page(html: bytes | str, name: str, config: RunConfig) -> str:
    """One page, rendered with the run's Chromium (``live.browser_path``)."""
    with page_renderer(config) as render:
        return render(html, name)


@contextmanager
def page_renderer(config: RunConfig) -> Iterator[Render]:
    """One browser for many pages (``eval``), usable from any thread."""
    with _open_renderer(config.live.browser_path) as renderer:
        yield renderer.render


def _open_renderer(browser_path: Path | None) -> AbstractContextManager[Renderer]:
    try:
        opener: Callable[[Path | None], AbstractContextManager[Renderer]] = load(
            RENDERERS, "chromium"
        )
    except ConfigError as exc:
        raise ConfigError(
            "--render needs a browser: install the live runner (pip install 'readagent-web[live]')"
        ) from exc
    return opener(browser_path)
