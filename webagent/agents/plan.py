"""A cost plan before spending: calls and tokens per agent, with no model call.

The plan runs the agent's own step (real segmentation, real templates, real batching, the
gist cache as it stands) against :class:`PlanBackend`, which answers at once without a model
and counts tokens with the real backend's counter. Its answers are stated assumptions:

* every gist takes its full ``gist_max_tokens`` and names one id of its fragment;
* the look-up reopens parts 1..``max_lookup`` (ReadAgent-S: one per round, never STOP early,
  so its look-up calls are an upper bound); on a page whose memory gets levels
  (:mod:`webagent.method.levels`) it opens sections 1..``max_lookup`` at every level, then the
  parts in them as above;
* the act answer is valid the first time (no repair call): it names the first id the
  prompt's page shows.

An agent the budget cannot hold (too small for its gists and reopened fragments) is planned
as refused, with the reason in the command line's words; the others are planned as usual.

A real run spends the same calls where the model behaves like that, and fewer input tokens
where its gists are shorter; the eval report prints the plan beside what was spent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from webagent.agents.context import context_budget
from webagent.agents.registry import agent_names, build_agent
from webagent.agents.settings import AgentSettings
from webagent.contracts import Observation, PhaseUsage
from webagent.errors import ConfigError
from webagent.gist.batch import split_parts
from webagent.gist.cache import DryRunCache, GistCache
from webagent.html.reading import MARK
from webagent.method.memory import SHOWN_ID
from webagent.model import prices
from webagent.model.base import Backend, Completion, Message, Request
from webagent.model.client import Model
from webagent.model.prices import Price, TokenBill
from webagent.model.windows import ContextWindow
from webagent.prompts import load_template
from webagent.tokens import truncate_to_tokens

_OPENED = re.compile(r"Parts opened so far: ([^.\n]*)\.")
_FILLER = "word " * 600


#: the act templates (offline, live): the page follows their fixed text
_ACT_TEMPLATES = ("act", "act_live")


def _page_slot(template: str) -> str:
    """An act template's fixed text right before the page (its own ``id=...`` is no id)."""
    before_page = load_template(template).parts["user"].split("{{page}}", 1)[0]
    return before_page.rsplit("}}", 1)[-1]


def shown_page(prompt: str) -> str:
    """The page an act prompt shows: what follows its template's text before it."""
    for template in _ACT_TEMPLATES:
        _, found, page = prompt.partition(_page_slot(template))
        if found:
            return page
    return prompt


class PlanBackend(Backend):
    """Answers instantly with placeholders of a real answer's size; counts like ``real``."""

    def __init__(self, real: Model, settings: AgentSettings) -> None:
        self._real = real
        self._settings = settings
        self.name = real.name  # the gist cache is keyed by model: see the same entries
        self.max_concurrency = 1

    @property
    def context_window(self) -> int | None:  # type: ignore[override]
        return self._real.context_window

    def window(self) -> ContextWindow:
        return self._real.window()

    def count_tokens(self, text: str) -> int:
        return self._real.count_tokens(text)

    def count_message_tokens(self, messages: tuple[Message, ...]) -> int:
        return self._real.count_message_tokens(messages)

    def complete(self, request: Request, timeout_s: float) -> Completion:
        text = self._answer(request)
        return Completion(
            text=text,
            model=self.name,
            input_tokens=self.count_message_tokens(request.messages),
            output_tokens=self.count_tokens(text),
        )

    def _gist(self, part: str) -> str:
        found = SHOWN_ID.search(part) or MARK.search(part)
        named = f"(id={found.group(1)}) " if found else ""
        return truncate_to_tokens(
            named + _FILLER, self._settings.gist_max_tokens, self.count_tokens
        )

    def _answer(self, request: Request) -> str:
        text = request.messages[-1].content
        if request.phase == "gist":
            sections = text.count("[Section ")
            if sections:  # a levelled memory's sections, gisted from their parts' gists
                gists = {str(n): self._gist(text) for n in range(1, sections + 1)}
                return json.dumps(gists)
            parts = split_parts(text)
            if parts:
                return json.dumps({str(n): self._gist(html) for n, html in enumerate(parts, 1)})
            return self._gist(text.rsplit("<page_part>", 1)[-1])
        if request.phase == "lookup":
            properties = (request.json_schema or {}).get("properties", {})
            if "sections" in properties:
                picked = list(range(1, self._settings.max_lookup + 1))
                return json.dumps({"sections": picked, "reason": "plan"})
            if "pages" in properties:
                pages = list(range(1, self._settings.max_lookup + 1))
                return json.dumps({"pages": pages, "reason": "plan"})
            opened_match = _OPENED.search(text)
            opened = set(re.findall(r"\d+", opened_match.group(1))) if opened_match else set()
            page = next(n for n in range(1, len(opened) + 2) if str(n) not in opened)
            return json.dumps({"page": str(page), "reason": "plan"})
        schema = request.json_schema or {}
        enum = schema.get("properties", {}).get("element_id", {}).get("enum")
        found = SHOWN_ID.search(shown_page(text))
        element = enum[0] if enum else (found.group(1) if found else "none")
        return json.dumps({"element_id": element, "op": "CLICK", "value": ""})


