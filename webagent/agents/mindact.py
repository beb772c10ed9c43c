"""MindAct's in-context protocol as an agent (Deng et al. 2023; also SeeAct's and AWM's offline
Mind2Web evaluation): multiple choice over candidate elements.

1. **Candidate pool**: the ranker scores the data carries (``Observation.candidates``: ``rank``
   / ``score`` on positive and negative candidates in circulating copies), best first, top
   :data:`POOL_SIZE` (50); else the page's interactive elements ranked by BM25 (or embeddings,
   ``--retriever``) against task + last 3 actions. An element is named by its
   ``backend_node_id``, else (a saved page has none) by the id the cleaner gives it, ``n<k>``
   in document order, as every other agent names it. Comparable scores need the matching filter:
   ``--score-top-k 50`` (only positives with rank < 50 count), which :data:`PROTOCOL_NOTE`
   states and the sweep prints.
2. **Rounds**: the pool is split into groups of :data:`GROUP_SIZE` (5) options plus "None of
   the above"; each group's prompt shows the DOM pruned around its candidates (ancestors,
   its first 50 descendants, 3 siblings each side;
   only the candidates show their ids). The options chosen in a round form the next
   round, until one is chosen; none chosen is no action.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from webagent.agents.context import format_previous, page_budget
from webagent.agents.pipeline import Memory, StepContext
from webagent.agents.ungisted import UngistedAgent
from webagent.answers import json_object
from webagent.contracts import MIND2WEB_OPS, Action, Observation, Op, StepTrace
from webagent.errors import ModelError, OutputParseError
from webagent.html.clean import number_elements
from webagent.html.fragment import Fragment
from webagent.html.parse import parse_html
from webagent.method.retrieval import RetrievalQuery, build_retriever
from webagent.model.base import Message, Request
from webagent.model.calls import CallLog
from webagent.prompts import load_template
from webagent.tokens import prefetch, round_trips, run_counting, truncation

POOL_SIZE = 50
GROUP_SIZE = 5
MAX_DESCENDANTS = 50
MAX_SIBLINGS = 3
#: attributes shown in the pruned DOM and the options (MindAct keeps a few informative ones)
SHOWN_ATTRIBUTES = ("type", "name", "placeholder", "aria_label", "title", "alt", "value", "role")
ID_ATTRIBUTE = "backend_node_id"
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


#: the scoring filter MindAct's pool implies, printed with a sweep's results
PROTOCOL_NOTE = (
    f"mindact: candidates = the data's ranker top {POOL_SIZE} (rank/score), else BM25 top "
    f"{POOL_SIZE} over element text; its numbers compare with --score-top-k {POOL_SIZE} "
    f"(MindAct's filter: a positive outside the top {POOL_SIZE} cannot be chosen)"
)


# --- the candidate pool --------------------------------------------------------------------
def ranked_pool(observation: Observation, page_ids: Sequence[str]) -> list[str] | None:
    """The data's ranked candidates present on the page, best first, top ``POOL_SIZE``."""
    if not observation.candidates:
        return None
    on_page = set(page_ids)
    seen: dict[str, None] = {}
    for candidate in observation.candidates:
        if candidate.element_id in on_page:
            seen.setdefault(candidate.element_id, None)
    return list(seen)[:POOL_SIZE]


def groups(pool: Sequence[str], size: int = GROUP_SIZE) -> list[list[str]]:
    return [list(pool[i : i + size]) for i in range(0, len(pool), size)]


# --- the page around the candidates ----------------------------------------------------------
def elements_by_id(root: etree._Element) -> dict[str, etree._Element]:
    """Elements of a parsed page by the id the cleaner gives each (``backend_node_id``, else
    ``n<k>``: :func:`number_elements` writes it on the element, for the options and the
    pruned DOM to show)."""
    number_elements(root)
    return {i: e for e in root.iter() if (i := e.get(ID_ATTRIBUTE)) is not None}


