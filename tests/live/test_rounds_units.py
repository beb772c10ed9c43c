"""Request rounds of live episodes, no browser: what counts as a divergent replay, the episode
loop suspending a step the model never answered, a suite that replays pending episodes and
reports them apart from failures, and the exit status and lines of the live commands."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from live.agents import ScriptedAgent
from live_runner.actions import LiveAction, no_action
from live_runner.commands.common import EXIT_PENDING, continue_argv, exit_status
from live_runner.episode import Acted, Ending, EndReason, Episode
from live_runner.observe import PageSnapshot
from live_runner.records import EpisodeResult
from live_runner.rounds import digest, diverged_at, follow
from live_runner.safety import SecretStore
from live_runner.settings import LimitSettings, SuiteSettings
from live_runner.suite import format_table, run_suite
from live_runner.trace import RunTracer
from webagent.cli.batch import EXIT_WAITING
from webagent.contracts import Action, AXNode, AXTree, Observation, Op, StepTrace


def test_a_replay_diverges_at_the_first_step_it_does_not_reproduce() -> None:
    assert diverged_at(["a", "b"], ["a", "b", "c"]) is None  # it went further: faithful
    assert diverged_at(["a", "b"], ["a", "b"]) is None  # suspended at the same step
    assert diverged_at(["a", "b"], ["a", "x", "c"]) == 2  # another page at step 2
    assert diverged_at(["a", "b"], ["a"]) == 2  # ended (or suspended) before step 2
    assert diverged_at([], []) is None


def test_the_browsers_own_node_ids_are_not_a_divergence() -> None:
    def seen(text_box: str, name: str) -> Observation:
        nodes = [
            AXNode(node_id="48", role="StaticText", name=name, children=[text_box]),
            AXNode(node_id=text_box, role="InlineTextBox", name=name),
        ]
        return Observation(task="t", html="<p>x</p>", axtree=AXTree(nodes=nodes, source="cdp"))

    # Chromium numbers a text box anew at each launch: the same page, the same digest
    assert digest(seen("-1000000009", "Myron")) == digest(seen("-1000000011", "Myron"))
    assert digest(seen("-1000000009", "Myron")) != digest(seen("-1000000009", "Myra"))


def test_each_attempt_follows_the_one_before() -> None:
    pending = EpisodeResult(status="pending", observed=["a", "b"])
    assert follow(None, pending) == pending
    same = follow(pending, EpisodeResult(status="done", observed=["a", "b", "c"]))
    assert (same.attempts, same.divergences, same.diverged_at) == (2, 0, None)
    other = follow(pending, EpisodeResult(status="pending", observed=["a", "z"]))
    assert (other.attempts, other.divergences, other.diverged_at) == (2, 1, 2)
    later = follow(other, EpisodeResult(status="done", observed=["a", "z", "y"]))
    assert (later.attempts, later.divergences, later.diverged_at) == (3, 1, 2)  # carried
    errored = EpisodeResult(status="error", observed=["q"])
    assert follow(errored, EpisodeResult(status="done", observed=["a"])).divergences == 0


@dataclass
class Page:
    """An environment of one static page; each action succeeds and changes nothing."""

    html: str = "<html><body><button backend_node_id='1'>Go</button></body></html>"
    acted: list[LiveAction | None] = field(default_factory=list)
    secrets: SecretStore = field(default_factory=SecretStore)

    def observe(self) -> PageSnapshot:
        return PageSnapshot(url="file:///p.html", title="p", html=self.html, elements={}, frames=[])

    def act(self, action: LiveAction | None, why_invalid: str, page: PageSnapshot) -> Acted:
        self.acted.append(action)
        return Acted(no_action(why_invalid, page.url))

    def ending(self) -> Ending:
        return Ending()


def tracer(run_dir: Path) -> RunTracer:
    started = RunTracer(run_dir)
    started.start({"kind": "test"})
    return started


class Unanswered(ScriptedAgent):
    """Clicks until step ``at``, where the model never answers (``error_class``)."""

    def __init__(self, at: int, error_class: str) -> None:
        super().__init__([Action(element_id="1", op=Op.CLICK)] * 10)
        self.at, self.error_class = at, error_class

    def step(self, observation: Observation) -> StepTrace:
        trace = super().step(observation)
        if len(self.seen) == self.at:
            trace = StepTrace(agent=self.name, error="no answer", error_class=self.error_class)
        return trace


@pytest.mark.parametrize("error_class", ["awaiting_answer", "model_error"])
def test_a_step_the_model_never_answered_suspends_the_episode(
    tmp_path: Path, error_class: str
) -> None:
    env = Page()
    limits = LimitSettings(max_steps=5, max_seconds=None)
    agent = Unanswered(3, error_class)
    result = Episode(env, agent, "press Go", limits, tracer(tmp_path)).run()
    assert result.status == EndReason.PENDING and result.steps == 2
    assert len(env.acted) == 2  # nothing was done on the page for the third step
    assert len(result.observed) == 3  # the suspended step's observation is kept
    assert len(set(result.observed)) == 3  # previous actions are part of what was shown
    again = Episode(Page(), Unanswered(9, error_class), "press Go", limits, tracer(tmp_path / "b"))
    replay = follow(result, again.run())
    assert replay.status == "max_steps" and replay.divergences == 0
    changed = Page(html="<html><body><p>new</p></body></html>")
    other = Episode(changed, Unanswered(9, error_class), "press Go", limits, tracer(tmp_path / "c"))
    assert follow(result, other.run()).diverged_at == 1


def test_a_suite_replays_pending_episodes_and_reports_them_apart(tmp_path: Path) -> None:
    settings = SuiteSettings(tasks=("a", "b"), seeds=(0,), out_dir=tmp_path)
    answered = {"a": 1}  # how many steps each task's episode has answers for

    def run_one(task: str, seed: int, run_dir: Path) -> EpisodeResult:
        steps = answered.get(task, 0)
        observed = [f"{task}{k}" for k in range(steps + 1)]
        if steps >= 2:
            result = EpisodeResult(
                status="done", steps=2, success=True, reward=1, observed=observed
            )
        else:
            result = EpisodeResult(status="pending", steps=steps, detail="waits", observed=observed)
        tracer(run_dir).finish(result)
        return result

    lines: list[str] = []
    first = run_suite(settings, run_one, progress=lines.append)
    assert first.pending == 2 and first.success_rate == 0.0
    assert "| a | 1 | - | - | - | 0 | 1 | 0 |" in format_table(first)
    assert lines[0] == "episodes: 2, 0 finished before, 2 to run"
    assert lines[1].startswith("[1/2] a seed 0: pending (at step 2: waits)")
    assert (
        lines[-1] == "episodes: 0 of 2 ended (success rate 0.00 over them), 2 pending, 0 divergent"
    )

    answered.update(a=2, b=0)
    second = run_suite(settings, run_one, progress=lines.append)
    a, b = second.episodes
    assert (a.status, a.attempts, a.divergences) == ("done", 2, 0)
    assert (b.status, b.attempts, b.divergences) == ("pending", 2, 0)
    assert second.success_rate == 1.0 and second.pending == 1  # over the ended episodes
    summary = json.loads((tmp_path / "a" / "seed-0" / "summary.json").read_text())
    assert summary["attempts"] == 2  # the run folder says what episodes.jsonl says

    third = run_suite(
        settings, lambda t, s, d: run_one(t, s, d).model_copy(update={"observed": ["x"]})
    )
    (b,) = [e for e in third.episodes if e.task == "b"]
    assert (b.attempts, b.divergences, b.diverged_at) == (3, 1, 1)
    assert third.divergent == 1 and "| b | 1 | - | - | - | 0 | 1 | 1 |" in format_table(third)
    assert [e.attempts for e in third.episodes if e.task == "a"] == [2]  # finished: not rerun


def test_the_live_commands_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    done = EpisodeResult(status="done", task="t", seed=0)
    pending = EpisodeResult(status="pending", task="t", seed=1, detail="replay: no answer")
    argv = ["miniwob", "--tasks", "t"]
    assert exit_status([done], None, argv) == 0
    assert exit_status([done, EpisodeResult(status="error")], None, argv) == 1
    assert exit_status([done, pending], EXIT_WAITING, argv) == EXIT_WAITING
    capsys.readouterr()
    assert exit_status([done, pending], None, argv) == EXIT_PENDING
    err = capsys.readouterr().err
    assert "1 episodes pending" in err and "t seed 1 (replay: no answer)" in err
    assert "run them again with: webagent miniwob --tasks t" in err


def test_the_command_that_goes_on_names_the_run_folder() -> None:
    import argparse

    given = argparse.Namespace(argv=["run", "--out", "x"], out=Path("x"))
    assert continue_argv(given, Path("x")) == ["run", "--out", "x"]
    chosen = argparse.Namespace(argv=["run"], out=None)
    assert continue_argv(chosen, Path("runs/live/1")) == ["run", "--out", "runs/live/1"]


def test_a_run_folder_of_another_task_is_not_gone_on_with(tmp_path: Path) -> None:
    from live_runner.errors import LiveRunnerError
    from live_runner.settings import RunSettings
    from live_runner.tab import run_task_again

    RunTracer(tmp_path).start({"task": "book a table", "url": "file:///a.html"})
    settings = RunSettings(url="file:///a.html", task="find the hours", out_dir=tmp_path)
    with pytest.raises(LiveRunnerError, match="holds a run of another task or start URL"):
        run_task_again(settings, ScriptedAgent([]))
