"""The run loop with a scripted agent in real Chromium: traces, limits, secrets, the viewer,
a killed run, and the Mind2Web export read back by the offline evaluator's loader."""

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
from lxml import html as lxml_html

from live.agents import ScriptedAgent, click, select, type_into
from live.conftest import browser_settings
from live.pages import PageServer
from live_runner.episode import EndReason
from live_runner.export import export_run, write_export
from live_runner.safety import SecretStore
from live_runner.settings import LimitSettings, RunSettings
from live_runner.tab import run_task
from live_runner.trace import read_manifest, read_steps
from mind2web_eval.data import load_tasks
from webagent.contracts import Action, Observation, Op

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]


def settings(url: str, out: Path, **limits: Any) -> RunSettings:
    return RunSettings(
        url=url,
        task="Book a table for four on the terrace",
        out_dir=out,
        limits=LimitSettings(**{"max_steps": 5, "max_seconds": 120.0, **limits}),
        browser=browser_settings(),
    )


def test_run_traces_every_step_and_exports_mind2web(
    browser: Any, pages: PageServer, tmp_path: Path
) -> None:
    agent = ScriptedAgent(
        [
            type_into("Full name", "Ada Lovelace"),
            select("Party size", "Four people", "select"),
            None,  # an invalid step: reported back, the run goes on
            Action(element_id="424242", op=Op.CLICK),  # an id not on the page
            click("Terrace seat", "label"),
        ]
    )
    out = tmp_path / "run"
    result = run_task(settings(f"{pages.origin}/form.html", out), agent, browser=browser)
    assert result.status == EndReason.MAX_STEPS and result.steps == 5
    assert agent.seen[-1].previous_actions == [
        "[textbox]  Full name -> TYPE: Ada Lovelace",
        "[combobox]  Party size -> SELECT: Four people",
        "(no valid action: scripted: no action)",
        "[element]  id=424242 -> CLICK (failed: element id=424242 is no longer on the page)",
    ]
    steps = read_steps(out)
    assert [s.step for s in steps] == [1, 2, 3, 4, 5]
    for step in steps:
        assert (out / step.files["page"]).read_text().startswith("<html backend_node_id=")
        assert (out / step.files["screenshot"]).read_bytes()[:2] == b"\xff\xd8"
        assert json.loads((out / step.files["elements"]).read_text())
        assert step.agent is not None and step.timings["observe_s"] > 0
    # the snapshot of step 3 shows what steps 1 and 2 did to the page
    page3 = lxml_html.fromstring((out / steps[2].files["page"]).read_text())
    assert page3.get_element_by_id("name").get("value") == "Ada Lovelace"
    manifest = read_manifest(out)
    assert manifest["status"] == "max_steps" and manifest["task"].startswith("Book a table")
    assert json.loads((out / "summary.json").read_text())["steps"] == 5
    report = (out / "report.html").read_text()
    assert "Content-Security-Policy" in report and "Step 5" in report

    record = export_run(out)
    assert record["action_reprs"] == [
        "[textbox]  Full name -> TYPE: Ada Lovelace",
        "[combobox]  Party size -> SELECT: Four people",
        "[label]  Terrace seat -> CLICK",
    ]
    exported = tmp_path / "live.jsonl"
    assert write_export([out], exported) == 3
    tasks, summary = load_tasks(exported)
    assert summary.issues == [] and len(tasks) == 1
    step = tasks[0].actions[1]
    gold = step.pos_candidates[0].backend_node_id
    assert step.operation.op is Op.SELECT and step.operation.value == "Four people"
    assert f'backend_node_id="{gold}"' in (step.cleaned_html or "")
    assert tasks[0].previous_actions(1) == ["[textbox]  Full name -> TYPE: Ada Lovelace"]


def test_token_and_time_limits_end_the_run(browser: Any, pages: PageServer, tmp_path: Path) -> None:
    agent = ScriptedAgent([click("Sign out", "button")] * 10, tokens_per_step=100)
    result = run_task(
        settings(f"{pages.origin}/widgets.html", tmp_path / "tokens", max_steps=10, max_tokens=250),
        agent,
        browser=browser,
    )
    assert result.status == EndReason.MAX_TOKENS and result.steps == 3
    assert result.input_tokens == 300

    def slow(observation: Observation) -> Action | None:
        time.sleep(0.4)
        return None

    timed = run_task(
        settings(f"{pages.origin}/page2.html", tmp_path / "time", max_steps=10, max_seconds=0.6),
        ScriptedAgent([slow] * 10),
        browser=browser,
    )
    assert timed.status == EndReason.MAX_SECONDS and 1 <= timed.steps < 10


def test_secret_is_typed_but_lands_in_no_file(
    browser: Any, pages: PageServer, tmp_path: Path
) -> None:
    secret = "Tr0ub4dor&3"
    secrets = SecretStore.from_environ(["SITE_PIN"], {"SITE_PIN": secret, "HOME": "/root"})
    agent = ScriptedAgent(
        [
            type_into("Username", "ada"),
            type_into("Access code", "{{secret:SITE_PIN}}"),
            click("Sign in", "button"),
            click("Booking received", "h1"),
        ]
    )
    out = tmp_path / "secret-run"
    run_task(
        settings(f"{pages.origin}/login.html", out, max_steps=4),
        agent,
        secrets=secrets,
        browser=browser,
    )
    assert pages.posts[-1] == {"user": "ada", "pin": secret}  # the real value was typed
    # the page echoes it back; the agent sees the placeholder, never the value
    assert "pin={{secret:SITE_PIN}}" in agent.seen[3].html
    assert all(secret not in o.html for o in agent.seen)
    forms = [secret.encode(), secret.replace("&", "&amp;").encode(), b"Tr0ub4dor"]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 10
    for path in files:
        data = path.read_bytes()
        assert not any(form in data for form in forms), path


def test_viewer_escapes_page_content(browser: Any, pages: PageServer, tmp_path: Path) -> None:
    attack = "<script>alert('x')</script><img src=http://evil.test/x.png>"
    agent = ScriptedAgent([type_into("Full name", attack), click("Book now", "button")])
    out = tmp_path / "escape"
    run_task(settings(f"{pages.origin}/form.html", out, max_steps=2), agent, browser=browser)
    report = (out / "report.html").read_text()
    assert "&lt;script&gt;alert(" in report
    assert "<script" not in report.lower() and "<img src=http" not in report
    for src in lxml_html.fromstring(report).xpath("//img/@src"):
        assert src.startswith("step_") and src.endswith("screenshot.jpg")


def test_a_killed_run_leaves_a_readable_trace(pages: PageServer, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    process = subprocess.Popen(
        [sys.executable, "-m", "live.kill_target", f"{pages.origin}/widgets.html", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # kill once two steps are written and the viewer (rewritten after each step, just
        # after its line) shows the second; the run itself goes on until it is killed
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            lines = (out / "steps.jsonl").read_text() if (out / "steps.jsonl").exists() else ""
            report = (out / "report.html").read_text() if (out / "report.html").exists() else ""
            if lines.count("\n") >= 2 and "Step 2" in report:
                break
            time.sleep(0.1)
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
        if process.stderr:
            process.stderr.close()
    steps = read_steps(out)
    assert len(steps) >= 2 and steps[0].outcome.ok
    assert read_manifest(out)["status"] == "running"  # it never finished, and it says so
    report = (out / "report.html").read_text()
    assert "Step 2" in report
    assert export_run(out)["actions"]  # still exportable
