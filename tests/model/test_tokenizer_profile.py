"""Building an agent against a server costs at most 2 tokenize requests once the server's
tokenizer has been learnt (issue 40): what it took to learn, and the counts of the fixed texts
building counts, are kept beside the gist cache (``tokenizers.json``), keyed by server and
model, and used only while the server's tokenizer gives the fingerprint its profile holds.
Each test runs ``webagent act`` in-process and counts the requests made until the agent is
built (``webagent.build.build_agent`` returning)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.openai_server import FakeOpenAIServer

import webagent.build
from webagent.cli import main
from webagent.model import server_extras
from webagent.model.settings import DEFAULT_LOCAL_MODEL

#: the file beside the gist cache (webagent.model.tokenizer_profile.PROFILE_FILE)
PROFILE_FILE = "tokenizers.json"
PAGE = Path(__file__).parents[1] / "data" / "pages" / "form.html"
TOKENIZE = ("/tokenize", "/extras/tokenize", "/extras/tokenize/count")


class Counted:
    """Tokenize requests since the last ``act``, and how many there were when its agent was
    built."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.built: list[int] = []

    def act(self, base_url: str, model: str, cache: Path, *extra: str) -> int:
        self.paths.clear()
        argv = ["act", "--page", str(PAGE), "--task", "Book a table for two"]
        argv += ["--agent", "raw-html", "--backend", "openai", "--base-url", base_url]
        argv += ["--model", model, "--gist-cache", str(cache / "gists.sqlite")]
        return main([*argv, *extra])


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counted:
    counted = Counted()
    real_body, real_build = server_extras.http_body, webagent.build.build_agent

    def body(url: str, *args: Any, **kwargs: Any) -> bytes:
        counted.paths.append("/" + url.split("://", 1)[1].split("/", 1)[1])
        return real_body(url, *args, **kwargs)

    def build(*args: Any, **kwargs: Any) -> Any:
        agent = real_build(*args, **kwargs)
        counted.built.append(sum(1 for p in counted.paths if p in TOKENIZE))
        return agent

    monkeypatch.setattr(server_extras, "http_body", body)
    monkeypatch.setattr(webagent.build, "build_agent", build)
    return counted


def _first_id(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return str(schema["properties"]["element_id"]["enum"][0])


def test_a_learnt_tokenizer_is_verified_by_one_request_and_relearnt_when_it_changed(
    tmp_path: Path, counted: Counted
) -> None:
    def answer(body: dict[str, Any]) -> str:
        return json.dumps({"element_id": _first_id(body), "op": "CLICK", "value": ""})

    with FakeOpenAIServer(tokenizer="llama.cpp", n_ctx=4096, answer=answer) as fake:
        for _ in range(3):
            assert counted.act(fake.base_url, "fake", tmp_path) == 0
        cold, warm, again = counted.built
        assert cold > 2 and warm == 1 == again  # learnt once; then the fingerprint alone
        profiles = tmp_path / PROFILE_FILE
        entry = json.loads(profiles.read_text())
        (key,) = entry
        assert key.endswith(" fake") and entry[key]["counts"]  # the fixed texts' counts
        entry[key]["fingerprint"] = [1, 2, 3]  # as if the server now ran another tokenizer
        profiles.write_text(json.dumps(entry))
        assert counted.act(fake.base_url, "fake", tmp_path) == 0
        assert counted.built[-1] == cold + 1  # learnt anew (after the fingerprint's request)


@pytest.mark.server
def test_building_an_agent_against_a_real_server_costs_at_most_two_tokenize_requests(
    llama_server: str, tmp_path: Path, counted: Counted
) -> None:
    budget = ["--context-budget", "2048", "--max-lookup", "2"]  # a short prompt for SmolLM2
    for _ in range(2):
        counted.act(llama_server, DEFAULT_LOCAL_MODEL, tmp_path, *budget)
    first, later = counted.built
    assert first > 2  # learning the tokenizer: which endpoint, how to count many at once
    assert later <= 2  # a later command, a new model: the profile, checked once
