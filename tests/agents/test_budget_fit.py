"""One token count everywhere: every agent's prompts fit under whichever counter the model has.

The page is segmented, gisted, fitted and counted with the model's own ``count_tokens``; two
different counters (the byte estimate and a coarser one) give different plans and both fit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation, StepTrace
from webagent.html.segment import segment_html
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend

PAGE = Path(__file__).parent.parent / "data" / "pages" / "shop_long.html"
TASK = "Find the returns policy"


class CoarseCounter(ScriptedBackend):
    """Counts a token per 3 characters: another tokenizer than the estimate."""

    def count_tokens(self, text: str) -> int:
        return -(-len(text) // 3)


def answer(request: Request) -> str:
    if request.phase == "lookup":
        if "sections" in (request.json_schema or {}).get("properties", {}):  # levels
            return json.dumps({"sections": [1, 2], "reason": "first two"})
        if "pages" in (request.json_schema or {}).get("properties", {}):
            return json.dumps({"pages": [1, 2, 3, 4, 5], "reason": "first five"})
        return json.dumps({"page": "STOP", "reason": "done"})
    prompt = "\n".join(m.content for m in request.messages)
    match = re.search(r"\bid=(n?\d+)", prompt)
    element = match.group(1) if match else "x"
    return json.dumps({"element_id": element, "op": "CLICK", "value": ""})


def run(
    agent: str, backend: ScriptedBackend, budget: int, **extra: object
) -> tuple[StepTrace, Model]:
    model = Model(backend, sleep=lambda _: None)
    # read_whole_page off: the page fits 8192 tokens whole, and this is about the gist memory
    extra.setdefault("read_whole_page", False)
    settings = AgentSettings(agent=agent, context_budget=budget, gister="extractive", **extra)  # type: ignore[arg-type]
    built = build_agent(settings, model)
    previous = [f"[link] Category {i} -> CLICK" for i in range(12)]
    html = PAGE.read_text(encoding="utf-8")
    trace = built.step(Observation(task=TASK, previous_actions=previous, html=html))
    plan = built.segment_plan  # type: ignore[attr-defined]
    page = segment_html(html, plan, model.count_tokens)
    assert trace.fragment_tokens == [f.tokens for f in page.fragments], "segmented by another count"
    return trace, model


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s", "gist-only", "retrieval"])
@pytest.mark.parametrize("counter", ["estimate", "coarse"])
@pytest.mark.parametrize("budget", [4096, 8192])
def test_every_prompt_fits_and_nothing_is_cut_silently(
    agent: str, counter: str, budget: int
) -> None:
    backend = (ScriptedBackend if counter == "estimate" else CoarseCounter)(
        answer, context_window=budget
    )
    trace, _ = run(agent, backend, budget)
    assert trace.error_class != "memory_over_budget"
    assert trace.prompt_tokens <= budget
    assert trace.action is not None, trace.error
    for call in trace.calls:
        assert call.input_tokens + 96 <= budget, call.phase
    # previous actions are never dropped while a gist is shown
    assert trace.memory_edits.previous_dropped == 0
    assert "earlier actions omitted" not in "\n".join(m["content"] for m in trace.calls[-1].prompt)
    if agent == "readagent-p":
        # all five parts asked for are reopened in full, beside the (shortened) gists
        assert trace.reopened == [0, 1, 2, 3, 4] and not trace.memory_edits.reopen_refused
        assert not trace.memory_edits.reopen_cut
        for index in trace.reopened:
            assert f"[Part {index + 1}] (full)" in trace.memory
        shown_gists = trace.memory.count("(gist)")
        edits = trace.memory_edits
        left_out = len(edits.gists_displaced) + len(edits.outside_sections)
        assert shown_gists + len(trace.reopened) + left_out == trace.n_fragments


def test_lookup_assist_fills_the_free_slots_after_the_models_picks() -> None:
    def only_one(request: Request) -> str:
        if request.phase == "lookup":
            return json.dumps({"pages": [2], "reason": "one"})
        return answer(request)

    trace, _ = run("readagent-p", ScriptedBackend(only_one, context_window=8192), 8192,
                   lookup_assist="bm25", max_lookup=3)  # fmt: skip
    round_ = trace.lookup[0]
    assert round_.accepted == [1] and len(round_.assisted) == 2 and 1 not in round_.assisted
    assert sorted(trace.reopened) == sorted([1, *round_.assisted])
