"""MiniWoB++ episodes with any agent: a real live benchmark that runs offline.

Task pages come from the ``miniwob`` package (``html/miniwob/<task>.html``) over ``file://``.
An episode: open the page, wait for its sync cover, seed ``Math.seedrandom``, set
``core.EPISODE_MAX_TIME``, ``core.startEpisodeReal()``; the instruction is
``core.getUtterance()``; after each action the environment reads ``WOB_DONE_GLOBAL``,
``WOB_REWARD_GLOBAL`` and ``WOB_RAW_REWARD_GLOBAL``. An episode succeeds when its raw reward
is positive. The loop is :mod:`live_runner.episode`'s, the tasks × seeds
:mod:`live_runner.suite`'s.
"""

from __future__ import annotations

import importlib.util
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from live_runner.actions import LiveAction
from live_runner.episode import Acted, Ending, EndReason, Episode
from live_runner.errors import LiveRunnerError, MiniWobError
from live_runner.executor import Executor
from live_runner.jsfiles import load_js
from live_runner.records import EpisodeResult
from live_runner.safety import DomainPolicy, NavigationGuard
from live_runner.session import BrowserSession, open_browser
from live_runner.settings import LimitSettings, MiniWobSettings
from live_runner.suite import Progress, SuiteReport, run_suite
from live_runner.tab import TabEnvironment
from live_runner.trace import RunTracer
from webagent.contracts import Agent
from webagent.provenance import provenance

if TYPE_CHECKING:
    from playwright.sync_api import Browser

_READY_TIMEOUT_S = 5.0


class MiniWobState(BaseModel):
    ready: bool = True
    done: bool = False
    reward: float = 0.0
    raw_reward: float = 0.0
    reason: str | None = None
    utterance: str = ""


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


@dataclass
class MiniWobEnvironment(TabEnvironment):
    """A MiniWoB++ task in a tab: the tab's page and actions, and MiniWoB's reward."""

    def act(self, action: LiveAction | None, why_invalid: str, page: Any) -> Acted:
        acted = super().act(action, why_invalid, page)
        state = read_state(self.session)
        acted.info = state.model_dump()
        acted.end = EndReason.DONE if state.done else None
        return acted

    def ending(self) -> Ending:
        state = read_state(self.session)
        return Ending(
            reward=state.reward if state.done else 0.0,
            success=state.done and state.raw_reward > 0,
            info={
                "done": state.done,
                "raw_reward": state.raw_reward if state.done else 0.0,
                "reason": state.reason,
            },
        )


def run_miniwob(
    settings: MiniWobSettings,
    agent: Agent,
    *,
    agent_manifest: dict[str, Any] | None = None,
    browser: Browser | None = None,
    progress: Progress | None = None,
) -> SuiteReport:
    """Every task × seed once (skipping episodes already finished in ``episodes.jsonl``)."""
    root = html_root(settings)
    pages = {task: task_page(root, task) for task in settings.tasks}
    with ExitStack() as stack:
        if browser is None:
            browser = stack.enter_context(open_browser(settings.browser))
        started = browser

        def run_one(task: str, seed: int, run_dir: Path) -> EpisodeResult:
            return _episode(
                settings,
                started,
                agent,
                page=pages[task],
                seed=seed,
                run_dir=run_dir,
                agent_manifest=agent_manifest,
            )

        return run_suite(settings, run_one, agent_manifest, progress)


def _episode(
    settings: MiniWobSettings,
    browser: Browser,
    agent: Agent,
    *,
    page: Path,
    seed: int,
    run_dir: Path,
    agent_manifest: dict[str, Any] | None,
) -> EpisodeResult:
    policy = DomainPolicy([], [page.parent.parent])
    session = BrowserSession(browser, settings.browser, NavigationGuard(policy))
    started = time.monotonic()
    try:
        utterance = start_episode(session, page, seed, settings.episode_max_seconds)
        tracer = RunTracer(run_dir)
        tracer.start(_manifest(settings, page, seed, utterance, agent_manifest))
        limits = LimitSettings(max_steps=settings.max_steps, max_seconds=None)
        env = MiniWobEnvironment(session, Executor(session), axtree=agent.reads_axtree)
        return Episode(env, agent, utterance, limits, tracer).run()
    except LiveRunnerError as exc:
        return EpisodeResult(
            status=EndReason.ERROR.value,
            detail=str(exc),
            elapsed_s=time.monotonic() - started,
            success=False,
        )
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
        **provenance(),
        **(agent_manifest or {}),
    }
