"""The one episode loop: observe → agent → act, until STOP, the environment's end or a limit.

Every place an agent runs live is an :class:`Environment`: a browser tab (``webagent run``,
:mod:`live_runner.tab`), a MiniWoB++ task (:mod:`live_runner.miniwob`), a BrowserGym
environment (:mod:`live_runner.browsergym.environment`). Each gives the page the agent reads
(ids as ``backend_node_id``) and carries out its action; this loop does the rest the same way
for all of them: previous actions with their outcomes (``[button]  Submit -> CLICK (failed:
element is covered ...)``), limits, tokens, one :class:`~live_runner.records.StepRecord` per
step and one :class:`~live_runner.records.EpisodeResult` at the end, traced.

A step with no valid action is a failed step, reported back the same way. A step the model
never answered suspends the episode as ``pending``: its answer is still to come (the batch
backend), or the model failed after its retries, or a replay holds no answer for it; nothing
is done on the page, and the episode runs again from its seed. Each step's observation is
kept as a digest, so a replay from the seed can be checked against it
(:mod:`live_runner.rounds`). Nothing read from the page changes the task, the allowed domains
or the limits.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from pydantic import ValidationError

from live_runner.actions import (
    AGENT_OPS,
    ActionOutcome,
    FailureKind,
    LiveAction,
    LiveOp,
    failure_counts,
)
from live_runner.observe import PageSnapshot
from live_runner.records import EpisodeResult, StepRecord
from live_runner.rounds import digest
from live_runner.safety import SecretStore
from live_runner.settings import LimitSettings
from live_runner.trace import RunTracer
from webagent.contracts import Agent, Observation, Op, StepTrace
from webagent.provenance import now

log = logging.getLogger(__name__)

#: the agent's step ended at a request whose answer is still to come (the batch backend)
AWAITING = "awaiting_answer"
#: steps the model never answered (still to come; failed after retries; not in a replay):
#: the episode is pending, never a failure
UNANSWERED = (AWAITING, "model_error")


class EndReason(StrEnum):
    STOPPED = "stopped"  # the agent said STOP
    DONE = "done"  # the environment said the episode is over (MiniWoB, BrowserGym)
    TRUNCATED = "truncated"  # the environment cut the episode short (BrowserGym)
    MAX_STEPS = "max_steps"
    MAX_SECONDS = "max_seconds"
    MAX_TOKENS = "max_tokens"
    ERROR = "error"
    INTERRUPTED = "interrupted"
    PENDING = "pending"  # the model never answered a step; the episode runs again from its seed


@dataclass
class Acted:
    """What came of one action in an environment."""

    outcome: ActionOutcome
    #: the environment's own record of the step (reward, BrowserGym's action text, ...)
    info: dict[str, Any] = field(default_factory=dict)
    #: DONE or TRUNCATED when the environment ended the episode with this step
    end: EndReason | None = None


@dataclass
class Ending:
    """The environment's verdict on an episode."""

    reward: float = 0.0
    success: bool | None = None
    info: dict[str, Any] = field(default_factory=dict)


class Environment(Protocol):
    """Where an agent acts: it shows a page and carries out actions on it."""

    @property
    def secrets(self) -> SecretStore:
        """What is redacted from every record of the episode."""

    def observe(self) -> PageSnapshot:
        """The page as the agent reads it now."""

    def act(self, action: LiveAction | None, why_invalid: str, page: PageSnapshot) -> Acted:
        """Carry out ``action`` on ``page`` (None: the agent gave no valid action, for the
        reason ``why_invalid``), never raising for a failure on the page."""

    def ending(self) -> Ending:
        """The reward and verdict so far (asked once, when the episode ends)."""


@dataclass
class _Tally:
    started: float = field(default_factory=time.monotonic)
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    outcomes: list[ActionOutcome] = field(default_factory=list)
    observed: list[str] = field(default_factory=list)

    def add_usage(self, trace: StepTrace) -> dict[str, int]:
        used_in = sum(u.input_tokens for u in trace.usage.values())
        used_out = sum(u.output_tokens for u in trace.usage.values())
        self.input_tokens += used_in
        self.output_tokens += used_out
        self.calls += sum(u.calls for u in trace.usage.values())
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


