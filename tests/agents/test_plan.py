"""The cost plan: the agent's own step against a backend that answers without a model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from webagent.agents.plan import PlanBackend, cost, format_plan, plan_agent, plan_agents
from webagent.agents.registry import AGENT_NAMES, AgentSettings, build_agent
from webagent.contracts import Observation, RenderedPage
from webagent.gist.batch import split_parts
from webagent.gist.cache import DryRunCache, GistCache
from webagent.model.base import Backend, Completion, Message, Request
from webagent.model.client import Model
from webagent.model.prices import flat_price

TASK = "Search flights from Oslo"
#: the page as an agent reads it (the ``read_as`` fixture)
ReadAs = Callable[[str, str], RenderedPage]


class _Counter(Backend):
    """Only a token counter: what the plan borrows from the real backend."""

    name = "m"
    context_window = 4096

    def complete(self, request: Request, timeout_s: float) -> Completion:
        raise AssertionError("the plan made a model call")

    def count_tokens(self, text: str) -> int:
        return len(text.split())


_PLANNER = PlanBackend(Model(_Counter()), AgentSettings())


def like_the_plan(request: Request) -> str:
    """A scripted model that answers as the plan assumes (full-length gists naming an id)."""
    return _PLANNER._answer(request)


@pytest.mark.parametrize("agent", AGENT_NAMES)
def test_plan_matches_a_run_that_answers_as_assumed(
    agent: str, flights_html: str, scripted_model: Callable[..., Model], read_as: ReadAs
) -> None:
    settings = AgentSettings(agent=agent, context_budget=2048)  # type: ignore[arg-type]
    page = read_as(agent, flights_html)
    observations = [
        Observation(task=TASK, html=page.html, axtree=page.axtree),
        Observation(
            task=TASK,
            previous_actions=["[link] Flights -> CLICK"],
            html=page.html,
            axtree=page.axtree,
        ),
    ]
    counter = Model(_Counter())
    plan = plan_agent(settings, counter, observations)
    model = scripted_model(like_the_plan, context_window=4096, name="m")
    model.backend.count_tokens = counter.count_tokens  # type: ignore[method-assign]
    real = build_agent(settings, model, None)
    spent = [real.step(o).usage for o in observations]
    assert plan.steps == 2 and not plan.errors
    for planned, actual in zip(plan.per_step, spent, strict=True):
        assert {p: u.calls for p, u in planned.items()} == {p: u.calls for p, u in actual.items()}
        assert {p: u.input_tokens for p, u in planned.items()} == {
            p: u.input_tokens for p, u in actual.items()
        }


def test_the_plan_reads_the_gist_cache_and_never_writes_it(
    tmp_path: Path, flights_html: str, scripted_model: Callable[..., Model]
) -> None:
    cache = GistCache(tmp_path / "gists.sqlite")
    settings = AgentSettings(agent="gist-only", context_budget=2048)
    observation = Observation(task=TASK, html=flights_html)
    counter = Model(_Counter())
    cold = plan_agent(settings, counter, [observation, observation], cache)
    assert cold.per_step[0]["gist"].calls >= 1
    assert cold.per_step[1]["gist"].calls == 0  # the plan's own first step: planned hits
    assert cold.per_step[1]["gist"].cache_hits > 0
    assert cache.stats()["entries"] == 0  # nothing written
    model = scripted_model(like_the_plan, context_window=4096, name="m")
    model.backend.count_tokens = counter.count_tokens  # type: ignore[method-assign]
    build_agent(settings, model, cache).step(observation)  # a real run fills the cache
    warm = plan_agent(settings, counter, [observation], cache)
    assert warm.per_step[0]["gist"].calls == 0 and warm.per_step[0]["gist"].cache_hits > 0
    dry = DryRunCache(cache)
    dry.put("k", "v")
    assert dry.get("k") == "v" and cache.peek("k") is None
    cache.close()


def test_the_table_prices_every_agent(flights_html: str) -> None:
    plans = plan_agents(
        AgentSettings(context_budget=2048),
        Model(_Counter()),
        [Observation(task=TASK, html=flights_html)],
    )
    assert [p.agent for p in plans] == list(AGENT_NAMES)
    text = format_plan(plans, "readagent-p", flat_price(1.0, 2.0))
    assert "readagent-p *" in text and "USD/1k steps" in text.splitlines()[0]
    raw = next(p for p in plans if p.agent == "raw-html").figures()
    assert raw["calls"] == 1
    assert cost(raw, flat_price(1.0, 2.0)) == pytest.approx(
        (raw["input_tokens"] + 2 * raw["output_tokens"]) / 1e6
    )
    assert cost(raw, None) is None


def test_plan_answers_are_valid_for_the_parsers() -> None:
    html = "<div id=n1><a id=n2>x</a></div>"
    batch = '<part n="1" path="body">\n' + html + '\n</part>\n<part n="2">\n' + html + "\n</part>"
    answer = json.loads(_PLANNER._answer(_req("gist", batch)))
    assert set(answer) == {"1", "2"} and all("(id=n1)" in g for g in answer.values())
    assert split_parts(batch) == [html, html]
    seq = json.loads(
        _PLANNER._answer(
            _req("lookup", "Parts opened so far: 1, 2. You may", {"properties": {"page": {}}})
        )
    )
    assert seq["page"] == "3"


def _req(phase: str, text: str, schema: dict[str, object] | None = None) -> Request:
    return Request(messages=(Message(role="user", content=text),), phase=phase, json_schema=schema)  # type: ignore[arg-type]
