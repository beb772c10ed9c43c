"""The Model wrapper over a scripted backend: retries, backoff, classification, usage."""

from __future__ import annotations

import random
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webagent.errors import (
    FatalModelError,
    ModelTimeoutError,
    RateLimitError,
    TransientModelError,
)
from webagent.model import CallLog, Message, Model, Request, RetryPolicy, ScriptedBackend


def ask(text: str = "hello", phase: str = "other", **kwargs: object) -> Request:
    return Request(messages=(Message(role="user", content=text),), phase=phase, **kwargs)  # type: ignore[arg-type]


def test_transient_errors_are_retried_until_an_answer(scripted_model) -> None:
    model = scripted_model([TransientModelError("503"), ModelTimeoutError("slow"), "done"])
    completion = model.generate(ask())
    assert completion.text == "done"
    assert completion.attempts == 3
    assert model.backend.calls == 3
    usage = model.usage_snapshot()["other"]
    assert (usage.calls, usage.retries, usage.errors) == (1, 2, 0)


def test_fatal_error_is_raised_at_once(scripted_model) -> None:
    model = scripted_model([FatalModelError("401 bad key"), "never reached"], max_retries=5)
    with pytest.raises(FatalModelError, match="401 bad key"):
        model.generate(ask(phase="act"))
    assert model.backend.calls == 1
    usage = model.usage_snapshot()["act"]
    assert (usage.calls, usage.errors, usage.retries) == (1, 1, 0)


def test_gives_up_after_max_retries_with_the_last_error(scripted_model) -> None:
    errors = [TransientModelError(f"fail {i}") for i in range(5)]
    model = scripted_model(errors, max_retries=2)
    with pytest.raises(TransientModelError, match="fail 2") as caught:
        model.generate(ask())
    assert model.backend.calls == 3
    assert any("gave up after 3 attempts" in note for note in caught.value.__notes__)
    assert model.usage_snapshot()["other"].retries == 2


def test_backoff_grows_exponentially_and_longer_after_429() -> None:
    sleeps: list[float] = []
    script = [TransientModelError("500")] * 3 + [RateLimitError("429")] * 2 + ["ok"]
    policy = RetryPolicy(max_retries=6, base_delay_s=1.0, max_delay_s=3.0, jitter=0.0)
    model = Model(ScriptedBackend(script), policy, sleep=sleeps.append)
    assert model.generate(ask()).text == "ok"
    # 1, 2, 4 capped at 3; then 429: 1*5*2**3 capped at 3*5, twice
    assert sleeps == [1.0, 2.0, 3.0, 15.0, 15.0]


@given(
    retry=st.integers(min_value=1, max_value=12),
    jitter=st.floats(min_value=0, max_value=1),
    seed=st.integers(min_value=0, max_value=2**16),
    limited=st.booleans(),
)
def test_backoff_jitter_stays_within_bounds(
    retry: int, jitter: float, seed: int, limited: bool
) -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=20, jitter=jitter)
    error = RateLimitError("429") if limited else TransientModelError("500")
    factor = policy.rate_limit_factor if limited else 1.0
    ceiling = min(0.5 * factor * 2 ** (retry - 1), 20 * factor)
    delay = policy.delay(error, retry, random.Random(seed))
    assert ceiling * (1 - jitter) - 1e-9 <= delay <= ceiling + 1e-9


def test_timeout_of_the_policy_reaches_the_backend(scripted_model) -> None:
    model = scripted_model(["a"])
    model.generate(ask())
    assert model.backend.timeouts == [5.0]


def test_usage_ledger_counts_per_phase_and_diffs(scripted_model) -> None:
    model = scripted_model(["one", "two", "three", "four"])
    model.generate(ask("summarise this page fragment", phase="gist"))
    before = model.usage_snapshot()
    model.generate(ask("another fragment", phase="gist"))
    model.generate(ask("pick the element", phase="act"))
    total = model.usage_snapshot()
    assert total["gist"].calls == 2 and total["act"].calls == 1
    assert total["gist"].input_tokens > 0 and total["gist"].output_tokens > 0
    diff = model.usage_since(before)
    assert diff["gist"].calls == 1 and diff["act"].calls == 1
    assert diff["gist"].input_tokens == total["gist"].input_tokens - before["gist"].input_tokens
    model.reset_usage()
    assert model.usage_snapshot() == {}


def test_call_logs_count_only_their_own_calls_even_with_threads(scripted_model) -> None:
    model = scripted_model(lambda request: "x", max_concurrency=4)
    model.generate(ask(phase="gist"))
    barrier = threading.Barrier(2)
    results: dict[str, tuple[int, int]] = {}

    def agent(name: str, calls: int) -> None:
        log = CallLog(model)
        barrier.wait()
        for _ in range(calls):
            log.generate(ask(phase="lookup"))
        log.generate_many([ask(phase="gist") for _ in range(3)])
        log.count_hit("gist")
        usage = log.usage()
        results[name] = (sum(u.calls for u in usage.values()), usage["gist"].cache_hits)

    threads = [threading.Thread(target=agent, args=(n, c)) for n, c in (("a", 2), ("b", 5))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {"a": (5, 1), "b": (8, 1)}
    assert model.usage_snapshot()["gist"].calls == 1 + 6


def test_map_generate_keeps_order_returns_errors_and_bounds_concurrency(scripted_model) -> None:
    lock = threading.Lock()
    in_flight = [0]
    peak = [0]

    def answer(request: Request) -> str | Exception:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.03)
        with lock:
            in_flight[0] -= 1
        text = request.messages[0].content
        return FatalModelError(f"refused {text}") if text == "3" else f"answer {text}"

    model = scripted_model(answer, max_concurrency=3)
    results = model.map_generate([ask(str(i), phase="gist") for i in range(8)])
    assert [r.text if not isinstance(r, Exception) else "error" for r in results] == [
        "answer 0", "answer 1", "answer 2", "error",
        "answer 4", "answer 5", "answer 6", "answer 7",
    ]  # fmt: skip
    assert isinstance(results[3], FatalModelError)
    assert 1 < peak[0] <= 3
    assert model.usage_snapshot()["gist"].errors == 1


def test_map_generate_with_one_slot_runs_in_the_calling_thread(scripted_model) -> None:
    seen: list[str] = []

    def answer(request: Request) -> str:
        seen.append(threading.current_thread().name)
        return "ok"

    model = scripted_model(answer)
    assert len(model.map_generate([ask(), ask()])) == 2
    assert seen == [threading.current_thread().name] * 2


def test_scripted_backend_says_when_it_runs_out(scripted_model) -> None:
    model = scripted_model(["only one"])
    model.generate(ask())
    with pytest.raises(FatalModelError, match=r"only 1 answers; request 2 \(act: 'click the"):
        model.generate(ask("click the blue button", phase="act"))


def test_token_counting_goes_to_the_backend(scripted_model) -> None:
    model = scripted_model(["a"], context_window=2048, name="tiny")
    assert model.count_tokens("abcdefgh") == 5  # ceil(8 * 5/8): the stated estimate
    messages = (Message(role="system", content="abc"), Message(role="user", content="abcd"))
    assert model.count_message_tokens(messages) == 2 + 3 + 2 * 8 + 4
    assert (model.name, model.context_window, model.max_concurrency) == ("tiny", 2048, 1)