class AgentPlan(BaseModel):
    """What one agent is expected to spend on a list of steps."""

    agent: str
    steps: int
    per_step: list[dict[str, PhaseUsage]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list, description="steps that could not run")
    levelled: int = Field(default=0, description="steps whose page memory got levels")
    levels: int = Field(default=0, description="the most levels of sections in one step")
    refused: str | None = Field(
        default=None, description="why the agent cannot run with these settings (not planned)"
    )

    def total(self) -> dict[str, PhaseUsage]:
        return sum_usage(self.per_step)

    def figures(self) -> dict[str, int]:
        total = self.total()
        return {
            "calls": sum(u.calls for u in total.values()),
            "input_tokens": sum(u.input_tokens for u in total.values()),
            "output_tokens": sum(u.output_tokens for u in total.values()),
        }


def sum_usage(steps: Iterable[dict[str, PhaseUsage]]) -> dict[str, PhaseUsage]:
    """Per-phase totals of several steps' usage."""
    total: dict[str, PhaseUsage] = {}
    for usage in steps:
        for phase, u in usage.items():
            total.setdefault(phase, PhaseUsage()).add(u)
    return total


def plan_agent(
    settings: AgentSettings,
    model: Model,
    observations: Iterable[Observation],
    gist_cache: GistCache | None = None,
) -> AgentPlan:
    """Run ``settings``' agent on ``observations`` with no model call and count the cost.

    ``gist_cache``: the cache the real run will use (read, never written); gists the plan
    would write are remembered for its later steps, as a real run's cache would.
    """
    planner = Model(PlanBackend(model, settings))
    cache = DryRunCache(gist_cache) if gist_cache is not None else None
    try:
        agent = build_agent(settings, planner, cache)
    except ConfigError as exc:
        return AgentPlan(agent=settings.agent, steps=sum(1 for _ in observations), refused=str(exc))
    plan = AgentPlan(agent=settings.agent, steps=0)
    for observation in observations:
        trace = agent.step(observation)
        plan.steps += 1
        plan.per_step.append(
            {p: u.model_copy(update={"latency_s": 0.0}) for p, u in trace.usage.items()}
        )
        if trace.error_class in ("page_error", "model_error"):
            plan.errors.append(trace.error or "")
        if trace.sections:
            plan.levelled += 1
            plan.levels = max(plan.levels, *(s.depth for s in trace.sections))
    return plan


def plan_agents(
    settings: AgentSettings,
    model: Model,
    observations: list[Observation],
    gist_cache: GistCache | None = None,
    agents: Iterable[str] | None = None,
) -> list[AgentPlan]:
    """One plan per agent, every other setting as given."""
    return [
        plan_agent(settings.model_copy(update={"agent": name}), model, observations, gist_cache)
        for name in (agent_names() if agents is None else agents)
    ]


