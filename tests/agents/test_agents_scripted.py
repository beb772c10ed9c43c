"""Control flow of every agent against a scripted in-process model (no real model here)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from webagent.agents.registry import AGENT_NAMES, AgentSettings, build_agent
from webagent.contracts import Observation, Op, RenderedPage, StepTrace
from webagent.errors import ConfigError, FatalModelError
from webagent.gist.cache import GistCache
from webagent.gist.extractive import extractive_gist
from webagent.html.segment import segment_html
from webagent.model.base import Completion, Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend
from webagent.tokens import estimate_tokens

TASK = "Search flights from Oslo"
FROM_FIELD = re.compile(r"id=([^\s>]+)[^>]*Departure city")


def type_into_from_field(request: Request) -> str:
    """An act answer that types into the From field, if the prompt shows it in full."""
    prompt = "\n".join(m.content for m in request.messages)
    match = FROM_FIELD.search(prompt)
    element = match.group(1) if match else "missing"
    return f'{{"element_id": "{element}", "op": "TYPE", "value": "Oslo"}}'


def part_with_form(request: Request) -> int:
    """The 1-based part whose gist mentions the search form (gists below say so)."""
    for line in request.messages[-1].content.splitlines():
        if "flight search form" in line:
            return int(re.search(r"\[Part (\d+)\]", line).group(1))  # type: ignore[union-attr]
    return 1


def scripted(
    lookup: Callable[[Request], str] | None = None,
    act: Callable[[Request], str] | None = None,
    backend: type[ScriptedBackend] = ScriptedBackend,
) -> ScriptedBackend:
    def answer(request: Request) -> str:
        if request.phase == "gist":
            text = request.messages[-1].content
            if '<part n="' not in text:
                return "flight search form" if "Departure city" in text else "other content"
            parts = text.split('<part n="')[1:]  # a batch: one numbered gist per part
            return json.dumps(
                {
                    str(n): "flight search form" if "Departure city" in p else "other content"
                    for n, p in enumerate(parts, start=1)
                }
            )
        if request.phase == "lookup":
            return (lookup or (lambda r: f'{{"pages": [{part_with_form(r)}], "reason": "form"}}'))(
                request
            )
        return (act or type_into_from_field)(request)

    return backend(answer, context_window=4096)


def run_step(
    agent: str, backend: ScriptedBackend, html: str | RenderedPage, **settings: object
) -> StepTrace:
    # the flights page fits the act prompt whole; these tests are about gists and look-up
    settings.setdefault("read_whole_page", False)
    page = html if isinstance(html, RenderedPage) else RenderedPage(html=html)
    model = Model(backend, sleep=lambda _: None)
    trace = build_agent(AgentSettings(agent=agent, **settings), model).step(  # type: ignore[arg-type]
        Observation(
            task=TASK,
            previous_actions=["[link] Flights -> CLICK"],
            html=page.html,
            axtree=page.axtree,
        )
    )
    return trace


def test_readagent_p_reopens_the_form_and_types(flights_html: str) -> None:
    backend = scripted()
    trace = run_step("readagent-p", backend, flights_html)
    assert trace.error is None, trace.error
    assert trace.action is not None and trace.action.op is Op.TYPE
    assert trace.action.value == "Oslo"
    form_part = next(i for i, g in enumerate(trace.gists) if g == "flight search form")
    assert trace.reopened == [form_part]
    assert trace.action.element_id in trace.fragment_element_ids[form_part]
    assert f"[Part {form_part + 1}] (full)" in trace.memory
    assert trace.usage["gist"].calls == 1  # one batch holds the page's few fragments
    assert trace.usage["lookup"].calls == 1 and trace.usage["act"].calls == 1


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s"])
def test_a_page_that_fits_is_read_whole_with_one_call(agent: str, flights_html: str) -> None:
    whole = run_step(agent, scripted(), flights_html, read_whole_page=True)
    raw = run_step("raw-html", scripted(), flights_html)
    assert whole.read_whole and whole.gists == [] and whole.lookup == []
    assert list(whole.usage) == ["act"] and whole.usage["act"].calls == 1
    assert whole.memory == raw.memory  # what raw-html shows: the page, no part headers
    assert whole.reopened == list(range(whole.n_fragments))
    assert whole.action is not None and whole.action.value == "Oslo"
    # a page that does not fit is gisted and looked up as before
    long_page = flights_html.replace("</body>", "<p>" + "filler words " * 2000 + "</p></body>")
    gisted = run_step(agent, scripted(), long_page, read_whole_page=True)
    assert not gisted.read_whole and gisted.usage["gist"].calls >= 1
    assert gisted.usage["lookup"].calls >= 1


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s"])
def test_the_act_prompt_may_show_the_reopened_fragments_alone(
    agent: str, flights_html: str
) -> None:
    """``act_gists='none'`` (issue 39): the look-up is asked exactly as before, and the act
    prompt holds the part it reopened and nothing else; every gist left out is named."""

    def lookup(request: Request) -> str:  # ReadAgent-S: STOP once the form is open
        if "(full)" in request.messages[-1].content:
            return '{"page": "STOP", "reason": "enough"}'
        part = part_with_form(request)
        return f'{{"pages": [{part}], "page": "{part}", "reason": "form"}}'

    beside = run_step(agent, scripted(lookup=lookup), flights_html)
    alone = run_step(agent, scripted(lookup=lookup), flights_html, act_gists="none")
    assert [c.prompt for c in alone.calls if c.phase != "act"] == [
        c.prompt for c in beside.calls if c.phase != "act"
    ]
    (part,) = alone.reopened
    assert beside.reopened == [part] and "(gist)" in beside.memory
    assert alone.memory.startswith(f"[Part {part + 1}] (full)") and "(gist)" not in alone.memory
    assert alone.memory in beside.memory  # the same block, without the lines around it
    others = [i for i in range(alone.n_fragments) if i != part]
    assert alone.memory_edits.gists_omitted == others and alone.memory_edits.changed()
    assert beside.memory_edits.gists_omitted == []
    assert alone.prompt_tokens < beside.prompt_tokens
    assert alone.action == beside.action and alone.action is not None


def test_with_nothing_reopened_the_act_prompt_shows_the_gists_either_way(
    flights_html: str,
) -> None:
    def junk(request: Request) -> str:
        return "page 999"

    beside = run_step("readagent-p", scripted(lookup=junk), flights_html)
    alone = run_step("readagent-p", scripted(lookup=junk), flights_html, act_gists="none")
    assert alone.reopened == [] and alone.memory == beside.memory and "(gist)" in alone.memory
    assert alone.memory_edits.gists_omitted == []


def part_with_city(request: Request) -> str:
    """A look-up answer: the part whose extractive gist names the departure field."""
    for line in request.messages[-1].content.splitlines():
        if "Departure city" in line:
            part = re.search(r"\[Part (\d+)\]", line).group(1)  # type: ignore[union-attr]
            return f'{{"pages": [{part}], "reason": "form"}}'
    return '{"pages": [], "reason": "none"}'


def test_lookup_gists_may_name_controls_by_their_words_alone(flights_html: str) -> None:
    """``gist_ids=False`` (issue 39): the look-up, which answers with part numbers, reads
    extractive gists without ids; the act prompt still names controls by id."""
    lean = {"gister": "extractive", "act_gists": "none"}
    with_ids = run_step("readagent-p", scripted(lookup=part_with_city), flights_html, **lean)
    bare = run_step(
        "readagent-p", scripted(lookup=part_with_city), flights_html, gist_ids=False, **lean
    )
    (asked,) = [c.prompt[-1]["content"] for c in bare.calls if c.phase == "lookup"]
    assert "Departure city" in asked and "id=" not in asked.split("The gists of the parts:")[1]
    assert all("id=" not in g for g in bare.gists) and any("id=" in g for g in with_ids.gists)
    assert bare.reopened == with_ids.reopened and bare.memory == with_ids.memory
    assert bare.action == with_ids.action and bare.action is not None
    assert bare.action.value == "Oslo"
    # nothing reopened: the act prompt shows the parts with controls by their gists with ids
    lost = run_step(
        "readagent-p", scripted(lookup=lambda r: "page 999"), flights_html, gist_ids=False, **lean
    )
    assert lost.reopened == [] and "[extractive]" in lost.memory and "id=" in lost.memory
    assert lost.error_class != "no_ids_shown"


def test_readagent_s_opens_one_at_a_time_until_stop(flights_html: str) -> None:
    answers = iter(['{"page": "%d", "reason": "form"}', '{"page": "STOP", "reason": "enough"}'])

    def lookup(request: Request) -> str:
        answer = next(answers)
        return answer % part_with_form(request) if "%d" in answer else answer

    trace = run_step("readagent-s", scripted(lookup=lookup), flights_html)
    assert trace.action is not None
    assert len(trace.lookup) == 2 and trace.lookup[1].stop
    assert len(trace.reopened) == 1
    # the second look-up prompt already shows the opened part in full
    second_prompt = [c for c in trace.calls if c.phase == "lookup"][1].prompt[-1]["content"]
    assert f"[Part {trace.reopened[0] + 1}] (full)" in second_prompt


def test_lookup_junk_is_recorded_and_the_step_goes_on(flights_html: str) -> None:
    trace = run_step("readagent-p", scripted(lookup=lambda r: "page 999 and banana"), flights_html)
    assert trace.reopened == []
    assert any("out of range" in r for r in trace.lookup[0].rejected)
    # the scripted gists name no element id: with nothing reopened, the parts with controls
    # show their extractive gists, so the act prompt still offers ids to answer with
    assert "[extractive]" in trace.memory and "id=" in trace.memory
    assert trace.usage["act"].calls >= 1 and trace.error_class != "no_ids_shown"


def test_invalid_id_gets_one_repair_then_succeeds(flights_html: str) -> None:
    answers = iter(['{"element_id": "n99999", "op": "CLICK", "value": ""}'])

    def act(request: Request) -> str:
        return next(answers, None) or type_into_from_field(request)

    trace = run_step("readagent-p", scripted(act=act), flights_html)
    assert trace.action is not None
    repair = [c for c in trace.calls if c.phase == "repair"]
    assert len(repair) == 1 and "not an id shown" in repair[0].prompt[-1]["content"]


def test_invalid_twice_is_an_invalid_prediction(flights_html: str) -> None:
    bad = '{"element_id": "n99999", "op": "CLICK", "value": ""}'
    trace = run_step("readagent-p", scripted(act=lambda r: bad), flights_html)
    assert trace.action is None
    assert trace.error_class == "invalid_id" and "n99999" in (trace.error or "")


def test_model_error_becomes_a_record_not_a_crash(flights_html: str) -> None:
    def act(request: Request) -> str:
        raise FatalModelError("HTTP 401: invalid API key")

    trace = run_step("readagent-p", scripted(act=act), flights_html)
    assert trace.action is None and trace.error_class == "model_error"
    assert "401" in (trace.error or "")


def test_gist_cache_means_no_fragment_is_gisted_twice(tmp_path: Path, flights_html: str) -> None:
    backend = scripted()
    model = Model(backend, sleep=lambda _: None)
    cache = GistCache(tmp_path / "gists.sqlite")
    agent = build_agent(AgentSettings(agent="gist-only"), model, cache)
    first = agent.step(Observation(task=TASK, html=flights_html))
    second = agent.step(Observation(task=TASK, previous_actions=["x"], html=flights_html))
    assert first.usage["gist"].calls == 1 and first.n_fragments > 1  # one batch
    assert "gist" not in second.usage or second.usage["gist"].calls == 0
    assert second.gist_cache_hits == second.n_fragments
    assert second.gists == first.gists
    # what the gists had cost is served from the cache at the second step, not spent again
    spent = first.usage["gist"].input_tokens + first.usage["gist"].output_tokens
    assert second.usage["gist"].cached_tokens == spent > 0


@pytest.mark.parametrize("agent", AGENT_NAMES)
def test_every_agent_keeps_the_prompt_inside_the_budget(
    agent: str, flights_html: str, read_as: Callable[[str, str], RenderedPage]
) -> None:
    budget = 1500
    # an answer naming an id never shown, as long as a reply can be: the repair turn echoes it
    bad = '{"element_id": "x", "op": "CLICK", "value": ""}' + " padding" * 400
    backend = scripted(act=lambda r: bad)
    page = read_as(agent, flights_html * 3)
    trace = run_step(agent, backend, page, context_budget=budget, max_lookup=2)
    # "x" is never shown; raw-html-paper shows no id at all (it reads Mind2Web's
    # backend_node_id: this page has none); mindact names the page's elements as the cleaner
    # does and asks for a letter, which "x" is not; gist-only's scripted gists name none, so
    # it shows the extractive gists' ids instead (name_controls)
    expected = {"raw-html-paper": "no_ids_shown", "mindact": "invalid_output"}
    assert trace.error_class == expected.get(agent, "invalid_id")
    phases = {request.phase for request in backend.requests}
    assert ("repair" in phases) == (agent not in expected)  # a repair is inside the budget too
    assert ("act" in phases) == (agent != "raw-html-paper")
    for request in backend.requests:
        used = backend.count_message_tokens(request.messages) + request.max_tokens
        assert used <= budget, (request.phase, used)


@pytest.mark.parametrize("agent", ["raw-html", "readagent-p"])
def test_a_budget_with_no_room_for_the_page_is_a_config_error(agent: str) -> None:
    model = Model(scripted(), sleep=lambda _: None)
    with pytest.raises(
        ConfigError, match=rf"--context-budget 600 leaves {agent} no room for the page"
    ):
        build_agent(AgentSettings(agent=agent, context_budget=600), model)
    # without a repair turn to keep room for, a little more holds a page
    build_agent(AgentSettings(agent="raw-html", context_budget=700, repair_attempts=0), model)


def test_raw_html_cuts_the_page_to_the_budget(flights_html: str) -> None:
    cards = "<div class='card'><h3>Deal</h3><p>Fly somewhere warm.</p><a href='/d'>See</a></div>"
    long_page = flights_html.replace("</main>", cards * 60 + "</main>")
    trace = run_step("raw-html", scripted(), long_page, context_budget=1200, max_lookup=2)
    assert 0 < trace.timings["kept_fraction"] < 1
    assert trace.reopened[0] == 0 and len(trace.reopened) < trace.n_fragments


def test_retrieval_shows_the_fragment_that_matches_the_task(flights_html: str) -> None:
    trace = run_step("retrieval", scripted(), flights_html, top_k=1)
    assert trace.action is not None, trace.error
    assert len(trace.reopened) == 1
    assert trace.action.element_id in trace.fragment_element_ids[trace.reopened[0]]
    assert "gist" not in trace.usage  # retrieval never gists


class RemoteCounting(ScriptedBackend):
    """The scripted backend with a counter that makes round trips: every count request is
    recorded, in order with the model calls (``events``; the usage a scripted answer
    reports is counted too, as a server reports it, and not recorded)."""

    def __init__(self, script: Callable[[Request], str], *, context_window: int) -> None:
        super().__init__(script, context_window=context_window)
        self.events: list[tuple[str, list[str]]] = []
        self._answering = False

    @property
    def counts_remotely(self) -> bool:
        return True

    def complete(self, request: Request, timeout_s: float) -> Completion:
        self.events.append((request.phase, []))
        self._answering = True
        try:
            return super().complete(request, timeout_s)
        finally:
            self._answering = False

    def count_tokens(self, text: str) -> int:
        return self.count_tokens_many([text])[0]

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        if not self._answering:
            self.events.append(("count", list(texts)))
        return [estimate_tokens(t) for t in texts]

    def request_counting(self, text: str) -> int:
        """The position, among the events, of the count request that held ``text``."""
        return next(n for n, (kind, texts) in enumerate(self.events) if text in texts)


def long_flights(flights_html: str) -> str:
    cards = "<div class='card'><h3>Deal</h3><p>Fly somewhere warm.</p><a href='/d'>See</a></div>"
    return flights_html.replace("</main>", cards * 40 + "</main>")


def test_what_the_gists_count_first_goes_with_the_fragments(flights_html: str) -> None:
    """Against a remote counter the extractive gister's first counts (each fragment's whole
    gist) go in the request that counts the fragments: gisting asks for no request of its
    own before it cuts, and its gists are those a local counter gives."""
    page = long_flights(flights_html)
    remote = scripted(backend=RemoteCounting)
    assert isinstance(remote, RemoteCounting)
    trace = run_step("gist-only", remote, page, gister="extractive", context_budget=4096)
    local = run_step("gist-only", scripted(), page, gister="extractive", context_budget=4096)
    assert trace.gists == local.gists and trace.memory == local.memory
    agent = build_agent(
        AgentSettings(agent="gist-only", gister="extractive", context_budget=4096),
        Model(scripted(), sleep=lambda _: None),
    )
    fragments = segment_html(page, agent.segment_plan, estimate_tokens).fragments
    assert len(fragments) > 3
    counted = max(remote.request_counting(f.html) for f in fragments)
    for fragment in fragments:
        gist = extractive_gist(fragment, agent.settings.gist_words)
        assert remote.request_counting(gist) == counted


def test_readagent_s_counts_the_act_prompt_with_its_last_memory(flights_html: str) -> None:
    """Whichever look-up round ends ReadAgent-S's look-up, the act prompt around its memory
    was counted with that memory: no count request comes between the last look-up answer
    and the act call."""
    answers = iter(['{"page": "%d", "reason": "form"}', '{"page": "STOP", "reason": "enough"}'])

    def lookup(request: Request) -> str:
        answer = next(answers)
        return answer % part_with_form(request) if "%d" in answer else answer

    remote = scripted(lookup=lookup, backend=RemoteCounting)
    assert isinstance(remote, RemoteCounting)
    trace = run_step("readagent-s", remote, long_flights(flights_html))
    assert trace.action is not None and len(trace.reopened) == 1, trace.error
    kinds = [kind for kind, _ in remote.events]
    last_lookup = len(kinds) - 1 - kinds[::-1].index("lookup")
    assert kinds[last_lookup + 1 :] == ["act"]


def test_readagent_s_counts_each_next_memory_ahead(flights_html: str) -> None:
    """Against a remote counter each look-up round also counts the memories the next round
    may show (one a part it may open): the round after one that sent a count request then
    sends none, and every prompt is the one a local counter gives."""

    def opens_the_next_part(request: Request) -> str:
        opened = re.search(r"Parts opened so far: ([\d, ]+)\.", request.messages[-1].content)
        count = len(opened.group(1).split(",")) if opened else 0
        return f'{{"page": "{count + 1}", "reason": "next"}}'

    page = long_flights(flights_html)
    remote = scripted(lookup=opens_the_next_part, backend=RemoteCounting)
    assert isinstance(remote, RemoteCounting)
    trace = run_step("readagent-s", remote, page, gister="extractive", max_lookup=4)
    local = scripted(lookup=opens_the_next_part)
    local_trace = run_step("readagent-s", local, page, gister="extractive", max_lookup=4)
    assert trace.reopened == local_trace.reopened and len(trace.reopened) == 4
    assert [r.messages for r in remote.requests] == [r.messages for r in local.requests]
    kinds = "".join("c" if kind == "count" else "m" for kind, _ in remote.events)
    rounds = kinds[kinds.index("m") :].split("m")[1:-1]  # the counts between model calls
    assert "" in rounds[:-1], kinds  # a round with no count request of its own
