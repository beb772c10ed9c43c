"""Tasks × seeds of a benchmark, each episode once: ``webagent miniwob`` and ``browsergym``.

``OUT/episodes.jsonl`` holds one :class:`~live_runner.records.EpisodeResult` per line,
appended as each episode ends, so the same command again skips what is finished and runs
again, from its seed, what ended in an error or is pending (a model answer still to come: the
next request round replays it, :mod:`live_runner.rounds`, and counts it divergent when the
replay shows the agent another page than the attempt before). ``report.json`` and ``table.md``
summarise the latest result of each episode; success rates are over the episodes that ended
(pending ones are counted apart, never as failures). Each episode has its own run folder
``OUT/<task>/seed-<n>`` (:class:`~live_runner.trace.RunTracer`). ``progress`` gets one line
per episode run and one for the whole run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from live_runner.records import EpisodeResult
from live_runner.rounds import UNFINISHED, follow
from live_runner.settings import SuiteSettings
from live_runner.trace import SUMMARY_FILE, write_summary
from webagent.textfiles import read_models, read_text

#: 3: divergent episodes (request rounds)
SCHEMA_VERSION = 3
EPISODES_FILE = "episodes.jsonl"

#: (task, seed, its run folder) -> how the episode ended; an environment that fails to start
#: is an ``error`` result, not an exception
RunOne = Callable[[str, int, Path], EpisodeResult]
#: where a suite says how far it got (a line at a time)
Progress = Callable[[str], None]


class TaskSummary(BaseModel):
    task: str
    episodes: int
    ended: int = Field(default=0, description="episodes that ended (not pending)")
    success_rate: float = Field(description="of the episodes that ended (not pending)")
    mean_reward: float
    mean_steps: float
    errors: int = 0
    pending: int = 0
    divergent: int = Field(default=0, description="episodes a replay did not reproduce")


class SuiteReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    settings: dict[str, Any]
    agent: dict[str, Any] = Field(default_factory=dict)
    tasks: list[TaskSummary]
    episodes: list[EpisodeResult]
    success_rate: float = Field(description="of the episodes that ended (not pending)")
    mean_reward: float
    pending: int = 0
    divergent: int = Field(default=0, description="episodes a replay did not reproduce")


def episode_dir(out_dir: Path, task: str, seed: int) -> Path:
    return out_dir / task.removeprefix("browsergym/") / f"seed-{seed}"


def run_suite(
    settings: SuiteSettings,
    run_one: RunOne,
    agent_manifest: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> SuiteReport:
    """Every task × seed not finished yet, then the report of all of them."""
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    known = {(e.task, e.seed): e for e in read_episodes(settings.out_dir, every=True)}
    todo = [
        (t, s)
        for t in settings.tasks
        for s in settings.seeds
        if (t, s) not in known or known[(t, s)].status in UNFINISHED
    ]
    tally = _Tally(len(settings.tasks) * len(settings.seeds), len(todo), progress)
    for number, (task, seed) in enumerate(todo, start=1):
        result = _run_episode(settings.out_dir, run_one, task, seed, known.get((task, seed)))
        tally.add(number, result)
    report = summarise(settings, read_episodes(settings.out_dir, every=True), agent_manifest)
    (settings.out_dir / "report.json").write_text(report.model_dump_json(indent=2), "utf-8")
    (settings.out_dir / "table.md").write_text(format_table(report), "utf-8")
    tally.done(report)
    return report


def _run_episode(
    out_dir: Path, run_one: RunOne, task: str, seed: int, previous: EpisodeResult | None
) -> EpisodeResult:
    """One episode from its seed, as the attempt after ``previous``, appended to the record."""
    run_dir = episode_dir(out_dir, task, seed)
    _set_aside(run_dir)
    result = run_one(task, seed, run_dir).model_copy(
        update={"task": task, "seed": seed, "run_dir": _rel(run_dir, out_dir)}
    )
    result = follow(previous, result)
    if (run_dir / SUMMARY_FILE).exists():
        write_summary(run_dir, result)
    with (out_dir / EPISODES_FILE).open("a", encoding="utf-8") as out:
        out.write(result.model_dump_json() + "\n")
    return result


class _Tally:
    """The progress lines: one per episode run, one at the end."""

    def __init__(self, total: int, todo: int, progress: Progress | None) -> None:
        self.total, self.todo, self.progress = total, todo, progress
        self.pending = 0
        if progress is not None:
            progress(f"episodes: {total}, {total - todo} finished before, {todo} to run")

    def add(self, number: int, result: EpisodeResult) -> None:
        self.pending += result.status == "pending"
        if self.progress is None:
            return
        if result.status == "pending":
            how = f"at step {result.steps + 1}: {result.detail[:120]}"
        else:
            how = f"reward {result.reward:.2f} after {result.steps} steps"
        diverged = f", {result.divergences} divergent replays" if result.divergences else ""
        self.progress(
            f"[{number}/{self.todo}] {result.task} seed {result.seed}: {result.status} ({how})"
            f"{diverged}; pending so far {self.pending}"
        )

    def done(self, report: SuiteReport) -> None:
        if self.progress is None:
            return
        ended = len(report.episodes) - report.pending
        self.progress(
            f"episodes: {ended} of {self.total} ended (success rate {report.success_rate:.2f} "
            f"over them), {report.pending} pending, {report.divergent} divergent"
        )


def _set_aside(run_dir: Path) -> None:
    """An earlier attempt's folder: a pending one is replayed from the seed (dropped), an
    errored one is kept beside as ``seed-N.error-K``."""
    if not run_dir.exists():
        return
    summary = run_dir / "summary.json"
    status = json.loads(read_text(summary)).get("status") if summary.exists() else ""
    if status == "pending":
        shutil.rmtree(run_dir)
        return
    k = 1
    while (aside := run_dir.with_name(f"{run_dir.name}.error-{k}")).exists():
        k += 1
    run_dir.rename(aside)


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def read_episodes(out_dir: Path, *, every: bool = False) -> list[EpisodeResult]:
    """The latest result of each episode in ``episodes.jsonl``; the unfinished ones too when
    ``every``. A torn last line (a killed run) is skipped: that episode runs again."""
    latest = {(e.task, e.seed): e for e in read_models(out_dir / EPISODES_FILE, EpisodeResult)}
    return [e for e in latest.values() if every or e.status not in UNFINISHED]


def summarise(
    settings: SuiteSettings, episodes: Iterable[EpisodeResult], agent: dict[str, Any] | None
) -> SuiteReport:
    """The episodes of ``settings``' tasks and seeds, in their order, per task and in all."""
    order: dict[tuple[str, int | None], int] = {
        (t, s): i for i, (t, s) in enumerate((t, s) for t in settings.tasks for s in settings.seeds)
    }
    mine = sorted(
        (e for e in episodes if (e.task, e.seed) in order), key=lambda e: order[(e.task, e.seed)]
    )
    tasks = [_task_summary(t, [e for e in mine if e.task == t]) for t in settings.tasks]
    ended = [e for e in mine if e.status != "pending"]
    return SuiteReport(
        settings=settings.manifest(),
        agent=agent or {},
        tasks=[t for t in tasks if t.episodes],
        episodes=mine,
        success_rate=_share(e.success for e in ended),
        mean_reward=_mean(e.reward for e in ended),
        pending=len(mine) - len(ended),
        divergent=sum(e.divergences > 0 for e in mine),
    )


