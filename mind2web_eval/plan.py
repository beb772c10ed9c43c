"""``webagent eval --plan``: the cost of a run before spending it, and the plan of a real run.

The steps are the run's own (same data, same ``--limit``, gold history); the plan itself is
:mod:`webagent.agents.plan` (no model call). A real run writes its agent's plan to
``OUT/plan.json`` before the first step, so that the report can put it beside what was spent.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mind2web_eval.data import iter_tasks
from mind2web_eval.stepping import Render, no_page
from webagent.agents.plan import AgentPlan, budget_line, format_plan, plan_agent, plan_payload
from webagent.agents.plan_rounds import plan_rounds
from webagent.agents.registry import agent_names, reads_axtree
from webagent.agents.settings import AgentSettings
from webagent.contracts import Observation, RenderedPage
from webagent.errors import WebAgentError
from webagent.gist.cache import GistCache
from webagent.model.client import Model
from webagent.model.prices import Price

PLAN_FILE = "plan.json"


def data_observations(
    data: str, limit: int | None, *, strict: bool = False, render: Render | None = None
) -> Iterator[Observation]:
    """What the agent sees at every step of the data, as ``webagent eval`` runs it (lazily:
    a large dataset is read again for each agent rather than held in memory). Data with no
    usable record (or any bad one, ``strict``) is a DatasetError, before any step runs.
    ``render``: each page rendered, with its accessibility tree (a page that fails to render
    comes as saved, without a tree)."""
    for task in iter_tasks(data, limit=limit, strict=strict):
        for index, step in enumerate(task.actions):
            if step.cleaned_html is None or no_page(step) is not None:
                continue
            page = RenderedPage(html=step.cleaned_html)
            if render is not None:
                with contextlib.suppress(WebAgentError):  # the agent's step says what it lacks
                    page = render(page.html, f"the page of step {step.action_uid}")
            yield Observation(
                task=task.confirmed_task,
                previous_actions=task.previous_actions(index),
                html=page.html,
                axtree=page.axtree,
            )


@dataclass(frozen=True)
class RunToPlan:
    """What a plan of an eval run needs: the agent's settings, the model whose counter
    counts, the run's data and limit, and the gist cache the run will use."""

    settings: AgentSettings
    model: Model
    data: str
    limit: int | None
    gist_cache: GistCache | None
    price: Price | None = None
    strict: bool = False
    #: the run's renderer (``--render``): the plan of an agent that reads the accessibility
    #: tree renders its pages too (the others plan on the pages as saved)
    render: Render | None = None

    def observations(self, agent: str) -> Iterator[Observation]:
        """The run's steps as ``agent`` will see them (as far as the plan needs)."""
        render = self.render if reads_axtree(agent) else None
        return data_observations(self.data, self.limit, strict=self.strict, render=render)


def plan_run(run: RunToPlan, agents: Iterable[str] | None = None) -> list[AgentPlan]:
    """One plan per agent over the run's steps."""
    return [
        plan_agent(
            run.settings.model_copy(update={"agent": name}),
            run.model,
            run.observations(name),
            run.gist_cache,
        )
        for name in (agent_names() if agents is None else agents)
    ]


def write_plan(out: Path, plans: list[AgentPlan], price: Price | None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / PLAN_FILE
    path.write_text(json.dumps(plan_payload(plans, price), indent=2) + "\n")
    return path


def print_plan_before_run(run: RunToPlan, *, rounds: bool = False) -> None:
    """``--plan``: every agent's plan over the run's steps, printed; nothing is run.
    ``rounds``: also the batch rounds the run's own agent takes (``--backend batch``)."""
    plans = plan_run(run)
    steps = plans[0].steps if plans else 0
    print(f"cost plan for {steps} steps (no model call was made):")
    print(format_plan(plans, run.settings.agent, run.price))
    print(budget_line(run.settings, run.model))
    runs = any(p.agent == run.settings.agent and p.refused is None for p in plans)
    if rounds and runs:
        observations = run.observations(run.settings.agent)
        print(plan_rounds(run.settings, run.model, observations, run.gist_cache).describe())


def plan_beside_run(run: RunToPlan, out: Path) -> Path:
    """A real run's own plan (its agent only), written before its first step."""
    return write_plan(out, plan_run(run, agents=(run.settings.agent,)), run.price)
