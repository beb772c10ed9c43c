"""Live episodes in request rounds (``--backend batch``), answers as data, end to end in real
Chromium: ``webagent miniwob`` and ``webagent browsergym`` (BrowserGym's MiniWoB++) run each
episode from its seed with the answers known so far, suspend it at the first request without
one (pending, exit 5), and replay it the next round; the rewards are those of direct calls to
the same answers; a SIGKILL mid-round or between rounds loses nothing; a page changed between
rounds is asked again and the episode counted divergent; ``--replay`` of the answers file
reproduces the rewards offline, and a miss is named, never a silent failure.

Every answer comes from the MiniWoB oracle policy (scripted), ``live/oracle.py``: it reads the
task and page in each act request, as a helper answering a round would."""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from live.conftest import CHROMIUM, browser_settings
from live.oracle import MODEL, answer, answer_round
from live_runner.suite import SuiteReport
from tests.fakes.batch_server import FakeBatchAPI
from tests.fakes.openai_server import FakeOpenAIServer
from webagent.cli import main
from webagent.model.batch_rounds import BatchFolder

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "rounds_driver.py"
EXIT_WAITING, EXIT_PENDING = 5, 4
TASKS = ("click-test", "click-button", "enter-text")
#: what the oracle earns on TASKS: (task, status, steps, success)
SOLVED = [(t, "done", 2 if t == "enter-text" else 1, True) for t in TASKS]


@pytest.fixture(scope="module")
def chromium() -> None:
    """Skips only when no Chromium starts (started and closed here: the commands under test
    start their own Playwright, and two cannot run in one thread)."""
    pytest.importorskip("playwright", reason="pip install 'readagent-web[live]'")
    from live_runner.errors import BrowserLaunchError
    from live_runner.session import open_browser

    try:
        with open_browser(browser_settings()):
            pass
    except BrowserLaunchError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def miniwob(chromium: None) -> None:
    pytest.importorskip("miniwob", reason="pip install 'readagent-web[live]'")


@pytest.fixture(scope="module")
def browsergym(chromium: None) -> None:
    pytest.importorskip("browsergym.miniwob", reason="pip install 'readagent-web[browsergym]'")
    pytest.importorskip("miniwob", reason="pip install 'readagent-web[browsergym]'")


def common_args(out: Path) -> list[str]:
    args = ["--seeds", "1", "--max-steps", "3", "--out", str(out), "--model", MODEL]
    args += ["--token-counter", "estimate", "--context-budget", "4096", "--no-gist-cache"]
    args += ["--no-screenshots"]
    return args + (["--browser-path", str(CHROMIUM)] if CHROMIUM.exists() else [])


def miniwob_args(out: Path, tasks: tuple[str, ...] = TASKS) -> list[str]:
    return ["miniwob", "--tasks", ",".join(tasks), "--agent", "raw-html", *common_args(out)]


def browsergym_args(out: Path, tasks: tuple[str, ...] = TASKS) -> list[str]:
    ids = ",".join(f"miniwob.{t}" for t in tasks)
    return ["browsergym", "--tasks", ids, *common_args(out)]  # readagent-p, the default


def in_rounds(argv: list[str], out: Path, limit: int = 8) -> int:
    """The run, then round after round answered by the oracle until nothing waits; the
    number of rounds answered."""
    code = main([*argv, "--backend", "batch"])
    number = 0
    while code == EXIT_WAITING:
        number += 1
        assert number <= limit, f"still waiting after {limit} rounds"
        results = answer_round(out / "batch", number)
        code = main([*argv, "--backend", "batch", "--batch-results", str(results)])
    assert code == 0
    return number


def direct(argv: list[str]) -> list[dict[str, Any]]:
    """The same run with every request sent to the oracle over HTTP; the bodies it sent (a
    BrowserGym run launches its browsers anew for every episode, as BrowserGym itself does)."""
    with FakeOpenAIServer(answer=answer) as server, pytest.MonkeyPatch.context() as patch:
        if argv[0] == "browsergym":
            from live_runner.browsergym import browser, environment

            fresh = functools.partial(browser.browsergym_playwright, lend=False)
            patch.setattr(environment, "browsergym_playwright", fresh)
        assert main([*argv, "--backend", "openai", "--base-url", server.base_url]) == 0
        return server.chat_requests


def report(out: Path) -> SuiteReport:
    return SuiteReport.model_validate_json((out / "report.json").read_text())


def outcomes(out: Path) -> list[tuple[str, str, int, bool | None]]:
    return [(e.task.split(".")[-1], e.status, e.steps, e.success) for e in report(out).episodes]


def asked(out: Path) -> list[dict[str, Any]]:
    """Every request body of every round."""
    folder = BatchFolder(out / "batch")
    return [
        json.loads(line)["body"]
        for r in folder.rounds().rounds
        for line in (folder.path / r.file).read_text().splitlines()
    ]


def canonical(bodies: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(b, sort_keys=True) for b in bodies)


