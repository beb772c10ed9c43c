"""Record/replay: round trips, misses, cassette hygiene, and a round trip with the real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webagent.errors import ConfigError, ReplayMissError
from webagent.model import (
    Message,
    Model,
    ModelSettings,
    RecordingBackend,
    ReplayBackend,
    Request,
    RetryPolicy,
    ScriptedBackend,
    build_model,
)

SCHEMA = {
    "type": "object",
    "properties": {"element_id": {"enum": ["n3", "n4"]}, "op": {"enum": ["CLICK", "TYPE"]}},
    "required": ["element_id", "op"],
}


def ask(text: str, phase: str = "gist", max_tokens: int = 16, **kwargs: object) -> Request:
    messages = (Message(role="system", content="Be brief."), Message(role="user", content=text))
    return Request(messages=messages, phase=phase, max_tokens=max_tokens, **kwargs)  # type: ignore[arg-type]


def record(path: Path, answers: list[str | Exception], requests: list[Request]) -> list[str]:
    inner = ScriptedBackend(answers, name="scripted-m", context_window=2048)
    with Model(RecordingBackend(inner, path), RetryPolicy(max_retries=0)) as model:
        model.count_tokens("a fragment of the page")
        return [model.generate(r).text for r in requests]


def test_round_trip_replays_identical_answers_without_a_backend(tmp_path: Path) -> None:
    cassette = tmp_path / "calls.jsonl"
    requests = [
        ask("first fragment"),
        ask("pick", phase="act", json_schema=SCHEMA, prompt_version="act@1#abc"),
        ask("first fragment"),  # asked twice: answers replay in recorded order
    ]
    answers = record(
        cassette, ["gist one", '{"element_id": "n3", "op": "CLICK"}', "gist two"], requests
    )

    replay = Model(ReplayBackend(cassette))
    assert (replay.name, replay.context_window) == ("scripted-m", 2048)
    replayed = [replay.generate(r) for r in requests]
    assert (
        [c.text for c in replayed]
        == answers
        == ["gist one", '{"element_id": "n3", "op": "CLICK"}', "gist two"]
    )
    assert all(c.cached for c in replayed)
    assert replay.usage_snapshot()["gist"].cache_hits == 2
    assert replay.count_tokens("a fragment of the page") == ScriptedBackend([]).count_tokens(
        "a fragment of the page"
    )


def test_a_miss_names_the_phase_and_the_prompt(tmp_path: Path) -> None:
    cassette = tmp_path / "calls.jsonl"
    record(cassette, ["x"], [ask("known prompt")])
    replay = Model(ReplayBackend(cassette))
    changed = ask("Which fragments should be reopened for booking a flight", phase="lookup")
    with pytest.raises(ReplayMissError, match=r"lookup request .*'Which fragments should be"):
        replay.generate(changed)
    # a different model name is a different key: also a miss, raised at once (fatal)
    other = Model(ReplayBackend(cassette, name="another-model"))
    with pytest.raises(ReplayMissError, match="another-model"):
        other.generate(ask("known prompt"))


def test_cassette_is_readable_jsonl_without_secrets(tmp_path: Path) -> None:
    from fakes.openai_server import FakeOpenAIServer

    secret = "sk-never-in-a-cassette-42"
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAIServer(reply="recorded") as fake:
        settings = ModelSettings(
            backend="openai",
            model="fake-model",
            base_url=fake.base_url,
            api_key=secret,
            record_to=cassette,
            context_window=4096,
        )
        with build_model(settings) as model:
            assert model.generate(ask("hello")).text == "recorded"
    text = cassette.read_text()
    assert secret not in text
    entries = [json.loads(line) for line in text.splitlines()]
    assert [e["kind"] for e in entries] == ["header", "completion"]
    assert entries[1]["request"]["messages"][1]["content"] == "hello"
    assert entries[1]["completion"]["text"] == "recorded"
    assert "timeout" not in text


def test_broken_cassettes_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ReplayBackend(tmp_path / "missing.jsonl")
    cassette = tmp_path / "c.jsonl"
    record(cassette, ["a"], [ask("p")])
    good = cassette.read_text()
    cassette.write_text(good + "not json\n" + good.splitlines()[1] + "\n")
    with pytest.raises(ConfigError, match=r"c\.jsonl:4: not a valid cassette entry"):
        ReplayBackend(cassette)
    # an interrupted write leaves a last line without newline: skipped, the rest replays
    cassette.write_text(good + '{"kind": "completion", "key": "ab')
    assert Model(ReplayBackend(cassette)).generate(ask("p")).text == "a"
    headless = tmp_path / "headless.jsonl"
    headless.write_text("\n".join(good.splitlines()[1:]) + "\n")
    with pytest.raises(ConfigError, match="has no header naming its model"):
        ReplayBackend(headless)
    assert ReplayBackend(headless, name="scripted-m").name == "scripted-m"


def test_recording_appends_to_an_existing_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    record(cassette, ["a"], [ask("p1")])
    record(cassette, ["b"], [ask("p2")])
    kinds = [json.loads(line)["kind"] for line in cassette.read_text().splitlines()]
    assert kinds.count("header") == 1 and kinds.count("completion") == 2
    replay = Model(ReplayBackend(cassette))
    assert [replay.generate(ask(p)).text for p in ("p1", "p2")] == ["a", "b"]


@pytest.mark.llama
def test_round_trip_with_the_real_local_model(local_model: Model, tmp_path: Path) -> None:
    cassette = tmp_path / "local.jsonl"
    recorder = Model(RecordingBackend(local_model.backend, cassette))
    requests = [
        ask("Name one colour.", max_tokens=6),
        ask("Pick.", phase="act", json_schema=SCHEMA, max_tokens=40),
    ]
    recorded = [recorder.generate(r) for r in requests]
    counted = recorder.count_tokens("<div id=n1>Search flights</div>")
    replay = Model(ReplayBackend(cassette))
    replayed = [replay.generate(r) for r in requests]
    assert [c.text for c in replayed] == [c.text for c in recorded]
    assert [c.output_tokens for c in replayed] == [c.output_tokens for c in recorded]
    assert json.loads(replayed[1].text, strict=False)["op"] in ("CLICK", "TYPE")
    assert replay.count_tokens("<div id=n1>Search flights</div>") == counted
    assert replay.name == local_model.name
