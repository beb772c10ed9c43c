"""The embedded local backend (llama-cpp-python + SmolLM2): real calls, kept few and short."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from webagent.errors import ConfigError, FatalModelError
from webagent.model import Message, Model, ModelSettings, Request
from webagent.model.llama_local import OPENMP_SPIN_COUNT, quiet_openmp
from webagent.model.settings import DEFAULT_LOCAL_MODEL

#: the spin count this test process was started with, before anything loaded llama.cpp
SPIN_COUNT_GIVEN = os.environ.get("GOMP_SPINCOUNT")

# ids as an enum and a bounded value, so the answer always completes within max_tokens:
# under the grammar the fixed keys alone take ~30 tokens (they are spelled in small pieces)
SCHEMA = {
    "type": "object",
    "properties": {
        "element_id": {"enum": ["n7", "n9"]},
        "op": {"enum": ["CLICK", "TYPE", "SELECT"]},
        "value": {"type": "string", "maxLength": 12},
    },
    "required": ["element_id", "op", "value"],
}


@pytest.mark.llama
def test_structured_output_is_valid_json(local_model: Model) -> None:
    messages = (
        Message(role="system", content="You pick the element to act on. Answer in JSON."),
        Message(role="user", content='Page: <input id="n7" placeholder="From"> Task: type Paris'),
    )
    started = time.monotonic()
    completion = local_model.generate(
        Request(messages=messages, max_tokens=64, json_schema=SCHEMA, phase="act")
    )
    print(f"local: one structured call took {time.monotonic() - started:.2f} s")
    answer = json.loads(completion.text, strict=False)  # raw control chars may occur
    assert set(answer) == {"element_id", "op", "value"}
    assert answer["op"] in ("CLICK", "TYPE", "SELECT") and answer["element_id"] in ("n7", "n9")
    assert completion.finish_reason == "stop"
    assert completion.model == DEFAULT_LOCAL_MODEL
    assert completion.input_tokens > 10 and completion.output_tokens > 0


@pytest.mark.llama
def test_plain_chat_and_usage(local_model: Model) -> None:
    before = local_model.usage_snapshot()
    started = time.monotonic()
    completion = local_model.generate(
        Request(messages=(Message(role="user", content="Name a colour."),), max_tokens=6)
    )
    print(f"local: one short call took {time.monotonic() - started:.2f} s")
    assert completion.text.strip() and completion.output_tokens <= 6
    assert local_model.usage_since(before)["other"].calls == 1


@pytest.mark.llama
def test_token_counting_uses_the_model_tokenizer(local_model: Model) -> None:
    text = '<a id="n3" href="/deals">Today\'s deals</a>'
    count = local_model.count_tokens(text)
    assert 5 < count < len(text)
    assert local_model.count_tokens("") == 0
    assert local_model.context_window == 4096


@pytest.mark.llama
def test_a_prompt_beyond_the_context_is_fatal(local_model: Model) -> None:
    huge = "word " * 5000
    with pytest.raises(FatalModelError, match="exceed context window"):
        local_model.generate(Request(messages=(Message(role="user", content=huge),), max_tokens=4))


def test_a_missing_gguf_is_a_config_error(tmp_path: Path) -> None:
    from webagent.model.llama_local import LlamaLocalBackend

    with pytest.raises(ConfigError, match="does not exist"):
        LlamaLocalBackend(ModelSettings(model_path=tmp_path / "missing.gguf"))


def test_llama_cpp_threads_sleep_soon_unless_the_environment_says_otherwise() -> None:
    """libgomp's default spin count makes llama.cpp crawl beside busy processes
    (bench/figures/cpu_contention.py); ours is a default, never an override."""
    assert quiet_openmp({})["GOMP_SPINCOUNT"] == OPENMP_SPIN_COUNT
    assert quiet_openmp({"GOMP_SPINCOUNT": "300000"})["GOMP_SPINCOUNT"] == "300000"


@pytest.mark.llama
def test_the_model_loads_with_the_low_spin_count(local_model: Model) -> None:
    local_model.count_tokens("load")  # weights (and so llama.cpp's libgomp) load on first use
    assert os.environ["GOMP_SPINCOUNT"] == (SPIN_COUNT_GIVEN or OPENMP_SPIN_COUNT)


def test_structured_answers_cannot_outgrow_max_tokens() -> None:
    """The grammar bounds every free string and array so that a whole answer fits
    ``max_tokens`` (a cut answer is no JSON); enums and the request's own schema stay."""
    from webagent.method.act import act_schema
    from webagent.method.lookup import SECTIONS_SCHEMA
    from webagent.model.llama_local import JSON_FRAME_TOKENS, within_tokens

    act = act_schema(["n1", "n2"])
    tight = within_tokens(act, 96)
    assert tight["properties"]["value"]["maxLength"] <= 96 - JSON_FRAME_TOKENS
    assert tight["properties"]["element_id"] == act["properties"]["element_id"]
    assert act["properties"]["value"]["maxLength"] == 200  # the request's schema is untouched
    sections = within_tokens(SECTIONS_SCHEMA, 64)["properties"]
    # at most one token a character, three an item: the two values share what the frame leaves
    assert 3 * sections["sections"]["maxItems"] + sections["reason"]["maxLength"] <= 64 - 16
