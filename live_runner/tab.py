"""A browser tab as an environment: ``webagent run`` on any allowed page.

The page is observed with CDP (ids = ``backendNodeId``, :mod:`live_runner.observe`) and each
action carried out by the :class:`~live_runner.executor.Executor`, inside the allowed domains
(:mod:`live_runner.safety`); the episode loop is :mod:`live_runner.episode`'s.
:func:`run_task_again` runs it again in the same folder (the next request round of
``--backend batch``, or after the model failed): only when it has not ended.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from live_runner import changes
from live_runner.actions import LiveAction, no_action
from live_runner.episode import Acted, Ending, EndReason, Episode
from live_runner.errors import LiveRunnerError
from live_runner.executor import Executor
from live_runner.observe import PageSnapshot, observe
from live_runner.records import EpisodeResult
from live_runner.rounds import UNFINISHED, follow
from live_runner.safety import ConfirmCallback, DomainPolicy, NavigationGuard, SecretStore
from live_runner.session import BrowserSession, open_browser
from live_runner.settings import RunSettings
from live_runner.trace import (
    MANIFEST_FILE,
    RunTracer,
    read_manifest,
    read_summary,
    remove_run,
    write_summary,
)
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
        """Carry out ``action``; an action that left the page as it was says so
        (:mod:`live_runner.changes`: the page just before and after it, without what
        changed on its own since the agent read ``page``)."""
        if action is None:
            return Acted(no_action(why_invalid, page.url))
        judge = changes.judged(action, page)
        before = self._html() if judge else ""
        outcome = self.executor.execute(action, page)
        if judge and changes.unchanged(outcome, page.html, before, self._html()):
            outcome.no_effect = True
        return Acted(outcome)

    def _html(self) -> str:
        return observe(self.session, self.executor.secrets, screenshot=False).html

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


def finished_run(out_dir: Path) -> EpisodeResult | None:
    """The result of the run in ``out_dir`` if it ended (not pending, no error)."""
    previous = read_summary(out_dir)
    return previous if previous is not None and previous.status not in UNFINISHED else None


def run_task_again(
    settings: RunSettings,
    agent: Agent,
    *,
    secrets: SecretStore | None = None,
    **kwargs: Any,
) -> EpisodeResult:
    """:func:`run_task` as the next attempt of the run in ``settings.out_dir``: one that ended
    is not run again (its result comes back); one that is pending, ended in an error or was
    killed is replayed from the start URL (the folder's run files replaced, its ``batch/``
    kept) and checked against the attempt it replays (:mod:`live_runner.rounds`)."""
    secrets = secrets or SecretStore()
    _check_same_run(settings, secrets)
    finished = finished_run(settings.out_dir)
    if finished is not None:
        return finished
    previous = read_summary(settings.out_dir)
    remove_run(settings.out_dir)
    result = follow(previous, run_task(settings, agent, secrets=secrets, **kwargs))
    write_summary(settings.out_dir, result, secrets)
    return result


def _check_same_run(settings: RunSettings, secrets: SecretStore) -> None:
    """A folder holding a run of another task or start URL is not this run's to go on with
    (the manifest holds them redacted)."""
    if not (settings.out_dir / MANIFEST_FILE).exists():
        return
    manifest = read_manifest(settings.out_dir)
    wanted = (secrets.redact(settings.task), secrets.redact(settings.url))
    if (manifest.get("task"), manifest.get("url")) != wanted:
        raise LiveRunnerError(
            f"{settings.out_dir} holds a run of another task or start URL "
            f"({manifest.get('task')!r} at {manifest.get('url')}); pass a new --out folder"
        )


def _open_start(session: BrowserSession, url: str, tracer: RunTracer) -> None:
    """Open the start URL; if it cannot be opened, the run ends as an error, traced."""
    try:
        session.goto(url)
    except LiveRunnerError as exc:
        tracer.finish(EpisodeResult(status=EndReason.ERROR.value, detail=str(exc)))
        raise
