"""Run one agent step on one Mind2Web step and turn it into a :class:`StepRecord`.

The agent sees the step's ``cleaned_html`` and the gold history (``action_reprs[:i]``); a
step without one, or whose one is binary data rather than a page, is ``no_html`` (the data
has no page for it: an answer, scored as a miss, made without a model call). A failing model
or an unreadable page becomes part of the record (an error class; the step is then pending,
see :mod:`mind2web_eval.store`). A bug in the agent (an exception out of
``agent.step``) is raised, so that the run stops with its traceback, unless
``record_agent_errors`` asks to record it as ``agent_error`` and go on.
"""

from __future__ import annotations

from collections.abc import Callable

from mind2web_eval.diagnostics import diagnose
from mind2web_eval.manifest import now
from mind2web_eval.records import Prediction, Step, Task, ranked_candidates
from mind2web_eval.results import StepRecord
from mind2web_eval.scoring import GoldStep, ScoringSettings, score_step
from webagent.contracts import Agent, Observation, RenderedPage, StepTrace
from webagent.errors import WebAgentError
from webagent.html.parse import binary_reason

# what a bug in page handling may raise on a strange page: with ``record_agent_errors`` it is
# recorded as ``agent_error`` so that one page does not end a long run
_STEP_FAILURES = (WebAgentError, ValueError, LookupError, RuntimeError, SyntaxError)
#: (saved page, its name) -> the page the agent sees (``--render``: its HTML, and its
#: accessibility tree where the agent reads it); raises WebAgentError
Render = Callable[[str, str], RenderedPage]


def no_page(step: Step) -> str | None:
    """Why the agent cannot see ``step``'s page (``no_html``); None when it can."""
    if step.cleaned_html is None:
        return "the step has no cleaned_html: the agent cannot see the page"
    binary = binary_reason(step.cleaned_html)
    return f"the step's cleaned_html is binary data, not a page: {binary}" if binary else None


def _observe(
    agent: Agent, task: Task, index: int, record_agent_errors: bool, render: Render | None
) -> tuple[StepTrace | None, str | None, str]:
    """(trace, run error class, error message)."""
    step = task.actions[index]
    missing = no_page(step)
    if missing or step.cleaned_html is None:
        return None, "no_html", missing or ""
    page = RenderedPage(html=step.cleaned_html)
    if render is not None:
        name = f"the page of step {step.action_uid} (task {task.annotation_id})"
        try:
            page = render(page.html, name)
        except WebAgentError as exc:  # pending: the same command tries the page again
            return None, "page_error", str(exc)
    observation = Observation(
        task=task.confirmed_task,
        previous_actions=task.previous_actions(index),
        html=page.html,
        candidates=ranked_candidates(step),
        axtree=page.axtree,
    )
    if not record_agent_errors:
        trace = agent.step(observation)
        return trace, None, trace.error or ""
    try:
        trace = agent.step(observation)
    except _STEP_FAILURES as exc:
        return None, "agent_error", f"{type(exc).__name__}: {exc}"
    return trace, None, trace.error or ""


def run_step(
    agent: Agent,
    task: Task,
    index: int,
    gold: GoldStep,
    scoring: ScoringSettings,
    *,
    record_agent_errors: bool = False,
    render: Render | None = None,
) -> StepRecord:
    trace, run_error, error = _observe(agent, task, index, record_agent_errors, render)
    action = trace.action if trace is not None else None
    prediction = Prediction(
        annotation_id=task.annotation_id,
        action_uid=gold.action_uid,
        element_id=action.element_id if action else None,
        op=action.op if action else None,
        value=action.value if action else "",
        error_class=run_error or (trace.error_class if trace else None),
    )
    score = score_step(gold, prediction, scoring)
    usable, _ = gold.usable_positives(scoring.top_k)
    return StepRecord(
        annotation_id=task.annotation_id,
        action_uid=gold.action_uid,
        step_index=task.place_of(index),
        task=task.confirmed_task,
        previous_actions=task.previous_actions(index),
        gold=gold,
        gold_repr=task.action_reprs[index] if index < len(task.action_reprs) else "",
        prediction=prediction,
        score=score,
        diagnostics=diagnose(
            trace, score, usable, run_error, chooses_fragments=agent.chooses_fragments
        ),
        error=error or None,
        trace=trace,
        finished_at=now(),
    )
