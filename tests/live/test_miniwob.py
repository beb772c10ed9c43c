"""MiniWoB++: the executor proven on real task pages independently of any model, the suite
runner with a scripted agent, and (slow) the whole suite with the embedded model."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from live.agents import ScriptedAgent, element_id
from live.conftest import browser_settings
from live_runner.actions import LiveAction, LiveOp
from live_runner.executor import Executor
from live_runner.miniwob import (
    read_state,
    run_miniwob,
    start_episode,
    task_page,
)
from live_runner.observe import PageSnapshot, observe
from live_runner.safety import DomainPolicy
from live_runner.session import BrowserSession
from live_runner.settings import MiniWobSettings
from webagent.contracts import Action, Observation, Op

pytestmark = pytest.mark.browser

Plan = Callable[[str, PageSnapshot], list[LiveAction]]


def _quoted(utterance: str) -> str:
    return re.findall(r'"([^"]*)"', utterance)[0]


def _click(snapshot: PageSnapshot, text: str, tag: str) -> LiveAction:
    return LiveAction(op=LiveOp.CLICK, element_id=element_id(snapshot.html, text, tag))


def plan_click_button(utterance: str, snap: PageSnapshot) -> list[LiveAction]:
    return [_click(snap, _quoted(utterance), "button")]


def plan_enter_text(utterance: str, snap: PageSnapshot) -> list[LiveAction]:
    field = next(i for i, e in snap.elements.items() if e.tag == "input")
    return [
        LiveAction(op=LiveOp.TYPE, element_id=field, value=_quoted(utterance)),
        _click(snap, "Submit", "button"),
    ]


def plan_choose_list(utterance: str, snap: PageSnapshot) -> list[LiveAction]:
    wanted = re.match(r"Select (.+) from the list", utterance)
    assert wanted is not None, utterance
    listbox = next(i for i, e in snap.elements.items() if e.tag == "select")
    return [
        LiveAction(op=LiveOp.SELECT, element_id=listbox, value=wanted.group(1)),
        _click(snap, "Submit", "button"),
    ]


def plan_click_checkboxes(utterance: str, snap: PageSnapshot) -> list[LiveAction]:
    listed = re.match(r"Select (.*) and click Submit", utterance)
    assert listed is not None, utterance
    words = [] if listed.group(1) == "nothing" else re.split(r", (?:and )?| and ", listed.group(1))
    boxes = [_click(snap, word.strip(), "input") for word in words]
    return [*boxes, _click(snap, "Submit", "button")]


PLANS: dict[str, Plan] = {
    "click-button": plan_click_button,
    "enter-text": plan_enter_text,
    "choose-list": plan_choose_list,
    "click-checkboxes": plan_click_checkboxes,
}


@pytest.mark.parametrize("task", sorted(PLANS))
def test_executor_solves_miniwob_tasks_without_a_model(
    task: str, miniwob_root: Path, make_session: Callable[..., BrowserSession]
) -> None:
    page = task_page(miniwob_root, task)
    for seed in (1, 2):
        session = make_session(DomainPolicy([], [miniwob_root]))
        utterance = start_episode(session, page, seed, max_seconds=60)
        snapshot = observe(session, screenshot=False)
        executor = Executor(session)
        for action in PLANS[task](utterance, snapshot):
            outcome = executor.execute(action, snapshot)
            assert outcome.ok, (task, seed, utterance, outcome.describe())
        state = read_state(session)
        assert state.done and state.raw_reward == 1.0, (task, seed, utterance, state)
        assert state.reward > 0


def _solve_click_button(observation: Observation) -> Action:
    target = _quoted(observation.task)
    return Action(element_id=element_id(observation.html, target, "button"), op=Op.CLICK)


def test_suite_runs_episodes_reports_and_resumes(
    browser: Any, miniwob_root: Path, tmp_path: Path
) -> None:
    settings = MiniWobSettings(
        tasks=("click-button", "focus-text"),
        seeds=(3, 4),
        out_dir=tmp_path / "suite",
        max_steps=2,
        browser=browser_settings(),
    )

    # solves click-button; on focus-text it finds no button and produces no valid action
    def decide(observation: Observation) -> Action | None:
        return _solve_click_button(observation) if "button" in observation.task else None

    agent = ScriptedAgent([decide] * 10)
    report = run_miniwob(settings, agent, browser=browser)
    by_task = {t.task: t for t in report.tasks}
    assert by_task["click-button"].success_rate == 1.0 and by_task["click-button"].episodes == 2
    assert by_task["focus-text"].success_rate == 0.0 and by_task["focus-text"].mean_steps == 2
    assert report.success_rate == 0.5
    episodes = [json.loads(line) for line in (settings.out_dir / "episodes.jsonl").open()]
    assert [(e["task"], e["seed"]) for e in episodes] == [
        ("click-button", 3), ("click-button", 4), ("focus-text", 3), ("focus-text", 4)
    ]  # fmt: skip
    first = settings.out_dir / episodes[0]["run_dir"]
    assert (first / "steps.jsonl").read_text().count("\n") == 1
    assert json.loads((first / "summary.json").read_text())["status"] == "done"
    table = (settings.out_dir / "table.md").read_text()
    assert "| click-button | 2 | 1.00 |" in table
    # a rerun skips every finished episode
    again = ScriptedAgent([])
    assert run_miniwob(settings, again, browser=browser).success_rate == 0.5
    assert again.seen == []
