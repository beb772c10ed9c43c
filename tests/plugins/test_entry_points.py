"""A package adds a backend and a command through entry points, and both are usable without
an edit to the library: the test writes a real installed-package record (``dist-info`` with
``entry_points.txt``) into a folder on ``sys.path``, as pip would."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from webagent import plugins
from webagent.agents import registry
from webagent.cli import main

PLUGIN = '''
from pydantic import BaseModel

from webagent.model.base import Backend, Completion
from webagent.model.registry import BackendSpec
from webagent.tokens import estimate_tokens


class FixedOptions(BaseModel):
    element_id: str


class FixedAnswer(Backend):
    """Policy: always the same CLICK, on the element its options name."""

    def __init__(self, options):
        self.name = "fixed-answer"
        self.context_window = 8192
        self.answer = (
            '{"element_id": "%s", "op": "CLICK", "value": ""}' % options.element_id
        )
        self.seen = 0

    def complete(self, request, timeout_s):
        return Completion(text=self.answer, model=self.name, input_tokens=1, output_tokens=1)

    def count_tokens(self, text):
        return estimate_tokens(text)


SPEC = BackendSpec(
    "fixed-answer",
    "a test plug-in: always one CLICK",
    lambda settings, options: FixedAnswer(options),
    options=FixedOptions,
)


from webagent.agents.baselines import RawHtmlAgent
from webagent.agents.registry import AgentSpec, register_agent


class FirstControlsOptions(BaseModel):
    """The plug-in agent's own settings (agent.options)."""

    keep_chars: int = 400


class FirstControls(RawHtmlAgent):
    """The beginning of the page, at most ``keep_chars`` characters of it (a test agent)."""

    def build_memory(self, ctx):
        memory = super().build_memory(ctx)
        memory.text = memory.text[: self.own.keep_chars]
        return memory


register_agent(
    AgentSpec(
        "first-controls",
        FirstControls,
        "a test plug-in: the page's first characters",
        settings=FirstControlsOptions,
    )
)


def register(subparsers):
    parser = subparsers.add_parser("hello", help="a test plug-in's verb")
    parser.set_defaults(func=lambda args: print("hello from a plug-in") or 0)
'''

ENTRY_POINTS = """[webagent.backends]
fixed-answer = webagent_test_plugin:SPEC

[webagent.commands]
hello = webagent_test_plugin:register

[webagent.agents]
first-controls = webagent_test_plugin
"""


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "webagent_test_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "webagent_test_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: webagent-test-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.entry_points.cache_clear()
    registry._load_plugins.cache_clear()
    yield
    sys.modules.pop("webagent_test_plugin", None)
    registry._REGISTRY.pop("first-controls", None)
    plugins.entry_points.cache_clear()
    registry._load_plugins.cache_clear()


PAGE = """<html><body><h1>Shop</h1><form><input name="q" placeholder="Search">
<button id="go">Search</button></form></body></html>"""


def test_a_backend_added_through_an_entry_point_answers_act(
    installed_plugin: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.html"
    page.write_text(PAGE, encoding="utf-8")
    argv = ["act", "--page", str(page), "--task", "search", "--agent", "raw-html"]
    argv += ["--backend", "fixed-answer", "--set", 'model.options.element_id="n6"']
    argv += ["--no-gist-cache", "--token-counter", "estimate", "--json"]
    assert main(argv) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["action"] == {"element_id": "n6", "op": "CLICK", "value": ""}
    assert trace["usage"]["act"]["calls"] == 1


def test_a_plug_in_backend_checks_its_own_options(
    installed_plugin: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.html"
    page.write_text(PAGE, encoding="utf-8")
    argv = ["act", "--page", str(page), "--task", "search", "--backend", "fixed-answer"]
    argv += ["--set", "model.options.colour=1", "--token-counter", "estimate"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "model.options for backend 'fixed-answer'" in err and "element_id" in err


def test_a_command_added_through_an_entry_point_runs(
    installed_plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hello"]) == 0
    assert capsys.readouterr().out == "hello from a plug-in\n"


def test_an_unknown_backend_names_the_registered_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["act", "--page", "shop", "--task", "x", "--backend", "nope"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "'nope'" in err and "local" in err and "batch" in err


def test_an_agent_added_through_an_entry_point_takes_its_own_settings(
    installed_plugin: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.html"
    page.write_text(PAGE, encoding="utf-8")
    argv = ["act", "--page", str(page), "--task", "search", "--agent", "first-controls"]
    argv += ["--backend", "fixed-answer", "--set", 'model.options.element_id="n6"']
    argv += ["--set", "agent.options.keep_chars=120", "--token-counter", "estimate", "--json"]
    assert main(argv) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["agent"] == "first-controls" and len(trace["memory"]) <= 120
    assert main([*argv[:-5], "--set", "agent.options.keep=1", "--token-counter", "estimate"]) == 2
    err = capsys.readouterr().err
    assert "agent.options for agent 'first-controls'" in err and "keep" in err


def test_a_built_in_agent_takes_no_unknown_options(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["act", "--page", "shop", "--task", "x", "--agent", "raw-html"]
    assert main([*argv, "--set", "agent.options.colour=1", "--token-counter", "estimate"]) == 2
    assert "agent 'raw-html' takes no options" in capsys.readouterr().err
