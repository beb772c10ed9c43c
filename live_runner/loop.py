"""The run loop: observe → agent → act, until STOP or a limit, every step traced.

The agent sees the task, the page (ids as ``backend_node_id``) and its previous actions with
their outcomes (``[button]  Submit -> CLICK (failed: element is covered ...)``). A step with
no valid action is a failed step, reported back the same way. Nothing read from the page
changes the task, the allowed domains or the limits.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from live_runner.actions import ActionOutcome, FailureKind, LiveAction, LiveOp
from live_runner.errors import LiveRunnerError
from live_runner.executor import Executor
from live_runner.observe import PageSnapshot, observe
from live_runner.records import RunSummary, StepRecord
from live_runner.safety import ConfirmCallback, DomainPolicy, NavigationGuard, SecretStore
from live_runner.session import BrowserSession, open_browser
from live_runner.settings import LimitSettings, RunSettings
from live_runner.trace import RunTracer
from webagent.contracts import Agent, Observation, StepTrace
from webagent.provenance import now, provenance

if TYPE_CHECKING:
    from playwright.sync_api import Browser

log = logging.getLogger(__name__)


class EndReason(StrEnum):
    STOPPED = "stopped"  # the agent said STOP
    DONE = "done"  # the environment said the episode is over (MiniWoB)
    MAX_STEPS = "max_steps"
    MAX_SECONDS = "max_seconds"
    MAX_TOKENS = "max_tokens"
    ERROR = "error"
    INTERRUPTED = "interrupted"


class RunResult(BaseModel):
    status: EndReason
    steps: int
    final_answer: str | None = None
    elapsed_s: float
    input_tokens: int = 0
    output_tokens: int = 0
    outcomes: list[ActionOutcome]
    episode: dict[str, Any] = {}


@dataclass
class EpisodeHooks:
    """Optional environment signals: MiniWoB reads its reward and done flag through these."""

    #: called after each action; returns episode info (e.g. reward) to record with the step
    after_step: Callable[[], dict[str, Any]] | None = None
    #: whether that info means the episode is over
    is_done: Callable[[dict[str, Any]], bool] = field(default=lambda info: False)


@dataclass
class _Tally:
    started: float = field(default_factory=time.monotonic)
    input_tokens: int = 0
    output_tokens: int = 0
    outcomes: list[ActionOutcome] = field(default_factory=list)

    def add_usage(self, trace: StepTrace | None) -> dict[str, int]:
        if trace is None:
            return {"input": 0, "output": 0}
        used_in = sum(u.input_tokens for u in trace.usage.values())
        used_out = sum(u.output_tokens for u in trace.usage.values())
        self.input_tokens += used_in
        self.output_tokens += used_out
        return {"input": used_in, "output": used_out}

    def limit_hit(self, limits: LimitSettings) -> EndReason | None:
        if len(self.outcomes) >= limits.max_steps:
            return EndReason.MAX_STEPS
        if limits.max_seconds is not None and time.monotonic() - self.started >= limits.max_seconds:
            return EndReason.MAX_SECONDS
        total = self.input_tokens + self.output_tokens
        if limits.max_tokens is not None and total >= limits.max_tokens:
            return EndReason.MAX_TOKENS
        return None


def to_live_action(trace: StepTrace) -> tuple[LiveAction | None, str]:
    """The agent's action in live form, or None with the reason it is not usable."""
    if trace.action is None:
        return None, trace.error or "the agent produced no action"
    try:
        op = LiveOp(trace.action.op.value)
        return (
            LiveAction(op=op, element_id=trace.action.element_id or None, value=trace.action.value),
            "",
        )
    except (ValueError, ValidationError) as exc:
        return None, f"the action is not valid here: {exc}"


@dataclass
class Episode:
    """One agent in one opened tab on one task, within limits, traced."""

    session: BrowserSession
    executor: Executor
    agent: Agent
    task: str
    limits: LimitSettings
    tracer: RunTracer
    hooks: EpisodeHooks = field(default_factory=EpisodeHooks)

    def run(self) -> RunResult:
        """Loop until STOP, done, or a limit. The trace is finished whatever happens."""
        tally = _Tally()
        status, detail, answer = EndReason.ERROR, "", None
        info: dict[str, Any] = {}
        try:
            status, answer, info = self._loop(tally)
        except KeyboardInterrupt:
            status, detail = EndReason.INTERRUPTED, "interrupted by the user"
            raise
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            elapsed = time.monotonic() - tally.started
            self.tracer.finish(
                RunSummary(
                    status=status.value,
                    detail=self.executor.secrets.redact(detail),
                    steps=len(tally.outcomes),
                    final_answer=answer,
                    elapsed_s=elapsed,
                    input_tokens=tally.input_tokens,
                    output_tokens=tally.output_tokens,
                    episode=info,
                )
            )
        return RunResult(
            status=status,
            steps=len(tally.outcomes),
            final_answer=answer,
            elapsed_s=elapsed,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            outcomes=tally.outcomes,
            episode=info,
        )

    def _loop(self, tally: _Tally) -> tuple[EndReason, str | None, dict[str, Any]]:
        info: dict[str, Any] = {}
        while (reason := tally.limit_hit(self.limits)) is None:
            record, snapshot = self._step(len(tally.outcomes) + 1, tally)
            if self.hooks.after_step is not None:
                info = self.hooks.after_step()
                record.episode = info
            self.tracer.write_step(record, snapshot)
            action = record.action
            if action is not None and action.op is LiveOp.STOP:
                return EndReason.STOPPED, action.value, info
            if self.hooks.is_done(info):
                return EndReason.DONE, None, info
        return reason, None, info

    def _step(self, step: int, tally: _Tally) -> tuple[StepRecord, PageSnapshot]:
        started_at = now()
        t0 = time.perf_counter()
        shots = self.session.settings.screenshots
        snapshot = observe(self.session, self.executor.secrets, screenshot=shots)
        t1 = time.perf_counter()
        previous = [o.describe() for o in tally.outcomes]
        observation = Observation(
            task=self.task, previous_actions=previous, html=snapshot.html, url=snapshot.url
        )
        trace = self.agent.step(observation)
        t2 = time.perf_counter()
        tokens = tally.add_usage(trace)
        action, why = to_live_action(trace)
        if action is None:
            outcome = ActionOutcome(
                action=None,
                ok=False,
                failure=FailureKind.INVALID_ACTION,
                message=why,
                url_before=snapshot.url,
                url_after=snapshot.url,
            )
        else:
            outcome = self.executor.execute(action, snapshot)
        tally.outcomes.append(outcome)
        record = StepRecord(
            step=step,
            started_at=started_at,
            url=snapshot.url,
            title=snapshot.title,
            previous_actions=previous,
            n_elements=len(snapshot.elements),
            agent=trace,
            action=action,
            outcome=outcome,
            tokens=tokens,
            timings={"observe_s": t1 - t0, "agent_s": t2 - t1, "act_s": time.perf_counter() - t2},
        )
        return record, snapshot


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
) -> RunResult:
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
        episode = Episode(session, executor, agent, settings.task, settings.limits, tracer)
        return episode.run()


def _open_start(session: BrowserSession, url: str, tracer: RunTracer) -> None:
    """Open the start URL; if it cannot be opened, the run ends as an error, traced."""
    try:
        session.goto(url)
    except LiveRunnerError as exc:
        tracer.finish(
            RunSummary(status=EndReason.ERROR.value, detail=str(exc), steps=0, elapsed_s=0)
        )
        raise
