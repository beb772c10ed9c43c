"""The files of an eval run folder, its ``results.json`` record, and its steps scored from its
files: apart from the code that writes them (:mod:`mind2web_eval.finalize`) and the reports
that read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mind2web_eval.aggregate import ScoreReport
from mind2web_eval.diagnostics import PENDING_REASONS, DiagnosticsSummary
from mind2web_eval.predictions import load_predictions
from mind2web_eval.records import SCHEMA_VERSION, LoadIssue, Prediction
from mind2web_eval.scoring import GoldStep, ScoringSettings, StepScore, score_all
from webagent.errors import DatasetError
from webagent.textfiles import read_lines


class RunFiles(BaseModel):
    run_dir: Path
    results_jsonl: Path
    predictions: Path
    gold: Path
    results_json: Path
    report_html: Path


class Attempts(BaseModel):
    """How many attempts the steps took, and which steps have no answer yet."""

    steps_pending: int = 0
    pending_reasons: dict[str, int] = Field(
        default_factory=dict, description="error class (or not_run) -> steps"
    )
    pending_steps: dict[str, str] = Field(
        default_factory=dict, description="action_uid -> why it is pending"
    )
    histogram: dict[int, int] = Field(default_factory=dict, description="attempts -> steps")
    by_step: dict[str, int] = Field(default_factory=dict, description="action_uid -> attempts")

    def describe(self) -> str:
        tries = ", ".join(f"{n} attempt{'s' * (n > 1)}: {k}" for n, k in self.histogram.items())
        line = f"attempts per step: {tries or '-'}; pending steps: {self.steps_pending}"
        if self.pending_reasons:
            why = "; ".join(
                f"{count} {PENDING_REASONS.get(reason, reason)}"
                for reason, count in self.pending_reasons.items()
            )
            line += f" ({why})"
        return line


class RunResults(BaseModel):
    """``results.json``: what ``webagent compare`` and the reports read."""

    schema_version: int = SCHEMA_VERSION
    run_dir: str
    status: str = ""
    agent: str = ""
    model: str = ""
    agent_settings: dict[str, Any] = Field(default_factory=dict)
    model_settings: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)
    stopped_by: str | None = None
    protocol: str = ""
    score: ScoreReport
    diagnostics: DiagnosticsSummary
    attempts: Attempts = Field(default_factory=Attempts)
    load_issues: list[str] = Field(default_factory=list)
    data_notes: list[str] = Field(default_factory=list)


def run_files(run_dir: Path) -> RunFiles:
    return RunFiles(
        run_dir=run_dir,
        results_jsonl=run_dir / "results.jsonl",
        predictions=run_dir / "predictions.jsonl",
        gold=run_dir / "gold.jsonl",
        results_json=run_dir / "results.json",
        report_html=run_dir / "report.html",
    )


def read_gold(path: Path) -> list[GoldStep]:
    if not path.is_file():
        raise DatasetError(f"{path} is missing: run `webagent eval` on this folder again")
    gold = []
    for line in read_lines(path):
        if line.problem:
            raise DatasetError(f"{path}: line {line.number}: {line.problem}")
        gold.append(GoldStep.model_validate_json(line.text))
    return gold


def score_files(
    files: RunFiles, gold: list[GoldStep], scoring: ScoringSettings
) -> tuple[list[StepScore], int, list[LoadIssue]]:
    """Each gold step's score from ``predictions.jsonl``, unknown predictions, load issues."""
    predictions: dict[str, Prediction]
    predictions, issues = load_predictions(files.predictions)
    scores, unknown = score_all(gold, predictions, scoring)
    return scores, unknown, issues


def step_scores(run_dir: Path, scoring: ScoringSettings) -> list[StepScore]:
    """A finished run's step scores, as its ``results.json`` counted them (nothing written)."""
    files = run_files(run_dir)
    return score_files(files, read_gold(files.gold), scoring)[0]
