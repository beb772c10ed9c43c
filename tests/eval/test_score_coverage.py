"""``webagent score`` against predictions that do not cover the data: a predictions file that
is empty, holds no usable line or matches no step of the data is an error (exit 2, one line),
not a table of zeros; steps without a prediction are said, and scored as misses as the
official code scores them. Every case runs the command line in this process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from command_line import not_utf8, one_line, score


def test_score_without_a_prediction_for_any_step_is_an_error(
    raw_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert score(raw_folder, empty) == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent score: error: {empty}: no prediction in the file: nothing to score"
    )
    other = tmp_path / "other.jsonl"
    other.write_text(
        "".join(
            json.dumps({"annotation_id": "elsewhere", "action_uid": f"x{n}", "element_id": "1",
                        "op": "CLICK", "value": ""}) + "\n"
            for n in range(3)
        )
    )  # fmt: skip
    assert score(raw_folder, other) == 2
    out = capsys.readouterr()
    assert out.out == ""  # no table of zeros
    assert one_line(out.err) == (
        f"webagent score: error: {other}: none of its 3 prediction(s) is for a step of "
        f"{raw_folder} (no action_uid in common): every step would score 0; were they made on "
        "other data?"
    )
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b'{"action_uid": "caf' + b"\xe9" + b'"}\nnot json\n')
    assert score(raw_folder, broken) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"webagent score: error: {broken}: no usable prediction (2 bad): ")
    assert f"line 1: field (line): {not_utf8(20)}" in line


def test_score_says_how_many_steps_have_no_prediction(
    raw_folder: Path, predictions_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first_two = tmp_path / "two.jsonl"
    first_two.write_bytes(b"".join(predictions_file.read_bytes().splitlines(keepends=True)[:2]))
    assert score(raw_folder, first_two) == 0
    out = capsys.readouterr()
    assert "predictions: 8 missing (scored wrong)" in out.out  # the official protocol
    assert (
        f"warning: 8 of 10 steps of {raw_folder} have no prediction in {first_two}; they are "
        "scored as misses (the official protocol)"
    ) in out.err.splitlines()
