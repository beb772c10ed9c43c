"""The ``webagent run`` and ``webagent miniwob`` commands end to end with the embedded model,
and the ``axtree`` agent from the command line, offline (``--render``) and in MiniWoB.

Plumbing only: SmolLM2-135M is near chance, its scores say nothing of the method. These tests
start their own Playwright (one per command), so this module uses no module-scoped browser:
two sync Playwrights cannot run in one thread at once.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from live.conftest import CHROMIUM
from live.pages import PageServer
from live_runner.trace import read_manifest, read_steps
from webagent.cli import main

pytestmark = [pytest.mark.browser, pytest.mark.llama]


def test_webagent_run_with_the_embedded_model(
    local_model_path: Path,
    pages: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ``webagent run`` command, end to end with SmolLM2 (plumbing, not quality)."""
    monkeypatch.setenv("SITE_PIN", "0000-1111")
    out = tmp_path / "cli-run"
    code = main(
        [
            "run", "--url", f"{pages.origin}/login.html", "--task", "Sign in as ada",
            "--max-steps", "2", "--secret", "SITE_PIN", "--agent", "raw-html",
            "--no-gist-cache", "--context-budget", "2048", "--n-ctx", "4096",
            "--model-path", str(local_model_path), "--browser-path", str(CHROMIUM),
            "--out", str(out), "--json",
        ]
    )  # fmt: skip
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] in ("max_steps", "stopped") and 1 <= result["steps"] <= 2
    assert result["input_tokens"] > 0
    steps = read_steps(out)
    assert all(s.agent is not None and s.agent.calls for s in steps)
    manifest = read_manifest(out)
    assert manifest["agent"]["agent"] == "raw-html" and manifest["model"]
    assert manifest["allowed"]["domains"] == ["127.0.0.1"]


@pytest.mark.slow
@pytest.mark.timeout(900)  # ~2 min on an idle 2-core machine; a shared one can be 3x slower
def test_miniwob_suite_end_to_end_with_the_embedded_model(
    local_model_path: Path, miniwob_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Plumbing only: SmolLM2-135M is near chance; its score says nothing of the method."""
    out = tmp_path / "suite"
    tasks = "click-button,click-link,focus-text,enter-text,choose-list"
    started = time.monotonic()
    code = main(
        [
            "miniwob", "--tasks", tasks, "--seeds", "3", "--max-steps", "1",
            "--agent", "raw-html", "--no-gist-cache",
            "--context-budget", "2048", "--model-path", str(local_model_path), "--n-ctx", "4096",
            "--browser-path", str(CHROMIUM), "--out", str(out), "--json",
        ]
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["task"] for t in report["tasks"]] == tasks.split(",")
    assert len(report["episodes"]) == 15
    assert all(e["status"] in ("done", "max_steps") for e in report["episodes"])
    assert 0.0 <= report["success_rate"] <= 1.0
    assert (out / "table.md").read_text().count("\n") == 8
    for episode in report["episodes"]:
        steps = (out / episode["run_dir"] / "steps.jsonl").read_text().splitlines()
        record = json.loads(steps[0])
        assert record["agent"]["calls"], "the model was really called"
        assert record["tokens"]["input"] > 0
        assert (out / episode["run_dir"] / "report.html").exists()
    print(f"MiniWoB suite, 15 episodes with SmolLM2: {elapsed:.0f} s")


SAMPLES = Path(__file__).parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"
AXTREE_PAGE = Path(__file__).parents[1] / "data" / "render" / "axtree_page.html"
_TREE_LINE = r"^\t*(\[id=[^\]]+\] )?\w+ '"


@pytest.mark.slow
def test_axtree_offline_with_the_embedded_model(
    local_model_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``act --render`` and ``eval --render`` with ``--agent axtree`` (plumbing, not quality):
    the model reads the rendered page's tree, cut to a small budget, and answers with an id."""
    model = ["--model-path", str(local_model_path), "--n-ctx", "4096", "--no-gist-cache"]
    agent = ["--agent", "axtree", "--context-budget", "1024", "--render"]
    argv = ["act", "--page", str(AXTREE_PAGE), "--task", "Join with ada@example.org", "--json"]
    assert main([*argv, *agent, *model]) in (0, 1)  # 1: the tiny model gave no valid action
    trace = json.loads(capsys.readouterr().out)
    assert trace["agent"] == "axtree" and trace["calls"][0]["phase"] == "act"
    assert all(re.match(_TREE_LINE, line) for line in trace["memory"].split("\n"))
    assert trace["memory_edits"]["lines_cut"] > 0  # 1024 tokens hold the start of the tree
    assert set(trace["shown_element_ids"]) <= {f"n{i}" for i in range(1, 40)}
    out = tmp_path / "eval"
    argv = ["eval", "--data", str(SAMPLES), "--out", str(out), "--limit", "1", "--no-progress"]
    assert main([*argv, *agent, *model]) == 0
    assert "complete: 2 steps run" in capsys.readouterr().out
    records = [json.loads(line) for line in (out / "results.jsonl").open()]
    assert [r["trace"]["agent"] for r in records] == ["axtree", "axtree"]
    assert all(r["trace"]["memory"].startswith("RootWebArea ") for r in records)


@pytest.mark.slow
def test_axtree_in_miniwob_with_the_embedded_model(
    local_model_path: Path, miniwob_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``webagent miniwob --agent axtree``: the live tab's tree reaches the model (plumbing)."""
    out = tmp_path / "axtree"
    code = main(
        [
            "miniwob", "--tasks", "click-button", "--seeds", "1", "--max-steps", "1",
            "--agent", "axtree", "--no-gist-cache", "--context-budget", "2048",
            "--model-path", str(local_model_path), "--n-ctx", "4096",
            "--browser-path", str(CHROMIUM), "--out", str(out), "--json",
        ]
    )  # fmt: skip
    assert code == 0
    (episode,) = json.loads(capsys.readouterr().out)["episodes"]
    assert episode["status"] in ("done", "max_steps") and episode["steps"] == 1
    (step,) = read_steps(out / episode["run_dir"])
    assert step.agent is not None and step.agent.calls and step.tokens["input"] > 0
    assert re.search(r"^\t\[id=\d+\] button '", step.agent.memory, re.M)
    assert (out / episode["run_dir"] / step.files["axtree"]).read_text("utf-8") == step.agent.memory
