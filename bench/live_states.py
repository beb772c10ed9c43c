"""Consecutive live page states for bench/page_states.py: real saved pages in Chromium.

Each page of ``../shared/pages`` (scripts removed so that nothing changes by itself, every
request blocked) is loaded with ``set_content`` and driven through three steps, observed by
the live runner's own :func:`live_runner.observe.observe` (CDP snapshot, backend node ids)
before and after each: *type* (Playwright ``fill`` into the first visible text field),
*open a menu* (the first hidden element holding three or more links is shown, as a dropdown
opens) and *add a list item* (the last item of the first visible list of three or more is
cloned and appended, as "load more" does). A step the page offers no target for is skipped.

MiniWoB++ episodes (:func:`miniwob_pairs`, seeded, through the live runner's own
``start_episode``): every visible text field typed into in turn, then the first tab or
collapsible header clicked, observed before and after each step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchkit import DEFAULT_PAGES
from lxml import etree, html

CHROMIUM = Path("/usr/bin/chromium")

_TYPE_TARGET = """() => {
  const fields = [...document.querySelectorAll(
    'input:not([type]), input[type=text], input[type=search], input[type=email], textarea')];
  const el = fields.find(f => f.offsetParent !== null && !f.disabled && !f.readOnly);
  if (!el) return false;
  el.setAttribute('data-bench-target', '1');
  return true;
}"""
_OPEN_MENU = """() => {
  for (const el of document.body.querySelectorAll('*')) {
    if (getComputedStyle(el).display === 'none' && el.querySelectorAll('a').length >= 3) {
      el.style.display = 'block';
      return true;
    }
  }
  return false;
}"""
_ADD_ITEM = """() => {
  for (const list of document.querySelectorAll('ul, ol')) {
    const items = [...list.children].filter(c => c.tagName === 'LI');
    if (items.length >= 3 && list.offsetParent !== null) {
      const copy = items[items.length - 1].cloneNode(true);
      list.appendChild(copy);
      return true;
    }
  }
  return false;
}"""


def _static(data: bytes) -> str:
    """The page without scripts (no timers, no self-changing DOM)."""
    root = html.fromstring(data)
    etree.strip_elements(root, "script", with_tail=False)
    for el in root.iter("*"):
        for name in [n for n in el.attrib if n.lower().startswith("on")]:
            del el.attrib[name]
    return html.tostring(root, encoding="unicode")


def capture(pages: Path = DEFAULT_PAGES) -> list[dict[str, str]]:
    """(before, after) observations for every step of every page."""
    from live_runner.observe import observe
    from live_runner.safety import DomainPolicy, NavigationGuard
    from live_runner.session import BrowserSession, open_browser
    from live_runner.settings import BrowserSettings

    settings = BrowserSettings(
        executable_path=CHROMIUM if CHROMIUM.exists() else None, screenshots=False
    )
    pairs: list[dict[str, str]] = []
    with open_browser(settings) as browser:
        for path in sorted(pages.glob("*.html")):
            session = BrowserSession(browser, settings, NavigationGuard(DomainPolicy([])))
            try:
                session.page.set_content(_static(path.read_bytes()), wait_until="load")
                before = observe(session, screenshot=False).html
                for change, step in (
                    ("type", _type),
                    ("open a menu", lambda s: bool(s.page.evaluate(_OPEN_MENU))),
                    ("add a list item", lambda s: bool(s.page.evaluate(_ADD_ITEM))),
                ):
                    if not step(session):
                        continue
                    after = observe(session, screenshot=False).html
                    pairs.append(
                        {
                            "source": f"live: {change}",
                            "name": f"{path.stem.split('__')[1]}:{change}",
                            "change": change,
                            "a": before,
                            "b": after,
                        }
                    )
                    before = after
            finally:
                session.close()
    return pairs


MINIWOB_TASKS = (
    "login-user", "enter-text", "search-engine", "form-sequence-2", "click-collapsible",
    "click-tab-2", "social-media", "use-autocomplete", "enter-password", "login-user-popup",
)  # fmt: skip
_FIELD_CSS = (
    "#area input[type=text], #area input:not([type]), #area input[type=password], #area textarea"
)
_FIELDS = f"""() => {{
  const fields = [...document.querySelectorAll('{_FIELD_CSS}')]
    .filter(f => f.offsetParent !== null && !f.disabled && !f.readOnly);
  fields.forEach((f, k) => f.setAttribute('data-bench-field', String(k)));
  return fields.length;
}}"""
_OPENERS = "#area h3, #area .ui-tabs-anchor, #area [role=tab]"


def miniwob_pairs(seeds: tuple[int, ...] = (1, 2)) -> list[dict[str, str]]:
    """(before, after) observations of the steps of seeded MiniWoB++ episodes."""
    from live_runner.miniwob import html_root, start_episode, task_page
    from live_runner.observe import observe
    from live_runner.safety import DomainPolicy, NavigationGuard
    from live_runner.session import BrowserSession, open_browser
    from live_runner.settings import BrowserSettings, MiniWobSettings

    settings = BrowserSettings(
        executable_path=CHROMIUM if CHROMIUM.exists() else None, screenshots=False
    )
    root = html_root(MiniWobSettings(tasks=MINIWOB_TASKS, seeds=seeds, out_dir=Path(".")))
    pairs: list[dict[str, str]] = []
    with open_browser(settings) as browser:
        for task in MINIWOB_TASKS:
            page = task_page(root, task)
            for seed in seeds:
                guard = NavigationGuard(DomainPolicy.for_start_url(page.as_uri()))
                session = BrowserSession(browser, settings, guard)
                try:
                    start_episode(session, page, seed, max_seconds=600)
                    pairs += _episode(session, observe, f"{task}:{seed}")
                finally:
                    session.close()
    return pairs


def _episode(session: Any, observe: Any, name: str) -> list[dict[str, str]]:
    page = session.page
    steps: list[tuple[str, Any]] = []
    for k in range(int(page.evaluate(_FIELDS))):
        steps.append(("type", lambda k=k: _fill_nth(page, k)))
    if page.locator(_OPENERS).count():
        steps.append(("open", lambda: page.locator(_OPENERS).first.click(timeout=2000)))
    pairs = []
    before = observe(session, screenshot=False).html
    from playwright.sync_api import Error as PlaywrightError

    for change, act in steps:
        try:
            act()
        except PlaywrightError:
            break  # the episode did not allow this step (a popup, a disabled field): stop here
        session.settle()
        after = observe(session, screenshot=False).html
        pairs.append(
            {"source": f"miniwob: {change}", "name": f"{name}:{len(pairs)}", "change": change,
             "a": before, "b": after}
        )  # fmt: skip
        before = after
    return pairs


def _fill_nth(page: Any, k: int) -> None:
    page.locator(f'[data-bench-field="{k}"]').fill("jane", timeout=2000)


def _type(session: object) -> bool:
    page = session.page  # type: ignore[attr-defined]
    if not page.evaluate(_TYPE_TARGET):
        return False
    page.locator("[data-bench-target]").first.fill("jane.doe@example.com", timeout=2000)
    return True
