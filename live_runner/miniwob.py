"""MiniWoB++ episodes with any agent: a real live benchmark that runs offline.

Task pages come from the ``miniwob`` package (``html/miniwob/<task>.html``) over ``file://``.
An episode: open the page, wait for its sync cover, seed ``Math.seedrandom``, set
``core.EPISODE_MAX_TIME``, ``core.startEpisodeReal()``; the instruction is
``core.getUtterance()``; after each action the loop reads ``WOB_DONE_GLOBAL``,
``WOB_REWARD_GLOBAL`` and ``WOB_RAW_REWARD_GLOBAL``. An episode succeeds when its raw reward
is positive. Results go to ``episodes.jsonl`` (one line per episode, so a rerun skips what is
done), ``report.json`` and ``table.md``; each episode has a full trace folder.
"""

from __future__ import annotations

import importlib.util
import json
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from live_runner.errors import LiveRunnerError, MiniWobError
from live_runner.executor import Executor
from live_runner.jsfiles import load_js
from live_runner.loop import Episode, EpisodeHooks
from live_runner.safety import DomainPolicy, NavigationGuard
from live_runner.session import BrowserSession, open_browser
from live_runner.settings import LimitSettings, MiniWobSettings
from live_runner.trace import RunTracer
from webagent.contracts import Agent
from webagent.textfiles import read_models

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SCHEMA_VERSION = 1
EPISODES_FILE = "episodes.jsonl"
_READY_TIMEOUT_S = 5.0


class MiniWobState(BaseModel):
    ready: bool = True
    done: bool = False
    reward: float = 0.0
    raw_reward: float = 0.0
    reason: str | None = None
    utterance: str = ""


class EpisodeResult(BaseModel):
    schema_version: int = SCHEMA_VERSION
    task: str
    seed: int
    utterance: str
    done: bool
    success: bool = Field(description="raw reward > 0")
    reward: float = Field(description="MiniWoB's reward (time-discounted on some tasks)")
    raw_reward: float
    steps: int
    status: str = Field(description="done, max_steps, max_seconds, ... or error")
    elapsed_s: float
    run_dir: str
    error: str | None = None


class TaskSummary(BaseModel):
    task: str
    episodes: int
    success_rate: float
    mean_reward: float
    mean_steps: float
    errors: int = 0


class SuiteReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    settings: dict[str, Any]
    agent: dict[str, Any] = Field(default_factory=dict)
    tasks: list[TaskSummary]
    episodes: list[EpisodeResult]
    success_rate: float
    mean_reward: float


def html_root(settings: MiniWobSettings) -> Path:
    """The folder of task pages: the setting, else the installed ``miniwob`` package's."""
    if settings.html_root is not None:
        return settings.html_root
    spec = importlib.util.find_spec("miniwob")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise MiniWobError(
            "the miniwob package is not installed: pip install 'readagent-web[live]'"
        )
    return Path(locations[0]) / "html"


def task_page(root: Path, task: str) -> Path:
    page = root / "miniwob" / f"{task}.html"
    if not page.is_file():
        known = sorted(p.stem for p in (root / "miniwob").glob("*.html"))
        close = [k for k in known if task.split("-", maxsplit=1)[0] in k][:8]
        raise MiniWobError(f"no MiniWoB++ task {task!r} in {root}; similar: {close or known[:8]}")
    return page


def start_episode(session: BrowserSession, page: Path, seed: int, max_seconds: float) -> str:
    """Open a task page, start a seeded episode and return its instruction."""
    session.goto(page.as_uri())
    main = session.page
    main.wait_for_selector("#sync-task-cover", state="attached", timeout=_READY_TIMEOUT_S * 1000)
    main.evaluate(load_js("miniwob_start"), [seed, int(max_seconds * 1000)])
    deadline = time.monotonic() + _READY_TIMEOUT_S
    state = read_state(session)
    while not state.ready and time.monotonic() < deadline:
        main.wait_for_timeout(50)
        state = read_state(session)
    if not state.ready or not state.utterance:
        raise MiniWobError(f"{page.stem} (seed {seed}) did not start an episode")
    session.settle()
    return state.utterance


def read_state(session: BrowserSession) -> MiniWobState:
    return MiniWobState.model_validate(session.page.evaluate(load_js("miniwob_state")))


def run_suite(
    settings: MiniWobSettings,
    agent: Agent,
    *,
    agent_manifest: dict[str, Any] | None = None,
    browser: Browser | None = None,
) -> SuiteReport:
    """Every task × seed once (skipping episodes already in ``episodes.jsonl``)."""
    root = html_root(settings)
    pages = {task: task_page(root, task) for task in settings.tasks}
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    done = _done_episodes(settings.out_dir)
    with ExitStack() as stack:
        if browser is None:
            browser = stack.enter_context(open_browser(settings.browser))
        for task, seed in ((t, s) for t in settings.tasks for s in settings.seeds):
            if (task, seed) in done:
                continue
            result = _run_episode(
                settings, browser, agent, page=pages[task], seed=seed, agent_manifest=agent_manifest
            )
            _append(settings.out_dir / EPISODES_FILE, result)
    episodes = [
        e for e in _read_episodes(settings.out_dir) if e.task in pages and e.seed in settings.seeds
    ]
    report = summarise(settings, episodes, agent_manifest or {})
    (settings.out_dir / "report.json").write_text(report.model_dump_json(indent=2), "utf-8")
    (settings.out_dir / "table.md").write_text(format_table(report), "utf-8")
    return report


