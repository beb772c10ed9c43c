"""``Model.count_tokens``: each distinct text counted by the backend once, many texts in one
request where the server's tokenizer allows it, and always the counts one request a text gives."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from fakes.openai_server import SPECIAL, FakeOpenAIServer
from hypothesis import given
from hypothesis import strategies as st

from webagent.model.client import Model
from webagent.model.factory import build_model
from webagent.model.scripted import ScriptedBackend
from webagent.model.server_extras import NotOffered, token_spans
from webagent.model.settings import ModelSettings
from webagent.tokens import count_many, estimate_tokens, prefetch


class Counting(ScriptedBackend):
    def __init__(self) -> None:
        super().__init__([])
        self.counted: list[str] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return estimate_tokens(text)


def test_each_distinct_text_is_counted_once() -> None:
    backend = Counting()
    model = Model(backend)
    texts = ["a b c", "a b c", "", "d e"]
    assert [model.count_tokens(t) for t in texts] == [estimate_tokens(t) for t in texts]
    assert model.count_tokens.many([*texts, "f"]) == [estimate_tokens(t) for t in [*texts, "f"]]
    assert count_many(model.count_tokens, ["d e", "g"]) == [estimate_tokens("d e"), 1]
    assert sorted(backend.counted) == sorted(["a b c", "", "d e", "f", "g"])
    assert not model.count_tokens.round_trips


def test_remembered_counts_are_bounded_by_characters() -> None:
    from webagent.model.counting import TokenCounts

    backend = Counting()
    counts = TokenCounts(backend, max_chars=10)
    for text in ("aaaa", "bbbb", "cccc", "aaaa"):
        counts(text)
    assert backend.counted == ["aaaa", "bbbb", "cccc", "aaaa"]  # "aaaa" was let go


def _model(base_url: str) -> Model:
    settings = ModelSettings(
        backend="openai", model="fake-model", base_url=base_url, max_retries=0, timeout_s=5.0
    )
    return build_model(settings, sleep=lambda _s: None)


def test_many_texts_are_counted_in_one_request_where_the_server_allows() -> None:
    texts = ["one two", " three ", "four five six\n", f"with {SPECIAL} inside", "one two"]
    with FakeOpenAIServer(tokenizer="llama-cpp-python") as fake, _model(fake.base_url) as model:
        model.count_tokens("warm")
        assert model.count_tokens.round_trips
        first = model.count_tokens.many(texts[:3])  # probes the batch endpoint, then one call
        fake.paths.clear()
        counts = model.count_tokens.many(["seven eight", "nine", *texts])
        # the text holding the separator is counted on its own; the rest in one request
        assert fake.paths == ["/extras/tokenize/count", "/extras/tokenize"]
    assert first == [2, 1, 3]
    assert counts == [2, 1, 2, 1, 3, 3, 2]  # the fake's /extras/tokenize/count: one per word


def test_no_batch_endpoint_means_one_request_a_text() -> None:
    with FakeOpenAIServer(tokenizer="llama.cpp") as fake, _model(fake.base_url) as model:
        model.count_tokens("warm")
        fake.paths.clear()
        assert model.count_tokens.many(["a b", "c d e"]) == [2, 3]
        assert fake.paths.count("/tokenize") >= 2


@given(
    st.lists(st.integers(min_value=0, max_value=9), max_size=60),
    st.sampled_from([", ", ",", ",\n  "]),
)
def test_token_spans_read_off_the_bytes_are_the_decoded_ones(ids: list[int], comma: str) -> None:
    """Separator 7 in an answer of any JSON layout: the runs between, as decoding gives."""
    body = ('{"tokens": [' + comma.join(map(str, ids)) + "]}").encode()
    runs = [0]
    for token in ids:
        if token == 7:
            runs.append(0)
        else:
            runs[-1] += 1
    assert token_spans(body, 7) == runs


def test_an_answer_that_is_not_a_list_of_ids_is_not_read_as_one() -> None:
    with pytest.raises(NotOffered):
        token_spans(b'{"tokens": [{"id": 1, "piece": "a"}]}', 7)
    with pytest.raises(NotOffered):
        token_spans(b'{"count": 3}', 7)


def test_texts_asked_ahead_go_with_the_next_request() -> None:
    from webagent.model.counting import TokenCounts

    class Remote(Counting):
        counts_remotely = True

        def __init__(self) -> None:
            super().__init__()
            self.requests: list[list[str]] = []

        def count_tokens(self, text: str) -> int:
            self.requests.append([text])
            return estimate_tokens(text)

        def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
            self.requests.append(list(texts))
            return [estimate_tokens(t) for t in texts]

    backend = Remote()
    counts = TokenCounts(backend)
    counts("known")
    counts.ahead(["later one", "known", "later two"])
    assert backend.requests == [["known"]]  # asking ahead sends nothing by itself
    assert counts("now") == estimate_tokens("now")
    assert backend.requests[-1] == ["now", "later one", "later two"]
    later = counts.many(["later two", "later one"])
    assert later == [estimate_tokens("later two"), estimate_tokens("later one")]
    assert len(backend.requests) == 2  # both were answered with "now"
    prefetch(counts, ["soon"])
    assert counts.many(["other", "soon"]) == [estimate_tokens("other"), estimate_tokens("soon")]
    assert backend.requests[-1] == ["other", "soon"] and len(backend.requests) == 3
    # texts asked for ahead of a count: with it where it is sent, held where it is known
    assert count_many(counts, ["fresh"], ahead=["next"]) == [estimate_tokens("fresh")]
    assert backend.requests[-1] == ["fresh", "next"]
    assert count_many(counts, ["fresh"], ahead=["after"]) == [estimate_tokens("fresh")]
    assert len(backend.requests) == 4  # "after" waits for the next request


def test_a_repair_turn_counted_ahead_sends_one_request() -> None:
    from webagent.method.act import repair_counts, repair_turn
    from webagent.model.counting import TokenCounts

    class Remote(Counting):
        counts_remotely = True

        def __init__(self) -> None:
            super().__init__()
            self.requests = 0

        def count_tokens(self, text: str) -> int:
            self.requests += 1
            return len(text) // 2  # ids of digits: more tokens than the estimate says

        def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
            self.requests += 1
            return [len(t) // 2 for t in texts]

    ids = [f"{i}{i}{i}{i}" for i in range(100, 120)]  # 15 of them shown: over 64 tokens
    answer, error = '{"element_id": "9"}', "element_id '9' is not an id shown on the page"
    plain = Remote()
    expected = repair_turn(answer, error, ids, TokenCounts(plain))
    assert plain.requests == 2  # the whole texts, then the cut of the id list
    ahead = Remote()
    counts = TokenCounts(ahead)
    counts.many(repair_counts(ids))  # with the act prompt's count, in a step
    ahead.requests = 0
    assert repair_turn(answer, error, ids, counts) == expected
    assert ahead.requests == 1  # the bad answer and the error only
