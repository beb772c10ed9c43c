"""The paper's raw-HTML baseline (``raw-html-paper``): the page as given, cut to the budget."""

from __future__ import annotations

import json
import re
from pathlib import Path

from webagent.agents.raw_paper import paper_page_text
from webagent.agents.registry import AgentSettings, agent_spec, build_agent
from webagent.contracts import Observation
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend

SAMPLES = Path(__file__).resolve().parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"


def _first_step() -> tuple[str, str, str]:
    task = json.loads(SAMPLES.read_text(encoding="utf-8"))[0]
    step = task["actions"][0]
    gold = step["pos_candidates"][0]["backend_node_id"]
    return task["confirmed_task"], step["cleaned_html"], gold


def _answer_first_shown(request: Request) -> str:
    page = request.messages[1].content
    first = re.search(r'\bid="?(\d+)', page).group(1)  # type: ignore[union-attr]
    return json.dumps({"element_id": first, "op": "CLICK", "value": ""})


def _step(agent: str, html: str, task: str, budget: int) -> tuple[object, ScriptedBackend]:
    backend = ScriptedBackend(_answer_first_shown, context_window=8192)
    model = Model(backend, sleep=lambda _: None)
    settings = AgentSettings(agent=agent, context_budget=budget)
    return build_agent(settings, model).step(Observation(task=task, html=html)), backend


def test_the_page_is_shown_as_given_with_ids_named_id() -> None:
    html = '<div backend_node_id="7" class="a"><text backend_node_id="8">Hi</text></div>'
    assert paper_page_text(html) == '<div id="7" class="a"><text id="8">Hi</text></div>'


def test_the_act_prompt_shows_a_prefix_of_the_given_page_cut_to_the_budget() -> None:
    task, html, _gold = _first_step()
    trace, backend = _step("raw-html-paper", html, task, 1024)
    assert trace.error is None, trace.error  # type: ignore[attr-defined]
    memory = trace.memory  # type: ignore[attr-defined]
    whole = paper_page_text(html)
    assert whole.startswith(memory) and 0 < len(memory) < len(whole)
    # the act prompt stays inside the budget, and the action is one of the shown ids
    assert trace.prompt_tokens + 96 <= 1024  # type: ignore[attr-defined]
    assert trace.action.element_id in trace.shown_element_ids  # type: ignore[attr-defined]
    assert backend.requests[0].messages[-1].content.count(memory) == 1


def test_it_differs_from_the_compact_raw_html_agent() -> None:
    task, html, _gold = _first_step()
    paper, _ = _step("raw-html-paper", html, task, 1536)
    compact, _ = _step("raw-html", html, task, 1536)
    # the given page spends the same budget on fewer elements than the compact rendering
    assert len(paper.shown_element_ids) < len(compact.shown_element_ids)  # type: ignore[attr-defined]
    assert "backend_node_id" not in paper.memory  # type: ignore[attr-defined]
    assert agent_spec("raw-html-paper").summary != agent_spec("raw-html").summary


def test_with_a_budget_that_holds_the_page_every_id_is_shown() -> None:
    task, html, gold = _first_step()
    trace, _ = _step("raw-html-paper", html, task, 8192)
    assert trace.memory == paper_page_text(html)  # type: ignore[attr-defined]
    assert gold in trace.shown_element_ids  # type: ignore[attr-defined]