def _run_episode(
    settings: MiniWobSettings,
    browser: Browser,
    agent: Agent,
    *,
    page: Path,
    seed: int,
    agent_manifest: dict[str, Any] | None,
) -> EpisodeResult:
    run_dir = settings.out_dir / page.stem / f"seed-{seed}"
    policy = DomainPolicy([], [page.parent.parent])
    session = BrowserSession(browser, settings.browser, NavigationGuard(policy))
    started = time.monotonic()
    try:
        utterance = start_episode(session, page, seed, settings.episode_max_seconds)
        tracer = RunTracer(run_dir)
        tracer.start(_manifest(settings, page, seed, utterance, agent_manifest))
        hooks = EpisodeHooks(
            after_step=lambda: read_state(session).model_dump(),
            is_done=lambda info: bool(info.get("done")),
        )
        limits = LimitSettings(max_steps=settings.max_steps, max_seconds=None)
        result = Episode(session, Executor(session), agent, utterance, limits, tracer, hooks).run()
        state = read_state(session)
        return EpisodeResult(
            task=page.stem,
            seed=seed,
            utterance=utterance,
            done=state.done,
            success=state.done and state.raw_reward > 0,
            reward=state.reward if state.done else 0.0,
            raw_reward=state.raw_reward if state.done else 0.0,
            steps=result.steps,
            status=result.status.value,
            elapsed_s=time.monotonic() - started,
            run_dir=run_dir.relative_to(settings.out_dir).as_posix(),
        )
    except LiveRunnerError as exc:
        return EpisodeResult(
            task=page.stem, seed=seed, utterance="", done=False, success=False, reward=0.0,
            raw_reward=0.0, steps=0, status="error", elapsed_s=time.monotonic() - started,
            run_dir=run_dir.relative_to(settings.out_dir).as_posix(), error=str(exc),
        )  # fmt: skip
    finally:
        session.close()


def _manifest(
    settings: MiniWobSettings,
    page: Path,
    seed: int,
    utterance: str,
    agent_manifest: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "kind": "miniwob-episode",
        "task": utterance,
        "url": page.as_uri(),
        "miniwob_task": page.stem,
        "seed": seed,
        "settings": settings.manifest(),
        **(agent_manifest or {}),
    }


def _append(path: Path, result: EpisodeResult) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(result.model_dump_json() + "\n")


def _read_episodes(out_dir: Path) -> list[EpisodeResult]:
    # a torn last line of a killed run is skipped: that episode reruns
    return read_models(out_dir / EPISODES_FILE, EpisodeResult)


def _done_episodes(out_dir: Path) -> set[tuple[str, int]]:
    return {(e.task, e.seed) for e in _read_episodes(out_dir) if e.status != "error"}


def summarise(
    settings: MiniWobSettings, episodes: list[EpisodeResult], agent: dict[str, Any]
) -> SuiteReport:
    latest = {(e.task, e.seed): e for e in episodes}  # a rerun replaces an errored episode
    episodes = sorted(latest.values(), key=lambda e: (settings.tasks.index(e.task), e.seed))
    tasks = []
    for task in settings.tasks:
        mine = [e for e in episodes if e.task == task]
        if mine:
            tasks.append(
                TaskSummary(
                    task=task,
                    episodes=len(mine),
                    success_rate=sum(e.success for e in mine) / len(mine),
                    mean_reward=sum(e.reward for e in mine) / len(mine),
                    mean_steps=sum(e.steps for e in mine) / len(mine),
                    errors=sum(e.status == "error" for e in mine),
                )
            )
    n = len(episodes) or 1
    return SuiteReport(
        settings=settings.manifest(),
        agent=agent,
        tasks=tasks,
        episodes=episodes,
        success_rate=sum(e.success for e in episodes) / n,
        mean_reward=sum(e.reward for e in episodes) / n,
    )


def format_table(report: SuiteReport) -> str:
    lines = [
        "| task | episodes | success rate | mean reward | mean steps | errors |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for t in report.tasks:
        lines.append(
            f"| {t.task} | {t.episodes} | {t.success_rate:.2f} | {t.mean_reward:.3f} | "
            f"{t.mean_steps:.1f} | {t.errors} |"
        )
    total = len(report.episodes)
    lines.append(
        f"| **all** | {total} | {report.success_rate:.2f} | {report.mean_reward:.3f} | | |"
    )
    return "\n".join(lines) + "\n"


def report_json(report: SuiteReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2)
