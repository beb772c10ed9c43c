"""Input files of ``score`` and ``eval`` as a user may hand them over: bytes that are not UTF-8
are named (file, line, column, byte) and cost no other record; a UTF-8 byte-order mark is
accepted; a binary page costs no model call. Every case runs the command line in this
process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from command_line import latin1_in, not_utf8, one_line, score
from eval_oracle import Oracle, oracle_model

import webagent.model.factory
from mind2web_eval.data import load_tasks
from webagent.cli import main

BOM = b"\xef\xbb\xbf"


def _tasks(raw_folder: Path) -> list[dict[str, Any]]:
    return [t for p in sorted(raw_folder.rglob("*.json")) for t in json.loads(p.read_text())]


def _jsonl(tasks: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(t).encode() + b"\n" for t in tasks]


def _scored(
    data: Path, predictions: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], list[str]]:
    """``webagent score --json``: the report, and the lines it wrote to stderr."""
    assert score(data, predictions, "--json") == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err.splitlines()


@pytest.fixture
def oracle_backend(monkeypatch: pytest.MonkeyPatch, raw_folder: Path) -> Oracle:
    """A scripted model that answers each step with its gold action (``eval_oracle``)."""
    tasks, _ = load_tasks(raw_folder)
    oracle = Oracle(tasks)
    monkeypatch.setattr(
        webagent.model.factory, "build_model", lambda *_a, **_k: oracle_model(oracle)
    )
    return oracle


def _eval(data: Path, out: Path, *flags: str) -> int:
    argv = ["eval", "--data", str(data), "--out", str(out), "--agent", "raw-html"]
    return main([*argv, "--no-gist-cache", "--no-progress", "--bootstrap", "5", *flags])


def test_a_latin1_byte_on_line_2_of_the_data_is_named_and_line_1_still_scores(
    raw_folder: Path, predictions_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, third = _jsonl(_tasks(raw_folder))
    bad, column = latin1_in(second, b"Boston")  # inside the task's own words
    data = tmp_path / "latin1.jsonl"
    data.write_bytes(first + bad + third)
    report, warnings = _scored(data, predictions_file, capsys)
    assert report["data"]["tasks"] == 2 and report["counts"]["steps_in_data"] == 6
    assert f"warning: {data}: line 2: field (line): {not_utf8(column)}" in warnings


@pytest.mark.usefixtures("oracle_backend")
def test_strict_eval_names_the_line_that_is_not_utf8(
    raw_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, third = _jsonl(_tasks(raw_folder))
    bad, column = latin1_in(second, b"Boston")
    data = tmp_path / "latin1.jsonl"
    data.write_bytes(first + bad + third)
    assert _eval(data, tmp_path / "strict", "--strict") == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent eval: error: {data}: 1 bad record(s) and --strict is set: line 2: field "
        f"(line): {not_utf8(column)}"
    )
    assert _eval(data, tmp_path / "run") == 0  # without --strict: lines 1 and 3 run
    predictions = (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    assert len(predictions) == 6
    assert f"{data}: line 2: field (line): not UTF-8 text" in capsys.readouterr().out


def test_a_utf8_byte_order_mark_is_accepted_in_data_and_predictions(
    raw_folder: Path, predictions_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, _ = _scored(raw_folder, predictions_file, capsys)
    as_list = tmp_path / "list" / "tasks.json"
    as_list.parent.mkdir()
    as_list.write_bytes(BOM + json.dumps(_tasks(raw_folder)).encode())
    as_lines = tmp_path / "tasks.jsonl"
    as_lines.write_bytes(BOM + b"".join(_jsonl(_tasks(raw_folder))))
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_bytes(BOM + predictions_file.read_bytes())
    for data in (as_list, as_lines):
        report, warnings = _scored(data, predictions, capsys)
        assert [line for line in warnings if ": field " in line] == []
        assert report["data"]["tasks"] == 3 and report["data"]["issues"] == []
        assert report["overall"] == plain["overall"] and report["counts"] == plain["counts"]


def test_an_item_of_a_json_list_with_a_latin1_byte_is_left_out_and_the_next_ones_load(
    raw_folder: Path, predictions_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = _tasks(raw_folder)
    text = json.dumps(tasks, indent=1).encode()
    bad, _ = latin1_in(text, b"Boston")  # inside the second task
    line = text[: text.index(b"Boston")].count(b"\n") + 1
    column = len(text[: text.index(b"Boston")].rsplit(b"\n", 1)[1]) + 1
    data = tmp_path / "test_task" / "test_task_0.json"
    data.parent.mkdir()
    data.write_bytes(bad)
    report, warnings = _scored(data, predictions_file, capsys)
    assert report["data"]["tasks"] == 2  # the first and the third
    assert f"warning: {data}: task #1: field (record): line {line}: {not_utf8(column)}" in warnings


def test_a_latin1_byte_in_a_predictions_line_costs_only_that_line(
    raw_folder: Path, predictions_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, _ = _scored(raw_folder, predictions_file, capsys)
    lines = predictions_file.read_bytes().splitlines(keepends=True)
    bad, column = latin1_in(lines[1], b'"op"')
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_bytes(lines[0] + bad + b"".join(lines[2:]))
    report, warnings = _scored(raw_folder, predictions, capsys)
    missing = report["counts"]["missing_predictions"]
    assert missing == plain["counts"]["missing_predictions"] + 1  # line 2 alone
    assert f"warning: {predictions}: task line 2: field (line): {not_utf8(column)}" in warnings


def test_eval_does_not_show_a_binary_page_to_the_model(
    raw_folder: Path, oracle_backend: Oracle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = _tasks(raw_folder)
    tasks[0]["actions"][1]["cleaned_html"] = bytes(range(256)).decode("latin-1") * 8
    data = tmp_path / "binary.jsonl"
    data.write_bytes(b"".join(_jsonl(tasks)))
    assert _eval(data, tmp_path / "run") == 0
    capsys.readouterr()
    assert oracle_backend.act_calls == 9  # every step but the binary one
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    (binary,) = [r for r in records if r["action_uid"] == tasks[0]["actions"][1]["action_uid"]]
    assert binary["diagnostics"]["error_class"] == "no_html"
    assert binary["error"] == (
        "the step's cleaned_html is binary data, not a page: it holds NUL bytes"
    )


@pytest.mark.usefixtures("oracle_backend")
def test_a_manifest_with_a_byte_order_mark_repeats_its_run(
    raw_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _eval(raw_folder, tmp_path / "first") == 0
    manifest = tmp_path / "first" / "manifest.json"
    manifest.write_bytes(BOM + manifest.read_bytes())
    argv = ["eval", "--config", str(manifest), "--out", str(tmp_path / "again"), "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    first, again = (
        (tmp_path / run / "predictions.jsonl").read_text() for run in ("first", "again")
    )
    assert first and again == first
