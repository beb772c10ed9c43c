"""Batched gisting: packing, the numbered-answer parser, re-asks, and the per-fragment cache."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from webagent.gist.batch import (
    pack_batches,
    parse_batch_answer,
    render_part,
    render_parts,
    split_parts,
)
from webagent.gist.cache import GistCache
from webagent.gist.gister import ModelGister, build_gister
from webagent.html.fragment import Fragment
from webagent.html.reading import reading_view
from webagent.model.base import Request
from webagent.model.calls import CallLog
from webagent.model.client import Model


def fragment(index: int, text: str) -> Fragment:
    html = f"<div id=f{index}><a id=a{index}>{text}</a></div>"
    return Fragment(
        index=index,
        path=f"body > div#{index}",
        html=html,
        text=text,
        element_ids=[f"f{index}", f"a{index}"],
        interactive_ids=[f"a{index}"],
        tokens=len(html) // 4,
    )


FRAGMENTS = [fragment(i, f"item {i} " + "word " * (i % 4)) for i in range(7)]


def gist_of(html: str) -> str:
    """The scripted gist of one fragment: names the fragment's own link by the id the prompt
    shows it with (a number in the reading view), as a model is asked to."""
    (first, *_) = re.findall(r"\[(\w+)\]", html)
    return f"link (id={first})"


def gists_named(ids: list[str]) -> list[str]:
    """What the gister returns for :func:`gist_of`'s answers: the page ids restored."""
    return [f"link (id={i})" for i in ids]


PAGE_GISTS = gists_named([f"a{i}" for i in range(7)])


def answering(
    drop: frozenset[int] = frozenset(), garble: frozenset[int] = frozenset()
) -> Callable[[Request], str]:
    """Batch answers in JSON; parts numbered in ``drop`` are left out, in ``garble`` emptied."""

    def answer(request: Request) -> str:
        text = request.messages[-1].content
        parts = split_parts(text)
        if not parts:  # a single-fragment prompt
            return gist_of(text.split("<page_part>")[1])
        out = {}
        for number, html in enumerate(parts, start=1):
            if number in drop:
                continue
            out[str(number)] = "..." if number in garble else gist_of(html)
        return json.dumps(out)

    return answer


@pytest.mark.parametrize(
    "text",
    [
        '{"1": "a", "2": "b", "3": "c"}',
        'Here: {"1": "a",\n "2": "b", "3": "c"} done',
        "[1] a\n[2] b\n[3] c",
        "1. a\n2: b\nPart 3) c",
        "[1] a\n[2]\nb\n[3] c",
    ],
)
def test_parser_reads_json_and_numbered_lines(text: str) -> None:
    assert parse_batch_answer(text, 3) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"1": "a", "3": "c"}', ["a", None, "c"]),  # missing: never shifted
        ('{"1": "a", "2": "  ", "3": "c"}', ["a", None, "c"]),  # empty
        ('{"1": "a", "2": "---", "3": "c"}', ["a", None, "c"]),  # no word at all
        ("[1] a\n[2] b\n[2] b again\n[3] c", ["a", None, "c"]),  # claimed twice
        ('{"1": "a", "7": "x", "2": "b", "3": "c"}', ["a", "b", "c"]),  # out of range ignored
        ('{"1": 5, "2": "b", "3": "c"}', [None, "b", "c"]),  # not a string
        ("a gist with no number", [None, None, None]),
        ('{"1": "a", "2": "b"', ["a", "b", None]),  # cut-off JSON: its complete pairs
        ('{"1": "a", "2": "b', ["a", None, None]),
    ],
)
def test_parser_leaves_a_gap_for_what_it_cannot_trust(
    text: str, expected: list[str | None]
) -> None:
    assert parse_batch_answer(text, 3) == expected


