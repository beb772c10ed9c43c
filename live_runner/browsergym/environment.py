"""A BrowserGym environment as a live environment: ``webagent browsergym``.

For every task × seed (:mod:`live_runner.suite`): ``gym.make(task)``, ``reset(seed)``, then
the one episode loop (:mod:`live_runner.episode`) until BrowserGym ends the episode
(``terminated`` → done, ``truncated``), the agent says STOP, or ``max_steps``. The page the
agent reads is BrowserGym's DOM snapshot with ids = ``bid``\\ s
(:mod:`live_runner.browsergym.observation`); its action goes to BrowserGym as a high-level
action (:mod:`live_runner.browsergym.actions`); BrowserGym's ``last_action_error`` says how it
went. Each episode's run folder is written like a ``webagent run``'s, so ``webagent
live-export`` turns it into Mind2Web records.
"""

from __future__ import annotations

import importlib.util
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from live_runner import changes
from live_runner.actions import LiveAction
from live_runner.browsergym.actions import prepare, sent_outcome
from live_runner.browsergym.agent import action_set
from live_runner.browsergym.browser import browsergym_playwright
from live_runner.browsergym.observation import goal_text, page_from_obs
from live_runner.browsergym.settings import BrowserGymSettings, benchmark
from live_runner.episode import Acted, Ending, EndReason, Episode
from live_runner.observe import PageSnapshot
from live_runner.records import EpisodeResult
from live_runner.safety import SecretStore
from live_runner.settings import LimitSettings
from live_runner.suite import Progress, SuiteReport, run_suite
from live_runner.trace import RunTracer
from webagent.contracts import Agent
from webagent.errors import ConfigError
from webagent.provenance import package_versions, provenance

#: versions recorded with every episode
BROWSERGYM_PACKAGES = (
    "browsergym-core",
    "browsergym-experiments",
    "browsergym-miniwob",
    "browsergym-webarena",
    "browsergym-workarena",
    "browsergym-assistantbench",
    "gymnasium",
    "miniwob",
)


def miniwob_pages_url() -> str:
    """The ``miniwob`` package's task pages as a file:// base URL (ends with ``/``)."""
    spec = importlib.util.find_spec("miniwob")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ConfigError(
            "MiniWoB++ pages: the miniwob package is not installed (pip install "
            "'readagent-web[browsergym]') and MINIWOB_URL is not set"
        )
    return (Path(locations[0]) / "html" / "miniwob").as_uri() + "/"


def import_benchmark(task: str) -> None:
    """Import the package that registers ``task`` with gymnasium (``browsergym.miniwob``...)."""
    name = benchmark(task)
    try:
        if name == "miniwob":
            import browsergym.miniwob
        elif name == "webarena":
            import browsergym.webarena
        elif name == "workarena":
            import browsergym.workarena
        elif name == "assistantbench":
            import browsergym.assistantbench  # noqa: F401
        else:
            raise ConfigError(
                f"{task}: no BrowserGym benchmark {name!r} is known here (miniwob, webarena, "
                "workarena, assistantbench)"
            )
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{task}: BrowserGym's {name!r} tasks are not installed; pip install "
            f"browsergym-{name} (see docs/BROWSERGYM.md)"
        ) from exc


def env_kwargs(settings: BrowserGymSettings, task: str, executable: Path | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"headless": settings.browser.headless, "disable_env_checker": True}
    if executable is not None:
        kwargs["pw_chromium_kwargs"] = {"executable_path": str(executable)}
    if benchmark(task) == "miniwob":
        kwargs["task_kwargs"] = {"base_url": settings.miniwob_url or miniwob_pages_url()}
    return kwargs


