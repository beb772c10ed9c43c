"""Tasks × seeds of a benchmark, each episode once: ``webagent miniwob`` and ``browsergym``.

``OUT/episodes.jsonl`` holds one :class:`~live_runner.records.EpisodeResult` per line,
appended as each episode ends, so the same command again skips what is finished and runs
again, from its seed, what ended in an error or is pending (a model answer still to come).
``report.json`` and ``table.md`` summarise the latest result of each episode; each episode has
its own run folder ``OUT/<task>/seed-<n>`` (:class:`~live_runner.trace.RunTracer`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from live_runner.records import EpisodeResult
from live_runner.settings import SuiteSettings
from webagent.textfiles import read_models

SCHEMA_VERSION = 2
EPISODES_FILE = "episodes.jsonl"
#: the episodes a rerun runs again
UNFINISHED = ("error", "pending")

#: (task, seed, its run folder) -> how the episode ended; an environment that fails to start
#: is an ``error`` result, not an exception
RunOne = Callable[[str, int, Path], EpisodeResult]


class TaskSummary(BaseModel):
    task: str
    episodes: int
    success_rate: float = Field(description="of the episodes that ended (not pending)")
    mean_reward: float
    mean_steps: float
    errors: int = 0
    pending: int = 0


class SuiteReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    settings: dict[str, Any]
    agent: dict[str, Any] = Field(default_factory=dict)
    tasks: list[TaskSummary]
    episodes: list[EpisodeResult]
    success_rate: float = Field(description="of the episodes that ended (not pending)")
    mean_reward: float
    pending: int = 0


def episode_dir(out_dir: Path, task: str, seed: int) -> Path:
    return out_dir / task.removeprefix("browsergym/") / f"seed-{seed}"


def run_suite(
    settings: SuiteSettings, run_one: RunOne, agent_manifest: dict[str, Any] | None = None
) -> SuiteReport:
    """Every task × seed not finished yet, then the report of all of them."""
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    finished = {(e.task, e.seed) for e in read_episodes(settings.out_dir)}
    for task, seed in ((t, s) for t in settings.tasks for s in settings.seeds):
        if (task, seed) in finished:
            continue
        run_dir = episode_dir(settings.out_dir, task, seed)
        _set_aside(run_dir)
        result = run_one(task, seed, run_dir).model_copy(
            update={"task": task, "seed": seed, "run_dir": _rel(run_dir, settings.out_dir)}
        )
        with (settings.out_dir / EPISODES_FILE).open("a", encoding="utf-8") as out:
            out.write(result.model_dump_json() + "\n")
    report = summarise(settings, read_episodes(settings.out_dir, every=True), agent_manifest)
    (settings.out_dir / "report.json").write_text(report.model_dump_json(indent=2), "utf-8")
    (settings.out_dir / "table.md").write_text(format_table(report), "utf-8")
    return report


def _set_aside(run_dir: Path) -> None:
    """An earlier attempt's folder: a pending one is replayed from the seed (dropped), an
    errored one is kept beside as ``seed-N.error-K``."""
    if not run_dir.exists():
        return
    summary = run_dir / "summary.json"
    status = json.loads(summary.read_text("utf-8")).get("status") if summary.exists() else ""
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
    )


def _task_summary(task: str, episodes: list[EpisodeResult]) -> TaskSummary:
    ended = [e for e in episodes if e.status != "pending"]
    return TaskSummary(
        task=task,
        episodes=len(episodes),
        success_rate=_share(e.success for e in ended),
        mean_reward=_mean(e.reward for e in ended),
        mean_steps=_mean(e.steps for e in ended),
        errors=sum(e.status == "error" for e in ended),
        pending=len(episodes) - len(ended),
    )


def _mean(values: Iterable[float]) -> float:
    found = list(values)
    return sum(found) / len(found) if found else 0.0


def _share(flags: Iterable[bool | None]) -> float:
    return _mean(1.0 if f else 0.0 for f in flags)


def format_table(report: SuiteReport) -> str:
    lines = [
        "| task | episodes | success rate | mean reward | mean steps | errors | pending |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in report.tasks:
        lines.append(
            f"| {t.task} | {t.episodes} | {t.success_rate:.2f} | {t.mean_reward:.3f} | "
            f"{t.mean_steps:.1f} | {t.errors} | {t.pending} |"
        )
    errors = sum(t.errors for t in report.tasks)
    lines.append(
        f"| **all** | {len(report.episodes)} | {report.success_rate:.2f} | "
        f"{report.mean_reward:.3f} | | {errors} | {report.pending} |"
    )
    return "\n".join(lines) + "\n"


def report_json(report: SuiteReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2)
