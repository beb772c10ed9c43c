"""Exact cutting: ``truncate_to_tokens`` and ``last_fitting`` take the path of a plain binary
search under any counter, monotone or not, remote (speculative probes) or not."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from webagent.tokens import (
    Counting,
    DryRun,
    TokenCounter,
    alongside,
    count_many,
    count_one,
    estimate_tokens,
    first_request,
    fitting_search,
    last_fitting,
    round_trips,
    truncate_to_tokens,
    truncation,
)


def _sequential(text: str, budget: int, count: object) -> str:
    """main's truncate_to_tokens, as it was."""
    assert callable(count)
    if budget <= 0:
        return ""
    if count(text) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low]


class Remote:
    """A counter that makes round trips: ``many`` is one request; counts wobble."""

    round_trips = True

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.requests = 0

    def __call__(self, text: str) -> int:
        self.requests += 1
        return self._count(text)

    def many(self, texts: Sequence[str]) -> list[int]:
        self.requests += 1
        return [self._count(t) for t in texts]

    def _count(self, text: str) -> int:
        # roughly a token per 3 characters, off by one here and there (not monotone)
        wobble = random.Random(f"{self.seed}:{len(text)}").choice((-1, 0, 0, 1))
        return max(0, len(text) // 3 + wobble)


@settings(max_examples=80, deadline=None)
@given(
    st.text(alphabet="ab <>/=é", min_size=0, max_size=3000),
    st.integers(min_value=-1, max_value=1200),
    st.integers(min_value=0, max_value=5),
)
def test_remote_truncation_is_the_sequential_one(text: str, budget: int, seed: int) -> None:
    remote = Remote(seed)
    assert truncate_to_tokens(text, budget, remote) == _sequential(text, budget, Remote(seed))


@given(st.text(max_size=2000), st.integers(min_value=-1, max_value=900))
def test_estimate_truncation_is_the_sequential_one(text: str, budget: int) -> None:
    assert truncate_to_tokens(text, budget, estimate_tokens) == _sequential(
        text, budget, estimate_tokens
    )


def test_a_remote_search_takes_a_few_requests() -> None:
    text = "word " * 20_000  # 100,000 characters: 17 sequential probes
    remote = Remote(0)
    cut = truncate_to_tokens(text, 4000, remote)
    assert cut == _sequential(text, 4000, Remote(0))
    assert remote.requests <= 4  # the whole text, then the probes in one or two requests


def test_last_fitting_on_any_probe() -> None:
    words = [f"w{i}" for i in range(300)]
    remote = Remote(3)

    def probe(n: int) -> str:
        return " ".join(words[:n])

    low = last_fitting(0, 300, probe, 200, remote)
    plain = Remote(3)
    plain.round_trips = False  # type: ignore[misc]
    assert low == last_fitting(0, 300, probe, 200, plain)


def test_a_search_predicted_by_size_takes_the_plain_path_in_fewer_requests() -> None:
    # probes whose length grows unevenly with the point (as a gist's labels do)
    lengths = [n * n // 7 for n in range(120)]
    text = "abcdefghij" * 300

    def probe(n: int) -> str:
        return text[: lengths[n]]

    by_point, by_size = Remote(1), Remote(1)
    plain = Remote(1)
    plain.round_trips = False  # type: ignore[misc]
    expected = last_fitting(0, 119, probe, 300, plain)
    known = [(0, 0), (119, by_point._count(probe(119)))]
    assert last_fitting(0, 119, probe, 300, by_point, known=known) == expected
    search = fitting_search(
        0, 119, probe, 300, speculate=True, known=known, size=lambda n: lengths[n]
    )
    assert count_one(by_size, search) == expected
    assert by_size.requests < by_point.requests


@given(st.lists(st.text(alphabet="ab ", max_size=40), min_size=1, max_size=6), st.integers(0, 5))
def test_alongside_asks_for_more_and_changes_no_result(texts: list[str], seed: int) -> None:
    def procedure() -> Counting[list[int]]:
        first = yield texts
        second = yield [t + "!" for t in texts]
        return first + second

    asked: list[str] = []
    remote = Remote(seed)

    def counter(text: str) -> int:
        return remote._count(text)

    def many(batch: Sequence[str]) -> list[int]:
        asked.extend(batch)
        return [remote._count(t) for t in batch]

    counter.many = many  # type: ignore[attr-defined]
    plain = count_one(counter, procedure())
    asked.clear()
    assert count_one(counter, alongside(procedure(), lambda t: f"[{t}]")) == plain
    assert {f"[{t}]" for t in texts} <= set(asked)


def test_first_request_is_what_work_would_send_first_and_sends_nothing() -> None:
    from webagent.model.counting import TokenCounts
    from webagent.model.scripted import ScriptedBackend

    class Remote(ScriptedBackend):
        counts_remotely = True

        def __init__(self) -> None:
            super().__init__([])
            self.requests: list[list[str]] = []

        def count_tokens(self, text: str) -> int:
            self.requests.append([text])
            return len(text)

        def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
            self.requests.append(list(texts))
            return [len(t) for t in texts]

    def work(count: TokenCounter) -> None:
        assert round_trips(count)  # it runs as against the remote counter
        if count("a") == 1:
            count_many(count, ["a", "bb", "a", "ccc"], ahead=["not asked"])
            count("never reached")

    backend = Remote()
    counts = TokenCounts(backend)
    counts("a")
    assert first_request(counts, work) == ["bb", "ccc"]
    assert backend.requests == [["a"]]  # the dry run sent nothing
    counts.many(["bb", "ccc"])
    assert first_request(counts, work) == ["never reached"]
    assert first_request(len, work) == []  # a counter that does not tell what it knows


@settings(max_examples=40, deadline=None)
@given(
    st.text(alphabet="ab <>/=", min_size=1, max_size=2000),
    st.integers(min_value=1, max_value=500),
    st.integers(min_value=0, max_value=5),
)
def test_a_dry_run_resumed_asks_what_a_dry_run_from_the_start_asks(
    text: str, budget: int, seed: int
) -> None:
    """``DryRun.missing`` after more counts are known is ``first_request`` of the same
    procedure started again: round after round, to the end."""
    remote = Remote(seed)
    memo: dict[str, int] = {}

    class Remembering:
        round_trips = True

        def __call__(self, t: str) -> int:
            return self.many([t])[0]

        def many(self, texts: Sequence[str]) -> list[int]:
            memo.update((t, remote._count(t)) for t in texts if t not in memo)
            return [memo[t] for t in texts]

        def known(self, t: str) -> int | None:
            return memo.get(t)

    def search() -> Counting[str]:
        return truncation(text, budget, speculate=True)

    def work(count: TokenCounter) -> None:
        count_one(count, search())

    counter, resumed = Remembering(), DryRun(search())
    for _ in range(60):
        asked = resumed.missing(counter.known)
        assert asked == first_request(counter, work)
        if not asked:
            break
        counter.many(asked)  # the counts come: both go on from there
    assert resumed.done and resumed.missing(counter.known) == []