@dataclass
class BrowserGymEnvironment:
    """One BrowserGym environment after ``reset``: its last observation is the page."""

    env: Any
    obs: dict[str, Any]
    screenshots: bool = True
    secrets: SecretStore = field(default_factory=SecretStore)
    reward: float = 0.0
    cum_reward: float = 0.0
    terminated: bool = False
    truncated: bool = False

    def observe(self) -> PageSnapshot:
        return page_from_obs(self.obs, screenshot=self.screenshots)

    def act(self, action: LiveAction | None, why_invalid: str, page: PageSnapshot) -> Acted:
        """Send ``action`` to BrowserGym; an action that left the page as it was says so
        (:mod:`live_runner.changes`, with a snapshot of the page just before it)."""
        sending = prepare(action, why_invalid, page)
        sent = sending.action
        label = page.label(sent.element_id) if sent and sent.element_id else None
        judge = sending.kind is None and sent is not None and changes.judged(sent, page)
        before = self._page_now() if judge else None
        self.obs, reward, terminated, truncated, _ = self.env.step(sending.text)
        self.reward, self.cum_reward = float(reward), self.cum_reward + float(reward)
        self.terminated, self.truncated = bool(terminated), bool(truncated)
        done = sent_outcome(
            sending,
            label,
            str(self.obs.get("last_action_error") or ""),
            url_before=page.url,
            url_after=str(self.obs.get("url", "")),
        )
        # an action that ended the episode had its effect, whatever the page shows after it
        if before is not None and not (self.terminated or self.truncated):
            after = page_from_obs(self.obs, screenshot=False).html
            done.no_effect = changes.unchanged(done, page.html, before, after)
        info = {
            "browsergym_action": sending.text,
            "reward": self.reward,
            "terminated": self.terminated,
            "truncated": self.truncated,
        }
        end = EndReason.DONE if terminated else EndReason.TRUNCATED if truncated else None
        return Acted(done, info, end)

    def _page_now(self) -> str | None:
        """The page as it is now, rendered as the agent reads it (None when BrowserGym's
        page cannot be read): a CDP snapshot like BrowserGym's own, taken without it."""
        from playwright.sync_api import Error as PlaywrightError

        page = getattr(self.env.unwrapped, "page", None)
        if page is None:
            return None
        try:
            cdp = page.context.new_cdp_session(page)
            raw = cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
            cdp.detach()
        except PlaywrightError:
            return None
        return page_from_obs({"dom_object": raw}, screenshot=False).html

    def ending(self) -> Ending:
        return Ending(
            reward=self.reward,
            success=self.reward > 0,
            info={
                "cum_reward": self.cum_reward,
                "terminated": self.terminated,
                "truncated": self.truncated,
            },
        )


def run_browsergym(
    settings: BrowserGymSettings,
    agent: Agent,
    *,
    agent_manifest: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> SuiteReport:
    """Every task × seed once (skipping episodes already finished in ``episodes.jsonl``)."""
    for task in settings.tasks:
        import_benchmark(task)
    with ExitStack() as stack:
        executable = stack.enter_context(browsergym_playwright(settings.browser.executable_path))

        def run_one(task: str, seed: int, run_dir: Path) -> EpisodeResult:
            return run_episode(
                settings,
                agent,
                task=task,
                seed=seed,
                run_dir=run_dir,
                executable=executable,
                agent_manifest=agent_manifest or {},
            )

        return run_suite(settings, run_one, agent_manifest, progress)


def run_episode(
    settings: BrowserGymSettings,
    agent: Agent,
    *,
    task: str,
    seed: int,
    run_dir: Path,
    executable: Path | None,
    agent_manifest: dict[str, Any],
) -> EpisodeResult:
    """One traced episode; an environment that fails to start is an ``error`` result."""
    import gymnasium as gym

    started = time.monotonic()
    env = None
    try:
        env = gym.make(
            task,
            action_mapping=action_set().to_python_code,
            **env_kwargs(settings, task, executable),
        )
        obs, _ = env.reset(seed=seed)
        goal = goal_text(obs)
        tracer = RunTracer(run_dir)
        tracer.start(_manifest(settings, task, seed, goal=goal, obs=obs, agent=agent_manifest))
        gym_env = BrowserGymEnvironment(env, obs, screenshots=settings.browser.screenshots)
        limits = LimitSettings(max_steps=settings.max_steps, max_seconds=None)
        try:
            return Episode(gym_env, agent, goal, limits, tracer).run()
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - an episode's failure is data, the suite goes on
            return _failed(exc, started, goal)
    except Exception as exc:  # noqa: BLE001 - the environment did not start: data too
        return _failed(exc, started, "")
    finally:
        if env is not None:
            env.close()


def _failed(exc: Exception, started: float, goal: str) -> EpisodeResult:
    return EpisodeResult(
        status=EndReason.ERROR.value,
        detail=f"{type(exc).__name__}: {exc}".strip()[:500],
        elapsed_s=time.monotonic() - started,
        success=False,
        goal=goal,
    )


def _manifest(
    settings: BrowserGymSettings,
    task: str,
    seed: int,
    *,
    goal: str,
    obs: dict[str, Any],
    agent: dict[str, Any],
) -> dict[str, Any]:
    return {
        "kind": "browsergym-episode",
        "task": goal,
        "url": str(obs.get("url", "")),
        "browsergym_task": task,
        "seed": seed,
        "settings": settings.manifest(),
        **provenance(),
        "browsergym_packages": package_versions(BROWSERGYM_PACKAGES),
        **agent,
    }
