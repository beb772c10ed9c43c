"""Consecutive live page states for bench/page_states.py: real saved pages in Chromium.

Each page of ``../shared/pages`` (scripts removed so that nothing changes by itself, every
request blocked) is loaded with ``set_content`` and driven through three steps, observed by
the live runner's own :func:`live_runner.observe.observe` (CDP snapshot, backend node ids)
before and after each: *type* (Playwright ``fill`` into the first visible text field),
*open a menu* (the first hidden element holding three or more links is shown, as a dropdown
opens) and *add a list item* (the last item of the first visible list of three or more is
cloned and appended, as "load more" does). A step the page offers no target for is skipped.
"""

from __future__ import annotations

from pathlib import Path

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


def _type(session: object) -> bool:
    page = session.page  # type: ignore[attr-defined]
    if not page.evaluate(_TYPE_TARGET):
        return False
    page.locator("[data-bench-target]").first.fill("jane.doe@example.com", timeout=2000)
    return True
