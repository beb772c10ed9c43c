"""The public API: ``import webagent`` gives what a library user needs, ``__all__`` changes
only on purpose, models and caches are context managers, and the README example runs."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import webagent
from webagent._moved import MOVED, new_name

ROOT = Path(__file__).resolve().parent.parent

#: change this list only together with the API (and say so in the changelog)
PINNED = [
    "Action",
    "Agent",
    "AgentSettings",
    "AgentSpec",
    "ConfigError",
    "DatasetError",
    "EvalSection",
    "FatalModelError",
    "Fragment",
    "GistCache",
    "GistCacheSettings",
    "LiveSection",
    "LookupRound",
    "MissingDependencyError",
    "Model",
    "ModelError",
    "ModelSettings",
    "ModelTimeoutError",
    "Observation",
    "Op",
    "OpenAgent",
    "OutputParseError",
    "PageError",
    "PromptError",
    "RateLimitError",
    "ReplayMissError",
    "RunConfig",
    "SegmentSettings",
    "SegmentedPage",
    "StepTrace",
    "TransientModelError",
    "WebAgentError",
    "__version__",
    "agent_names",
    "build_agent",
    "build_model",
    "load_config_file",
    "open_agent",
    "register_agent",
    "resolve_config",
    "segment_html",
]
TINY_PAGE = (
    "<html><body><h1>Flights</h1><form><label>From <input name='from'></label>"
    "<label>To <input name='to'></label><button type='submit'>Search flights</button>"
    "</form></body></html>"
)


def test_all_is_pinned() -> None:
    assert sorted(webagent.__all__) == sorted(PINNED)
    missing = [name for name in webagent.__all__ if not hasattr(webagent, name)]
    assert missing == []


def test_segment_html_and_errors_from_the_top_level() -> None:
    page = webagent.segment_html(TINY_PAGE, webagent.SegmentSettings())
    assert isinstance(page, webagent.SegmentedPage)
    assert any("Search flights" in f.text for f in page.fragments)
    assert issubclass(webagent.ConfigError, webagent.WebAgentError)
    with pytest.raises(webagent.ConfigError, match="unknown agent 'bogus'"):
        webagent.resolve_config(overrides={"agent": {"agent": "bogus"}})


def test_gist_cache_and_model_are_context_managers(tmp_path: Path) -> None:
    with webagent.GistCache(tmp_path / "g.sqlite") as cache:
        cache.put("k", "a gist")
        assert cache.get("k") == "a gist"
    with pytest.raises(Exception, match="closed"):
        cache.get("k")
    cassette = tmp_path / "c.jsonl"
    cassette.write_text('{"kind": "header", "model": "m", "context_window": 2048}\n')
    settings = webagent.ModelSettings(backend="replay", replay_from=cassette)
    with webagent.build_model(settings) as model:
        assert model.name == "m"


def readme_python_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("From Python") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README has no Python example after 'From Python'"
    return match.group(1)


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.timeout(900)  # the embedded model on 2 shared cores
def test_readme_example_runs_as_written(
    local_model_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = readme_python_example()
    assert "import webagent" in code and "with webagent." in code
    monkeypatch.chdir(tmp_path)
    (tmp_path / "page.html").write_text(TINY_PAGE, encoding="utf-8")
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(code, "README.md", "exec"), namespace)
    trace = namespace["trace"]
    assert isinstance(trace, webagent.StepTrace)
    assert trace.agent == "readagent-p" and trace.n_fragments >= 1
    assert (tmp_path / ".cache" / "gists.sqlite").is_file()


@pytest.fixture(autouse=True)
def _old_names_not_imported_yet() -> Iterator[None]:
    """Each test imports the old names afresh (a name imported once is not warned again)."""

    def forget() -> None:
        for name in [m for m in sys.modules if new_name(m) is not None]:
            del sys.modules[name]

    forget()
    yield
    forget()


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_still_imports_under_its_old_name_for_one_release(old: str) -> None:
    new = new_name(old)
    assert new is not None
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_a_moved_package_s_submodules_are_its_new_modules() -> None:
    with pytest.warns(DeprecationWarning):
        old = importlib.import_module("webagent.browsergym.settings")
    assert old is importlib.import_module("live_runner.browsergym.settings")
