"""Batch rounds end to end: ``webagent eval --backend batch`` writes the requests a run still
needs in the Batch API's input format, exits 5, takes the Batch API's output format back with
``--batch-results`` and goes on; ``--batch-submit`` does the same through (fake) Files and
Batches endpoints. The predictions are those of direct calls to the same answers, and a
SIGKILL between rounds loses nothing."""

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

from tests.fakes.batch_server import FakeBatchAPI
from tests.fakes.openai_server import FakeOpenAIServer
from webagent.cli import main
from webagent.method.memory import SHOWN_ID
from webagent.model.batch_rounds import BatchFolder

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "mind2web_eval" / "samples" / "sample_tasks.json"
DRIVER = Path(__file__).resolve().parent / "batch_driver.py"
MODEL = "policy-model"
EXIT_WAITING = 5


def policy(body: dict[str, Any]) -> str:
    """A scripted policy over a request body: look-up reopens parts 1 and 2 (ReadAgent-S
    stops after one), gists name the first control of their part, the act clicks the first
    id the prompt shows."""
    format_ = body.get("response_format") or {}
    schema = (format_.get("json_schema") or {}).get("schema") or format_.get("schema") or {}
    props = schema.get("properties", {})
    text = body["messages"][-1]["content"]
    if "pages" in props:
        return json.dumps({"pages": [1, 2], "reason": "policy"})
    if "page" in props:
        opened = "Parts opened so far: none." not in text
        return json.dumps({"page": "STOP" if opened else "1", "reason": "policy"})
    if "element_id" in props:
        ids = props["element_id"].get("enum") or SHOWN_ID.findall(text) or ["none"]
        return json.dumps({"element_id": ids[0], "op": "CLICK", "value": ""})
    if props:  # a batch of gists, one per part number
        return json.dumps({key: f"part {key}: a section with controls (id=1)" for key in props})
    return "a section of the page with controls (id=1)"


