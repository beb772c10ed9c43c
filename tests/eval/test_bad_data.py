"""Bad data is an error, not an empty success: data with no usable record (or, under
--strict, any bad one) stops ``webagent eval`` with one line naming the first bad records;
other bad records are each named, with their line and reason, in the summary and the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_oracle import Oracle, oracle_model

import webagent.model.factory
from mind2web_eval.data import load_tasks
from webagent.cli import main
from webagent.errors import DatasetError


def _raw_tasks(raw_folder: Path) -> list[dict[str, Any]]:
    return [t for p in sorted(raw_folder.rglob("*.json")) for t in json.loads(p.read_text())]


def _jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_data_with_no_usable_record_is_an_error_naming_it(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", [{"foo": 1}, {"annotation_id": "x", "actions": 3}])
    with pytest.raises(DatasetError) as caught:
        load_tasks(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: no usable record (2 bad): line 1: field actions: missing")
    assert "; line 2: field confirmed_task: missing; field actions: Input should be" in message
    assert "\n" not in message
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DatasetError, match="no Mind2Web task"):
        load_tasks(empty)


def test_some_bad_records_are_each_named_and_strict_makes_them_an_error(
    raw_folder: Path, tmp_path: Path
) -> None:
    good = _raw_tasks(raw_folder)
    no_task = {k: v for k, v in good[1].items() if k != "confirmed_task"}
    path = _jsonl(tmp_path / "mixed.jsonl", [good[0], {"foo": 1}, no_task, good[2]])
    tasks, summary = load_tasks(path)
    assert len(tasks) == 2
    assert summary.bad_records() == [
        f"{path}: line 2: field actions: missing: neither a task (with 'actions') nor a step "
        "(with 'action_uid' and 'operation')",
        f"{path}: line 3: field confirmed_task: missing",
    ]
    notes = summary.notes()
    assert notes[0] == "2 record(s) could not be loaded and are left out:"
    assert notes[1:3] == [f"  {line}" for line in summary.bad_records()]
    with pytest.raises(DatasetError, match=r"2 bad record\(s\) and --strict is set: line 2: "):
        load_tasks(path, strict=True)


@pytest.fixture
def oracle_backend(monkeypatch: pytest.MonkeyPatch, raw_folder: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    monkeypatch.setattr(
        webagent.model.factory, "build_model", lambda *_a, **_k: oracle_model(Oracle(tasks))
    )


def _eval(data: Path, out: Path, *flags: str) -> int:
    argv = ["eval", "--data", str(data), "--out", str(out), "--agent", "raw-html"]
    return main([*argv, "--no-gist-cache", "--no-progress", "--bootstrap", "5", *flags])


@pytest.mark.usefixtures("oracle_backend")
def test_eval_of_data_with_no_usable_record_exits_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _jsonl(tmp_path / "bad.jsonl", [{"foo": 1}])
    assert _eval(data, tmp_path / "run") == 2
    out = capsys.readouterr()
    assert "steps run" not in out.out
    (line,) = out.err.strip().splitlines()
    assert "no usable record (1 bad): line 1: field actions: missing" in line


@pytest.mark.usefixtures("oracle_backend")
def test_eval_names_each_bad_record_in_the_summary_and_the_report(
    raw_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _raw_tasks(raw_folder)
    data = _jsonl(tmp_path / "mixed.jsonl", [good[0], {"foo": 1}, good[2]])
    assert _eval(data, tmp_path / "run") == 0
    out = capsys.readouterr().out
    assert "1 record(s) could not be loaded and are left out:" in out
    assert f"{data}: line 2: field actions: missing" in out
    report = (tmp_path / "run" / "report.html").read_text()
    assert "line 2: field actions: missing" in report
    assert _eval(data, tmp_path / "strict", "--strict") == 2
    assert "1 bad record(s) and --strict is set: line 2: " in capsys.readouterr().err
