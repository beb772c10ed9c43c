"""The live action space in real Chromium: MiniWoB++ pages from the installed ``miniwob``
package and an authored page. Icon controls reach the act prompt with a name and the
scripted ``live-oracle`` policy (tests/live/oracle.py) earns reward 1 through them; a date
typed as the task words it lands; PRESS Enter runs the terminal's command; a SCROLL inside an
element moves it and says when it cannot; several options of a list are selected; a typed
value lands exactly; a read-only picker field fails at once, with its reason; a click that
changes nothing is reported as such; failures are counted by kind."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from live.agents import ScriptedAgent, click, element_id
from live.conftest import browser_settings
from live.live_oracle import NAME, live_oracle
from live.pages import PageServer
from live_runner.actions import FailureKind, LiveAction, LiveOp
from live_runner.executor import Executor
from live_runner.miniwob import read_state, run_miniwob, start_episode, task_page
from live_runner.observe import PageSnapshot, observe
from live_runner.safety import DomainPolicy
from live_runner.session import BrowserSession
from live_runner.settings import LimitSettings, MiniWobSettings, RunSettings
from live_runner.tab import TabEnvironment, run_task
from live_runner.trace import read_steps
from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Action, Observation, Op
from webagent.html.clean import clean_page
from webagent.model.client import Model

pytestmark = pytest.mark.browser

Open = Callable[[str, int], tuple[BrowserSession, str, PageSnapshot]]


@pytest.fixture
def open_task(miniwob_root: Path, make_session: Callable[..., BrowserSession]) -> Open:
    def open_(task: str, seed: int) -> tuple[BrowserSession, str, PageSnapshot]:
        session = make_session(DomainPolicy([], [miniwob_root]))
        utterance = start_episode(session, task_page(miniwob_root, task), seed, max_seconds=60)
        return session, utterance, observe(session, screenshot=False)

    return open_


def _by_hint(snapshot: PageSnapshot, hint: str) -> str:
    """The id of the first element the agents see with ``hint`` (a live mark)."""
    found = re.search(rf'<[-\w]+ id=([^\s>]+)[^<>]* hint="{re.escape(hint)}"', _seen(snapshot))
    assert found, f"no element with hint={hint!r} in {_seen(snapshot)}"
    return found.group(1)


def _seen(snapshot: PageSnapshot) -> str:
    """The page as the agents read it (the cleaner's compact HTML)."""
    return clean_page(snapshot.html).html()


def test_icon_controls_reach_the_prompt_and_the_oracle_earns_reward_one(
    browser: Any, tmp_path: Path
) -> None:
    backend = live_oracle()
    agent = build_agent(AgentSettings(agent="raw-html", context_budget=4096), Model(backend))
    settings = MiniWobSettings(
        tasks=("email-inbox", "social-media", "enter-date"),
        seeds=(0, 2, 5),  # forward, reply, star an email; a menu item and an icon of a tweet
        out_dir=tmp_path / "suite",
        max_steps=6,
        browser=browser_settings(),
    )
    report = run_miniwob(settings, agent, agent_manifest={"model": NAME}, browser=browser)
    assert {t.task: t.success_rate for t in report.tasks} == {
        "email-inbox": 1.0,
        "social-media": 1.0,
        "enter-date": 1.0,
    }
    prompts = "\n".join(r.messages[-1].content for r in backend.requests)
    assert all(r.prompt_version.startswith("act_live@") for r in backend.requests)
    for icon in ("trash", "star", "close email", "reply", "retweet", "like", "more"):
        assert re.search(rf'<span id=\S+ onclick hint="{icon}"></span>', prompts), icon
    episodes = [json.loads(line) for line in (settings.out_dir / "episodes.jsonl").open()]
    dates = [e for e in episodes if e["task"] == "enter-date"]
    for episode in dates:
        steps = read_steps(settings.out_dir / episode["run_dir"])
        typed = steps[0].outcome
        assert typed.ok and typed.action is not None and "/" in typed.action.value
        assert typed.note.startswith("typed as ") and "the date field's format" in typed.note
        assert episode["episode"]["failures"] == {}


def test_press_enter_runs_the_terminals_command(open_task: Open) -> None:
    session, utterance, snap = open_task("terminal", 0)
    assert utterance == "Use the terminal below to delete a file that has no file extension."
    executor = Executor(session)
    field = _by_hint(snap, "terminal target")
    assert executor.execute(LiveAction(op=LiveOp.TYPE, element_id=field, value="ls"), snap).ok
    before = _seen(observe(session, screenshot=False))
    done = executor.execute(LiveAction(op=LiveOp.PRESS, element_id=field, value="enter"), snap)
    assert done.ok and done.describe().endswith("-> PRESS: Enter")
    listing = _seen(observe(session, screenshot=False))
    assert "<span id" in listing and listing != before
    files = re.search(r">ls</span><span id=\S+>([^<]+)</span>", listing)
    assert files, listing
    bare = next(name for name in files.group(1).split() if "." not in name)
    assert executor.execute(LiveAction(op=LiveOp.TYPE, element_id=field, value=f"rm {bare}"), snap)
    assert executor.execute(LiveAction(op=LiveOp.PRESS, value="Enter"), snap).ok  # on the page
    state = read_state(session)
    assert state.done and state.raw_reward == 1.0


def test_scroll_inside_an_element_and_at_its_end(open_task: Open) -> None:
    for seed in range(6):
        session, utterance, snap = open_task("scroll-text-2", seed)
        if "bottom" in utterance:
            break
        session.close()
    executor = Executor(session)
    area = next(i for i, e in snap.elements.items() if e.tag == "textarea")
    moved = executor.execute(LiveAction(op=LiveOp.SCROLL, element_id=area, value="down"), snap)
    assert moved.ok and not moved.no_effect
    for _ in range(10):
        last = executor.execute(LiveAction(op=LiveOp.SCROLL, element_id=area, value="down"), snap)
        if last.no_effect:
            break
    assert last.no_effect and "already scrolled to the bottom" in last.describe()
    top = session.page.evaluate("document.querySelector('textarea').scrollTop")
    assert top > 0
    submit = element_id(snap.html, "Submit", "button")
    assert executor.execute(LiveAction(op=LiveOp.CLICK, element_id=submit), snap).ok
    assert read_state(session).raw_reward == 1.0


def test_several_options_of_a_list_are_selected(open_task: Open) -> None:
    session, utterance, snap = open_task("click-scroll-list", 0)
    names = re.match(r"Select (.+) from the scroll list and click Submit\.", utterance)
    assert names, utterance
    listbox = next(i for i, e in snap.elements.items() if e.tag == "select")
    value = "|".join(names.group(1).split(", "))
    executor = Executor(session)
    assert executor.execute(LiveAction(op=LiveOp.SELECT, element_id=listbox, value=value), snap).ok
    submit = element_id(snap.html, "Submit", "button")
    assert executor.execute(LiveAction(op=LiveOp.CLICK, element_id=submit), snap).ok
    assert read_state(session).raw_reward == 1.0


def test_a_value_lands_exactly_and_an_empty_one_clears(open_task: Open) -> None:
    session, _, snap = open_task("copy-paste", 0)
    source = session.page.evaluate("document.querySelector('#to-copy').value")
    field = next(i for i, e in snap.elements.items() if e.tag == "input")
    executor = Executor(session)
    executor.execute(LiveAction(op=LiveOp.TYPE, element_id=field, value="wrong"), snap)
    cleared = executor.execute(LiveAction(op=LiveOp.TYPE, element_id=field, value=""), snap)
    assert cleared.ok and session.page.input_value("#answer-input") == ""
    assert executor.execute(LiveAction(op=LiveOp.TYPE, element_id=field, value=source), snap).ok
    assert session.page.input_value("#answer-input") == source  # spaces and all
    submit = element_id(snap.html, "Submit", "button")
    assert executor.execute(LiveAction(op=LiveOp.CLICK, element_id=submit), snap).ok
    assert read_state(session).raw_reward == 1.0


def test_a_read_only_picker_field_fails_at_once_with_its_reason(open_task: Open) -> None:
    session, utterance, snap = open_task("choose-date", 0)
    field = next(i for i, e in snap.elements.items() if e.tag == "input")
    wanted = re.search(r"Select (\S+) as the date", utterance)
    assert wanted, utterance
    action = LiveAction(op=LiveOp.TYPE, element_id=field, value=wanted.group(1))
    started = time.perf_counter()
    done = Executor(session).execute(action, snap)
    assert time.perf_counter() - started < session.settings.action_timeout_s
    assert done.failure is FailureKind.NOT_EDITABLE and "read-only" in done.message


def test_a_click_that_changes_nothing_is_reported_as_such(
    pages: PageServer, make_session: Callable[..., BrowserSession]
) -> None:
    session = make_session()
    session.goto(f"{pages.origin}/effects.html")
    env = TabEnvironment(session, Executor(session))
    page = env.observe()
    time.sleep(0.7)  # the agent thinks; the page's clock ticks meanwhile
    note = LiveAction(op=LiveOp.CLICK, element_id=_note(page))
    still = env.act(note, "", page).outcome
    assert still.ok and still.no_effect
    assert still.describe().endswith("-> CLICK (no visible effect: the page did not change)")
    page = env.observe()
    time.sleep(0.7)
    toggle = LiveAction(op=LiveOp.CLICK, element_id=element_id(page.html, "Off", "button"))
    changed = env.act(toggle, "", page).outcome
    assert changed.ok and not changed.no_effect
    page = env.observe()
    field = LiveAction(op=LiveOp.CLICK, element_id=element_id(page.html, "Name", "input"))
    focused = env.act(field, "", page).outcome  # focusing a field shows nothing: not judged
    assert focused.ok and not focused.no_effect


def _note(page: PageSnapshot) -> str:
    return next(i for i, e in page.elements.items() if e.text.startswith("Nothing happens"))


def _thinking(
    decide: Callable[[Observation], Action | None],
) -> Callable[[Observation], Action | None]:
    def slow(observation: Observation) -> Action | None:
        time.sleep(0.7)  # as a model would: the page's clock ticks meanwhile
        return decide(observation)

    return slow


def test_failures_are_counted_by_kind_per_step_and_per_episode(
    browser: Any, pages: PageServer, tmp_path: Path
) -> None:
    agent = ScriptedAgent(
        [
            None,  # no valid action
            Action(element_id="424242", op=Op.CLICK),  # an id not on the page
            _thinking(click("Nothing happens when you click this sentence.")),  # no effect
            click("Off", "button"),
        ]
    )
    settings = RunSettings(
        url=f"{pages.origin}/effects.html",
        task="Switch it on",
        out_dir=tmp_path / "run",
        limits=LimitSettings(max_steps=4, max_seconds=120.0),
        browser=browser_settings(),
    )
    result = run_task(settings, agent, browser=browser)
    assert result.episode["failures"] == {
        "element_not_found": 1,
        "invalid_action": 1,
        "no_effect": 1,
    }
    kinds = [s.outcome.kind() for s in read_steps(settings.out_dir)]
    assert kinds == [
        FailureKind.INVALID_ACTION,
        FailureKind.ELEMENT_NOT_FOUND,
        FailureKind.NO_EFFECT,
        None,
    ]
    assert agent.seen[0].actions == agent.seen[-1].actions and Op.PRESS in agent.seen[0].actions
    assert (
        agent.seen[-1].previous_actions[-1].endswith("(no visible effect: the page did not change)")
    )
