"""``--render``: read a saved page as headless Chromium shows it (docs/SEGMENTATION.md).

``segment``, ``act`` and ``eval`` all come through here. The browser is the live runner's,
found through the ``webagent.renderers`` entry point ``chromium``
(:func:`live_runner.render.open_renderer`): the library never imports the live runner, and
the browser side is imported only when a page is rendered. For an agent that reads the
page's accessibility tree (``axtree``) the tree is read with the page, same ids; and such an
agent needs ``--render`` offline (:func:`check_page_source`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from webagent.agents.axtree import NEEDS_AXTREE
from webagent.agents.registry import reads_axtree
from webagent.config import RunConfig
from webagent.contracts import RenderedPage
from webagent.errors import ConfigError
from webagent.plugins import RENDERERS, load

#: (page HTML, its name for errors) -> the rendered page (its tree, where the agent reads it)
Render = Callable[[bytes | str, str], RenderedPage]

RENDER_HELP = (
    "load the page offline in headless Chromium (scripts off, every request but the page "
    "blocked) and keep only what it renders: display:none, visibility:hidden and boxless "
    "elements are dropped, the others keep their ids (Chromium: $WEBAGENT_CHROMIUM, else as "
    "`webagent run` finds it; docs/SEGMENTATION.md)"
)


class Renderer(Protocol):
    def render_page(
        self, html: bytes | str, name: str, *, axtree: bool = False
    ) -> RenderedPage: ...


def add_render_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--render", action="store_true", default=None, help=RENDER_HELP)


def check_page_source(config: RunConfig, render: bool) -> None:
    """An agent that reads the accessibility tree gets it offline only from ``--render``:
    without it, one line that says so (a ConfigError), before anything runs."""
    if reads_axtree(config.agent.agent) and not render:
        raise ConfigError(NEEDS_AXTREE)


def render_page(
    html: bytes | str, name: str, config: RunConfig, *, axtree: bool | None = None
) -> RenderedPage:
    """One page, rendered with the run's Chromium (``live.browser_path``); ``axtree``: read
    its accessibility tree too (None: where the run's agent reads it)."""
    with page_renderer(config, axtree=axtree) as render:
        return render(html, name)


@contextmanager
def page_renderer(config: RunConfig, *, axtree: bool | None = None) -> Iterator[Render]:
    """One browser for many pages (``eval``), usable from any thread; the tree is read with
    each page where ``axtree`` says (None: where the run's agent reads it)."""
    tree = reads_axtree(config.agent.agent) if axtree is None else axtree
    with _open_renderer(config.live.browser_path) as renderer:
        yield lambda html, name: renderer.render_page(html, name, axtree=tree)


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
