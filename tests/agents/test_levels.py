"""Levels of the page memory (webagent/method/levels.py): pages too long to gist flat get sections.

Scripted model; the embedded model's run is in tests/integration (``webagent act``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest
from big_page import big_page

from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import LookupRound, Observation, StepTrace
from webagent.html.fragment import Fragment
from webagent.method.levels import _WORD, build_sections, cut_words, gist_words, walk
from webagent.method.lookup import LookupQuery, lookup_sequential
from webagent.method.memory import gist_line
from webagent.model.base import Request
from webagent.model.calls import CallLog
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend
from webagent.tokens import estimate_tokens

SHARED_PAGES = Path(__file__).resolve().parents[3] / "shared" / "pages"
TASK = "Save the cheapest bike in Leeds"
#: a gist line of a look-up prompt: ``[Part N] (gist) TEXT`` or ``[Section N] (parts a-b) TEXT``
LINE = re.compile(r"^\[(Part|Section) (\d+)\] \((?:gist|parts? [\d-]+)\) ?(.*)$")
MIN_WORDS = 5


@cache
def page_html() -> str:
    return big_page()


def fragment(index: int, path: str) -> Fragment:
    return Fragment(index=index, path=path, html="<p>x</p>", text="x", element_ids=[], tokens=1)


def test_words_count_letters_and_cjk_characters() -> None:
    assert gist_words('Gemerkt auf …; button "Miniplayer …" id=n426') == 5
    assert gist_words("ヤフー 検索") == 5
    assert gist_words("… ; -") == 0
    # remembered: the same count asked again, as the words found one by one give it
    for gist in ('Gemerkt auf …; button "Miniplayer …" id=n426', "ヤフー 検索", "a_b 1,2 x-y"):
        assert gist_words(gist) == gist_words(gist) == sum(1 for _ in _WORD.finditer(gist))
    assert cut_words("a b c d", 2) == "a b …"
    assert cut_words("a b", 2) == "a b"


def test_sections_cover_the_page_in_order_within_the_fan_out() -> None:
    paths = [f"body > main > div#c{i // 10} > p" for i in range(250)]
    fragments = [fragment(i, p) for i, p in enumerate(paths)]
    top = build_sections(fragments, 12)
    assert len(top) <= 12
    for _, section in walk(top):
        inner = section.children
        assert len(inner) <= 12
        if inner:
            assert inner[0].start == section.start and inner[-1].end == section.end
            assert all(a.end == b.start for a, b in pairwise(inner))
        else:
            assert section.end - section.start <= 12
    assert top[0].start == 0 and top[-1].end == 250
    # cut where neighbours share the fewest ancestors: at the div boundaries (multiples of 10)
    leaves = [s for _, s in walk(top) if not s.children]
    assert sum(s.start % 10 == 0 for s in leaves) >= 0.8 * len(leaves)


def answer(request: Request) -> str:
    """Sections and parts: the first two offered; act: the first id of the prompt."""
    text = request.messages[-1].content
    if request.phase == "gist":
        n = text.count("[Section ")
        return json.dumps(
            {str(i): f"listings of the marketplace, section {i}" for i in range(1, n + 1)}
        )
    if request.phase == "lookup":
        numbers = [int(m.group(2)) for line in text.splitlines() if (m := LINE.match(line))]
        return json.dumps(
            {
                "sections": numbers[:2],
                "pages": numbers[:2],
                "page": str(numbers[0]) if numbers else "STOP",
                "reason": "first",
            }
        )
    found = re.search(r"\bid=([A-Za-z0-9][^\s>\"',);\]]*)", text)
    return json.dumps(
        {"element_id": found.group(1) if found else "none", "op": "CLICK", "value": ""}
    )


class CountedScripted(ScriptedBackend):
    """The scripted answers, counted with another tokenizer (the embedded model's)."""

    def __init__(self, counter: Callable[[str], int], context_window: int) -> None:
        super().__init__(answer, context_window=context_window)
        self._counter = counter

    def count_tokens(self, text: str) -> int:
        return self._counter(text) if text else 0


def step(
    html: str,
    agent: str,
    budget: int,
    gister: str = "extractive",
    counter: Callable[[str], int] | None = None,
    **more: object,
) -> StepTrace:
    backend = (
        ScriptedBackend(answer, context_window=budget)
        if counter is None
        else CountedScripted(counter, budget)
    )
    model = Model(backend, sleep=lambda _: None)
    settings = AgentSettings(agent=agent, context_budget=budget, gister=gister, **more)  # type: ignore[arg-type]
    return build_agent(settings, model).step(Observation(task=TASK, previous_actions=[], html=html))


def lookup_gists(trace: StepTrace) -> list[tuple[str, int, str]]:
    """(kind, number, gist) of every gist line of every look-up prompt of the step."""
    lines = []
    for call in trace.calls:
        if call.phase == "lookup":
            for line in call.prompt[-1]["content"].splitlines():
                if m := LINE.match(line):
                    lines.append((m.group(1), int(m.group(2)), m.group(3)))
    return lines


def assert_nothing_blank(trace: StepTrace) -> None:
    lines = lookup_gists(trace)
    assert lines, "the step made no look-up"
    for kind, number, gist in lines:
        whole = trace.gists[number - 1] if kind == "Part" else gist
        assert gist_words(gist) >= min(MIN_WORDS, gist_words(whole)), (kind, number, gist, whole)
        assert gist_words(gist) > 0, (kind, number, gist)


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s"])
@pytest.mark.parametrize("budget", [2048, 4096])
def test_a_page_of_thousands_of_fragments_gets_levels(agent: str, budget: int) -> None:
    trace = step(page_html(), agent, budget)
    assert trace.n_fragments >= 3000
    assert trace.sections, "no levels"
    assert max(s.depth for s in trace.sections) >= 2
    assert_nothing_blank(trace)
    section_rounds = [r for r in trace.lookup if r.level]
    assert section_rounds and all(r.sections for r in section_rounds)
    # every gist the act prompt does not show is an edit the trace names
    edits = trace.memory_edits
    shown = {int(n) for n in re.findall(r"\[Part (\d+)\]", trace.memory)}
    hidden = set(range(trace.n_fragments)) - {n - 1 for n in shown}
    assert hidden <= set(edits.outside_sections) | set(edits.gists_displaced)
    assert trace.action is not None, trace.error


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s"])
def test_a_levelled_act_prompt_may_show_the_reopened_parts_alone(agent: str) -> None:
    """``act_gists='none'``: every fragment is reopened, outside the sections picked, or
    named as a gist omitted, once; the act prompt shows the reopened ones alone."""
    trace = step(big_page(listings=300, vendors=40), agent, 2048, act_gists="none")
    assert trace.sections and trace.reopened, "no levels, or nothing reopened"
    edits = trace.memory_edits
    shown = [int(n) - 1 for n in re.findall(r"^\[Part (\d+)\] \(full\)", trace.memory, re.M)]
    assert shown == sorted(trace.reopened) and "(gist)" not in trace.memory
    parts = [trace.reopened, edits.outside_sections, edits.gists_omitted]
    assert sorted(i for p in parts for i in p) == list(range(trace.n_fragments))
    assert trace.action is not None, trace.error


def check_shared_pages(
    agent: str, budget: int, counter: Callable[[str], int] | None = None
) -> None:
    pages = sorted(SHARED_PAGES.glob("*.html"))
    if not pages:
        pytest.skip("../shared/pages is not here")
    for page in pages:
        html = page.read_text(encoding="utf-8", errors="replace")
        trace = step(html, agent, budget, counter=counter)
        if trace.read_whole:
            continue
        assert_nothing_blank(trace)
        assert trace.action is not None, (page.name, trace.error)


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s"])
@pytest.mark.parametrize("budget", [2048, 4096])
def test_every_shared_page_shows_no_blank_gist(agent: str, budget: int) -> None:
    """ReadAgent-S included: a part opens only where the gists beside it keep the floor."""
    check_shared_pages(agent, budget)


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s"])
@pytest.mark.parametrize("budget", [2048, 4096])
def test_every_shared_page_shows_no_blank_gist_under_smollm2(
    agent: str, budget: int, local_model: Model
) -> None:
    check_shared_pages(agent, budget, local_model.backend.count_tokens)


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s"])
def test_every_gist_a_look_up_prompt_cuts_is_an_edit_of_its_round(agent: str) -> None:
    trace = step(page_html(), agent, 2048)
    calls = [c for c in trace.calls if c.phase == "lookup"]
    assert len(calls) == len(trace.lookup)
    for call, round_ in zip(calls, trace.lookup, strict=True):
        if round_.level:  # a section round: its cuts below the floor are sections_shortened
            continue
        named = set(round_.memory_edits.gists_shortened) | set(trace.lookup_edits.gists_shortened)
        for line in call.prompt[-1]["content"].splitlines():
            if (m := LINE.match(line)) and m.group(1) == "Part":
                index = int(m.group(2)) - 1
                if m.group(3) != trace.gists[index]:
                    assert index in named, (index, m.group(3))


def test_readagent_s_opens_a_part_only_where_the_other_gists_keep_the_floor() -> None:
    """A part whose text would push the gists beside it below the floor is refused in the
    round that asked for it, and the look-up ends there; with no floor it opens (the flat
    memory then cuts the other gists)."""
    gist = "listings of bikes for sale in Leeds with prices and photos"  # 11 words
    fragments = [
        Fragment(
            index=i,
            path=f"html/body/div[{i + 1}]",
            html="<p>" + "word " * 60 + "</p>",
            text="word " * 60,
            element_ids=[],
            tokens=40,
        )
        for i in range(6)
    ]
    gists = [gist] * len(fragments)
    # room for six gist lines at full length, not for one open part beside five of them
    budget = sum(estimate_tokens(gist_line(i, gist)) + 1 for i in range(6)) + 20

    def run(floor: int) -> list[LookupRound]:
        model = Model(
            ScriptedBackend(lambda _: '{"page": "1", "reason": "r"}'), sleep=lambda _: None
        )
        query = LookupQuery(
            task=TASK,
            previous="None",
            fragments=fragments,
            gists=gists,
            max_pages=3,
            budget_tokens=budget,
            max_tokens=64,
            log=CallLog(model),
            count_tokens=estimate_tokens,
            floor=floor,
        )
        return lookup_sequential(query)[1]

    refused = run(floor=MIN_WORDS)
    assert len(refused) == 1 and refused[0].accepted == []
    assert refused[0].rejected == [f"1: no room beside the other gists at {MIN_WORDS} words"]
    opened = run(floor=0)
    assert opened[0].accepted == [0]
