"""Read a predictions JSONL (one :class:`Prediction` per line, keyed by ``action_uid``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from mind2web_eval.records import LoadIssue, Prediction
from webagent.errors import DatasetError
from webagent.textfiles import read_lines


def load_predictions(path: Path) -> tuple[dict[str, Prediction], list[LoadIssue]]:
    """Predictions by ``action_uid``. Broken lines and repeats become issues (the first
    prediction of a step is the one scored; a step is never scored twice)."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such predictions file")
    found: dict[str, Prediction] = {}
    issues: list[LoadIssue] = []
    for line in read_lines(path):
        where = f"line {line.number}"
        try:
            prediction = Prediction.model_validate(line.json())
        except ValidationError as exc:
            for error in exc.errors()[:3]:
                field = ".".join(str(p) for p in error["loc"]) or "(record)"
                issues.append(_issue(path, where, field, error["msg"]))
            continue
        except ValueError as exc:
            issues.append(_issue(path, where, "(line)", str(exc)))
            continue
        if prediction.action_uid in found:
            issues.append(
                _issue(path, where, "action_uid", f"repeats {prediction.action_uid}; ignored")
            )
            continue
        found[prediction.action_uid] = prediction
    return found, issues


def _issue(path: Path, where: str, field: str, message: str) -> LoadIssue:
    return LoadIssue(file=str(path), task=where, field=field, message=message, kind="prediction")
