"""``--render``: read a saved page as headless Chromium shows it (docs/SEGMENTATION.md).

The commands' one way to :mod:`live_runner.render`, which the evaluator may not import
itself (docs/ARCHITECTURE.md): ``segment``, ``act`` and ``eval`` all come through here. The
browser side is imported only when a page is rendered.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from webagent.config import RunConfig

#: (page HTML, its name for errors) -> the rendered page's HTML
Render = Callable[[bytes | str, str], str]

RENDER_HELP = (
    "load the page offline in headless Chromium (scripts off, every request but the page "
    "blocked) and keep only what it renders: display:none, visibility:hidden and boxless "
    "elements are dropped, the others keep their ids (Chromium: $WEBAGENT_CHROMIUM, else as "
    "`webagent run` finds it; docs/SEGMENTATION.md)"
)


def add_render_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--render", action="store_true", default=None, help=RENDER_HELP)


def render_page(html: bytes | str, name: str, config: RunConfig) -> str:
    """One page, rendered with the run's Chromium (``live.browser_path``)."""
    from live_runner.render import render_saved_page

    return render_saved_page(html, name, config.live.browser_path)


@contextmanager
def page_renderer(config: RunConfig) -> Iterator[Render]:
    """One browser for many pages (``eval``), usable from any thread."""
    from live_runner.render import PageRenderer, render_settings

    with PageRenderer(render_settings(config.live.browser_path)) as renderer:
        yield renderer.render
