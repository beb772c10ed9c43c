"""Fault suite for the live runner: pages that never finish loading, alert loops and popup
storms. Each action returns an outcome in bounded time and the session stays usable."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from live.agents import element_id
from live.pages import PageServer
from live_runner.actions import LiveAction, LiveOp
from live_runner.executor import Executor
from live_runner.observe import observe
from live_runner.session import BrowserSession

pytestmark = pytest.mark.browser


def test_a_page_that_never_finishes_loading_is_still_observed_and_used(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    started = time.monotonic()
    session.goto(f"{pages.origin}/slowload.html")
    assert time.monotonic() - started < 15  # bounded by the settle timeout, not the image
    snapshot = observe(session, screenshot=False)
    field = element_id(snapshot.html, "Order number", "input")
    outcome = Executor(session).execute(
        LiveAction(op=LiveOp.TYPE, element_id=field, value="A-1042", press_enter=True), snapshot
    )
    assert outcome.ok, outcome.describe()
    assert "result.html" in session.page.url and "order=A-1042" in session.page.url


def test_an_alert_loop_is_dismissed_and_reported(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/storm.html")
    snapshot = observe(session, screenshot=False)
    started = time.monotonic()
    outcome = Executor(session).execute(
        LiveAction(op=LiveOp.CLICK, element_id=element_id(snapshot.html, "Claim prize")), snapshot
    )
    assert time.monotonic() - started < 60
    assert outcome.dialogs and "Claim your prize" in outcome.dialogs[0]
    assert "dialog" in outcome.describe()
    after = observe(session, screenshot=False)  # the page is usable again
    assert "Continue" in after.html


def test_a_popup_storm_leaves_the_run_usable(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/storm.html")
    snapshot = observe(session, screenshot=False)
    executor = Executor(session)
    started = time.monotonic()
    outcome = executor.execute(
        LiveAction(op=LiveOp.CLICK, element_id=element_id(snapshot.html, "Open offers")), snapshot
    )
    assert time.monotonic() - started < 60, outcome.describe()
    current = observe(session, screenshot=False)
    assert current.html  # whichever tab the runner follows, it can still be read
    assert len(session.context.pages) <= 26
