"""A saved page as headless Chromium shows it: what a browser hides is dropped, ids kept.

The page (its HTML, not a URL) is given to the browser for one made-up address by
``page.route``; every other request (images, styles, fonts) is aborted, every other
navigation (a meta refresh, a frame) is answered "204 No Content" so that the tab stays on the
page, and no host name resolves: nothing leaves the machine. Scripts are off; pictures are not
loaded (an image keeps the box its size attributes, styles or ``alt`` text give it). The DOM
snapshot is then turned into HTML by :mod:`live_runner.dom_snapshot` like a live page, but
with the page's own ids (``ids="page"``): before rendering, every element is given the id the
cleaner gives it (:func:`webagent.html.clean.with_ids`: Mind2Web's ``backend_node_id``, else
``n<k>``), so an element that is rendered keeps exactly the id it has without rendering, and
an element without a box, under ``display: none`` or ``visibility: hidden`` is gone. Asked
for (:meth:`PageRenderer.render_page`), the page's accessibility tree comes with it, its nodes
tied to the same ids (:mod:`live_runner.axtree`).

Playwright's sync API works only in the thread that started it: a :class:`PageRenderer`
keeps its browser in one thread of its own, so any thread (the evaluator's workers) may call
:meth:`PageRenderer.render`; pages are rendered one at a time, in one tab, each at an
address of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from live_runner.axtree import read_axtree
from live_runner.dom_snapshot import SnapshotPage, snapshot_to_page
from live_runner.errors import LiveRunnerError
from live_runner.session import open_browser
from live_runner.settings import DEFAULT_CHROMIUM_ARGS, BrowserSettings
from live_runner.snapshot_doc import COMPUTED_STYLES
from webagent.contracts import AXTree, RenderedPage
from webagent.errors import WebAgentError
from webagent.html.clean import with_ids

if TYPE_CHECKING:
    from playwright.sync_api import CDPSession, Page, Route

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")

#: the one address the browser may load: the page itself (``.invalid`` never resolves)
PAGE_URL = "http://saved-page.invalid/"
#: no host name resolves, so not even a preconnect or DNS prefetch reaches the network
NO_DNS = "--host-resolver-rules=MAP * ~NOTFOUND"


class RenderError(LiveRunnerError):
    """A saved page could not be rendered; the message names the page."""


def render_settings(browser_path: Path | None = None) -> BrowserSettings:
    """The browser for saved pages: the configured Chromium (``WEBAGENT_CHROMIUM``) or
    the one :func:`~live_runner.session.choose_chromium` finds, resolving no host name."""
    return BrowserSettings(
        executable_path=browser_path, args=(*DEFAULT_CHROMIUM_ARGS, NO_DNS), screenshots=False
    )


class PageRenderer:
    """One headless Chromium that renders saved pages (a context manager).

    ``blocked`` lists every request that was aborted, page after page (all but the pages
    themselves)."""

    def __init__(self, settings: BrowserSettings | None = None) -> None:
        self.settings = settings or render_settings()
        self.blocked: list[str] = []
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="webagent-render")
        self._stack = ExitStack()
        self._page: Page | None = None
        self._serving = ("", "")  # (address, HTML) of the page being rendered

    def __enter__(self) -> PageRenderer:
        try:
            self._call(self._start)
        except BaseException:
            self.__exit__(None, None, None)  # a browser started before the failure is closed
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._call(self._stack.close)
        finally:
            self._thread.shutdown()

    def render(self, html: bytes | str, name: str) -> str:
        """The rendered page's HTML; ``name`` (a file, a step) is named by any error."""
        return self.render_page(html, name).html

    def render_page(self, html: bytes | str, name: str, *, axtree: bool = False) -> RenderedPage:
        """The rendered page's HTML and, with ``axtree``, its accessibility tree (ids as in
        the HTML: the page's own, :mod:`live_runner.axtree`)."""
        return self._call(self._render, html, name, axtree)

    def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn`` run in the browser's thread."""
        return self._thread.submit(fn, *args, **kwargs).result()

    def _start(self) -> None:
        browser = self._stack.enter_context(open_browser(self.settings))
        context = browser.new_context(
            java_script_enabled=False,
            service_workers="block",
            accept_downloads=False,
            viewport={
                "width": self.settings.viewport_width,
                "height": self.settings.viewport_height,
            },
        )
        context.set_default_timeout(self.settings.navigation_timeout_s * 1000)
        context.route("**/*", self._route)
        self._page = context.new_page()  # one tab for every page: a new one costs 0.3 s

    def _route(self, route: Route) -> None:
        request = route.request
        if request.url == self._serving[0] and request.is_navigation_request():
            html = self._serving[1]
            self._serving = ("", "")  # the page is served once: a reload is blocked too
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
        elif request.is_navigation_request():  # a refresh, a frame: "no content", stay put
            self.blocked.append(request.url)
            route.fulfill(status=204)
        else:
            self.blocked.append(request.url)
            route.abort("blockedbyclient")

    def _render(self, html: bytes | str, name: str, axtree: bool) -> RenderedPage:
        from playwright.sync_api import Error as PlaywrightError

        if self._page is None:
            raise RenderError(f"{name}: the renderer is not open (use it in a `with`)")
        try:
            page_html = with_ids(html)
        except WebAgentError as exc:
            raise RenderError(f"{name}: cannot render the page: {exc}") from exc
        # one address for every page (its tree names it): a page renders the same whatever
        # was rendered before it, in a fresh run or a resumed one
        url = PAGE_URL
        try:
            # leave the page rendered before first: its meta refresh, still pending, would
            # otherwise go to the same address and take the page being served
            self._page.goto("about:blank")
            self._serving = (url, page_html)
            self._page.goto(url, wait_until="load")
            cdp = self._page.context.new_cdp_session(self._page)
            try:
                raw = cdp.send(
                    "DOMSnapshot.captureSnapshot",
                    {"computedStyles": list(COMPUTED_STYLES), "includeDOMRects": False},
                )
                self._check_shown(raw, url, name)
                page = snapshot_to_page(raw, ids="page")
                tree = self._tree(cdp, raw, page) if axtree else None
            finally:
                cdp.detach()
        except PlaywrightError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RenderError(f"{name}: Chromium could not render the page: {first}") from exc
        finally:
            self._serving = ("", "")
        if not page.html:
            raise RenderError(f"{name}: the rendered page has no document")
        log.debug("rendered %s: %d -> %d characters", name, len(page_html), len(page.html))
        return RenderedPage(html=page.html, axtree=tree)

    @staticmethod
    def _check_shown(raw: dict[str, Any], url: str, name: str) -> None:
        documents = raw.get("documents") or [{}]
        shown = raw["strings"][documents[0].get("documentURL", -1)] if raw.get("strings") else ""
        if shown != url:
            raise RenderError(f"{name}: the browser shows {shown or 'nothing'}, not the page")

    def _tree(self, cdp: CDPSession, raw: dict[str, Any], page: SnapshotPage) -> AXTree:
        size = (self.settings.viewport_width, self.settings.viewport_height)
        return read_axtree(cdp, raw, page, size, source="render")


def open_renderer(browser_path: Path | None = None) -> PageRenderer:
    """A renderer of saved pages, not started yet: the ``webagent.renderers`` entry point
    ``chromium`` that ``--render`` uses (:mod:`webagent.cli.render`)."""
    return PageRenderer(render_settings(browser_path))


def render_saved_page(
    html: bytes | str, name: str = "page", browser_path: Path | None = None
) -> str:
    """One saved page, rendered offline (see the module doc); a browser started for it."""
    with open_renderer(browser_path) as renderer:
        return renderer.render(html, name)
