"""Read a predictions JSONL (one :class:`Prediction` per line, keyed by ``action_uid``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from mind2web_eval.data import name_first
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


def check_some(path: Path, found: dict[str, Prediction], issues: list[LoadIssue]) -> None:
    """A :class:`DatasetError` when ``path`` holds no usable prediction: scoring it would
    give every step 0 (its one line names the first bad lines)."""
    if found:
        return
    if not issues:
        raise DatasetError(f"{path}: no prediction in the file: nothing to score")
    named = name_first([f"{i.task}: field {i.field}: {i.message}" for i in issues])
    raise DatasetError(f"{path}: no usable prediction ({len(issues)} bad): {named}")


def unmatched(path: Path, data: str, steps: int, missing: int, predictions: int) -> str | None:
    """The warning for ``missing`` of the data's ``steps`` without a prediction in ``path``
    (None when every step has one). When no step has one, a :class:`DatasetError`: every
    step would score 0, and a table of zeros would hide that the files do not match."""
    if not missing:
        return None
    if missing == steps:
        raise DatasetError(
            f"{path}: none of its {predictions} prediction(s) is for a step of {data} (no "
            "action_uid in common): every step would score 0; were they made on other data?"
        )
    return (
        f"{missing} of {steps} steps of {data} have no prediction in {path}; they are scored "
        "as misses (the official protocol)"
    )
