"""Pure parts of the live runner, no browser: action validation and lines, the agent →
live action mapping, seeds parsing, the viewer's escaping, the trace reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import html as lxml_html
from pydantic import ValidationError

from live_runner.actions import ActionOutcome, ElementLabel, FailureKind, LiveAction, LiveOp
from live_runner.commands.common import parse_seeds
from live_runner.episode import to_live_action
from live_runner.errors import LiveRunnerError
from live_runner.records import EpisodeResult
from live_runner.safety import SecretStore
from live_runner.trace import RunTracer, StepRecord, read_steps
from live_runner.viewer import render_report
from webagent.contracts import Action, ModelCall, Op, StepTrace
from webagent.errors import ConfigError


def test_live_actions_are_validated() -> None:
    with pytest.raises(ValidationError, match="CLICK needs an element_id"):
        LiveAction(op=LiveOp.CLICK)
    with pytest.raises(ValidationError, match="GOTO needs a URL"):
        LiveAction(op=LiveOp.GOTO)
    with pytest.raises(ValidationError, match="up, down, left or right"):
        LiveAction(op=LiveOp.SCROLL, value="sideways")
    with pytest.raises(ValidationError, match="WAIT is 0 to 10"):
        LiveAction(op=LiveOp.WAIT, value="60")
    with pytest.raises(ValidationError, match="press_enter applies to TYPE only"):
        LiveAction(op=LiveOp.CLICK, element_id="3", press_enter=True)
    typed = LiveAction.from_action(Action(element_id="7", op=Op.TYPE, value="Oslo"))
    assert typed.op is LiveOp.TYPE and typed.to_action() == Action(
        element_id="7", op=Op.TYPE, value="Oslo"
    )
    assert LiveAction(op=LiveOp.BACK).to_action() is None


def test_action_lines_follow_mind2web() -> None:
    label = ElementLabel(role="textbox", text="  Flying   from ")
    typed = LiveAction(op=LiveOp.TYPE, element_id="5", value="Oslo", press_enter=True)
    assert (
        ActionOutcome(action=typed, label=label, ok=True).describe()
        == "[textbox]  Flying from -> TYPE: Oslo and Enter"
    )
    failed = ActionOutcome(
        action=LiveAction(op=LiveOp.CLICK, element_id="9"),
        ok=False,
        failure=FailureKind.COVERED,
        message="element is covered by another element",
    )
    assert failed.describe() == (
        "[element]  id=9 -> CLICK (failed: element is covered by another element)"
    )
    long = ElementLabel(role="link", text="x" * 200).render()
    assert len(long) < 80 and long.endswith("…")
    assert ActionOutcome(action=None, ok=False, message="bad json").describe() == (
        "(no valid action: bad json)"
    )


def test_agent_traces_map_to_live_actions() -> None:
    ok = StepTrace(agent="x", action=Action(element_id="4", op=Op.SELECT, value="Blue"))
    action, why = to_live_action(ok)
    assert action == LiveAction(op=LiveOp.SELECT, element_id="4", value="Blue") and why == ""
    failed = StepTrace(agent="x", error="no JSON object", error_class="invalid_output")
    assert to_live_action(failed) == (None, "no JSON object")


def test_seeds_parse() -> None:
    assert parse_seeds("3") == (0, 1, 2)
    assert parse_seeds("1,5,9") == (1, 5, 9)
    assert parse_seeds("10-12") == (10, 11, 12)
    with pytest.raises(ConfigError, match="--seeds 'x'"):
        parse_seeds("x")


def _step(n: int, text: str) -> StepRecord:
    call = ModelCall(phase="act", prompt=[{"role": "user", "content": text}], response=text)
    return StepRecord(
        step=n,
        started_at="2026-01-01T00:00:00+00:00",
        url=f"http://example.com/?q={text}",
        title=text,
        previous_actions=[text],
        agent=StepTrace(agent="x", gists=[text], calls=[call], memory=text),
        action=LiveAction(op=LiveOp.TYPE, element_id="1", value=text),
        outcome=ActionOutcome(
            action=LiveAction(op=LiveOp.TYPE, element_id="1", value=text),
            label=ElementLabel(role="textbox", text=text),
            ok=False,
            failure=FailureKind.DIALOG,
            message=text,
        ),
        files={"screenshot": "step_001/screenshot.jpg"},
    )


def test_viewer_escapes_everything_from_pages_and_models() -> None:
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'"
    summary = EpisodeResult(status="max_steps", steps=1, elapsed_s=1.0, final_answer=evil)
    report = render_report({"task": evil, "url": evil}, [_step(1, evil)], summary)
    assert "<script" not in report.lower() and "onerror=alert" not in report.replace(
        "onerror=alert(2)&gt;", ""
    )
    root = lxml_html.fromstring(report)
    assert root.xpath("//script") == [] and root.xpath("//*[@onerror]") == []
    assert [i.get("src") for i in root.xpath("//img")] == ["step_001/screenshot.jpg"]
    csp = root.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")[0]
    assert "default-src 'none'" in csp


def test_tracer_redacts_and_reader_survives_a_torn_line(tmp_path: Path) -> None:
    secrets = SecretStore({"PW": "correct horse"})
    tracer = RunTracer(tmp_path / "run", secrets)
    tracer.start({"task": "log in with correct horse"})
    tracer.write_step(_step(1, "typed correct horse"), None)
    with (tmp_path / "run" / "steps.jsonl").open("a") as out:
        out.write('{"schema_version": 1, "step": 2, "star')  # killed mid-write
    steps = read_steps(tmp_path / "run")
    assert [s.step for s in steps] == [1]
    assert steps[0].title == "typed {{secret:PW}}"
    for path in (p for p in (tmp_path / "run").rglob("*") if p.is_file()):
        assert b"correct horse" not in path.read_bytes(), path
    with pytest.raises(LiveRunnerError, match="already holds a run"):
        RunTracer(tmp_path / "run").start({})
