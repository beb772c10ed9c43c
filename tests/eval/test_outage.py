"""An endpoint that fails for a stretch of a run, then recovers: the run ends `incomplete`
(exit 4) naming the pending steps, the same command completes them, and the final scores
equal those of a run against an endpoint that never failed; every step is scored once.
The same with a SIGKILL during the outage; and the circuit breaker, agent bugs, and the one
concurrency limit shared by evaluation workers and gist fan-out.

The endpoint is the fake OpenAI server on 127.0.0.1, answering like the scripted oracle
(gold action of each step: control flow under test, not a model)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from eval_oracle import Oracle
from fakes.openai_server import FakeOpenAIServer
from http_eval_driver import build_model

import webagent.model.factory
from mind2web_eval.data import load_tasks
from mind2web_eval.runner import AgentBugError, EvalSettings, EvalSubject, run_eval
from mind2web_eval.scoring import ScoringSettings, gold_steps
from webagent.agents.registry import AgentSettings, build_agent
from webagent.cli import main
from webagent.contracts import Agent, Observation, StepTrace
from webagent.model.base import Message, Request
from webagent.model.settings import ModelSettings

DRIVER = Path(__file__).resolve().parent / "http_eval_driver.py"
REPO = Path(__file__).resolve().parents[2]
EXIT_INCOMPLETE = 4


def http_oracle(oracle: Oracle) -> Any:
    """The fake server's answer: the oracle's, read from the HTTP request body."""

    def answer(body: dict[str, Any]) -> str:
        messages = tuple(Message(role=m["role"], content=m["content"]) for m in body["messages"])
        return oracle(Request(messages=messages, phase="act"))

    return answer


def command(data: Path, out: Path, base_url: str, *extra: str) -> list[str]:
    return [
        "eval", "--data", str(data), "--out", str(out), "--agent", "raw-html",
        "--backend", "openai", "--base-url", base_url, "--model", "fake-model",
        "--context-budget", "2048", "--no-progress", "--bootstrap", "20", "--no-gist-cache",
        *extra,
    ]  # fmt: skip


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def final_scores(out: Path) -> dict[str, Any]:
    results = json.loads((out / "results.json").read_text())
    return {"score": results["score"], "predictions": sorted(
        (p["action_uid"], p["element_id"], p["op"], p["value"], p["error_class"])
        for p in jsonl(out / "predictions.jsonl")
    )}  # fmt: skip


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """One retry per call and no waiting, for `webagent eval` run in this process."""
    monkeypatch.setattr(webagent.model.factory, "build_model", build_model)


@pytest.fixture
def baseline(raw_folder: Path, tmp_path: Path, quick_retries: None) -> dict[str, Any]:
    """Scores of a run against an endpoint that never fails."""
    tasks, _ = load_tasks(raw_folder)
    out = tmp_path / "never-failing"
    with FakeOpenAIServer(answer=http_oracle(Oracle(tasks, wrong={"fx-fly-0002"}))) as fake:
        assert main(command(raw_folder, out, fake.base_url)) == 0
    return final_scores(out)


def all_uids(data: Path) -> list[str]:
    tasks, _ = load_tasks(data)
    return sorted(g.action_uid for t in tasks for g in gold_steps(t))


def test_an_outage_mid_run_ends_incomplete_and_the_same_command_completes_it(
    raw_folder: Path,
    tmp_path: Path,
    baseline: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    tasks, _ = load_tasks(raw_folder)
    out = tmp_path / "run"
    answer = http_oracle(Oracle(tasks, wrong={"fx-fly-0002"}))
    # requests 4..9 fail: with one retry per call, three steps in a row fail (fewer than
    # the circuit breaker's 5), then the endpoint is back for the rest of the run
    script = ["ok"] * 3 + ["500"] * 6
    with FakeOpenAIServer(script, answer=answer) as fake:
        argv = command(raw_folder, out, fake.base_url)
        assert main(argv) == EXIT_INCOMPLETE
        first = capsys.readouterr()
        records = jsonl(out / "results.jsonl")
        failed = [
            r["action_uid"] for r in records if r["diagnostics"]["error_class"] == "model_error"
        ]
        assert len(failed) == 3
        assert len(records) == 10  # every step tried once; three have no answer
        assert "incomplete: 3 steps pending (3 the model failed after its retries)" in first.err
        for uid in failed:
            assert f"{uid} (model_error)" in first.err
        assert "resume with: webagent eval --data" in first.err
        results = json.loads((out / "results.json").read_text())
        assert results["status"] == "incomplete"
        assert results["attempts"]["steps_pending"] == 3
        assert sorted(results["attempts"]["pending_steps"]) == sorted(failed)
        assert json.loads((out / "manifest.json").read_text())["pending"] == 3

        assert main(argv) == 0  # the same command
        second = capsys.readouterr()
    assert "complete: 3 steps run, 7 resumed" in second.out
    records = jsonl(out / "results.jsonl")
    assert len(records) == 13  # every attempt kept for audit
    assert [r["attempt"] for r in records[10:]] == [2, 2, 2]
    assert [r["action_uid"] for r in records[10:]] == failed
    predictions = [p["action_uid"] for p in jsonl(out / "predictions.jsonl")]
    assert sorted(predictions) == all_uids(raw_folder)  # every step scored exactly once
    assert final_scores(out) == baseline
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete"
    assert results["attempts"]["steps_pending"] == 0
    assert results["attempts"]["histogram"] == {"1": 7, "2": 3}


def test_sigkill_during_an_outage_then_the_same_command_completes(
    raw_folder: Path, tmp_path: Path, baseline: dict[str, Any]
) -> None:
    tasks, _ = load_tasks(raw_folder)
    out = tmp_path / "run"
    results = out / "results.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    answer = http_oracle(Oracle(tasks, wrong={"fx-fly-0002"}))
    with FakeOpenAIServer(answer=answer, delay_s=0.05) as fake:
        argv = [sys.executable, str(DRIVER), "--", *command(raw_folder, out, fake.base_url)]
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(jsonl(results)) < 3:
            assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "no step finished in 120 s"
            time.sleep(0.02)
        fake.delay_s = 1.0  # the outage: slow 500s (the breaker would need 10 s to trip)
        fake.down.set()
        while not any(r["diagnostics"]["error_class"] == "model_error" for r in jsonl(results)):
            assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "no failed step in 120 s"
            time.sleep(0.02)
        assert process.poll() is None  # still inside the outage
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        process.stderr.close()  # type: ignore[union-attr]
        assert process.returncode == -signal.SIGKILL
        assert not (out / "results.json").exists()
        before = jsonl(results)
        failed = [r["action_uid"] for r in before if r["diagnostics"]["error_class"] != "ok"]
        assert failed and len(before) < 10

        fake.down.clear()  # the endpoint is back
        fake.delay_s = 0.0
        again = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=300, check=False
        )
    assert again.returncode == 0, again.stderr
    done = len(before) - len(failed)
    assert f"complete: {10 - done} steps run, {done} resumed" in again.stdout
    after = jsonl(results)
    assert after[: len(before)] == before  # nothing rewritten
    predictions = [p["action_uid"] for p in jsonl(out / "predictions.jsonl")]
    assert sorted(predictions) == all_uids(raw_folder)  # every step scored exactly once
    assert final_scores(out) == baseline
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["status"] for s in manifest["sessions"]] == ["running", "complete"]


def test_the_circuit_breaker_ends_a_run_after_five_failures_in_a_row(
    raw_folder: Path, tmp_path: Path, quick_retries: None, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks, _ = load_tasks(raw_folder)
    out = tmp_path / "run"
    answer = http_oracle(Oracle(tasks))
    with FakeOpenAIServer(["ok", "ok"], default="500", answer=answer) as fake:  # down after 2
        assert main(command(raw_folder, out, fake.base_url)) == EXIT_INCOMPLETE
        requests = len(fake.chat_requests)
    err = capsys.readouterr().err
    records = jsonl(out / "results.jsonl")
    classes = [r["diagnostics"]["error_class"] for r in records]
    assert classes[2:] == ["model_error"] * 5  # then it stopped: no more steps were tried
    assert requests == 2 + 5 * 2  # one retry each
    assert "stopped early: circuit breaker: 5 model failures in a row" in err
    assert "8 steps pending (5 the model failed after its retries; 3 not run yet)" in err
    results = json.loads((out / "results.json").read_text())
    assert (results["status"], results["attempts"]["steps_pending"]) == ("incomplete", 8)
    assert results["stopped_by"].startswith("circuit breaker")


class BuggyAgent(Agent):
    """Raises on the step whose task mentions ``bad`` (a bug in page handling, say)."""

    name = "buggy"

    def __init__(self, bad: str) -> None:
        self.bad = bad

    def step(self, observation: Observation) -> StepTrace:
        if self.bad in observation.task:
            raise ValueError("a bug in the agent")
        return StepTrace(agent=self.name)


def buggy_run(data: Path, out: Path, bad: str, **extra: Any) -> Any:
    subject = EvalSubject(
        agent=BuggyAgent(bad),
        agent_settings={"agent": "buggy"},
        model_settings={"backend": "none"},
        model_identity={"model": "none"},
    )
    settings = EvalSettings(
        data=str(data), out=out, scoring=ScoringSettings(bootstrap=0), progress=False, **extra
    )
    return run_eval(settings, subject)


def test_an_agent_bug_stops_the_run_with_its_traceback(raw_folder: Path, tmp_path: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    bad = tasks[1].confirmed_task
    with pytest.raises(
        AgentBugError, match=r"raised ValueError on step .*--record-agent"
    ) as caught:
        buggy_run(raw_folder, tmp_path / "run", bad)
    assert isinstance(caught.value.__cause__, ValueError)  # the agent's traceback is chained
    assert caught.value.__cause__.__traceback__ is not None
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "aborted"


def test_recorded_agent_bugs_are_pending(raw_folder: Path, tmp_path: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    bad = tasks[1].confirmed_task
    outcome = buggy_run(raw_folder, tmp_path / "run", bad, record_agent_errors=True)
    n_bad = len(tasks[1].actions)
    assert outcome.status == "incomplete"
    assert outcome.pending_reasons() == {"agent_error": n_bad}
    assert outcome.steps_run == 10


def many_fragment_pages(raw_folder: Path, out: Path, sections: int = 24) -> Path:
    """The test tasks, each page followed by ``sections`` extra sections of links and text."""
    extra = "".join(
        f'<div backend_node_id="{9000 + 10 * i}"><h2 backend_node_id="{9001 + 10 * i}">'
        f'Section {i}</h2><p backend_node_id="{9002 + 10 * i}">'
        + " ".join(f"word{i}x{j}" for j in range(60))
        + f'</p><a backend_node_id="{9003 + 10 * i}" href="/s{i}">More about {i}</a></div>'
        for i in range(sections)
    )
    tasks = []
    for path in sorted(raw_folder.rglob("*.json")):
        for task in json.loads(path.read_text()):
            for action in task["actions"]:
                if action.get("cleaned_html"):
                    action["cleaned_html"] = action["cleaned_html"].replace(
                        "</body>", extra + "</body>"
                    )
            tasks.append(task)
    data = out / "many_fragments.json"
    data.write_text(json.dumps(tasks))
    return data


def test_eval_concurrency_4_never_has_more_than_4_requests_in_flight(
    raw_folder: Path, tmp_path: Path
) -> None:
    data = many_fragment_pages(raw_folder, tmp_path)
    settings = ModelSettings(
        backend="openai",
        model="fake-model",
        base_url="http://127.0.0.1:1/v1",  # replaced below
        concurrency=4,
        context_window=2048,
        max_retries=0,
    )
    with FakeOpenAIServer(delay_s=0.02) as fake:
        model = webagent.model.factory.build_model(
            settings.model_copy(update={"base_url": fake.base_url})
        )
        agent_settings = AgentSettings(agent="readagent-p", context_budget=2048)
        agent = build_agent(agent_settings, model)
        subject = EvalSubject(
            agent=agent,
            agent_settings=agent_settings.manifest(),
            model_settings={"backend": "openai"},
            model_identity={"model": "fake-model"},
        )
        run = EvalSettings(
            data=str(data),
            out=tmp_path / "run",
            workers=4,
            scoring=ScoringSettings(bootstrap=0),
            progress=False,
            limit=2,
        )
        with model:
            run_eval(run, subject)
        records = jsonl(tmp_path / "run" / "results.jsonl")
        fragments = [r["diagnostics"]["fragments"] for r in records if r["diagnostics"]]
        peak, requests = fake.peak_in_flight, len(fake.chat_requests)
    assert min(f for f in fragments if f) >= 8, fragments  # pages with many fragments
    assert requests >= 8 * 4  # so 4 workers x gist fan-out could have had many more
    assert 1 < peak <= 4, peak
