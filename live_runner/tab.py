"""A browser tab as an environment: ``webagent run`` on any allowed page.

The page is observed with CDP (ids = ``backendNodeId``, :mod:`live_runner.observe`) and each
action carried out by the :class:`~live_runner.executor.Executor`, inside the allowed domains
(:mod:`live_runner.safety`); the episode loop is :mod:`live_runner.episode`'s.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from live_runner.actions import LiveAction, no_action
from live_runner.episode import Acted, Ending, EndReason, Episode
from live_runner.errors import LiveRunnerError
from live_runner.executor import Executor
from live_runner.observe import PageSnapshot, observe
from live_runner.records import EpisodeResult
from live_runner.safety import ConfirmCallback, DomainPolicy, NavigationGuard, SecretStore
from live_runner.session import BrowserSession, open_browser
from live_runner.settings import RunSettings
from live_runner.trace import RunTracer
from webagent.contracts import Agent
from webagent.provenance import provenance

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@dataclass
class TabEnvironment:
    """One tab: what it shows, and the executor that acts in it."""

    session: BrowserSession
    executor: Executor
    #: read the page's accessibility tree at each step (for an agent that reads it)
    axtree: bool = False

    @property
    def secrets(self) -> SecretStore:
        return self.executor.secrets

    def observe(self) -> PageSnapshot:
        shots = self.session.settings.screenshots
        return observe(self.session, self.executor.secrets, screenshot=shots, axtree=self.axtree)

    def act(self, action: LiveAction | None, why_invalid: str, page: PageSnapshot) -> Acted:
        if action is None:
            return Acted(no_action(why_invalid, page.url))
        return Acted(self.executor.execute(action, page))

    def ending(self) -> Ending:
        return Ending()  # an open web page gives no reward


def run_manifest(
    settings: RunSettings, agent_manifest: dict[str, Any], policy: DomainPolicy
) -> dict[str, Any]:
    return {
        "kind": "live-run",
        "task": settings.task,
        "url": settings.url,
        "settings": settings.manifest(),
        "allowed": policy.manifest(),
        **provenance(),
        **agent_manifest,
    }


def run_task(
    settings: RunSettings,
    agent: Agent,
    *,
    secrets: SecretStore | None = None,
    confirm: ConfirmCallback | None = None,
    agent_manifest: dict[str, Any] | None = None,
    browser: Browser | None = None,
) -> EpisodeResult:
    """Open ``settings.url`` and run ``agent`` on ``settings.task``.

    ``agent_manifest`` (e.g. ``{"agent": {...}, "model": {...}}``) goes into manifest.json.
    ``browser``: an already started browser to use (its own context); default: start one.
    """
    secrets = secrets or SecretStore()
    policy = DomainPolicy.for_start_url(
        settings.url, settings.safety.allowed_domains, settings.safety.allowed_file_roots
    )
    tracer = RunTracer(settings.out_dir, secrets)
    tracer.start(run_manifest(settings, agent_manifest or {}, policy))
    guard = NavigationGuard(policy, block_resources=settings.safety.block_offsite_resources)
    confirm = confirm if settings.safety.confirm_submit else None
    with contextlib.ExitStack() as stack:
        if browser is None:
            browser = stack.enter_context(open_browser(settings.browser))
        session = BrowserSession(browser, settings.browser, guard, secrets.redact)
        stack.callback(session.close)
        _open_start(session, settings.url, tracer)
        executor = Executor(session, secrets=secrets, confirm=confirm)
        env = TabEnvironment(session, executor, axtree=agent.reads_axtree)
        return Episode(env, agent, settings.task, settings.limits, tracer).run()


def _open_start(session: BrowserSession, url: str, tracer: RunTracer) -> None:
    """Open the start URL; if it cannot be opened, the run ends as an error, traced."""
    try:
        session.goto(url)
    except LiveRunnerError as exc:
        tracer.finish(EpisodeResult(status=EndReason.ERROR.value, detail=str(exc)))
        raise