def page_observation(
    goal: str, previous: list[str], page: PageSnapshot, actions: tuple[Op, ...]
) -> Observation:
    """What the agent reads of ``page`` (its HTML, address and accessibility tree) and the
    operations the environment offers."""
    return Observation(
        task=goal,
        previous_actions=previous,
        html=page.html,
        url=page.url,
        axtree=page.axtree,
        actions=actions,
    )


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
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
        return None, f"the action is not valid here: {reason}"
    except ValueError as exc:
        return None, f"the action is not valid here: {exc}"


@dataclass
class Episode:
    """One agent in one environment on one goal, within limits, traced."""

    env: Environment
    agent: Agent
    goal: str
    limits: LimitSettings
    tracer: RunTracer
    #: the operations the agent is offered (every live environment carries out all of them)
    ops: tuple[Op, ...] = AGENT_OPS

    def run(self) -> EpisodeResult:
        """Loop until STOP, the environment's end, a pending answer or a limit. The trace is
        finished whatever happens; an exception other than the page's goes on up."""
        tally = _Tally()
        status, detail, answer = EndReason.ERROR, "", None
        try:
            status, answer, detail = self._loop(tally)
        except KeyboardInterrupt:
            status, detail = EndReason.INTERRUPTED, "interrupted by the user"
            raise
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            result = self._result(tally, status, detail, answer)
            self.tracer.finish(result)
        return result

    def _loop(self, tally: _Tally) -> tuple[EndReason, str | None, str]:
        while (reason := tally.limit_hit(self.limits)) is None:
            step = len(tally.outcomes) + 1
            started_at, t0 = now(), time.perf_counter()
            page = self.env.observe()
            t1 = time.perf_counter()
            previous = [o.describe() for o in tally.outcomes]
            observation = page_observation(self.goal, previous, page, self.ops)
            tally.observed.append(digest(observation))
            trace = self.agent.step(observation)
            if trace.error_class in UNANSWERED:
                return EndReason.PENDING, None, trace.error or "a model answer is to come"
            t2 = time.perf_counter()
            tokens = tally.add_usage(trace)
            action, why = to_live_action(trace)
            acted = self.env.act(action, why, page)
            if action is None and trace.error_class == "invalid_id":
                acted.outcome.failure = FailureKind.ELEMENT_NOT_FOUND  # an id not on the page
            tally.outcomes.append(acted.outcome)
            record = StepRecord(
                step=step,
                started_at=started_at,
                url=page.url,
                title=page.title,
                previous_actions=previous,
                n_elements=len(page.elements),
                agent=trace,
                action=action,
                outcome=acted.outcome,
                tokens=tokens,
                timings={
                    "observe_s": t1 - t0,
                    "agent_s": t2 - t1,
                    "act_s": time.perf_counter() - t2,
                },
                episode=acted.info,
            )
            self.tracer.write_step(record, page)
            if action is not None and action.op is LiveOp.STOP:
                return EndReason.STOPPED, action.value, ""
            if acted.end is not None:
                return acted.end, None, ""
        return reason, None, ""

    def _result(
        self, tally: _Tally, status: EndReason, detail: str, answer: str | None
    ) -> EpisodeResult:
        try:
            ending = self.env.ending()
        except Exception as exc:  # noqa: BLE001 - a dead page has no verdict; the run's end stays
            log.warning("the environment gave no verdict: %s", exc)
            ending = Ending()
        return EpisodeResult(
            status=status.value,
            detail=self.env.secrets.redact(detail),
            steps=len(tally.outcomes),
            final_answer=answer,
            elapsed_s=time.monotonic() - tally.started,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            calls=tally.calls,
            reward=ending.reward,
            success=ending.success,
            episode={
                **ending.info,
                "failed_actions": sum(not o.ok for o in tally.outcomes),
                "failures": failure_counts(tally.outcomes),
            },
            goal=self.goal,
            observed=tally.observed,
        )
