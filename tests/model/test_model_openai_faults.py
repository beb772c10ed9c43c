"""The OpenAI backend against a fake server on 127.0.0.1: every fault becomes the right error
class, retries are counted, nothing hangs; structured-output dialects, tokenizers, context."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate
from typing import Any

import pytest
from fakes.openai_server import FakeOpenAIServer, closed_port_url

from webagent.errors import (
    FatalModelError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    TransientModelError,
)
from webagent.model import Message, Model, ModelSettings, Request, RetryPolicy, build_model
from webagent.model.openai_errors import parse_retry_after

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def ask(**kwargs: Any) -> Request:
    return Request(messages=(Message(role="user", content="hi there"),), max_tokens=8, **kwargs)


def model_for(base_url: str, sleeps: list[float] | None = None, **settings: Any) -> Model:
    values: dict[str, Any] = {"max_retries": 2, "timeout_s": 5.0, "model": "fake-model", **settings}
    config = ModelSettings(backend="openai", base_url=base_url, **values)
    return build_model(config, sleep=(sleeps.append if sleeps is not None else lambda _s: None))


@pytest.mark.parametrize(
    ("fault", "error", "attempts"),
    [
        ("500", TransientModelError, 3),
        ("429", RateLimitError, 3),
        ("garbage", TransientModelError, 3),
        ("truncated", TransientModelError, 3),
        ("no_choices", TransientModelError, 3),
        ("400", FatalModelError, 1),
        ("401", FatalModelError, 1),
        ("context", FatalModelError, 1),
    ],
)
def test_each_fault_becomes_its_error_class(
    fault: str, error: type[ModelError], attempts: int
) -> None:
    with FakeOpenAIServer(default=fault) as fake, model_for(fake.base_url) as model:
        with pytest.raises(error) as caught:
            model.generate(ask(phase="act"))
        assert type(caught.value) is error
        assert len(fake.chat_requests) == attempts  # the SDK's own retries are off
    usage = model.usage_snapshot()["act"]
    assert (usage.calls, usage.errors, usage.retries) == (1, 1, attempts - 1)


def test_messages_name_the_fix() -> None:
    with (
        FakeOpenAIServer(default="401") as fake,
        model_for(fake.base_url) as model,
        pytest.raises(FatalModelError, match="HTTP 401: scripted 401; check the API key"),
    ):
        model.generate(ask())
    with (
        FakeOpenAIServer(default="context") as fake,
        model_for(fake.base_url) as model,
        pytest.raises(FatalModelError, match="too long for the model's context"),
    ):
        model.generate(ask())


def test_a_hanging_server_times_out_and_never_hangs_the_run() -> None:
    started = time.monotonic()
    with (
        FakeOpenAIServer(default="hang") as fake,
        model_for(fake.base_url, timeout_s=0.5, max_retries=1) as model,
        pytest.raises(ModelTimeoutError, match="did not answer"),
    ):
        model.generate(ask())
    assert len(fake.chat_requests) == 2
    assert time.monotonic() - started < 10


def test_connection_refused_is_transient_and_retried() -> None:
    sleeps: list[float] = []
    with (
        model_for(closed_port_url(), sleeps) as model,
        pytest.raises(TransientModelError, match="Connection refused"),
    ):
        model.generate(ask())
    assert len(sleeps) == 2
    assert model.usage_snapshot()["other"].retries == 2


def test_recovers_after_transient_faults_with_a_longer_wait_after_429() -> None:
    sleeps: list[float] = []
    script = ["500", "429", "truncated", "ok"]
    with (
        FakeOpenAIServer(script, reply="finally") as fake,
        model_for(fake.base_url, sleeps, max_retries=3) as model,
    ):
        completion = model.generate(ask(phase="gist"))
    assert (completion.text, completion.attempts) == ("finally", 4)
    assert (completion.input_tokens, completion.output_tokens) == (11, 3)
    assert len(sleeps) == 3 and sleeps[1] > sleeps[0] * 2  # 429 backs off longer
    assert model.usage_snapshot()["gist"].retries == 3


def test_auto_structured_output_falls_back_to_json_object_once() -> None:
    with FakeOpenAIServer(reject_json_schema=True, reply='{"answer": "x"}') as fake:
        with model_for(fake.base_url) as model:
            assert model.generate(ask(json_schema=SCHEMA)).text == '{"answer": "x"}'
            model.generate(ask(json_schema=SCHEMA))
            model.generate(ask())
        formats = [r.get("response_format") for r in fake.chat_requests]
    assert formats[0]["type"] == "json_schema"
    assert formats[1] == formats[2] == {"type": "json_object", "schema": SCHEMA}
    assert formats[3] is None  # no schema, no response_format


def test_auto_keeps_json_schema_where_it_works() -> None:
    with FakeOpenAIServer(reply='{"answer": "x"}') as fake, model_for(fake.base_url) as model:
        model.generate(ask(json_schema=SCHEMA, schema_name="gist"))
        model.generate(ask(json_schema=SCHEMA))
        formats = [r["response_format"] for r in fake.chat_requests]
    assert formats[0] == {
        "type": "json_schema",
        "json_schema": {"name": "gist", "schema": SCHEMA},
    }
    assert [f["type"] for f in formats] == ["json_schema", "json_schema"]


@pytest.mark.parametrize("mode", ["json_object", "none", "json_schema"])
def test_a_chosen_dialect_is_used_and_never_switched(mode: str) -> None:
    with FakeOpenAIServer(reject_json_schema=True) as fake:
        with model_for(fake.base_url, structured_output=mode, max_retries=0) as model:
            if mode == "json_schema":
                with pytest.raises(TransientModelError):
                    model.generate(ask(json_schema=SCHEMA))
            else:
                model.generate(ask(json_schema=SCHEMA))
        sent = fake.chat_requests[0].get("response_format")
    expected = {"json_object": {"type": "json_object", "schema": SCHEMA}, "none": None}
    assert sent == expected.get(mode, sent)
    assert len(fake.chat_requests) == 1


def test_grammar_dialect_sends_a_gbnf_grammar() -> None:
    pytest.importorskip("llama_cpp")
    with FakeOpenAIServer() as fake:
        with model_for(fake.base_url, structured_output="grammar") as model:
            model.generate(ask(json_schema=SCHEMA))
        body = fake.chat_requests[0]
    assert "response_format" not in body
    assert "answer" in body["grammar"] and "::=" in body["grammar"]


@pytest.mark.parametrize(
    ("tokenizer", "method", "paths"),
    [
        ("llama-cpp-python", "llama-cpp-python", ["/extras/tokenize/count"] * 3),
        ("llama.cpp", "llama.cpp", ["/extras/tokenize/count"] + ["/tokenize"] * 3),
        (None, "estimate", ["/extras/tokenize/count", "/tokenize"]),
    ],
)
def test_token_counting_finds_the_server_tokenizer_once(
    tokenizer: Any, method: str, paths: list[str]
) -> None:
    text = "one two three four five six"
    with FakeOpenAIServer(tokenizer=tokenizer) as fake, model_for(fake.base_url) as model:
        counts = [model.count_tokens(text), model.count_tokens(text), model.count_tokens("a b")]
        # probed once (with a short text), then each new text once: repeats are cached
        assert fake.paths == paths
    expected = [17, 17, 2] if method == "estimate" else [6, 6, 2]  # fake: one token per word
    assert counts == expected
    assert model.backend.token_count_method == method  # type: ignore[attr-defined]


def test_context_window_from_the_settings_the_server_the_table_or_unknown() -> None:
    with FakeOpenAIServer(n_ctx=2048) as fake:
        with model_for(fake.base_url) as model:
            assert model.context_window == 2048
            assert model.window().source.startswith("what the server at http://127.0.0.1:")
        with model_for(fake.base_url, context_window=1024) as model:
            assert model.context_window == 1024
    with FakeOpenAIServer() as fake:
        with model_for(fake.base_url, model="Qwen/Qwen2.5-7B-Instruct") as model:
            assert model.context_window == 32768  # the table of known models
            assert model.window().source.startswith("the table of known models, entry qwen2.5*")
        with model_for(fake.base_url) as model:  # no figure anywhere: none is made up
            assert model.context_window is None
            assert "fake-model is not in the table of known models" in model.window().source


def test_recording_through_faults_keeps_only_answers(tmp_path) -> None:
    cassette = tmp_path / "c.jsonl"
    with (
        FakeOpenAIServer(["500", "ok"], reply="kept") as fake,
        model_for(fake.base_url, record_to=cassette, context_window=4096) as model,
    ):
        model.generate(ask())
    entries = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert [e["kind"] for e in entries] == ["header", "completion"]
    assert entries[1]["completion"]["text"] == "kept"


@pytest.mark.parametrize("fault", ["429", "503"])
def test_retry_after_is_honoured_and_capped(fault: str) -> None:
    sleeps: list[float] = []
    with (
        FakeOpenAIServer([fault, fault, "ok"], retry_after="7") as fake,
        model_for(fake.base_url, sleeps) as model,
    ):
        assert model.generate(ask()).attempts == 3
    assert len(sleeps) == 2 and all(s >= 7 for s in sleeps), sleeps
    sleeps.clear()
    with (
        FakeOpenAIServer([fault, "ok"], retry_after="86400") as fake,
        model_for(fake.base_url, sleeps) as model,
    ):
        model.generate(ask())
    assert sleeps == [RetryPolicy().max_retry_after_s]  # a day is capped


def test_without_retry_after_the_usual_backoff_applies() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer(["503", "ok"]) as fake, model_for(fake.base_url, sleeps) as model:
        model.generate(ask())
    assert len(sleeps) == 1 and sleeps[0] <= RetryPolicy().base_delay_s


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = 1_700_000_000.0
    date = formatdate(now + 42, usegmt=True)
    assert parse_retry_after("3", now) == 3.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after(date, now) == pytest.approx(42.0)
    assert parse_retry_after(formatdate(now - 60, usegmt=True), now) == 0.0
    assert parse_retry_after("-4", now) == 0.0
    for unreadable in (None, "", "soon", "Tue, 99 Foo 2026"):
        assert parse_retry_after(unreadable, now) is None


def test_a_connection_the_server_closes_is_not_reused() -> None:
    """The keep-alive race: after a response the server ends by closing its socket, the retry
    must reach the server on a new connection (it once raced the close and was lost)."""
    with FakeOpenAIServer(["garbage", "truncated", "ok"]) as fake:
        with model_for(fake.base_url) as model:
            assert model.generate(ask()).attempts == 3
        assert len(fake.chat_requests) == 3
        assert len(set(fake.chat_clients)) == 3  # three connections, one per attempt


def test_one_limit_for_every_caller_of_a_model() -> None:
    """Threads that each fan out (as evaluation workers gisting a page do) share the model's
    one limit: never more than ``concurrency`` requests in flight at the endpoint."""
    with FakeOpenAIServer(delay_s=0.02) as fake, model_for(fake.base_url, concurrency=3) as model:
        with ThreadPoolExecutor(max_workers=3) as workers:
            batches = [[ask(phase="gist")] * 6 for _ in range(3)]
            results = list(workers.map(model.map_generate, batches))
        peak = fake.peak_in_flight
    assert all(not isinstance(r, ModelError) for batch in results for r in batch)
    assert len(fake.chat_requests) == 18
    assert 1 < peak <= 3, peak
