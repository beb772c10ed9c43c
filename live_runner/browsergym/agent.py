"""Any :class:`webagent.contracts.Agent` as a BrowserGym agent.

BrowserGym's experiment loop (and AgentLab's) calls ``obs_preprocessor(obs)`` on every raw
observation, then ``get_action(processed)`` and runs the action string it returns with
``action_set``. Here the preprocessor renders the page the agents read (ids = BrowserGym
``bid``\\ s, :mod:`live_runner.browsergym.observation`); ``get_action`` first settles the previous
action's outcome from the observation's ``last_action_error``, so the agent sees its previous
actions as ``[button]  Submit -> CLICK (failed: ...)`` exactly as in ``webagent run``, then
steps the agent and translates its action (:mod:`live_runner.browsergym.actions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.experiments.agent import Agent as BrowserGymBase
from browsergym.experiments.agent import AgentInfo

from live_runner import changes
from live_runner.actions import AGENT_OPS, ActionOutcome, ElementLabel, FailureKind, LiveAction
from live_runner.browsergym.actions import ACTION_SUBSETS, NOOP, Sending, prepare, sent_outcome
from live_runner.browsergym.observation import goal_text, page_from_obs
from live_runner.episode import page_observation, to_live_action
from live_runner.observe import PageSnapshot
from webagent.contracts import Agent, StepTrace

#: the processed observation's keys (besides BrowserGym's own, minus its DOM and AXTree)
PAGE_KEY = "webagent_page"
TASK_KEY = "webagent_task"


def action_set() -> HighLevelActionSet:
    """The actions this agent emits: BrowserGym's high-level ``chat``, ``bid``, ``nav`` and
    ``coord`` (a key on the page, a click at a point, a drag by an offset)."""
    return HighLevelActionSet(subsets=list(ACTION_SUBSETS), multiaction=True, strict=False)


@dataclass
class _Pending:
    """The action sent last, waiting for the observation that says how it went."""

    sending: Sending
    label: ElementLabel | None
    page: PageSnapshot


@dataclass
class StepView:
    """What the last :meth:`BrowserGymAgent.get_action` saw and did, for a tracer."""

    page: PageSnapshot
    trace: StepTrace
    action: LiveAction | None
    action_text: str
    previous_actions: list[str] = field(default_factory=list)


class BrowserGymAgent(BrowserGymBase):  # type: ignore[misc]  # BrowserGym is untyped
    """``agent`` in BrowserGym. ``screenshots=False`` keeps JPEGs out of the processed page."""

    def __init__(self, agent: Agent, *, screenshots: bool = True) -> None:
        self.agent = agent
        self.action_set = action_set()
        self.screenshots = screenshots
        self.outcomes: list[ActionOutcome] = []
        self.last: StepView | None = None
        self._pending: _Pending | None = None

    def obs_preprocessor(self, obs: dict[str, Any]) -> dict[str, Any]:
        processed = {k: v for k, v in obs.items() if k not in ("dom_object", "axtree_object")}
        processed[PAGE_KEY] = page_from_obs(obs, screenshot=self.screenshots)
        processed[TASK_KEY] = goal_text(obs)
        return processed

    def settle(self, obs: dict[str, Any]) -> ActionOutcome | None:
        """Record how the pending action went (from ``obs``, the observation after it);
        returns that outcome, or None when nothing was pending."""
        pending, self._pending = self._pending, None
        if pending is None:
            return None
        done = sent_outcome(
            pending.sending,
            pending.label,
            str(obs.get("last_action_error") or ""),
            url_before=pending.page.url,
            url_after=str(obs.get("url", "")),
        )
        sent, page = pending.sending.action, pending.page
        after: PageSnapshot | None = obs.get(PAGE_KEY)
        # no snapshot between the two observations here: what changed on its own (a clock)
        # counts as a change, so only a page that stood still is reported
        sent_ok = sent is not None and pending.sending.kind is None
        if sent is not None and sent_ok and after is not None and changes.judged(sent, page):
            done.no_effect = changes.unchanged(done, page.html, page.html, after.html)
        self.outcomes.append(done)
        return done

    def get_action(self, obs: Any) -> tuple[str, StepInfo]:
        self.settle(obs)
        page: PageSnapshot = obs[PAGE_KEY]
        previous = [o.describe() for o in self.outcomes]
        trace = self.agent.step(page_observation(obs[TASK_KEY], previous, page, AGENT_OPS))
        action, why = to_live_action(trace)
        sending = prepare(action, why, page)
        if action is None and trace.error_class == "invalid_id":  # an id not on the page
            sending = replace(sending, kind=FailureKind.ELEMENT_NOT_FOUND)
        sent = sending.action
        label = page.label(sent.element_id) if sent and sent.element_id else None
        self._pending = _Pending(sending, label, page)
        self.last = StepView(page, trace, sent, sending.text, previous)
        return sending.text, _info(trace, sending.text, previous)


class StepInfo(AgentInfo):  # type: ignore[misc]  # BrowserGym is untyped
    """BrowserGym's ``AgentInfo`` that also takes item assignment, which its experiment loop
    uses on an error (``agent_info["err_msg"] = ...``)."""

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)


def _info(trace: StepTrace, text: str, previous: list[str]) -> StepInfo:
    stats: dict[str, float] = {}
    for phase, usage in trace.usage.items():
        stats[f"{phase}_calls"] = usage.calls
        stats[f"{phase}_input_tokens"] = usage.input_tokens
        stats[f"{phase}_output_tokens"] = usage.output_tokens
    lines = "\n".join(f"- {line}" for line in previous) or "- (none)"
    error = f"\n\nerror: {trace.error}" if trace.error else ""
    return StepInfo(
        think=trace.error or "",
        stats=stats,
        markdown_page=f"previous actions:\n{lines}\n\naction: `{text}`{error}",
        extra_info={"webagent_trace": trace.model_dump(mode="json"), "noop": text == NOOP},
    )