def parse_page(html: str) -> dict[str, etree._Element]:
    """Elements of the page by ``backend_node_id`` (parsed as segmentation parses it)."""
    return elements_by_id(parse_html(html))


def _own_text(element: etree._Element) -> str:
    return " ".join((element.text or "").split())


def describe(element: etree._Element, words: int = 12) -> str:
    """``(tag id=N attr="v") text``: how an option names its element."""
    attrs = " ".join(
        f'{a}="{" ".join(value.split())[:60]}"'
        for a in SHOWN_ATTRIBUTES
        if (value := element.get(a))
    )
    seen: list[str] = []
    for piece in element.itertext():  # the first ``words`` words, not all of a big subtree's
        seen += str(piece).split()
        if len(seen) >= words:
            break
    text = " ".join(seen[:words])
    head = f"{element.tag} id={element.get(ID_ATTRIBUTE)}" + (f" {attrs}" if attrs else "")
    return f"<{head}> {text}".rstrip()


def _keep_set(elements: dict[str, etree._Element], candidates: Sequence[str]) -> set[Any]:
    """MindAct's ``prune_tree``: each candidate, its ancestors, its first
    :data:`MAX_DESCENDANTS` descendants and :data:`MAX_SIBLINGS` siblings each side (text
    nodes are kept with their parent)."""
    keep: set[Any] = set()
    for element_id in candidates:
        node = elements.get(element_id)
        if node is None:
            continue
        keep.add(node)
        keep.update(node.iterancestors())
        keep.update([d for d in node.iterdescendants() if isinstance(d.tag, str)][:MAX_DESCENDANTS])
        parent = node.getparent()
        if parent is not None:
            siblings = [c for c in parent if isinstance(c.tag, str) and c.tag != "text"]
            at = siblings.index(node) if node in siblings else 0
            keep.update(siblings[max(0, at - MAX_SIBLINGS) : at + MAX_SIBLINGS + 1])
    return keep


def pruned_dom(elements: dict[str, etree._Element], candidates: Sequence[str]) -> str:
    """The page pruned around ``candidates``, one element a line; as in MindAct only the
    candidates show their ids."""
    keep = _keep_set(elements, candidates)
    wanted = set(candidates)
    roots = [e for e in keep if e.getparent() is None or e.getparent() not in keep]
    lines: list[str] = []

    def render(node: etree._Element, depth: int) -> None:
        name = node.get(ID_ATTRIBUTE)
        attrs = "".join(
            f' {a}="{" ".join(value.split())[:60]}"'
            for a in SHOWN_ATTRIBUTES
            if (value := node.get(a))
        )
        shown_id = f" id={name}" if name in wanted else ""
        texts = [_own_text(node)]
        texts += [_own_text(c) for c in node if isinstance(c.tag, str) and c.tag == "text"]
        text = " ".join(t for t in texts if t)
        lines.append("  " * depth + f"<{node.tag}{shown_id}{attrs}>" + (f" {text}" if text else ""))
        for child in node:
            if child in keep and child.tag != "text":
                render(child, depth + 1)

    for root in roots:
        render(root, 0)
    return "\n".join(lines)


def options_text(elements: dict[str, etree._Element], group: Sequence[str]) -> tuple[str, str]:
    """The options of one round (A..E) and the letter of "None of the above"."""
    lines = [f"{_LETTERS[i]}. {describe(elements[e])}" for i, e in enumerate(group)]
    none = _LETTERS[len(group)]
    return "\n".join([*lines, f"{none}. None of the above"]), none


# --- the answer ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Choice:
    letter: str
    op: Op
    value: str