def test_miniwob_rounds_through_files_earn_the_rewards_of_direct_calls(
    miniwob: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    direct(miniwob_args(tmp_path / "direct"))
    out = tmp_path / "batch"
    argv = miniwob_args(out)
    assert main([*argv, "--backend", "batch"]) == EXIT_WAITING
    err = capsys.readouterr().err
    assert "waiting for answers: 3 requests" in err and "round-001.requests.jsonl" in err
    assert "--batch-results" in err and "round-001.results.jsonl" in err
    assert "[3/3] enter-text seed 0: pending (at step 1:" in err
    first = report(out)  # suspended episodes are pending, never failures
    assert first.pending == 3 and [t.ended for t in first.tasks] == [0, 0, 0]
    assert "| click-test | 1 | - | - | - | 0 | 1 | 0 |" in (out / "table.md").read_text()

    rounds = 1 + in_rounds(argv, out)
    assert outcomes(out) == outcomes(tmp_path / "direct") == SOLVED
    raw = [e.episode["raw_reward"] for e in report(out).episodes]
    assert raw == [e.episode["raw_reward"] for e in report(tmp_path / "direct").episodes]
    assert raw == [1.0, 1.0, 1.0]
    assert report(out).pending == 0 and report(out).success_rate == 1.0
    assert rounds >= 3  # enter-text needs two answers, one round each
    # finished episodes are not rerun: the same command again runs nothing
    lines = (out / "episodes.jsonl").read_text()
    capsys.readouterr()
    assert main([*argv, "--backend", "batch"]) == 0
    assert (out / "episodes.jsonl").read_text() == lines
    assert "episodes: 3, 3 finished before, 0 to run" in capsys.readouterr().err


def test_batch_submit_runs_the_rounds_through_the_batch_api(miniwob: None, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeBatchAPI(answer, polls=1) as api:
        args = [*miniwob_args(out, TASKS[1:]), "--backend", "batch", "--base-url", api.base_url]
        assert main([*args, "--batch-submit", "--batch-poll", "0.01"]) == 0
        created = api.created
    assert outcomes(out) == SOLVED[1:]
    rounds = BatchFolder(out / "batch").rounds().rounds
    assert created == len(rounds) >= 2 and all(r.status == "answered" for r in rounds)


@pytest.mark.parametrize("point", ["episode", "ingest"])
def test_a_sigkill_mid_round_or_between_rounds_loses_nothing(
    miniwob: None, tmp_path: Path, point: str
) -> None:
    out = tmp_path / "run"
    argv = [*miniwob_args(out), "--backend", "batch"]
    assert main(argv) == EXIT_WAITING
    command = [*argv, "--batch-results", str(answer_round(out / "batch", 1))]
    marker = tmp_path / "paused"
    env = {**os.environ, "PAUSE_AT": point, "PAUSE_MARK": str(marker)}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "tests")])
    process = subprocess.Popen(
        [sys.executable, str(DRIVER), *command], env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the driver never paused"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the run and the browser it started
    process.wait(timeout=30)
    process.stderr.close()  # type: ignore[union-attr]
    records = (out / "episodes.jsonl").read_text().splitlines()
    assert len(records) == (4 if point == "episode" else 3)  # killed before the round ended

    code, number = main(command), 1  # the same command again, then the remaining rounds
    while code == EXIT_WAITING:
        number += 1
        assert number < 8
        code = main([*argv, "--batch-results", str(answer_round(out / "batch", number))])
    assert code == 0
    assert outcomes(out) == SOLVED
    rounds = BatchFolder(out / "batch").rounds().rounds
    keys = [k for r in rounds for k in r.keys]
    assert len(keys) == len(set(keys)), "a request was asked in two rounds"
    finished = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    done = [(e["task"], e["seed"]) for e in finished if e["status"] == "done"]
    assert sorted(done) == sorted((t, 0) for t in TASKS)  # each episode finished once


@pytest.mark.slow
def test_browsergym_rounds_earn_direct_rewards_and_replay_reproduces_them(
    browsergym: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = direct(browsergym_args(tmp_path / "direct"))
    out = tmp_path / "batch"
    in_rounds(browsergym_args(out), out)
    assert outcomes(out) == outcomes(tmp_path / "direct") == SOLVED
    assert [e.reward for e in report(out).episodes] == [1.0, 1.0, 1.0]
    # BrowserGym's ids are its own, in DOM order: a replay shows the same pages, so the
    # rounds (through lent browsers) asked exactly what direct calls (through fresh browsers,
    # as BrowserGym launches them) sent, and no episode diverged
    assert canonical(asked(out)) == canonical(sent)
    assert report(out).divergent == 0
    assert [e.attempts for e in report(out).episodes] == [2, 2, 3]

    answers = out / "batch" / "answers.jsonl"
    replayed = tmp_path / "replayed"
    args = [*browsergym_args(replayed), "--replay", str(answers)]
    assert main(args) == 0  # offline: no model, the answers file only
    assert outcomes(replayed) == SOLVED
    assert [e.reward for e in report(replayed).episodes] == [1.0, 1.0, 1.0]
    # the action that ended an episode is never counted as one that had no effect
    assert [e.episode["failures"] for e in report(replayed).episodes] == [{}, {}, {}]

    # an answers file without enter-text's second answer: that episode is pending, named
    lines = answers.read_text().splitlines()
    (key,) = BatchFolder(out / "batch").rounds().rounds[1].keys
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(x for x in lines if key not in x) + "\n")
    capsys.readouterr()
    missing = tmp_path / "missing"
    args = [*browsergym_args(missing, ("enter-text",)), "--replay", str(partial)]
    assert main(args) == EXIT_PENDING
    err = capsys.readouterr().err
    assert "1 episodes pending" in err and "holds no answer for this act request" in err
    (episode,) = report(missing).episodes
    assert episode.status == "pending" and episode.steps == 1


def page_copy(root: Path) -> Path:
    """MiniWoB's pages for BrowserGym from a folder of our own: the shared scripts linked,
    enter-text's page copied (so that a test can change it)."""
    from live_runner.browsergym.environment import miniwob_pages_url

    package = Path(miniwob_pages_url().removeprefix("file://")).parent
    root.mkdir()
    for shared in ("core", "common"):
        (root / shared).symlink_to(package / shared)
    (root / "miniwob").mkdir()
    shutil.copy(package / "miniwob" / "enter-text.html", root / "miniwob")
    return root / "miniwob" / "enter-text.html"


@pytest.mark.slow
def test_a_page_changed_between_rounds_is_asked_again_and_counted_divergent(
    browsergym: None, tmp_path: Path
) -> None:
    page = page_copy(tmp_path / "html")
    out = tmp_path / "run"
    argv = [*browsergym_args(out, ("enter-text",)), "--backend", "batch"]
    argv += ["--miniwob-url", (tmp_path / "html" / "miniwob").as_uri() + "/"]
    assert main(argv) == EXIT_WAITING
    (before,) = BatchFolder(out / "batch").rounds().rounds[0].keys
    page.write_text(page.read_text().replace('<div id="area">', '<div id="area"><p>Reprint</p>'))

    results = answer_round(out / "batch", 1)  # the answer to the page as it was
    assert main([*argv, "--batch-results", str(results)]) == EXIT_WAITING
    (episode,) = report(out).episodes
    assert episode.status == "pending" and episode.steps == 0  # step 1 again: a new page
    assert (episode.divergences, episode.diverged_at, report(out).divergent) == (1, 1, 1)
    round_2 = BatchFolder(out / "batch").rounds().rounds[1]
    assert before not in round_2.keys
    (body,) = asked(out)[1:]
    assert "Reprint" in body["messages"][-1]["content"]  # the changed page is asked about

    number, code = 1, EXIT_WAITING
    while code == EXIT_WAITING:
        number += 1
        assert number < 6
        code = main([*argv, "--batch-results", str(answer_round(out / "batch", number))])
    assert code == 0
    (episode,) = report(out).episodes
    assert (episode.status, episode.reward, episode.divergences) == ("done", 1.0, 1)
    assert (
        "| browsergym/miniwob.enter-text | 1 | 1.00 | 1.000 | 2.0 | 0 | 0 | 1 |"
        in (out / "table.md").read_text()
    )
    steps = [json.loads(x) for x in (out / episode.run_dir / "steps.jsonl").open()]
    prompts = [s["agent"]["calls"][-1]["prompt"][-1]["content"] for s in steps]
    assert all("Reprint" in p for p in prompts)  # no answer to the old page was reused


def test_webagent_run_goes_in_rounds_and_a_finished_run_is_not_rerun(
    chromium: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "site" / "form.html"
    page.parent.mkdir()
    page.write_text(
        "<html><body><p>A form</p><input id=name type=text>"
        "<button id=go onclick=\"document.getElementById('out').textContent="
        "'Sent ' + document.getElementById('name').value\">Submit</button>"
        "<p id=out></p></body></html>"
    )
    out = tmp_path / "run"
    argv = [
        "run",
        "--url",
        page.as_uri(),
        "--task",
        'Enter "Ada" into the text field and press Submit.',
    ]
    argv += ["--max-steps", "2", "--out", str(out), "--model", MODEL, "--backend", "batch"]
    argv += ["--token-counter", "estimate", "--no-gist-cache", "--no-screenshots"]
    argv += ["--context-budget", "4096"]  # the oracle model is in no table of windows
    argv += ["--agent", "raw-html"] + (
        ["--browser-path", str(CHROMIUM)] if CHROMIUM.exists() else []
    )
    code, number = main(argv), 0
    assert code == EXIT_WAITING
    assert json.loads((out / "summary.json").read_text())["status"] == "pending"
    while code == EXIT_WAITING:
        number += 1
        assert number < 6
        code = main([*argv, "--batch-results", str(answer_round(out / "batch", number))])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "max_steps" and summary["attempts"] == number + 1
    steps = [json.loads(x) for x in (out / "steps.jsonl").open()]
    assert [s["action"]["op"] for s in steps] == ["TYPE", "CLICK"]
    assert all(s["outcome"]["ok"] for s in steps)
    capsys.readouterr()
    assert main(argv) == 0  # finished: not run again
    assert json.loads((out / "summary.json").read_text()) == summary
    assert "ended: max_steps after 2 steps" in capsys.readouterr().out
