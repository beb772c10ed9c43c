"""The executor on authored pages in real Chromium: every action kind works, every failure
kind is reported as an outcome (never raised)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from lxml import html as lxml_html

from live.agents import element_id
from live.pages import PageServer
from live_runner.actions import FailureKind, LiveAction, LiveOp
from live_runner.executor import Executor
from live_runner.observe import PageSnapshot, observe
from live_runner.session import BrowserSession

pytestmark = pytest.mark.browser

Opener = Callable[[str], tuple[BrowserSession, Executor, PageSnapshot]]


@pytest.fixture
def open_page(make_session: Callable[..., BrowserSession], pages: PageServer) -> Opener:
    def open_(name: str) -> tuple[BrowserSession, Executor, PageSnapshot]:
        session = make_session()
        session.goto(f"{pages.origin}/{name}")
        return session, Executor(session), observe(session, screenshot=False)

    return open_


def act(
    executor: Executor,
    snapshot: PageSnapshot,
    op: LiveOp,
    target: str = "",
    value: str = "",
    *,
    tag: str | None = None,
    **extra: bool,
) -> tuple[PageSnapshot, str]:
    """Run one action on the element named ``target``; return the next snapshot and the
    previous-action line the agent would see."""
    element = element_id(snapshot.html, target, tag) if target else None
    outcome = executor.execute(
        LiveAction(op=op, element_id=element, value=value, **extra), snapshot
    )
    return observe(executor.session, screenshot=False), outcome.describe()


def text_of(snapshot: PageSnapshot, html_id: str) -> str:
    return str(lxml_html.fromstring(snapshot.html).get_element_by_id(html_id).text_content())


def test_form_fill_native_select_checkbox_custom_dropdown_and_submit(open_page: Opener) -> None:
    session, executor, snap = open_page("form.html")
    snap, line = act(executor, snap, LiveOp.TYPE, "Full name", "Ada Lovelace", tag="input")
    assert line == "[textbox]  Full name -> TYPE: Ada Lovelace"
    snap, line = act(executor, snap, LiveOp.SELECT, "Party size", "four people", tag="select")
    assert line == "[combobox]  Party size -> SELECT: four people"  # case-insensitive text
    snap, _ = act(executor, snap, LiveOp.SELECT, "Party size", "1", tag="select")  # by value
    snap, _ = act(executor, snap, LiveOp.SELECT, "Party size", "Four people", tag="select")
    snap, _ = act(executor, snap, LiveOp.CLICK, "Terrace seat", tag="label")
    snap, _ = act(executor, snap, LiveOp.CLICK, "Lunch", tag="label")
    # a custom dropdown: the executor clicks the control, then the option by its text
    snap, line = act(executor, snap, LiveOp.SELECT, "Dietary needs", "Vegan", tag="div")
    assert line == "[combobox]  Dietary needs -> SELECT: Vegan"
    assert text_of(snap, "diet-value") == "Vegan"
    snap, line = act(executor, snap, LiveOp.CLICK, "Book now", tag="button")
    assert line == "[button]  Book now -> CLICK"
    assert session.page.url.endswith("/submit")
    fields = text_of(snap, "fields")
    assert "name=Ada Lovelace" in fields and "party=4" in fields
    assert "terrace=on" in fields and "time=lunch" in fields


def test_type_and_press_enter_submits(open_page: Opener) -> None:
    session, executor, snap = open_page("login.html")
    snap, _ = act(executor, snap, LiveOp.TYPE, "Username", "ada", tag="input", press_enter=True)
    assert session.page.url.endswith("/submit")
    assert text_of(snap, "fields") == "user=ada"


def test_iframe_shadow_root_new_tab_popup_and_navigation(open_page: Opener) -> None:
    session, executor, snap = open_page("widgets.html")
    snap, _ = act(executor, snap, LiveOp.TYPE, "Newsletter email", "ada@example.org", tag="input")
    snap, line = act(executor, snap, LiveOp.CLICK, "Join", tag="button")
    assert line == "[button]  Join -> CLICK"
    assert text_of(snap, "nl-state") == "joined"  # inside the iframe
    snap, _ = act(executor, snap, LiveOp.CLICK, "Sign out", tag="button")
    assert text_of(snap, "log") == "signed out"  # inside the open shadow root
    first_tab = session.page
    outcome = executor.execute(
        LiveAction(
            op=LiveOp.CLICK, element_id=element_id(snap.html, "Open help in a new tab", "a")
        ),
        snap,
    )
    assert outcome.ok and outcome.switched_page
    assert session.page is not first_tab and session.page.url.endswith("/page2.html")
    session.switch_to(first_tab)
    snap = observe(session, screenshot=False)
    outcome = executor.execute(
        LiveAction(op=LiveOp.CLICK, element_id=element_id(snap.html, "Help popup", "button")),
        snap,
    )
    assert outcome.ok and outcome.switched_page and session.page.url.endswith("/page2.html")
    session.switch_to(first_tab)
    snap = observe(session, screenshot=False)
    snap, _ = act(executor, snap, LiveOp.CLICK, "Next page", tag="a")
    assert session.page.url.endswith("/page2.html")
    snap, line = act(executor, snap, LiveOp.BACK)
    assert line == "BACK" and session.page.url.endswith("/widgets.html")


def test_scroll_wait_goto_and_stop(open_page: Opener, pages: PageServer) -> None:
    session, executor, snap = open_page("widgets.html")
    scroller = lxml_html.fromstring(snap.html).get_element_by_id("scroller")
    outcome = executor.execute(
        LiveAction(op=LiveOp.SCROLL, element_id=scroller.get("backend_node_id"), value="down")
    )
    assert outcome.ok, outcome.message
    assert executor.execute(LiveAction(op=LiveOp.SCROLL, value="down")).ok
    assert executor.execute(LiveAction(op=LiveOp.WAIT, value="0.1")).ok
    outcome = executor.execute(LiveAction(op=LiveOp.GOTO, value="/page2.html"))
    assert outcome.ok and session.page.url == f"{pages.origin}/page2.html"
    stop = executor.execute(LiveAction(op=LiveOp.STOP, value="The help centre answers FAQs"))
    assert stop.ok and stop.describe() == "STOP: The help centre answers FAQs"


def test_failures_are_reported_not_raised(open_page: Opener) -> None:
    session, executor, snap = open_page("widgets.html")
    cases = [
        ("Delete account", FailureKind.COVERED, "element is covered by another element"),
        ("Upgrade plan", FailureKind.DISABLED, "element is disabled"),
        ("Save settings", FailureKind.DIALOG, "alert: Saved your settings"),
        ("Broken link", FailureKind.NAVIGATION_ERROR, "ERR_CONNECTION_REFUSED"),
    ]
    for text, kind, words in cases:
        outcome = executor.execute(
            LiveAction(
                op=LiveOp.CLICK,
                element_id=element_id(snap.html, text, "a" if "link" in text else "button"),
            ),
            snap,
        )
        assert not outcome.ok and outcome.failure is kind, (text, outcome)
        assert words in outcome.message
        assert outcome.describe().endswith(f"(failed: {outcome.message})")
        assert session.page.url.endswith("/widgets.html")  # the error page was left
    snap = observe(session, screenshot=False)  # going back from the error page reloaded it
    vanish = element_id(snap.html, "Dismiss tip", "button")
    covered = element_id(snap.html, "Delete account", "button")
    line = executor.execute(LiveAction(op=LiveOp.CLICK, element_id=covered), snap).describe()
    assert line == (
        "[button]  Delete account -> CLICK (failed: element is covered by another element)"
    )
    # the element goes away between observation and action
    assert executor.execute(LiveAction(op=LiveOp.CLICK, element_id=vanish), snap).ok
    gone = executor.execute(LiveAction(op=LiveOp.CLICK, element_id=vanish), snap)
    assert gone.failure in (FailureKind.ELEMENT_NOT_FOUND, FailureKind.DETACHED)
    assert gone.describe().startswith("[button]  Dismiss tip -> CLICK (failed: element id=")
    unknown = executor.execute(LiveAction(op=LiveOp.CLICK, element_id="n999"), snap)
    assert unknown.failure is FailureKind.ELEMENT_NOT_FOUND
    log_p = element_id(snap.html, "nothing yet", "p")
    wrong = executor.execute(LiveAction(op=LiveOp.TYPE, element_id=log_p, value="x"), snap)
    assert wrong.failure is FailureKind.NOT_EDITABLE
    refused = executor.execute(LiveAction(op=LiveOp.GOTO, value="http://127.0.0.1:9/"), snap)
    assert refused.failure is FailureKind.NAVIGATION_ERROR
    assert not executor.execute(LiveAction(op=LiveOp.BACK)).ok  # no history in this tab


def test_select_reports_missing_options(open_page: Opener) -> None:
    _, executor, snap = open_page("form.html")
    party = element_id(snap.html, "Party size", "select")
    outcome = executor.execute(LiveAction(op=LiveOp.SELECT, element_id=party, value="Ten"), snap)
    assert outcome.failure is FailureKind.NO_SUCH_OPTION
    assert "'One person', 'Two people', 'Four people'" in outcome.message
    diet = element_id(snap.html, "Dietary needs", "div")
    outcome = executor.execute(LiveAction(op=LiveOp.SELECT, element_id=diet, value="Keto"), snap)
    assert outcome.failure is FailureKind.NO_SUCH_OPTION


def test_confirm_before_submit(open_page: Opener) -> None:
    session, _, snap = open_page("form.html")
    asked: list[str] = []
    declining = Executor(session, confirm=lambda what: asked.append(what) is not None)
    book = element_id(snap.html, "Book now", "button")
    outcome = declining.execute(LiveAction(op=LiveOp.CLICK, element_id=book), snap)
    assert outcome.failure is FailureKind.DECLINED
    assert asked == [
        f"CLICK [button]  Book now submits a form to {session.page.url.rsplit('/', 1)[0]}/submit"
    ]
    assert session.page.url.endswith("/form.html")
    # clicking what does not submit asks nothing
    declining.execute(
        LiveAction(op=LiveOp.CLICK, element_id=element_id(snap.html, "Terrace seat", "label")), snap
    )
    assert len(asked) == 1
    agreeing = Executor(session, confirm=lambda what: True)
    assert agreeing.execute(LiveAction(op=LiveOp.CLICK, element_id=book), snap).ok
    assert session.page.url.endswith("/submit")
