"""Every agent acts on a saved page (no ``backend_node_id``), or says in one line what it needs.

``mindact`` names the page's elements as the cleaner does (``n<k>``, document order) and ranks
them with BM25 (a saved page has no ranker scores); ``raw-html-paper`` reads Mind2Web's
``cleaned_html`` and says so, pointing at ``raw-html``. Through ``webagent act``, on a page
written here and on the real saved pages of ``../shared/pages`` when present."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lxml import etree

import webagent.model.factory
from webagent.cli import build_parser, main
from webagent.contracts import StepTrace
from webagent.html.clean import clean_page, with_ids
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend

SHARED_PAGES = Path(__file__).resolve().parents[3] / "shared" / "pages"
WHATUNI = SHARED_PAGES / "edu__whatuni.com__register.html"

#: a page as a browser saves it: a head of scripts and styles, controls without any id
SIGNUP = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Trailhead - join</title>
<style>body { font-family: sans-serif } .hidden { display: none }</style>
<script>window.dataLayer = []; function track(e) { dataLayer.push(e) }</script>
</head><body>
<header><a href="/">Trailhead</a><nav><a href="/shop">Shop</a><a href="/help">Help</a></nav>
<form action="/search"><input type="search" name="q" placeholder="Search gear">
<button type="submit">Search</button></form></header>
<main><h1>Join Trailhead</h1>
<form action="/join" method="post">
<label>Email <input type="email" name="email" placeholder="you@example.com"></label>
<label>Password <input type="password" name="password"></label>
<label><input type="checkbox" name="news"> Send me the newsletter</label>
<button type="submit">Create account</button>
</form>
<p>Already a member? <a href="/login">Sign in</a></p></main>
<footer><a href="/privacy">Privacy</a><a href="/terms">Terms</a></footer>
</body></html>
"""
_OPTION = re.compile(r"^([A-Z])\. (.*)$", re.MULTILINE)


def choose(wanted: str):  # type: ignore[no-untyped-def]
    """MindAct's answer: the option whose line holds ``wanted`` ("" takes the first), else
    "None of the above"."""

    def answer(request: Request) -> str:
        options = _OPTION.findall(request.messages[-1].content)
        letter = next((k for k, line in options if wanted in line), options[-1][0])
        return json.dumps({"choice": letter, "op": "CLICK", "value": ""})

    return answer


@pytest.fixture
def saved_page(tmp_path: Path) -> Path:
    page = tmp_path / "signup.html"
    page.write_text(SIGNUP, encoding="utf-8")
    return page


def scripted(monkeypatch: pytest.MonkeyPatch, answer) -> ScriptedBackend:  # type: ignore[no-untyped-def]
    """``webagent act``'s model, whatever its settings: ``answer`` as a scripted backend."""
    backend = ScriptedBackend(answer, name="policy")
    build_parser()  # every command's module imported first, so none keeps the patched builder
    build = lambda settings, **_: Model(backend, sleep=lambda _s: None)  # noqa: E731
    monkeypatch.setattr(webagent.model.factory, "build_model", build)
    return backend


def act(
    page: Path, agent: str, task: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, StepTrace]:
    argv = ["act", "--page", str(page), "--agent", agent, "--task", task, "--no-gist-cache"]
    code = main([*argv, "--context-budget", "2048", "--json"])
    return code, StepTrace.model_validate_json(capsys.readouterr().out)


def id_of(html: str, xpath: str) -> str:
    """The id the cleaner gives the element at ``xpath`` (``n<k>`` on a page without ids)."""
    root = etree.fromstring(with_ids(html), etree.HTMLParser())
    return str(root.xpath(xpath)[0].get("backend_node_id"))


def test_mindact_acts_on_a_saved_page_by_the_cleaners_ids(
    saved_page: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = scripted(monkeypatch, choose("Create account"))
    code, trace = act(saved_page, "mindact", "Create an account with my email", capsys)
    assert code == 0 and trace.action is not None, trace.error
    assert trace.action.element_id == id_of(SIGNUP, "//button[text()='Create account']")
    assert trace.timings["ranked_pool"] == 0.0  # BM25: a saved page has no ranker scores
    assert trace.timings["pool_size"] >= 8  # every control of the page is a candidate
    assert set(trace.shown_element_ids) <= set(clean_page(SIGNUP, keep_wrappers=True).ids)
    first = backend.requests[0].messages[-1].content
    assert "<button id=n" in first and "backend_node_id" not in first


def test_raw_html_paper_says_in_one_line_what_it_needs(
    saved_page: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = scripted(monkeypatch, choose(""))
    argv = ["act", "--page", str(saved_page), "--agent", "raw-html-paper", "--task", "Join"]
    assert main([*argv, "--no-gist-cache"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if "no valid action" in line]
    assert len(lines) == 1
    assert "Mind2Web's cleaned_html" in lines[0] and "backend_node_id" in lines[0]
    assert "--agent raw-html," in lines[0] and "gist" not in lines[0]
    assert backend.calls == 0  # no model call for a page it cannot read


@pytest.mark.parametrize("agent", ["mindact", "raw-html-paper"])
def test_on_the_real_saved_page(
    agent: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not WHATUNI.is_file():
        pytest.skip(f"{WHATUNI} (reference pages) is not present")
    backend = scripted(monkeypatch, choose(""))
    code, trace = act(WHATUNI, agent, "Create a Whatuni account for Jane Doe", capsys)
    if agent == "mindact":  # a page of 145 controls: the BM25 top 50, in rounds of 5
        assert code == 0 and trace.action is not None, trace.error
        assert trace.timings["pool_size"] == 50.0
        assert trace.action.element_id in set(clean_page(WHATUNI.read_bytes()).ids)
    else:
        assert code == 1 and trace.action is None
        assert trace.error is not None and "use --agent raw-html," in trace.error
        assert backend.calls == 0


@pytest.mark.llama
def test_mindact_asks_the_embedded_model_about_a_saved_page(
    saved_page: Path, local_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["act", "--page", str(saved_page), "--agent", "mindact", "--task", "Create an account"]
    argv += ["--model-path", str(local_model_path), "--no-gist-cache"]
    code = main([*argv, "--context-budget", "1024", "--json"])  # prompts of ~400 tokens
    trace = StepTrace.model_validate_json(capsys.readouterr().out)
    assert trace.usage["act"].calls >= 2  # the pool's groups of 5 (the model is near chance)
    ids = set(clean_page(SIGNUP, keep_wrappers=True).ids)
    if trace.action is not None:
        assert code == 0 and trace.action.element_id in ids
    else:  # every group answered "None of the above": an answer, not a missing page
        assert code == 1 and trace.error_class == "invalid_output", trace.error