def budget_line(settings: AgentSettings, model: Model) -> str:
    """The budget the plan holds every prompt to, and the window beside it."""
    budget, window = context_budget(settings, model), model.window()
    asked = "as asked" if settings.context_budget is not None else "the model's window"
    held = f"{window.tokens:,} tokens" if window.tokens is not None else "not known"
    return (
        f"context budget {budget:,} tokens a prompt ({asked}); the context window of "
        f"{model.name}: {held} ({window.source})"
    )


def cost(figures: dict[str, int], price: Price | None) -> float | None:
    """USD of the figures at ``price`` (None: no price), every input token at the input
    price: the plan assumes no prompt cache."""
    if price is None:
        return None
    bill = TokenBill(input_tokens=figures["input_tokens"], output_tokens=figures["output_tokens"])
    return prices.cost(bill, price)


def format_plan(
    plans: list[AgentPlan], selected: str | None = None, price: Price | None = None
) -> str:
    """A table: per agent, calls and tokens per step and for the whole run (and cost)."""
    head = [
        "agent",
        "steps",
        "calls/step",
        "in tok/step",
        "out tok/step",
        "calls",
        "in tok",
        "out tok",
    ]
    head += ["USD/1k steps", "USD"] if price is not None else []
    rows: list[list[str]] = []
    for plan in plans:
        f = plan.figures()
        n = max(plan.steps, 1)
        mark = " *" if plan.agent == selected else ""
        if plan.refused is not None:
            rows.append([plan.agent + mark, str(plan.steps), *["cannot run"] * (len(head) - 2)])
            continue
        row = [
            plan.agent + mark,
            str(plan.steps),
            f"{f['calls'] / n:.1f}",
            f"{f['input_tokens'] / n:,.0f}",
            f"{f['output_tokens'] / n:,.0f}",
            f"{f['calls']:,}",
            f"{f['input_tokens']:,}",
            f"{f['output_tokens']:,}",
        ]
        usd = cost(f, price)
        rows += [row + ([f"{1000 * usd / n:,.2f}", f"{usd:.4f}"] if usd is not None else [])]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in [head, *rows]
    ]
    notes = [
        "plan: no model call; real segmentation, templates and the backend's token counter;",
        "assumed: each gist uses its full gist_max_tokens, the look-up reopens parts 1..max_lookup",
        "(ReadAgent-S never stops early: an upper bound), the act answer needs no repair.",
    ]
    if selected is not None:
        notes.append("* the agent this command runs")
    if price is not None:
        notes.append(f"cost at {price.describe()}; no prompt cache assumed (an upper bound)")
    for plan in plans:
        if plan.levelled:
            notes.append(
                f"{plan.agent}: {plan.levelled} of {plan.steps} steps on pages too long to gist "
                f"flat get levels of sections (up to {plan.levels}; one look-up round each)"
            )
    for plan in plans:
        if plan.refused is not None:
            notes.append(f"{plan.agent} cannot run: {plan.refused}")
        if plan.errors:
            notes.append(
                f"{plan.agent}: {len(plan.errors)} steps could not be planned, their cost is "
                f"missing ({plan.errors[0]})"
            )
    return "\n".join([*lines, *notes])


def plan_payload(plans: list[AgentPlan], price: Price | None) -> dict[str, Any]:
    """The plan as JSON (written beside an eval run as ``plan.json``)."""
    return {
        "schema_version": 1,
        "agents": [
            {
                "agent": p.agent,
                "steps": p.steps,
                **p.figures(),
                "cost": cost(p.figures(), price),
                "by_phase": {k: v.model_dump() for k, v in p.total().items()},
                "errors": p.errors,
                "levelled_steps": p.levelled,
                "levels": p.levels,
                "refused": p.refused,
            }
            for p in plans
        ],
        "price": price.model_dump(mode="json") if price is not None else None,
    }
