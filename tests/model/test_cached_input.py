"""The provider's prompt cache, as an OpenAI-compatible endpoint reports it, lands in the
run's usage: the completion, the step's calls and the ledger, apart from the gist cache."""

from __future__ import annotations

from typing import Any

import pytest
from fakes.openai_server import FakeOpenAIServer

from webagent.model import Message, Model, ModelSettings, Request, build_model
from webagent.model.calls import CallLog


def model_for(base_url: str) -> Model:
    settings = ModelSettings(
        backend="openai", model="fake-model", base_url=base_url, token_counter="estimate"
    )
    return build_model(settings)


def ask() -> Request:
    return Request(messages=(Message(role="user", content="hi there"),), phase="act")


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ({"cached_tokens": 8, "cache_field": "usage"}, 8),  # OpenAI, llama.cpp server (2026)
        ({"cached_tokens": 5, "cache_field": "timings"}, 5),  # llama.cpp server's timings
        ({}, None),  # llama-cpp-python's server: not reported, so not known (not 0)
    ],
)
def test_cached_tokens_from_the_endpoint_land_in_the_runs_usage(
    reported: dict[str, Any], expected: int | None
) -> None:
    with FakeOpenAIServer(**reported) as fake, model_for(fake.base_url) as model:
        log = CallLog(model)
        completion = log.generate(ask())
        log.generate(ask())
    assert completion.cached_input_tokens == expected
    assert [call.cached_input_tokens for call in log.calls] == [expected, expected]
    usage = log.usage()["act"]
    assert (usage.input_tokens, usage.cached_input_tokens) == (22, 2 * (expected or 0))
    assert usage.cached_tokens == 0  # the gist cache's figure is another one
    assert model.usage_snapshot()["act"].cached_input_tokens == 2 * (expected or 0)
