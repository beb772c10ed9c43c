"""The accessibility tree in real Chromium: a saved page rendered offline (``--render``) and a
live tab (CDP) give the tree the ``axtree`` agent reads, its nodes tied to the page's ids;
a small budget cuts it and says so; MiniWoB episodes through the live tab earn their reward
with a scripted oracle that reads the tree (``miniwob-oracle``, named by its policy).
Skips only when Playwright or Chromium is truly absent."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browsergym_agent.policy import miniwob_oracle
from lxml import html as lxml_html

from live.agents import element_id
from live.conftest import browser_settings
from live.pages import PageServer
from live.rendering import renderer_or_skip
from live_runner.miniwob import html_root, run_miniwob
from live_runner.observe import observe
from live_runner.render import PageRenderer
from live_runner.session import BrowserSession
from live_runner.settings import MiniWobSettings
from live_runner.trace import read_steps
from webagent.agents.axtree import tree_ids
from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation, RenderedPage
from webagent.html.axtree import flatten_axtree
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "data"
PAGE = DATA / "render" / "axtree_page.html"
LONG_PAGE = DATA / "pages" / "shop_long.html"
_LINE_ID = re.compile(r"^\t*\[id=([^\]]+)\] ")


@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with renderer_or_skip() as opened:
        yield opened


@pytest.fixture(scope="module")
def rendered(renderer: PageRenderer) -> RenderedPage:
    return renderer.render_page(PAGE.read_text(encoding="utf-8"), PAGE.name, axtree=True)


def test_a_rendered_page_s_tree_names_roles_names_ids_and_depth(rendered: RenderedPage) -> None:
    assert rendered.axtree is not None and rendered.axtree.source == "render"
    lines = flatten_axtree(rendered.axtree).split("\n")
    assert lines[0].startswith("RootWebArea 'Garden club - join'")
    # depth: one tab per shown ancestor (banner > navigation > link; main > form > controls)
    for line in (
        "\t[id=n7] banner '', visible",
        "\t\t[id=n8] navigation 'Main', visible",
        "\t\t\t[id=n9] link 'Home', clickable, visible, url='http://saved-page.invalid/'",
        "\t[id=n11] main ''",  # taller than the viewport: less than half of it is in view
        "\t\t[id=n12] heading 'Join the garden club', visible",
        "\t\t[id=n13] form '', visible",
        "\t\t\t[id=n15] textbox 'Email', clickable, visible, required",
        "\t\t\t[id=n17] textbox 'Password' value='********', clickable, visible",
        "\t\t\t[id=n19] checkbox 'Send me the newsletter', clickable, visible, checked='true'",
        "\t\t\t[id=n24] button 'Create account', clickable, visible",
        "\t\t\t[id=n31] link 'Terms', clickable, url='http://saved-page.invalid/terms'",
    ):
        assert line in lines, line
    combobox = next(line for line in lines if "combobox" in line)
    assert combobox.startswith("\t\t\t[id=n21] combobox 'Plot size' value='Large', visible")
    text = "\n".join(lines)
    assert "Hidden offer" not in text  # display:none is not in the tree
    assert "hunter2" not in text and "••" not in text  # a password is masked, its length too
    assert all(not line.lstrip("\t").startswith("StaticText [") for line in lines)


def test_every_id_in_the_tree_is_the_page_s_id_for_that_element(rendered: RenderedPage) -> None:
    assert rendered.axtree is not None
    root = lxml_html.fromstring(rendered.html)
    by_id = {e.get("backend_node_id"): e for e in root.iter() if e.get("backend_node_id")}
    ids = tree_ids(rendered.axtree)
    assert ids and set(ids) <= set(by_id)  # only ids of elements the page renders
    lines = flatten_axtree(rendered.axtree).split("\n")
    for name, role, tag in (
        ("Create account", "button", "button"),
        ("Terms", "link", "a"),
        ("Email", "textbox", "input"),
    ):
        line = next(x for x in lines if f"] {role} '{name}'" in x)
        found = _LINE_ID.match(line)
        assert found is not None, line
        assert by_id[found.group(1)].tag == tag
        assert found.group(1) == element_id(rendered.html, name, tag)  # as a person finds it


def test_a_live_tab_s_tree_carries_the_live_ids_frames_and_shadow_roots(
    make_session: Callable[..., BrowserSession], pages: PageServer
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/widgets.html")
    snapshot = observe(session, screenshot=False, axtree=True)
    assert snapshot.axtree is not None and snapshot.axtree.source == "cdp"
    assert observe(session, screenshot=False).axtree is None  # only when asked for
    ids = tree_ids(snapshot.axtree)
    assert set(ids) <= set(snapshot.elements)  # every id is one the executor acts on
    lines = flatten_axtree(snapshot.axtree).split("\n")

    def line_of(name: str, role: str) -> str:
        return next(x for x in lines if f"] {role} '{name}'" in x)

    for name, role in (("Join", "button"), ("Sign out", "button"), ("Next page", "link")):
        found = _LINE_ID.match(line_of(name, role))
        assert found is not None and found.group(1) in snapshot.elements
        assert snapshot.label(found.group(1)).text == name  # type: ignore[union-attr]
    iframe = line_of("Newsletter", "Iframe")
    join = line_of("Join", "button")
    assert len(join) - len(join.lstrip("\t")) > len(iframe) - len(iframe.lstrip("\t"))
    assert lines.index(join) > lines.index(iframe)  # the frame's tree hangs under its iframe
    assert ", visible" in line_of("Dismiss tip", "button")
    assert ", clickable" in line_of("Dismiss tip", "button")  # its onclick listener


def test_a_small_budget_cuts_the_tree_at_whole_lines_and_says_so(
    renderer: PageRenderer,
) -> None:
    page = renderer.render_page(LONG_PAGE.read_text(encoding="utf-8"), "long", axtree=True)
    assert page.axtree is not None
    whole = flatten_axtree(page.axtree)
    first_id = _LINE_ID.search(whole.split("\n", 2)[1])
    assert first_id is not None
    answer = f'{{"element_id": "{first_id.group(1)}", "op": "CLICK", "value": ""}}'
    backend = ScriptedBackend(lambda request: answer, context_window=4096)
    model = Model(backend, sleep=lambda _: None)
    budget = 1200
    agent = build_agent(AgentSettings(agent="axtree", context_budget=budget), model)
    trace = agent.step(Observation(task="Open the first link", html=page.html, axtree=page.axtree))
    assert trace.action is not None and trace.action.element_id == first_id.group(1)
    shown_lines = trace.memory.split("\n")
    all_lines = whole.split("\n")
    assert shown_lines == all_lines[: len(shown_lines)]  # the beginning, whole lines
    assert trace.memory_edits.lines_cut == len(all_lines) - len(shown_lines) > 0
    assert 0 < trace.timings["kept_fraction"] < 1
    assert trace.page_tokens == model.count_tokens(whole) > budget
    assert set(trace.shown_element_ids) == set(tree_ids(page.axtree)) & {
        m.group(1) for m in map(_LINE_ID.match, shown_lines) if m
    }
    (request,) = backend.requests
    assert backend.count_message_tokens(request.messages) + request.max_tokens <= budget
    assert trace.memory in request.messages[-1].content  # the tree is the act prompt's page


@pytest.fixture(scope="module")
def miniwob_root() -> Path:
    pytest.importorskip("miniwob", reason="pip install 'readagent-web[live]'")
    return html_root(MiniWobSettings(tasks=("click-button",), seeds=(0,), out_dir=Path(".")))


def test_a_scripted_oracle_reading_the_live_tree_solves_miniwob(
    browser: Any, miniwob_root: Path, tmp_path: Path
) -> None:
    tasks = ("click-test", "click-button", "enter-text")
    settings = MiniWobSettings(
        tasks=tasks, seeds=(1,), out_dir=tmp_path, max_steps=4, browser=browser_settings()
    )
    model = Model(miniwob_oracle(), sleep=lambda _s: None)
    agent = build_agent(AgentSettings(agent="axtree"), model)
    report = run_miniwob(settings, agent, browser=browser)
    assert [(e.task, e.success, e.status) for e in report.episodes] == [
        (task, True, "done") for task in tasks
    ]
    typed = read_steps(tmp_path / report.episodes[2].run_dir)
    assert [s.action.op.value for s in typed if s.action] == ["TYPE", "CLICK"]
    first = typed[0].agent
    assert first is not None and first.agent == "axtree" and "[id=" in first.memory
    assert "<" not in first.memory and "axtree" in typed[0].files
