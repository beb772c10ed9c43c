"""The files of an eval run folder and its ``results.json`` record: apart from the code that
writes them (:mod:`mind2web_eval.finalize`) and the reports that read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mind2web_eval.aggregate import ScoreReport
from mind2web_eval.diagnostics import DiagnosticsSummary
from mind2web_eval.records import SCHEMA_VERSION


class RunFiles(BaseModel):
    run_dir: Path
    results_jsonl: Path
    predictions: Path
    gold: Path
    results_json: Path
    report_html: Path


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
    protocol: str = ""
    score: ScoreReport
    diagnostics: DiagnosticsSummary
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