def parse_choice(text: str, letters: str) -> Choice:
    """One round's answer; raises OutputParseError naming what is wrong."""
    data = json_object(text)
    letter = str(data.get("choice", "")).strip().strip(".").upper()[:1]
    if not letter or letter not in letters:
        raise OutputParseError(f"choice {data.get('choice')!r} is not one of {', '.join(letters)}")
    op_text = str(data.get("op", "CLICK")).strip().upper() or "CLICK"
    if op_text not in {op.value for op in MIND2WEB_OPS}:
        raise OutputParseError(f"op {op_text!r} is not one of CLICK, TYPE, SELECT")
    op = Op(op_text)
    value = "" if op is Op.CLICK else str(data.get("value") or "").strip()
    return Choice(letter=letter, op=op, value=value)


def choice_schema(letters: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": list(letters)},
            "op": {"type": "string", "enum": [op.value for op in MIND2WEB_OPS]},
            "value": {"type": "string", "maxLength": 200},
        },
        "required": ["choice", "op", "value"],
    }


def round_messages(
    task: str, previous: str, page: str, options: str
) -> tuple[tuple[Message, ...], str]:
    template = load_template("mindact")
    messages = template.render(task=task, previous_actions=previous, page=page, options=options)
    return messages, template.version_tag


# --- the agent -------------------------------------------------------------------------------
def _element_fragment(index: int, element_id: str, element: etree._Element) -> Fragment:
    """One element as a retrieval document (its tag, shown attributes and text)."""
    described = describe(element)
    return Fragment(
        index=index,
        path="",
        html=described,
        text=described,
        element_ids=[element_id],
        tokens=0,
    )


@dataclass
class Rounds:
    """What every round of one step shares."""

    task: str
    previous: str
    elements: dict[str, etree._Element]
    log: CallLog
    trace: StepTrace


