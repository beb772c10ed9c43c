"""MindAct's multiple-choice protocol: the candidate pool and the rounds, checked by hand, and
one step end to end with the embedded model through ``webagent eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mind2web_eval.records import Step, ranked_candidates
from webagent.agents.mindact import (
    POOL_SIZE,
    groups,
    parse_choice,
    parse_page,
    pruned_dom,
    ranked_pool,
)
from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import ElementCandidate, Observation, Op
from webagent.errors import OutputParseError
from webagent.html.parse import parse_html
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend

SAMPLES = Path(__file__).resolve().parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"


def button_page(n: int) -> str:
    """A page of ``n`` buttons ``b0..b{n-1}`` (ids 100..), in one form."""
    buttons = "".join(
        f'<button backend_node_id="{100 + i}"><text backend_node_id="{500 + i}">b{i}</text>'
        "</button>"
        for i in range(n)
    )
    form = f'<form backend_node_id="3">{buttons}</form>'
    return f'<html backend_node_id="1"><body backend_node_id="2">{form}</body></html>'


def test_ranked_candidates_are_sorted_by_rank_and_say_nothing_of_positives() -> None:
    step = Step.model_validate(
        {
            "action_uid": "u",
            "operation": {"op": "CLICK"},
            "pos_candidates": [{"backend_node_id": "7", "rank": 2, "score": 0.5}],
            "neg_candidates": [
                {"backend_node_id": "9", "rank": 0, "score": 0.9},
                {"backend_node_id": "8", "rank": 1, "score": 0.7},
                {"backend_node_id": "6", "rank": None, "score": 0.1},
            ],
        }
    )
    ranked = ranked_candidates(step)
    assert ranked == [
        ElementCandidate(element_id="9", rank=0, score=0.9),
        ElementCandidate(element_id="8", rank=1, score=0.7),
        ElementCandidate(element_id="7", rank=2, score=0.5),
        ElementCandidate(element_id="6", rank=None, score=0.1),
    ]
    assert "is_original_target" not in ElementCandidate.model_fields
    unranked = step.model_copy(
        update={
            "pos_candidates": [
                step.pos_candidates[0].model_copy(update={"rank": None, "score": None})
            ],
            "neg_candidates": None,
        }
    )
    assert ranked_candidates(unranked) is None


def test_the_pool_is_the_ranked_candidates_on_the_page_top_50() -> None:
    ranked = [ElementCandidate(element_id=str(100 + i), rank=i) for i in range(60)]
    observation = Observation(task="t", html="", candidates=[
        ElementCandidate(element_id="999", rank=0),  # not on the page: left out
        *ranked,
        ElementCandidate(element_id="100", rank=70),  # a duplicate keeps its best place
    ])  # fmt: skip
    page_ids = [str(100 + i) for i in range(60)]
    pool = ranked_pool(observation, page_ids)
    assert pool == [str(100 + i) for i in range(POOL_SIZE)]
    assert ranked_pool(Observation(task="t", html=""), page_ids) is None


def test_groups_are_fives_in_pool_order() -> None:
    assert groups(list("abcdefghijkl")) == [list("abcde"), list("fghij"), list("kl")]


def test_the_pruned_dom_keeps_ancestors_descendants_and_three_siblings_each_side() -> None:
    elements = parse_page(button_page(9))
    text = pruned_dom(elements, ["104"])  # b4: siblings b1..b3 and b5..b7 stay, b0 and b8 go
    assert text.splitlines() == [
        "<html>", "  <body>", "    <form>",
        "      <button> b1", "      <button> b2", "      <button> b3",
        "      <button id=104> b4",
        "      <button> b5", "      <button> b6", "      <button> b7",
    ]  # fmt: skip


def test_a_choice_is_a_letter_of_the_round() -> None:
    assert parse_choice('{"choice": "B", "op": "type", "value": " x "}', "ABC") == parse_choice(
        '{"choice": "b.", "op": "TYPE", "value": "x"}', "ABC"
    )
    with pytest.raises(OutputParseError, match="choice 'D' is not one of A, B, C"):
        parse_choice('{"choice": "D", "op": "CLICK", "value": ""}', "ABC")


def _options(request: Request) -> list[str]:
    """The element ids of a round's options, in order (the last option is "None")."""
    lines = request.messages[-1].content.split("Which element should be acted on next?")[1]
    return [
        line.split("id=")[1].split(">")[0].split()[0]
        for line in lines.splitlines()
        if "id=" in line
    ]


