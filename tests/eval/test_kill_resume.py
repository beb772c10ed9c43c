"""SIGKILL in the middle of `webagent eval`, then the same command again: every step is
scored exactly once and nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mind2web_eval.data import load_tasks
from mind2web_eval.scoring import gold_steps
from webagent.cli import main

DRIVER = Path(__file__).resolve().parent / "eval_driver.py"
REPO = Path(__file__).resolve().parents[2]


def eval_command(data: Path, out: Path, delay: float) -> list[str]:
    return [
        sys.executable, str(DRIVER), str(delay), "--",
        "eval", "--data", str(data), "--out", str(out), "--agent", "raw-html",
        "--context-budget", "2048", "--no-progress", "--bootstrap", "20",
        "--gist-cache", str(out.parent / "gists.sqlite"),
    ]  # fmt: skip


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_sigkill_then_resume_scores_every_step_once(
    raw_folder: Path, tmp_path: Path, capsys: object
) -> None:
    out = tmp_path / "run"
    results = out / "results.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        eval_command(raw_folder, out, delay=0.3), env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while len(lines(results)) < 3:
        assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "no step finished in 120 s"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stderr.close()  # type: ignore[union-attr]
    assert process.returncode == -signal.SIGKILL
    done_before = lines(results)
    assert 3 <= len(done_before) < 10
    assert not (out / "results.json").exists()  # killed before the end
    # as if the kill had landed in the middle of writing the next line
    with results.open("a") as stream:
        stream.write('{"schema_version": 1, "annotation_id": "fx-fly-0002", "action_u')

    again = subprocess.run(
        eval_command(raw_folder, out, delay=0.0), env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert f"{10 - len(done_before)} steps run, {len(done_before)} resumed" in again.stdout

    tasks, _ = load_tasks(raw_folder)
    expected = sorted(g.action_uid for t in tasks for g in gold_steps(t))
    stored = [json.loads(line)["action_uid"] for line in lines(results)]
    assert sorted(stored) == expected  # every step exactly once
    assert lines(results)[: len(done_before)] == done_before  # nothing rewritten
    assert "action_u" in (out / "results.jsonl.torn").read_text()  # the torn bytes kept
    predictions = [json.loads(line) for line in lines(out / "predictions.jsonl")]
    assert sorted(p["action_uid"] for p in predictions) == expected
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["status"] for s in manifest["sessions"]] == ["running", "complete"]
    assert manifest["sessions"][1]["steps_resumed"] == len(done_before)

    # `webagent score` on the run's predictions gives the numbers `eval` wrote
    run_results = json.loads((out / "results.json").read_text())
    assert run_results["score"]["counts"]["missing_predictions"] == 0
    code = main(["score", "--data", str(raw_folder), "--predictions",
                 str(out / "predictions.jsonl"), "--json", "--bootstrap", "20"])  # fmt: skip
    assert code == 0
    scored = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert scored["overall"] == run_results["score"]["overall"]
    assert scored["by_website"] == run_results["score"]["by_website"]
