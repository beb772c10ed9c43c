"""The bundled sample tasks (the demo's data) are valid Mind2Web raw-format records."""

from __future__ import annotations

import re

import pytest

from mind2web_eval.commands.demo import DEMO_AGENTS, DEMO_BUDGET, samples_path
from mind2web_eval.data import load_tasks
from webagent.agents.registry import AgentSettings, build_agent
from webagent.model.client import Model


def test_bundled_samples_are_complete_mind2web_records() -> None:
    tasks, summary = load_tasks(samples_path())
    assert summary.issues == []
    assert len(tasks) == 3
    assert 5 <= summary.steps <= 7
    assert summary.steps_without_cleaned_html == 0
    assert summary.steps_with_empty_pos_candidates == 0
    ops = {step.operation.op.value for task in tasks for step in task.actions}
    assert ops == {"CLICK", "TYPE", "SELECT"}
    for task in tasks:
        assert len(task.action_reprs) == len(task.actions)
        for step in task.actions:
            html = step.cleaned_html or ""
            assert 10_000 <= len(html.encode()) <= 40_000
            ids = re.findall(r'backend_node_id="([^"]+)"', html)
            assert len(ids) == len(set(ids))  # ids are unique on a page
            for candidate in [*step.pos_candidates, *(step.neg_candidates or [])]:
                assert candidate.backend_node_id in ids
                assert candidate.attrs()["backend_node_id"] == candidate.backend_node_id


@pytest.mark.llama
def test_every_demo_agent_builds_at_the_demo_budget(local_model: Model) -> None:
    """`webagent demo` (the README's main job) must not stop at a budget its agents refuse."""
    for agent in DEMO_AGENTS:
        built = build_agent(AgentSettings(agent=agent, context_budget=DEMO_BUDGET), local_model)
        assert built.segment_plan.max_fragment_tokens > 0