class MindActAgent(UngistedAgent):
    """Multiple choice over ranked candidates, in rounds of 5 plus "None of the above"."""

    def build_memory(self, ctx: StepContext) -> Memory:  # pragma: no cover - not used
        raise NotImplementedError("MindAct builds one prompt per round, not one memory")

    def candidate_pool(
        self,
        observation: Observation,
        fragments: Sequence[Fragment],
        elements: dict[str, etree._Element],
    ) -> list[str]:
        """The data's ranked candidates, else the page's interactive ``elements`` ranked
        against the task; top :data:`POOL_SIZE`."""
        page_ids = [i for f in fragments for i in f.element_ids]
        ranked = ranked_pool(observation, page_ids)
        if ranked is not None:
            return ranked
        interactive = [i for f in fragments for i in f.interactive_ids] or page_ids
        ids = [e for e in interactive if e in elements]
        pseudo = [_element_fragment(n, i, elements[i]) for n, i in enumerate(ids)]
        query = RetrievalQuery.for_observation(observation)
        order = build_retriever(self.settings.retriever).rank(query, pseudo)
        return [pseudo[n].element_ids[0] for n in order][:POOL_SIZE]

    def _step(self, observation: Observation, trace: StepTrace, log: CallLog) -> None:
        from webagent.html.segment import segment_tree

        root = parse_html(observation.html)  # one parse: segmented, and the rounds' DOM
        page = segment_tree(root, self.segment_plan, self.model.count_tokens)
        trace.n_fragments = len(page.fragments)
        trace.fragment_tokens = [f.tokens for f in page.fragments]
        trace.fragment_element_ids = [f.element_ids for f in page.fragments]
        trace.page_tokens = page.page_tokens
        elements = elements_by_id(root)
        pool = [
            e for e in self.candidate_pool(observation, page.fragments, elements) if e in elements
        ]
        trace.timings["pool_size"] = float(len(pool))
        trace.timings["ranked_pool"] = float(observation.candidates is not None)
        trace.shown_element_ids = list(pool)
        trace.reopened = [f.index for f in page.fragments if set(f.element_ids) & set(pool)]
        if not pool:
            trace.error, trace.error_class = "no candidate element on the page", "no_ids_shown"
            return
        count = self.model.count_tokens
        empty, _ = round_messages(observation.task, "", "", "")
        history = max(self.settings.reserve_tokens - self.model.count_message_tokens(empty), 0)
        previous, trace.memory_edits.previous_dropped = format_previous(
            observation.previous_actions, history, count
        )
        rounds = Rounds(observation.task, previous, elements, log, trace)
        chosen = self.run_rounds(rounds, pool)
        if chosen is not None:
            trace.action = chosen

    def run_rounds(self, rounds: Rounds, pool: list[str]) -> Action | None:
        """Rounds until one option is chosen; None when every group answers "none"."""
        current = pool
        last: dict[str, Choice] = {}
        while True:
            winners: list[str] = []
            batch = groups(current)
            for group, choice in zip(batch, self._ask_all(rounds, batch), strict=True):
                if choice is not None and choice.letter in _LETTERS[: len(group)]:
                    element = group[_LETTERS.index(choice.letter)]
                    winners.append(element)
                    last[element] = choice
            if len(winners) <= 1 or len(winners) == len(current):
                break
            current = winners
        if not winners:
            if rounds.trace.error is None:
                rounds.trace.error = "no option chosen in any group"
                rounds.trace.error_class = "invalid_output"
            return None
        element = winners[0]  # several winners left that no round can split: the best ranked
        choice = last[element]
        rounds.trace.error, rounds.trace.error_class = None, None
        return Action(element_id=element, op=choice.op, value=choice.value)

    def _ask_all(self, rounds: Rounds, batch: list[list[str]]) -> list[Choice | None]:
        """Every group of a round at once (they do not depend on each other: one batch
        round, and concurrent calls where the endpoint allows); a failed call raises."""
        asked = self._requests(rounds, batch)
        results = rounds.log.generate_many([request for request, _ in asked])
        choices: list[Choice | None] = []
        for (_, letters), result in zip(asked, results, strict=True):
            if isinstance(result, ModelError):
                raise result
            try:
                choices.append(parse_choice(result.text, letters))
            except OutputParseError as exc:
                rounds.trace.error = f"round answer: {exc}"
                rounds.trace.error_class = "invalid_output"
                choices.append(None)
        return choices

    def _requests(self, rounds: Rounds, batch: list[list[str]]) -> list[tuple[Request, str]]:
        """The request that asks about each group, and the letters it may answer; what they
        count is counted for all groups together (a few requests to a remote counter)."""
        task, previous, elements, trace = (
            rounds.task,
            rounds.previous,
            rounds.elements,
            rounds.trace,
        )
        count, max_tokens = self.model.count_tokens, self.settings.act_max_tokens
        options = [options_text(elements, group) for group in batch]
        empties = [round_messages(task, previous, "", text)[0] for text, _ in options]
        doms = [pruned_dom(elements, group) for group in batch]
        # asked ahead: each group's prompt as it reads where its DOM fits uncut
        whole = [
            round_messages(task, previous, dom, text)[0]
            for dom, (text, _) in zip(doms, options, strict=True)
        ]
        prefetch(count, [*doms, *(m.content for messages in empties + whole for m in messages)])
        budgets = [page_budget(self.model, self.settings, e, max_tokens) for e in empties]
        speculate = round_trips(count)
        pages = run_counting(
            count,
            [
                truncation(dom, budget, speculate=speculate)
                for dom, budget in zip(doms, budgets, strict=True)
            ],
        )
        prompts = [
            round_messages(task, previous, page, text)
            for page, (text, _) in zip(pages, options, strict=True)
        ]
        prefetch(count, [m.content for messages, _ in prompts for m in messages])
        asked = []
        for group, page, (messages, version), (_, none) in zip(
            batch, pages, prompts, options, strict=True
        ):
            trace.memory = page
            tokens = self.model.count_message_tokens(messages)
            trace.prompt_tokens = max(trace.prompt_tokens, tokens)
            letters = _LETTERS[: len(group)] + none
            request = Request(
                messages=messages,
                max_tokens=max_tokens,
                json_schema=choice_schema(letters),
                schema_name="choice",
                phase="act",
                prompt_version=version,
            )
            asked.append((request, letters))
        return asked
