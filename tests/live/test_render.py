"""``--render``: a saved page loaded offline in real headless Chromium (live_runner.render).

What the browser does not render is gone, every other element keeps the id it has without
rendering, and no request leaves the machine. Skips only when Playwright or Chromium is
truly absent."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from live.conftest import CHROMIUM
from live.pages import PageServer
from live.rendering import renderer_or_skip
from live_runner.render import PAGE_URL, PageRenderer, RenderError
from webagent.cli import main
from webagent.html.axtree import flatten_axtree
from webagent.html.fragment import SegmentSettings
from webagent.html.segment import segment_html

pytestmark = pytest.mark.browser

PAGE = Path(__file__).resolve().parents[1] / "data" / "render" / "hidden_saved.html"
#: hidden only by the page's stylesheet: the cleaner cannot see it, the browser does
BY_STYLESHEET = {"15", "16", "17", "43", "44", "45", "46", "47", "48", "49", "50", "51", "52"}
BY_STYLESHEET |= {"53", "54", "55"}
#: hidden by inline styles (display:none, visibility:hidden): gone with or without rendering
INLINE_HIDDEN = {"27", "28", "29", "30", "31"}
VISIBLE_CONTROLS = {"11", "13", "14", "23", "24", "25", "26", "42"}
_ID = re.compile(r'backend_node_id="([^"]*)"')


@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with renderer_or_skip() as opened:
        yield opened


def _segment_ids(html: str | bytes) -> list[str]:
    return segment_html(html, SegmentSettings()).element_ids


def test_hidden_content_is_dropped_and_visible_ids_are_kept(renderer: PageRenderer) -> None:
    saved = PAGE.read_text(encoding="utf-8")
    rendered = renderer.render(saved, "hidden_saved.html")
    in_html = set(_ID.findall(rendered))
    assert in_html.isdisjoint(BY_STYLESHEET | INLINE_HIDDEN)
    assert in_html >= VISIBLE_CONTROLS
    assert "Vendor One" not in rendered and "Secret deal" not in rendered
    plain = _segment_ids(saved)
    assert BY_STYLESHEET & set(plain)  # without rendering, the vendor table is read
    assert _segment_ids(rendered) == [i for i in plain if i not in BY_STYLESHEET]


def test_a_page_renders_the_same_whatever_was_rendered_before(renderer: PageRenderer) -> None:
    # a resumed run renders fewer pages before a step than a fresh one: the step's tree,
    # and so its request, must not change (the tree names the page's address)
    saved = PAGE.read_text(encoding="utf-8")
    first = renderer.render_page(saved, "hidden_saved.html", axtree=True)
    renderer.render("<html><body><a href='x'>other</a></body></html>", "other.html")
    again = renderer.render_page(saved, "hidden_saved.html", axtree=True)
    assert first.axtree is not None and again.axtree is not None
    assert again.html == first.html
    assert flatten_axtree(again.axtree) == flatten_axtree(first.axtree)  # what the agent reads
    assert f"url='{PAGE_URL}'" in flatten_axtree(again.axtree).splitlines()[0]


def test_a_page_without_ids_keeps_the_cleaners_ids(renderer: PageRenderer) -> None:
    saved = (
        "<html><head><style>.menu{display:none}</style></head><body><div class=menu>"
        "<a href=/a>A</a><a href=/b>B</a></div><p>Shop <a href=/c>C</a></p><table><tr><td>"
        "<button>Buy</button></td></tr></table></body></html>"
    )
    plain = _segment_ids(saved)
    rendered = _segment_ids(renderer.render(saved, "inline page"))
    assert set(rendered) < set(plain) and all(i.startswith("n") for i in rendered)
    assert rendered == [i for i in plain if i in rendered]
    assert len(plain) - len(rendered) == 2  # the two links of the hidden menu


def test_a_page_that_repeats_an_id_inside_itself_renders(renderer: PageRenderer) -> None:
    saved = (
        '<html><body><p backend_node_id="7" style="visibility:hidden"><a backend_node_id="7">'
        'q</a></p><div backend_node_id="5"><button backend_node_id="6">ok</button></div>'
        "</body></html>"
    )
    assert _ID.findall(renderer.render(saved, "repeated ids")) == ["n1", "n2", "5", "6"]


@pytest.mark.parametrize("refresh", ["0", "0;url=http://example.invalid/away"])
def test_a_page_that_refreshes_or_leaves_stays_rendered(
    renderer: PageRenderer, refresh: str
) -> None:
    """A blocked navigation must not leave the browser on an error page instead."""
    saved = (
        f'<html><head><meta http-equiv="refresh" content="{refresh}"></head><body>'
        '<button backend_node_id="9">Stay</button><iframe src="/frame.html"></iframe></body></html>'
    )
    for _ in range(3):
        assert 'backend_node_id="9">Stay' in renderer.render(saved, "refreshing page")


def test_no_request_leaves_the_machine(renderer: PageRenderer) -> None:
    server = PageServer("127.0.0.1").start()
    try:
        origin = server.origin
        saved = (
            f'<html><head><link rel="stylesheet" href="{origin}/style.css">'
            f'<link rel="preconnect" href="http://example.invalid">'
            f'<meta http-equiv="refresh" content="0;url={origin}/away">'
            f'<script src="{origin}/app.js"></script>'
            f'<script src="http://example.invalid/app.js"></script></head><body>'
            f'<img src="http://example.invalid/img.png" alt="logo">'
            f'<img src="{origin}/img.png" alt="local">'
            f'<img src="relative.png" alt="relative">'
            f'<iframe src="{origin}/frame.html"></iframe>'
            f'<button backend_node_id="7">Go</button></body></html>'
        )
        before = len(renderer.blocked)
        rendered = renderer.render(saved, "network page")
        blocked = renderer.blocked[before:]
        assert 'backend_node_id="7"' in rendered
        assert server.hits == []  # nothing reached the server
    finally:
        server.stop()
    expected = {
        f"{origin}/style.css",
        "http://example.invalid/img.png",
        f"{origin}/img.png",
        f"{origin}/frame.html",
    }
    assert expected <= set(blocked)  # every resource was asked for, and aborted
    assert all("app.js" not in url for url in blocked)  # scripts off: never even asked for
    assert f"{PAGE_URL}relative.png" in blocked
    page = re.compile(re.escape(PAGE_URL) + r"\d+")
    assert not any(page.fullmatch(url) for url in blocked)  # the page itself was served


def test_a_page_that_cannot_be_rendered_is_named(renderer: PageRenderer) -> None:
    with pytest.raises(RenderError, match=r"empty\.html: cannot render the page: empty page"):
        renderer.render("   ", "empty.html")
    assert 'backend_node_id="1"' in renderer.render(PAGE.read_bytes(), "after a failure")


def test_segment_render_on_the_command_line(
    renderer: PageRenderer,  # skips as the others do when there is no browser
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    if CHROMIUM.exists():
        monkeypatch.setenv("WEBAGENT_CHROMIUM", str(CHROMIUM))
    argv = ["segment", str(PAGE), "--json", "--token-counter", "estimate"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*argv, "--render"]) == 0
    rendered = json.loads(capsys.readouterr().out)
    hidden = BY_STYLESHEET & set(plain["element_ids"])
    assert hidden
    assert rendered["element_ids"] == [i for i in plain["element_ids"] if i not in hidden]
    assert main(["segment", str(PAGE), "--render", "--token-counter", "estimate"]) == 0
    assert "Vendor One" not in capsys.readouterr().out
    empty = tmp_path / "blank.html"
    empty.write_text("  \n", encoding="utf-8")
    assert main(["segment", str(empty), "--render", "--token-counter", "estimate"]) == 2
    err = capsys.readouterr().err
    assert f"{empty}: cannot render the page" in err


@pytest.mark.llama
def test_act_render_plans_on_the_rendered_page(
    renderer: PageRenderer,
    local_model_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if CHROMIUM.exists():
        monkeypatch.setenv("WEBAGENT_CHROMIUM", str(CHROMIUM))
    argv = ["act", "--page", str(PAGE), "--task", "Accept the cookies", "--plan"]
    argv += ["--agent", "raw-html", "--no-gist-cache", "--model-path", str(local_model_path)]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert main([*argv, "--render"]) == 0
    rendered = capsys.readouterr().out
    tokens = [int(re.findall(r"raw-html \*\s+\d+\s+[\d.]+\s+([\d,]+)", text)[0].replace(",", ""))
              for text in (plain, rendered)]  # fmt: skip
    assert tokens[1] < tokens[0]  # the vendor table is not in the rendered page


def test_a_live_page_still_cannot_choose_its_ids(make_session: Callable[..., Any]) -> None:
    """The page-ids mode is for saved pages only: a live snapshot replaces them by CDP's."""
    from live_runner.observe import observe

    session = make_session()
    session.page.set_content('<button backend_node_id="999">Pay</button>')
    snapshot = observe(session, screenshot=False)
    (button,) = snapshot.find("Pay", tag="button")
    assert button != "999" and 'backend_node_id="999"' not in snapshot.html
