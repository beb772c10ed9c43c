"""Turn a run folder's ``results.jsonl`` into predictions, scores and reports.

``predictions.jsonl`` (each step's final attempt, once) is what ``webagent score`` reads;
``results.json`` is scored from it against ``gold.jsonl`` (every step of the tasks the run
covered; a step never run counts as a missing prediction), by the same code as ``webagent
score``. ``results.json`` also says how many attempts each step took and which steps are
still pending (no answer yet: the same ``webagent eval`` command runs them again).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mind2web_eval.aggregate import ScoreReport, build_report
from mind2web_eval.data import DatasetSummary
from mind2web_eval.diagnostics import (
    PENDING_REASONS,
    DiagnosticsSummary,
    StepDiagnostics,
    summarize,
)
from mind2web_eval.manifest import read_manifest
from mind2web_eval.predictions import load_predictions
from mind2web_eval.records import SCHEMA_VERSION, Prediction
from mind2web_eval.scoring import GoldStep, ScoringSettings, score_all
from mind2web_eval.store import ResultStore
from webagent.errors import DatasetError


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


def count_attempts(gold: Iterable[GoldStep], store: ResultStore) -> Attempts:
    """Attempts and pending steps of the data in ``gold``, as ``store`` holds them."""
    attempts, failed = store.attempts(), store.pending
    by_step: dict[str, int] = {}
    pending: dict[str, str] = {}
    for step in gold:
        uid = step.action_uid
        by_step[uid] = attempts.get(uid, 0)
        if uid not in store:
            pending[uid] = failed.get(uid, "not_run")
    histogram = Counter(n for n in by_step.values() if n)
    return Attempts(
        steps_pending=len(pending),
        pending_reasons=dict(Counter(pending.values()).most_common()),
        pending_steps=pending,
        histogram=dict(sorted(histogram.items())),
        by_step=by_step,
    )


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


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as stream:
        for line in lines:
            stream.write(line + "\n")
    os.replace(tmp, path)


def write_gold(
    run_dir: Path, gold: list[GoldStep], summary: DatasetSummary, complete: bool
) -> None:
    """``gold.jsonl`` (what scoring needs, no pages) and ``data.json`` (the load summary)."""
    summary.finish()
    _write_lines(run_dir / "gold.jsonl", (g.model_dump_json() for g in gold))
    data = {**summary.model_dump(mode="json"), "complete": complete, "notes": summary.notes()}
    (run_dir / "data.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def read_gold(path: Path) -> list[GoldStep]:
    if not path.is_file():
        raise DatasetError(f"{path} is missing: run `webagent eval` on this folder again")
    with path.open(encoding="utf-8") as stream:
        return [GoldStep.model_validate_json(line) for line in stream if line.strip()]


def _write_predictions(store: ResultStore, path: Path) -> list[StepDiagnostics]:
    diagnostics: list[StepDiagnostics] = []

    def lines() -> Iterable[str]:
        for record in store.records():
            diagnostics.append(record.diagnostics)
            yield record.prediction.model_dump_json()

    _write_lines(path, lines())
    return diagnostics


def score_run(run_dir: Path, scoring: ScoringSettings) -> RunResults:
    """Score a run folder from its predictions and gold (rescoring needs no model)."""
    files = run_files(run_dir)
    store = ResultStore(files.results_jsonl)
    diagnostics = _write_predictions(store, files.predictions)
    predictions: dict[str, Prediction]
    predictions, issues = load_predictions(files.predictions)
    gold = read_gold(files.gold)
    scores, unknown = score_all(gold, predictions, scoring)
    manifest = read_manifest(run_dir / "manifest.json")
    data_path = run_dir / "data.json"
    data = json.loads(data_path.read_text(encoding="utf-8")) if data_path.is_file() else {}
    return RunResults(
        run_dir=str(run_dir),
        status=manifest.status if manifest else "",
        agent=str(manifest.agent.get("agent", "")) if manifest else "",
        model=str(manifest.model_identity.get("model", "")) if manifest else "",
        agent_settings=manifest.agent if manifest else {},
        model_settings=manifest.model if manifest else {},
        data={k: v for k, v in data.items() if k not in ("issues", "notes")},
        stopped_by=manifest.stopped_by if manifest else None,
        protocol=scoring.describe(),
        score=build_report(scores, scoring, unknown),
        diagnostics=summarize(diagnostics),
        attempts=count_attempts(gold, store),
        load_issues=[str(i) for i in issues]
        + [
            f"{i['file']}: task {i['task']}: field {i['field']}: {i['message']}"
            for i in data.get("issues", [])
        ],
        data_notes=list(data.get("notes", [])),
    )


def finalize_run(run_dir: Path, scoring: ScoringSettings, report_steps: int) -> RunFiles:
    """Write ``predictions.jsonl``, ``results.json`` and ``report.html``."""
    from mind2web_eval.report.html import write_html_report

    files = run_files(run_dir)
    results = score_run(run_dir, scoring)
    files.results_json.write_text(results.model_dump_json(indent=2), encoding="utf-8")
    store = ResultStore(files.results_jsonl)
    write_html_report(files.report_html, results, store.records(), report_steps)
    return files