def _task_summary(task: str, episodes: list[EpisodeResult]) -> TaskSummary:
    ended = [e for e in episodes if e.status != "pending"]
    return TaskSummary(
        task=task,
        episodes=len(episodes),
        ended=len(ended),
        success_rate=_share(e.success for e in ended),
        mean_reward=_mean(e.reward for e in ended),
        mean_steps=_mean(e.steps for e in ended),
        errors=sum(e.status == "error" for e in ended),
        pending=len(episodes) - len(ended),
        divergent=sum(e.divergences > 0 for e in episodes),
    )


def _mean(values: Iterable[float]) -> float:
    found = list(values)
    return sum(found) / len(found) if found else 0.0


def _share(flags: Iterable[bool | None]) -> float:
    return _mean(1.0 if f else 0.0 for f in flags)


def format_table(report: SuiteReport) -> str:
    lines = [
        "| task | episodes | success rate | mean reward | mean steps | errors | pending | "
        "divergent |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in report.tasks:
        figures = _figures(t.ended, t.success_rate, t.mean_reward, f"{t.mean_steps:.1f}")
        lines.append(
            f"| {t.task} | {t.episodes} | {figures} | {t.errors} | {t.pending} | {t.divergent} |"
        )
    errors = sum(t.errors for t in report.tasks)
    ended = len(report.episodes) - report.pending
    figures = _figures(ended, report.success_rate, report.mean_reward, "")
    lines.append(
        f"| **all** | {len(report.episodes)} | {figures} | {errors} | {report.pending} | "
        f"{report.divergent} |"
    )
    return "\n".join(lines) + "\n"


def _figures(ended: int, success_rate: float, mean_reward: float, steps: str) -> str:
    """Success rate, mean reward and steps over the ended episodes; dashes when none ended
    (pending episodes are not failures)."""
    if not ended:
        return " | ".join(["-", "-", "-" if steps else ""])
    return f"{success_rate:.2f} | {mean_reward:.3f} | {steps}"


def report_json(report: SuiteReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2)
