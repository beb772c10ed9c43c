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

from dataclasses import dataclass, field
from typing import Any

from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.experiments.agent import Agent as BrowserGymBase
from browsergym.experiments.agent import AgentInfo

from live_runner.actions import ActionOutcome, ElementLabel, LiveAction
from live_runner.browsergym.actions import ACTION_SUBSETS, NOOP, outcome, to_browsergym
from live_runner.browsergym.observation import goal_text, page_from_obs
from live_runner.episode import page_observation, to_live_action
from live_runner.observe import PageSnapshot
from webagent.contracts import Agent, StepTrace

#: the processed observation's keys (besides BrowserGym's own, minus its DOM and AXTree)
PAGE_KEY = "webagent_page"
TASK_KEY = "webagent_task"


def action_set() -> HighLevelActionSet:
    """The actions this agent emits: BrowserGym's high-level ``chat``, ``bid``, ``nav``."""
    return HighLevelActionSet(subsets=list(ACTION_SUBSETS), multiaction=True, strict=False)


@dataclass
class _Pending:
    """The action sent last, waiting for the observation that says how it went."""

    action: LiveAction | None
    label: ElementLabel | None
    url: str
    why_invalid: str = ""


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
        done = outcome(
            pending.action,
            pending.label,
            str(obs.get("last_action_error") or ""),
            url_before=pending.url,
            url_after=str(obs.get("url", "")),
            why_invalid=pending.why_invalid,
        )
        self.outcomes.append(done)
        return done

    def get_action(self, obs: Any) -> tuple[str, StepInfo]:
        self.settle(obs)
        page: PageSnapshot = obs[PAGE_KEY]
        previous = [o.describe() for o in self.outcomes]
        trace = self.agent.step(page_observation(obs[TASK_KEY], previous, page))
        action, why = to_live_action(trace)
        if action is not None and action.element_id and action.element_id not in page.elements:
            why = f"element {action.element_id!r} has no BrowserGym id (bid) on this page"
            action = None
        label = page.label(action.element_id) if action and action.element_id else None
        text = to_browsergym(action)
        self._pending = _Pending(action, label, page.url, why)
        self.last = StepView(page, trace, action, text, previous)
        return text, _info(trace, text, previous)


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
