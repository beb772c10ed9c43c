"""Every agent end to end against the real embedded model (SmolLM2-135M via llama.cpp).

The model is near chance: these tests prove the plumbing (prompts render, structured output
parses, ids validate, usage is counted), never the method's quality.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from webagent.agents.registry import AGENT_NAMES, AgentSettings, build_agent
from webagent.contracts import Observation, RenderedPage
from webagent.gist.cache import GistCache
from webagent.model.client import Model

pytestmark = [pytest.mark.llama, pytest.mark.slow]


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> GistCache:
    return GistCache(tmp_path_factory.mktemp("gists") / "gists.sqlite")


@pytest.mark.parametrize("agent", AGENT_NAMES)
def test_agent_returns_a_valid_action_with_the_local_model(
    agent: str,
    local_model: Model,
    shared_cache: GistCache,
    flights_html: str,
    read_as: Callable[[str, str], RenderedPage],
) -> None:
    budget = 1024  # a few fragments of at most ~340 tokens: short gist prompts
    settings = AgentSettings(agent=agent, context_budget=budget, max_lookup=1, top_k=2)
    page = read_as(agent, flights_html)  # the tree, for the agent that reads it
    trace = build_agent(settings, local_model, shared_cache).step(
        Observation(task="Search for flights from Oslo to Rome", html=page.html, axtree=page.axtree)
    )
    assert trace.prompt_tokens + settings.act_max_tokens <= budget
    assert trace.error_class != "memory_over_budget"
    for call in trace.calls:  # every prompt counted with the model's tokenizer fits, repairs too
        assert call.input_tokens <= budget, call.phase
    if not trace.shown_element_ids:
        # nothing shown by id: nothing to act on (gist-only and ReadAgent-P/S, where nothing is
        # reopened and the model's gists name no id, show extractive gists, which name them)
        assert agent not in ("raw-html", "retrieval", "gist-only", "readagent-p", "readagent-s")
        assert trace.error_class == "no_ids_shown" and "act" not in trace.usage
    else:
        assert trace.usage["act"].calls >= 1 and trace.usage["act"].input_tokens > 0
        # the act schema lists the shown ids, so the grammar can only pick one of them; a
        # TYPE or SELECT without a value is the one answer left to refuse
        if trace.action is None:
            assert trace.error_class == "invalid_output" and "value" in (trace.error or "")
        else:
            assert trace.action.element_id in trace.shown_element_ids
    if agent.startswith("readagent"):
        assert trace.lookup and trace.lookup[0].raw
    if agent in ("readagent-p", "readagent-s", "gist-only"):
        assert len(trace.gists) == trace.n_fragments and all(trace.gists)


def test_replayed_run_matches_the_recorded_one(
    tmp_path: Path, local_model_path: Path, flights_html: str
) -> None:
    """Record a ReadAgent-P step against the real model, replay it with no model at all."""
    from webagent.model.factory import build_model
    from webagent.model.settings import ModelSettings

    cassette = tmp_path / "cassette.jsonl"
    settings = AgentSettings(agent="readagent-p", context_budget=1024, max_lookup=1)
    observation = Observation(task="Subscribe to deal alerts", html=flights_html)
    recorded_model = build_model(
        ModelSettings(backend="local", model_path=local_model_path, n_ctx=2048, record_to=cassette)
    )
    try:
        recorded = build_agent(settings, recorded_model).step(observation)
    finally:
        recorded_model.close()
    replay_model = build_model(
        ModelSettings(backend="replay", replay_from=cassette, context_window=2048)
    )
    replayed = build_agent(settings, replay_model).step(observation)
    assert replayed.action == recorded.action
    assert replayed.gists == recorded.gists and replayed.reopened == recorded.reopened
