"""BrowserGym episodes with any agent, each traced like a ``webagent run``.

For every task × seed: ``gym.make(task)``, ``reset(seed)``, then observe → agent → act
until the environment says the episode is over (``terminated`` / ``truncated``), the agent
says STOP, or ``max_steps``. Each episode gets a run folder written by
:class:`live_runner.trace.RunTracer` (``manifest.json``, ``steps.jsonl``, per-step page and
screenshot, ``summary.json``, ``report.html``), so ``webagent live-export`` turns it into
Mind2Web records. ``episodes.jsonl`` holds one result per episode (a rerun skips finished
ones); ``report.json`` and ``table.md`` summarise them.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from live_runner.actions import LiveOp
from live_runner.records import RunSummary, StepRecord
from live_runner.trace import RunTracer
from webagent.browsergym.agent import BrowserGymAgent
from webagent.browsergym.browser import browsergym_playwright
from webagent.browsergym.settings import PREFIX, BrowserGymSettings, benchmark
from webagent.contracts import Agent
from webagent.errors import ConfigError
from webagent.provenance import now, package_versions, provenance
from webagent.textfiles import read_models

SCHEMA_VERSION = 1
EPISODES_FILE = "episodes.jsonl"
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


class EpisodeResult(BaseModel):
    schema_version: int = SCHEMA_VERSION
    task: str
    seed: int
    goal: str = ""
    reward: float = Field(default=0.0, description="BrowserGym's reward at the last step")
    cum_reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    status: str = Field(description="done, truncated, stopped, max_steps, error, interrupted")
    elapsed_s: float = 0.0
    run_dir: str
    error: str | None = None


class BrowserGymReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    settings: dict[str, Any]
    agent: dict[str, Any] = Field(default_factory=dict)
    episodes: list[EpisodeResult]
    mean_reward: float
    success_rate: float = Field(description="episodes with reward > 0")


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
        importlib.import_module(f"browsergym.{name}")
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{task}: BrowserGym's {name!r} tasks are not installed; pip install "
            f"browsergym-{name} (see docs/BROWSERGYM.md)"
        ) from exc


def env_kwargs(settings: BrowserGymSettings, task: str, executable: Path | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"headless": settings.headless, "disable_env_checker": True}
    if executable is not None:
        kwargs["pw_chromium_kwargs"] = {"executable_path": str(executable)}
    if benchmark(task) == "miniwob":
        kwargs["task_kwargs"] = {"base_url": settings.miniwob_url or miniwob_pages_url()}
    return kwargs


def run_episodes(
    settings: BrowserGymSettings, agent: Agent, *, agent_manifest: dict[str, Any] | None = None
) -> BrowserGymReport:
    """Every task × seed once (skipping episodes already in ``episodes.jsonl``)."""
    for task in settings.tasks:
        import_benchmark(task)
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    done = {(e.task, e.seed) for e in _read(settings.out_dir) if e.status != "error"}
    with ExitStack() as stack:
        executable = stack.enter_context(browsergym_playwright(settings.browser_path))
        for task, seed in ((t, s) for t in settings.tasks for s in settings.seeds):
            if (task, seed) in done:
                continue
            result = run_episode(
                settings,
                agent,
                task=task,
                seed=seed,
                executable=executable,
                agent_manifest=agent_manifest or {},
            )
            with (settings.out_dir / EPISODES_FILE).open("a", encoding="utf-8") as out:
                out.write(result.model_dump_json() + "\n")
    latest = {(e.task, e.seed): e for e in _read(settings.out_dir)}
    episodes = [latest[(t, s)] for t in settings.tasks for s in settings.seeds if (t, s) in latest]
    n = len(episodes) or 1
    report = BrowserGymReport(
        settings=settings.manifest(),
        agent=agent_manifest or {},
        episodes=episodes,
        mean_reward=sum(e.reward for e in episodes) / n,
        success_rate=sum(e.reward > 0 for e in episodes) / n,
    )
    (settings.out_dir / "report.json").write_text(report.model_dump_json(indent=2), "utf-8")
    (settings.out_dir / "table.md").write_text(format_table(report), "utf-8")
    return report


def run_episode(
    settings: BrowserGymSettings,
    agent: Agent,
    *,
    task: str,
    seed: int,
    executable: Path | None,
    agent_manifest: dict[str, Any],
) -> EpisodeResult:
    """One traced episode; a failure of the environment becomes an ``error`` result."""
    import gymnasium as gym

    run_dir = settings.out_dir / f"{task.removeprefix(PREFIX)}.seed-{seed}"
    result = EpisodeResult(task=task, seed=seed, status="error", run_dir=_rel(run_dir, settings))
    started = time.monotonic()
    wrapped = BrowserGymAgent(agent, screenshots=settings.screenshots)
    env = None
    try:
        env = gym.make(
            task,
            action_mapping=wrapped.action_set.to_python_code,
            **env_kwargs(settings, task, executable),
        )
        obs, _ = env.reset(seed=seed)
        t0 = time.perf_counter()
        processed = wrapped.obs_preprocessor(obs)
        processed["webagent_observe_s"] = time.perf_counter() - t0
        result.goal = processed["webagent_task"]
        tracer = RunTracer(run_dir)
        manifest = _manifest(settings, task, seed, goal=result.goal, obs=obs, agent=agent_manifest)
        tracer.start(manifest)
        try:
            _loop(settings, env, wrapped, processed, tracer=tracer, result=result)
        except KeyboardInterrupt:
            result.status = "interrupted"
            raise
        except Exception as exc:  # noqa: BLE001 - an episode's failure is data, the suite goes on
            _failed(result, exc)
        finally:
            tracer.finish(_summary(result, wrapped, time.monotonic() - started))
    except Exception as exc:  # noqa: BLE001 - the environment did not start: data too
        _failed(result, exc)
    finally:
        if env is not None:
            env.close()
    result.elapsed_s = time.monotonic() - started
    return result


def _failed(result: EpisodeResult, exc: Exception) -> None:
    result.status, result.error = "error", f"{type(exc).__name__}: {exc}".strip()[:500]


def _loop(
    settings: BrowserGymSettings,
    env: Any,
    wrapped: BrowserGymAgent,
    processed: dict[str, Any],
    *,
    tracer: RunTracer,
    result: EpisodeResult,
) -> None:
    result.status = "max_steps"
    for step in range(1, settings.max_steps + 1):
        started_at, t0 = now(), time.perf_counter()
        action_text, _info = wrapped.get_action(processed)
        t1 = time.perf_counter()
        obs, reward, terminated, truncated, _ = env.step(action_text)
        t2 = time.perf_counter()
        outcome = wrapped.settle(obs)
        view = wrapped.last
        if view is None or outcome is None:  # get_action sets both
            raise RuntimeError("the agent did not record its step")
        result.steps, result.reward = step, float(reward)
        result.cum_reward += float(reward)
        result.terminated, result.truncated = bool(terminated), bool(truncated)
        tokens = _tokens(view.trace.usage)
        result.input_tokens += tokens["input"]
        result.output_tokens += tokens["output"]
        tracer.write_step(
            StepRecord(
                step=step,
                started_at=started_at,
                url=view.page.url,
                title=view.page.title,
                previous_actions=view.previous_actions,
                n_elements=len(view.page.elements),
                agent=view.trace,
                action=view.action,
                outcome=outcome,
                tokens=tokens,
                timings={
                    "observe_s": processed.get("webagent_observe_s", 0.0),
                    "agent_s": t1 - t0,
                    "act_s": t2 - t1,
                },
                episode={
                    "browsergym_action": action_text,
                    "reward": float(reward),
                    "terminated": bool(terminated),
                    "truncated": bool(truncated),
                },
            ),
            view.page,
        )
        if terminated or truncated:
            result.status = "done" if terminated else "truncated"
            return
        if view.action is not None and view.action.op is LiveOp.STOP:
            result.status = "stopped"
            return
        t3 = time.perf_counter()
        processed = wrapped.obs_preprocessor(obs)
        processed["webagent_observe_s"] = time.perf_counter() - t3


def _tokens(usage: dict[str, Any]) -> dict[str, int]:
    return {
        "input": sum(u.input_tokens for u in usage.values()),
        "output": sum(u.output_tokens for u in usage.values()),
    }


def _summary(result: EpisodeResult, wrapped: BrowserGymAgent, elapsed: float) -> RunSummary:
    return RunSummary(
        status=result.status,
        detail=result.error or "",
        steps=result.steps,
        elapsed_s=elapsed,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        episode={
            "reward": result.reward,
            "cum_reward": result.cum_reward,
            "terminated": result.terminated,
            "truncated": result.truncated,
            "failed_actions": sum(not o.ok for o in wrapped.outcomes),
        },
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


def _rel(run_dir: Path, settings: BrowserGymSettings) -> str:
    return run_dir.relative_to(settings.out_dir).as_posix()


def _read(out_dir: Path) -> list[EpisodeResult]:
    # a torn last line of a killed run is skipped: that episode reruns
    return read_models(out_dir / EPISODES_FILE, EpisodeResult)


def format_table(report: BrowserGymReport) -> str:
    """One row per episode: task, seed, reward, steps, how it ended, its trace."""
    lines = [
        "| task | seed | reward | steps | ended | trace |",
        "|---|---:|---:|---:|---|---|",
    ]
    for e in report.episodes:
        ended = (
            " ".join(f"{e.status}: {e.error}".split()).replace("|", "/") if e.error else e.status
        )
        trace = f"{e.run_dir}/report.html"
        lines.append(f"| {e.task} | {e.seed} | {e.reward:g} | {e.steps} | {ended} | {trace} |")
    lines.append(
        f"| **all** | {len(report.episodes)} | {report.mean_reward:.3f} | | "
        f"success {report.success_rate:.2f} | |"
    )
    return "\n".join(lines) + "\n"


def report_json(report: BrowserGymReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2)
