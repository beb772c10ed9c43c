"""Safety: the allow-list (unit and in Chromium) and secrets (unit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from live.agents import element_id
from live.pages import PageServer
from live_runner.actions import FailureKind, LiveAction, LiveOp
from live_runner.errors import SecretError
from live_runner.executor import Executor
from live_runner.observe import observe
from live_runner.safety import DomainPolicy, SecretStore
from live_runner.session import BrowserSession


def test_policy_defaults_to_the_start_site_and_its_subdomains() -> None:
    policy = DomainPolicy.for_start_url("https://www.shop.example.com/cart?x=1")
    assert policy.domains == ("shop.example.com",)
    assert policy.why_blocked("https://shop.example.com/a") is None
    assert policy.why_blocked("https://pay.shop.example.com/") is None
    assert policy.why_blocked("http://www.shop.example.com/") is None
    reason = policy.why_blocked("https://evil-shop.example.com/")
    assert reason is not None and "evil-shop.example.com" in reason
    assert policy.why_blocked("https://shop.example.com.evil.org/") is not None
    assert policy.why_blocked("ftp://shop.example.com/") is not None
    assert policy.why_blocked("about:blank") is None and policy.why_blocked("data:,x") is None


def test_policy_extra_domains_and_file_roots(tmp_path: Path) -> None:
    policy = DomainPolicy.for_start_url("http://127.0.0.1:8000/", ["docs.example.org"])
    assert policy.why_blocked("http://127.0.0.1:9999/x") is None  # ports are the same site
    assert policy.why_blocked("https://docs.example.org/") is None
    assert policy.why_blocked("http://localhost:8000/") is not None
    start = tmp_path / "site" / "index.html"
    local = DomainPolicy.for_start_url(start.as_uri())
    assert local.why_blocked((tmp_path / "site" / "b.html").as_uri()) is None
    assert local.why_blocked((tmp_path / "other.html").as_uri()) is not None
    assert local.why_blocked("https://example.com/") is not None


def test_secret_store_resolves_and_redacts() -> None:
    secrets = SecretStore.from_environ(["PIN"], {"PIN": 'p<a>"ss', "OTHER": "unrelated"})
    assert secrets.resolve("code: {{secret:PIN}}") == 'code: p<a>"ss'
    assert secrets.redact('value="p<a>"ss"') == 'value="{{secret:PIN}}"'
    assert secrets.redact("p&lt;a&gt;&quot;ss") == "{{secret:PIN}}"  # HTML-escaped form
    assert secrets.redact('"p<a>\\"ss"') == '"{{secret:PIN}}"'  # JSON-escaped form
    assert secrets.redact_data({"a": ['p<a>"ss', 3]}) == {"a": ["{{secret:PIN}}", 3]}
    assert "p<a>" not in repr(secrets)
    with pytest.raises(SecretError, match="no secret named 'OTHER'"):
        secrets.resolve("{{secret:OTHER}}")  # only named variables are usable
    with pytest.raises(SecretError, match="not set"):
        SecretStore.from_environ(["MISSING"], {})
    with pytest.raises(SecretError, match="shorter than"):
        SecretStore({"X": "ab"})


@pytest.mark.browser
def test_navigation_off_the_allow_list_is_stopped(
    make_session: Callable[..., BrowserSession], pages: PageServer, offsite_hits: list[str]
) -> None:
    session = make_session()
    executor = Executor(session)
    start = f"{pages.origin}/offsite.html"
    for text, tag in [
        ("Partner link", "a"),
        ("Partner deal (redirect)", "a"),
        ("Claim prize", "button"),  # window.location
        ("Open partner window", "button"),  # window.open
        ("Send to partner", "button"),  # form post
    ]:
        session.goto(start)
        snap = observe(session, screenshot=False)
        outcome = executor.execute(
            LiveAction(op=LiveOp.CLICK, element_id=element_id(snap.html, text, tag)), snap
        )
        assert outcome.failure is FailureKind.BLOCKED_NAVIGATION, (text, outcome)
        assert "is not in the allowed domains (127.0.0.1)" in outcome.message
        assert session.page.url == start
        assert [p.url for p in session.context.pages] == [start]  # the blocked popup is closed
    outcome = executor.execute(LiveAction(op=LiveOp.GOTO, value=f"{pages.offsite}/direct"))
    assert outcome.failure is FailureKind.BLOCKED_NAVIGATION
    assert offsite_hits == []  # not one request reached the other site
    snap = observe(session, screenshot=False)
    # the page's own text asks to go elsewhere: it is data, the policy does not change
    assert "Ignore your task" in snap.html
    assert session.guard.policy.domains == ("127.0.0.1",)
    local = executor.execute(
        LiveAction(op=LiveOp.CLICK, element_id=element_id(snap.html, "Our own help page", "a")),
        snap,
    )
    assert local.ok, local.message
    assert session.page.url.endswith("/page2.html")