def test_rounds_of_five_plus_none_until_one_is_chosen() -> None:
    # 12 candidates ranked 111, 110, ..., 100: groups [111..107], [106..102], [101, 100]
    ranks = [ElementCandidate(element_id=str(111 - i), rank=i) for i in range(12)]
    answers = iter(
        [
            '{"choice": "B", "op": "CLICK", "value": ""}',  # group 1: 110
            '{"choice": "F", "op": "CLICK", "value": ""}',  # group 2: none of the above
            '{"choice": "A", "op": "TYPE", "value": "hi"}',  # group 3: 101
            '{"choice": "B", "op": "TYPE", "value": "hello"}',  # round 2 [110, 101]: 101
        ]
    )
    seen: list[list[str]] = []

    def answer(request: Request) -> str:
        seen.append(_options(request))
        return next(answers)

    backend = ScriptedBackend(answer, context_window=4096)
    agent = build_agent(AgentSettings(agent="mindact"), Model(backend, sleep=lambda _: None))
    trace = agent.step(Observation(task="say hello", html=button_page(12), candidates=ranks))
    assert seen == [
        ["111", "110", "109", "108", "107"],
        ["106", "105", "104", "103", "102"],
        ["101", "100"],
        ["110", "101"],
    ]
    assert trace.action is not None
    assert (trace.action.element_id, trace.action.op, trace.action.value) == (
        "101",
        Op.TYPE,
        "hello",
    )
    assert trace.error is None and len(trace.calls) == 4
    assert trace.shown_element_ids == [str(111 - i) for i in range(12)]
    assert trace.timings["pool_size"] == 12 and trace.timings["ranked_pool"] == 1.0


def test_none_chosen_in_every_group_is_no_action() -> None:
    ranks = [ElementCandidate(element_id=str(100 + i), rank=i) for i in range(7)]
    backend = ScriptedBackend(
        [
            '{"choice": "F", "op": "CLICK", "value": ""}',
            '{"choice": "C", "op": "CLICK", "value": ""}',
        ],
        context_window=4096,
    )
    agent = build_agent(AgentSettings(agent="mindact"), Model(backend, sleep=lambda _: None))
    trace = agent.step(Observation(task="t", html=button_page(7), candidates=ranks))
    assert trace.action is None and trace.error_class == "invalid_output"
    assert len(backend.requests) == 2  # groups of 5 and 2, each answered "none"


def test_without_ranks_bm25_over_element_text_orders_the_pool() -> None:
    html = button_page(4).replace(">b2<", ">Search flights<")
    backend = ScriptedBackend(['{"choice": "A", "op": "CLICK", "value": ""}'], context_window=4096)
    agent = build_agent(AgentSettings(agent="mindact"), Model(backend, sleep=lambda _: None))
    trace = agent.step(Observation(task="search flights", html=html))
    assert trace.shown_element_ids[0] == "102" and trace.timings["ranked_pool"] == 0.0
    assert trace.action is not None and trace.action.element_id == "102"


def test_a_step_parses_its_page_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # segmentation, the BM25 pool and the rounds' pruned DOM all read the one parsed tree
    from webagent.agents import mindact

    parsed: list[int] = []

    def parse(html: str) -> object:
        parsed.append(len(html))
        return parse_html(html)

    monkeypatch.setattr(mindact, "parse_html", parse)
    backend = ScriptedBackend(
        lambda _: '{"choice": "A", "op": "CLICK", "value": ""}', context_window=4096
    )
    agent = build_agent(AgentSettings(agent="mindact"), Model(backend, sleep=lambda _: None))
    trace = agent.step(Observation(task="press b3", html=button_page(8)))
    assert trace.action is not None and trace.n_fragments >= 1
    assert parsed == [len(button_page(8))]


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_end_to_end_with_the_embedded_model(
    local_model_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``webagent eval --agent mindact`` on a sample task whose candidates carry ranks: one
    round (four candidates), scored with the matching top-50 filter."""
    from webagent.cli import main

    task = next(t for t in json.loads(SAMPLES.read_text()) if len(t["actions"]) == 1)
    step = task["actions"][0]
    for rank, candidate in enumerate([*step["neg_candidates"][:2], *step["pos_candidates"]]):
        candidate["rank"] = rank
    step["neg_candidates"] = step["neg_candidates"][:2]
    data = tmp_path / "ranked.json"
    data.write_text(json.dumps([task]))
    out = tmp_path / "run"
    code = main([
        "eval", "--data", str(data), "--out", str(out), "--agent", "mindact",
        "--score-top-k", "50", "--no-progress", "--bootstrap", "0", "--no-gist-cache",
        "--model-path", str(local_model_path), "--n-ctx", "2048", "--set", "model.n_threads=2",
        "--timeout", "900",
    ])  # fmt: skip
    assert code == 0
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    trace = record["trace"]
    assert trace["shown_element_ids"] == [c["backend_node_id"] for c in
        [*step["neg_candidates"], *step["pos_candidates"]]]  # fmt: skip
    assert len(trace["calls"]) >= 1 and trace["calls"][0]["phase"] == "act"
    assert record["diagnostics"]["gold_shown"] is True
    assert "rank < 50" in json.loads((out / "results.json").read_text())["protocol"]