def test_packing_fills_the_budget_in_page_order() -> None:
    costs = [100, 300, 50, 2000, 80, 80, 80]
    firsts: list[tuple[int, int]] = []

    def cost(index: int, first: int) -> tuple[int, int]:
        firsts.append((index, first))
        return costs[index] + first // 10, 10  # ten numbered controls per fragment

    def pack(budget: int, most: int) -> list[list[int]]:
        return pack_batches(
            cost, 7, overhead_tokens=200, gist_max_tokens=64, budget_tokens=budget, max_batch=most
        )

    batches = pack(1200, 32)
    assert [i for b in batches for i in b] == list(range(len(costs)))  # every one, in order
    assert [3] in batches  # too big to share a call: alone
    for batch in batches:
        if len(batch) > 1:  # each part costed with the numbers it gets in its own batch
            shown = sum(costs[i] + (1 + 10 * k) // 10 for k, i in enumerate(batch))
            assert 200 + shown + len(batch) * 70 + 8 <= 1200
    assert all((b[0], 1) in firsts for b in batches)  # a new batch numbers from 1 again
    assert pack(1200, 32) == batches  # deterministic
    assert pack(100_000, 2) == [[0, 1], [2, 3], [4, 5], [6]]
    assert pack(100_000, 1) == [[i] for i in range(7)]


def test_batched_gists_are_the_per_fragment_gists(scripted_model: Callable[..., Model]) -> None:
    batched = scripted_model(answering(), context_window=8192)
    single = scripted_model(answering(), context_window=8192)
    one_call = ModelGister(30, 64, batch=32).gist_all(FRAGMENTS, CallLog(batched), None)
    per_fragment = ModelGister(30, 64, batch=1).gist_all(FRAGMENTS, CallLog(single), None)
    assert one_call == per_fragment == PAGE_GISTS
    assert len(batched.backend.requests) == 1  # type: ignore[attr-defined]
    assert len(single.backend.requests) == 7  # type: ignore[attr-defined]
    request = batched.backend.requests[0]  # type: ignore[attr-defined]
    assert request.json_schema["required"] == [str(n) for n in range(1, 8)]
    assert request.max_tokens >= 7 * 64


def test_a_missing_or_garbled_gist_is_re_asked_alone(scripted_model: Callable[..., Model]) -> None:
    model = scripted_model(
        answering(drop=frozenset({2}), garble=frozenset({5})), context_window=8192
    )
    log = CallLog(model)
    gists = ModelGister(30, 64, batch=32).gist_all(FRAGMENTS, log, None)
    assert gists == PAGE_GISTS  # part 3 did not get part 2's gist
    requests = model.backend.requests  # type: ignore[attr-defined]
    assert len(requests) == 3
    re_asked = [r.messages[-1].content for r in requests[1:]]
    assert "[1] item 1" in re_asked[0] and "[1] item 4" in re_asked[1]  # parts 2 and 5, alone
    assert all("<part n=" not in text for text in re_asked)
    assert log.usage()["gist"].calls == 3


def test_the_budget_splits_a_page_into_several_calls(scripted_model: Callable[..., Model]) -> None:
    model = scripted_model(answering(), context_window=8192)
    gister = ModelGister(30, 64, batch=32, budget_tokens=900)
    batches = gister.batches(FRAGMENTS, model)
    assert len(batches) > 1 and [i for b in batches for i in b] == list(range(7))
    gists = gister.gist_all(FRAGMENTS, CallLog(model), None)
    assert gists == PAGE_GISTS
    for request in model.backend.requests:  # type: ignore[attr-defined]
        assert model.count_message_tokens(request.messages) + request.max_tokens <= 900


def test_the_cache_is_per_fragment_whatever_the_batch(
    tmp_path: Path, scripted_model: Callable[..., Model]
) -> None:
    cache = GistCache(tmp_path / "gists.sqlite")
    first = scripted_model(answering(), context_window=8192, name="m")
    ModelGister(30, 64, batch=32).gist_all(FRAGMENTS[:4], CallLog(first), cache)
    second = scripted_model(answering(), context_window=8192, name="m")
    log = CallLog(second)
    gists = ModelGister(30, 64, batch=1).gist_all(FRAGMENTS, log, cache)
    assert gists == PAGE_GISTS
    assert log.cache_hits("gist") == 4  # gisted in a batch, found one by one
    assert len(second.backend.requests) == 3  # type: ignore[attr-defined]
    cache.close()


def test_build_gister_passes_batch_and_budget() -> None:
    gister = build_gister("model", 30, 64, batch=8, budget_tokens=2048)
    assert isinstance(gister, ModelGister) and (gister.batch, gister.budget_tokens) == (8, 2048)
    assert render_part(1, FRAGMENTS[0])[0].startswith('<part n="1" path="body > div#0">')


@pytest.mark.llama
def test_the_embedded_model_answers_a_batch_with_one_gist_per_part(local_model: Model) -> None:
    fragments = [fragment(0, "Sign in"), fragment(1, "Cart"), fragment(2, "Help")]
    log = CallLog(local_model)
    gists = ModelGister(8, 16, batch=8).gist_all(fragments, log, None)
    assert len(gists) == 3 and all(gists)
    calls = log.calls
    assert calls[0].prompt[-1]["content"].count('<part n="') == 3
    # structured output: the batch answer is JSON keyed 1..3, so nothing needed a re-ask
    # unless the model left a string empty; a re-ask is always a single-fragment prompt
    assert all('<part n="' not in c.prompt[-1]["content"] for c in calls[1:])
    answer = parse_batch_answer(calls[0].response or "", 3)
    assert len(calls) == 1 + sum(a is None for a in answer)


def test_parts_name_their_path_once_per_run_and_split_back() -> None:
    same_path = [fragment(i, f"x{i}").model_copy(update={"path": "body > nav"}) for i in range(3)]
    text, ids = render_parts([*same_path, FRAGMENTS[3]])
    assert text.count('path="body > nav"') == 1 and text.count('path="body > div#3"') == 1
    # controls are numbered across the parts: a number names one control of the prompt
    shown = [f"[{n}] {f.text.strip()}" for n, f in enumerate([*same_path, FRAGMENTS[3]], start=1)]
    assert split_parts("prompt\n" + text) == shown and ids == ["a0", "a1", "a2", "a3"]
    with_ids, marked = render_parts(FRAGMENTS[:2], view="reading-ids")
    assert split_parts("prompt\n" + with_ids) == [reading_view(f) for f in FRAGMENTS[:2]]
    assert marked == ["a0", "a1"]  # its marks are page ids
    html, none = render_parts(FRAGMENTS[:2], view="html")
    assert split_parts("prompt\n" + html) == [f.html for f in FRAGMENTS[:2]] and none == []


def test_the_view_is_part_of_the_prompt_and_of_the_cache_key(
    scripted_model: Callable[..., Model],
) -> None:
    model = scripted_model(lambda r: "gist", context_window=8192)
    reading, html = ModelGister(30, 64, view="reading"), ModelGister(30, 64, view="html")
    assert reading.version_tag != html.version_tag
    prompt = html.single_request(FRAGMENTS[0])[0].messages[-1].content
    assert FRAGMENTS[0].html in prompt and "element ids shown as id=" in prompt
    prompt = reading.single_request(FRAGMENTS[0])[0].messages[-1].content
    assert FRAGMENTS[0].html not in prompt and "[1] item 0" in prompt
    assert "marked [ID kind attributes]" in prompt and "an ID is a number" in prompt
    with_ids = ModelGister(30, 64, view="reading-ids")
    assert len({reading.version_tag, html.version_tag, with_ids.version_tag}) == 3
    assert "[a0] item 0" in with_ids.single_request(FRAGMENTS[0])[0].messages[-1].content
    html.gist_all(FRAGMENTS[:1], CallLog(model), None)  # renders without a missing variable


def test_an_answer_cut_off_by_its_token_limit_keeps_its_complete_gists() -> None:
    cut = '{ "1": "Sign in form (id=4)", "2": "Cart \\"3 items\\" link", "3": "1.1.1.1.1.1'
    assert parse_batch_answer(cut, 4) == ["Sign in form (id=4)", 'Cart "3 items" link', None, None]
    # a pair claimed twice is trusted neither time, as in a whole object
    assert parse_batch_answer('{"1": "a", "1": "b", "2": "c', 2) == [None, None]