def answer_round(folder: Path, number: int) -> Path:
    """The Batch API's output file for round ``number``, answered by ``policy``."""
    lines = (folder / f"round-{number:03d}.requests.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        request = json.loads(line)
        assert request["method"] == "POST" and request["url"] == "/v1/chat/completions"
        choice = {"index": 0, "message": {"role": "assistant", "content": policy(request["body"])}}
        body = {"model": MODEL, "choices": [choice], "usage": {}}
        response = {"status_code": 200, "body": body}
        out.append(json.dumps({"custom_id": request["custom_id"], "response": response}))
    path = folder / f"round-{number:03d}.results.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def eval_args(out: Path, agent: str = "readagent-p") -> list[str]:
    return [
        "eval", "--data", str(SAMPLES), "--out", str(out), "--agent", agent,
        "--context-budget", "2048", "--set", "agent.read_whole_page=false",
        "--gist-cache", str(out / "gists.sqlite"), "--no-progress", "--bootstrap", "20",
        "--model", MODEL,
    ]  # fmt: skip


def batch_args(out: Path, agent: str = "readagent-p") -> list[str]:
    return [*eval_args(out, agent), "--backend", "batch", "--token-counter", "estimate"]


def predictions(out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return sorted(rows, key=lambda r: r["action_uid"])


def run_rounds(out: Path, agent: str = "readagent-p", limit: int = 12) -> int:
    """Answer round after round until the run completes; the number of rounds."""
    assert main(batch_args(out, agent)) == EXIT_WAITING
    for number in range(1, limit + 1):
        results = answer_round(out / "batch", number)
        code = main([*batch_args(out, agent), "--batch-results", str(results)])
        if code == 0:
            return number
        assert code == EXIT_WAITING
    raise AssertionError(f"not complete after {limit} rounds")


def direct_run(out: Path, agent: str = "readagent-p") -> list[dict[str, Any]]:
    with FakeOpenAIServer(answer=policy) as server:
        args = [*eval_args(out, agent), "--backend", "openai", "--base-url", server.base_url]
        assert main([*args, "--token-counter", "estimate"]) == 0
        bodies = server.chat_requests
    (out / "bodies.json").write_text(json.dumps(bodies))
    return predictions(out)


@pytest.mark.parametrize("agent", ["readagent-p", "readagent-s", "mindact"])
def test_rounds_through_files_predict_as_direct_calls(tmp_path: Path, agent: str) -> None:
    direct = direct_run(tmp_path / "direct", agent)
    rounds = run_rounds(tmp_path / "batch", agent)
    assert predictions(tmp_path / "batch") == direct
    folder = BatchFolder(tmp_path / "batch" / "batch")
    phases = [set(r.phases.values()) for r in folder.rounds().rounds]
    assert len(phases) == rounds
    if agent != "mindact":  # the gists first; the act last
        assert phases[0] == {"gist"} and "act" in phases[-1]
    keys = [k for r in folder.rounds().rounds for k in r.keys]
    assert len(keys) == len(set(keys)), "a request was asked in two rounds"
    # every body the openai backend sent was asked, exactly, in a round (a round may also
    # ask a batch of gists that a later round no longer needs: a step on a changed page
    # batches its fragments before another step's answers fill the cache)
    sent = json.loads((tmp_path / "direct" / "bodies.json").read_text())
    batched = {
        json.dumps(json.loads(line)["body"], sort_keys=True)
        for r in folder.rounds().rounds
        for line in (folder.path / r.file).read_text().splitlines()
    }
    assert {json.dumps(b, sort_keys=True) for b in sent} <= batched


def test_waiting_run_says_how_to_go_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(batch_args(out)) == EXIT_WAITING
    err = capsys.readouterr().err
    assert "waiting for answers:" in err and "round-001.requests.jsonl" in err
    assert "--batch-results" in err and "round-001.results.jsonl" in err
    results = json.loads((out / "results.json").read_text())
    assert results["attempts"]["pending_reasons"] == {"awaiting_answer": 5}
    # the same command without answers writes no new round: the requests wait in round 1
    assert main(batch_args(out)) == EXIT_WAITING
    assert [r.number for r in BatchFolder(out / "batch").rounds().rounds] == [1]


def test_an_error_result_stays_pending_and_is_asked_again(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(batch_args(out)) == EXIT_WAITING
    results = answer_round(out / "batch", 1)
    lines = results.read_text().splitlines()
    failed = json.loads(lines[0])["custom_id"]
    error = {"custom_id": failed, "response": None, "error": {"message": "server_error"}}
    results.write_text("\n".join([json.dumps(error), *lines[1:]]) + "\n")
    assert main([*batch_args(out), "--batch-results", str(results)]) == EXIT_WAITING
    rounds = BatchFolder(out / "batch").rounds().rounds
    assert rounds[0].errors == {failed: "server_error"}
    assert failed in rounds[1].keys


def test_batch_submit_runs_every_round_through_the_batch_api(tmp_path: Path) -> None:
    direct = direct_run(tmp_path / "direct")
    out = tmp_path / "batch"
    with FakeBatchAPI(policy, polls=1) as api:
        args = [*batch_args(out), "--base-url", api.base_url, "--batch-submit"]
        assert main([*args, "--batch-poll", "0.01"]) == 0
        created = api.created
    assert predictions(out) == direct
    rounds = BatchFolder(out / "batch").rounds().rounds
    assert created == len(rounds) >= 3
    assert [r.status for r in rounds] == ["answered"] * created
    assert all(r.batch_id for r in rounds)
    how = {json.loads(line).get("how") for line in (out / "batch" / "answers.jsonl").open()}
    assert "OpenAI Batch API, batch batch-1" in how


@pytest.mark.parametrize("point", ["close_round", "ingest"])
def test_sigkill_between_rounds_loses_nothing(tmp_path: Path, point: str) -> None:
    direct = direct_run(tmp_path / "direct")
    out = tmp_path / "batch"
    assert main(batch_args(out)) == EXIT_WAITING
    results = answer_round(out / "batch", 1)
    marker = tmp_path / "paused"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PAUSE_AT": point, "PAUSE_MARK": str(marker)}
    command = [*batch_args(out), "--batch-results", str(results)]
    process = subprocess.Popen(
        [sys.executable, str(DRIVER), *command], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the driver never paused"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stderr.close()  # type: ignore[union-attr]
    # the same command again, then the remaining rounds
    code = main(command)
    number = 1
    while code == EXIT_WAITING:
        number += 1
        assert number < 8
        code = main([*batch_args(out), "--batch-results", str(answer_round(out / "batch", number))])
    assert code == 0
    assert predictions(out) == direct
    stored = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    final = {
        r["action_uid"] for r in stored if r["diagnostics"]["error_class"] != "awaiting_answer"
    }
    assert len(final) == 5
    rounds = BatchFolder(out / "batch").rounds().rounds
    keys = [k for r in rounds for k in r.keys]
    assert len(keys) == len(set(keys))


def test_plan_counts_rounds_and_requests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main([*batch_args(out), "--plan"]) == 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("batch rounds for readagent-p"))
    rounds = run_rounds(tmp_path / "real")  # the policy's answers are valid, as the plan's
    assert f"over 5 steps: {rounds} rounds" in line
    planned = int(line.split(" rounds, ")[1].split(" requests")[0].replace(",", ""))
    asked = sum(len(r.keys) for r in BatchFolder(tmp_path / "real" / "batch").rounds().rounds)
    assert planned == asked


def test_batch_options_need_the_batch_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*eval_args(tmp_path / "x"), "--batch-submit"]) == 2
    assert "need --backend batch" in capsys.readouterr().err


def test_answers_file_replays_the_run_offline(tmp_path: Path) -> None:
    run_rounds(tmp_path / "batch")
    answers = tmp_path / "batch" / "batch" / "answers.jsonl"
    header = json.loads(answers.read_text().splitlines()[0])
    assert header["format"] == "answers"
    out = tmp_path / "replayed"
    args = [*eval_args(out), "--replay", str(answers), "--token-counter", "estimate"]
    assert main(args) == 0
    assert predictions(out) == predictions(tmp_path / "batch")
