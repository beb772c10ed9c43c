"""``webagent sweep`` against an OpenAI-compatible endpoint on 127.0.0.1 (a fake that answers
one fixed action, or hangs on cue): SIGKILL in the middle, the same command finishes it with
every step scored once; ``--rescore`` gives the same table byte for byte; the HTML opens in
headless Chromium without errors and its plot loads."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from conftest import SAMPLES, open_in_chromium, subprocess_env, sweep_argv, webagent_command
from fakes.openai_server import FakeOpenAIServer

from mind2web_eval.data import load_tasks
from mind2web_eval.scoring import gold_steps
from webagent.cli import main

#: the first sample step's gold action, answered to every act request
REPLY = '{"element_id": "1006", "op": "TYPE", "value": "waterproof hiking boots"}'
CELLS = ("raw-html@768", "raw-html@1024", "gist-only@768", "gist-only@1024")


def _argv(out: Path, base_url: str) -> list[str]:
    return sweep_argv(
        SAMPLES, out, "--backend", "openai", "--base-url", base_url, "--model", "fake-act"
    )


def _uids(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["action_uid"] for line in path.read_text().splitlines() if line]


def test_sigkill_mid_sweep_then_the_same_command_finishes_it(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    tasks, _summary = load_tasks(SAMPLES)
    gold = sorted(g.action_uid for t in tasks for g in gold_steps(t))
    # two answers, then the third request hangs: the sweep is stopped inside its first cell
    with FakeOpenAIServer(["ok", "ok"], default="hang", reply=REPLY) as fake:
        argv = _argv(out, fake.base_url)
        process = subprocess.Popen(
            webagent_command(argv), env=subprocess_env(),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while len(fake.chat_requests) < 3:
            assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the sweep made no third model call in 120 s"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        process.stderr.close()  # type: ignore[union-attr]
        assert process.returncode == -signal.SIGKILL
        first = out / "cells" / CELLS[0] / "results.jsonl"
        assert len(_uids(first)) == 2  # the two answered steps were stored, no more
        assert not (out / "table.md").exists()

        fake.default = "ok"  # the endpoint recovers; the same command resumes the sweep
        assert main(argv) == 0
    table = (out / "table.md").read_text()
    for name in CELLS:
        folder = out / "cells" / name
        uids = _uids(folder / "results.jsonl")
        assert sorted(uids) == gold, name  # every step once: none lost, none twice
        assert json.loads((folder / "manifest.json").read_text())["status"] == "complete"
        assert (folder / "calls.jsonl").is_file()  # the cell's cassette
        agent, budget = name.split("@")
        assert f"| {agent} | {budget} | {len(gold)} |" in table
    # the fixed answer is right on exactly one step (the first) when its element is shown
    results = json.loads((out / "results.json").read_text())
    assert results["quality_axis"] == "step_sr"
    assert [c["status"] for c in results["cells"]] == ["complete"] * 4
    for cell in results["cells"]:
        assert cell["step_sr"]["value"] <= 1 / 3 + 1e-9  # macro over 3 tasks, one step right
    # one gist cache for all cells
    assert (out / "gist-cache.sqlite").is_file()

    before = {p: (out / p).read_bytes() for p in ("table.md", "results.json")}
    assert main(["sweep", "--rescore", str(out)]) == 0
    assert {p: (out / p).read_bytes() for p in before} == before

    opened = open_in_chromium(out / "sweep.html")
    assert opened["errors"] == [] and opened["failed"] == []
    image = opened["image"]
    assert image["complete"] and image["width"] > 0 and image["height"] > 0  # type: ignore[index]
    assert opened["rows"] == 4
