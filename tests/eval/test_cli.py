"""The `webagent score` and `compare` command lines: protocol printed, JSON, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_oracle import Oracle, oracle_model

from mind2web_eval.data import load_tasks
from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
from mind2web_eval.scoring import ScoringSettings
from webagent.agents.registry import AgentSettings, build_agent
from webagent.cli import build_parser, main


def test_subcommands_are_registered() -> None:
    help_text = build_parser().format_help()
    for command in ("score", "eval", "compare", "demo"):
        assert command in help_text


def test_score_prints_the_protocol_and_the_tables(
    raw_folder: Path, predictions_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "--data", str(raw_folder), "--predictions", str(predictions_file)]) == 0
    out = capsys.readouterr()
    assert "candidate pool: all positives; steps without a usable positive: score 0" in out.out
    assert "1 missing (scored wrong)" in out.out
    assert "1 for steps not in the data" in out.out
    assert "macro    75.0" in out.out  # element accuracy, hand-computed in test_scoring
    assert "website" in out.out and "flyfast" in out.out
    argv = ["score", "--data", str(raw_folder), "--predictions", str(predictions_file)]
    assert main([*argv, "--missing-gold", "skip", "--score-top-k", "50", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"] == {
        "missing_gold": "skip", "top_k": 50, "bootstrap": 1000, "seed": 0, "confidence": 0.95
    }  # fmt: skip
    assert "rank < 50" in report["protocol"]
    assert report["counts"]["steps_skipped"] == 2
    assert report["overall"]["micro"]["element_acc"] == pytest.approx(5 / 8)


def test_score_errors_are_clear(
    raw_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"
    assert main(["score", "--data", str(raw_folder), "--predictions", str(missing)]) == 2
    assert f"{missing}: no such predictions file" in capsys.readouterr().err
    one = tmp_path / "one.jsonl"
    one.write_text('{"annotation_id": "a", "action_uid": "s", "op": "CLICK", "element_id": "1"}\n')
    assert main(["score", "--data", str(tmp_path / "x"), "--predictions", str(one)]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_compare_json(raw_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks, _ = load_tasks(raw_folder)
    runs = []
    for agent in ("raw-html", "gist-only"):
        settings = AgentSettings(agent=agent, context_budget=2048)  # type: ignore[arg-type]
        model = oracle_model(Oracle(tasks))
        subject = EvalSubject(
            agent=build_agent(settings, model),
            agent_settings=settings.manifest(),
            model_settings={},
            model_identity={"backend": "scripted", "model": model.name},
        )
        out = tmp_path / agent
        scoring = ScoringSettings(bootstrap=10)
        run_eval(
            EvalSettings(data=str(raw_folder), out=out, scoring=scoring, progress=False), subject
        )
        runs.append(str(out))
    assert main(["compare", *runs, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["agent"] for r in rows] == ["raw-html", "gist-only"]
    assert all(r["steps"] == 10 and 0.0 <= r["step_sr"] <= 1.0 for r in rows)
    assert main(["compare", str(tmp_path / "none")]) == 2
    assert "no results.json" in capsys.readouterr().err


def test_eval_help_documents_pending_steps_and_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--help"])
    text = capsys.readouterr().out
    expected = ("--max-consecutive-failures", "--record-agent-errors", "pending",
                "4    incomplete", "3    stopped by --max-errors", "130  interrupted")  # fmt: skip
    for said in expected:
        assert said in text, said
