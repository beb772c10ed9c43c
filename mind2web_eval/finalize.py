"""Turn a run folder's ``results.jsonl`` into predictions, scores and reports.

``predictions.jsonl`` (each step's final attempt, once) is what ``webagent score`` reads;
``results.json`` is scored from it against ``gold.jsonl`` (every step of the tasks the run
covered; a step never run counts as a missing prediction), by the same code as ``webagent
score``. ``results.json`` also says how many attempts each step took and which steps are
still pending (no answer yet: the same ``webagent eval`` command runs them again). The record types
(``RunFiles``, ``RunResults``) live in :mod:`mind2web_eval.run_results`, which the reports
import too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from mind2web_eval.aggregate import build_report
from mind2web_eval.data import DatasetSummary
from mind2web_eval.diagnostics import StepDiagnostics, summarize
from mind2web_eval.manifest import read_manifest
from mind2web_eval.records import LoadIssue
from mind2web_eval.report.html import write_html_report
from mind2web_eval.run_results import (
    Attempts,
    RunFiles,
    RunResults,
    read_gold,
    run_files,
    score_files,
)
from mind2web_eval.scoring import GoldStep, ScoringSettings
from mind2web_eval.store import ResultStore
from webagent.atomic import write_lines_atomic
from webagent.textfiles import read_text

__all__ = ["RunFiles", "RunResults", "finalize_run", "run_files", "score_run", "write_gold"]


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


def write_gold(
    run_dir: Path, gold: list[GoldStep], summary: DatasetSummary, complete: bool
) -> None:
    """``gold.jsonl`` (what scoring needs, no pages) and ``data.json`` (the load summary)."""
    summary.finish()
    write_lines_atomic(run_dir / "gold.jsonl", (g.model_dump_json() for g in gold))
    data = {**summary.model_dump(mode="json"), "complete": complete, "notes": summary.notes()}
    (run_dir / "data.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def _write_predictions(store: ResultStore, path: Path) -> list[StepDiagnostics]:
    diagnostics: list[StepDiagnostics] = []

    def lines() -> Iterable[str]:
        for record in store.records():
            diagnostics.append(record.diagnostics)
            yield record.prediction.model_dump_json()

    write_lines_atomic(path, lines())
    return diagnostics


def score_run(run_dir: Path, scoring: ScoringSettings) -> RunResults:
    """Score a run folder from its predictions and gold (rescoring needs no model)."""
    files = run_files(run_dir)
    store = ResultStore(files.results_jsonl)
    diagnostics = _write_predictions(store, files.predictions)
    gold = read_gold(files.gold)
    scores, unknown, issues = score_files(files, gold, scoring)
    manifest = read_manifest(run_dir / "manifest.json")
    data_path = run_dir / "data.json"
    data = json.loads(read_text(data_path)) if data_path.is_file() else {}
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
        + [str(LoadIssue.model_validate(i)) for i in data.get("issues", [])],
        data_notes=list(data.get("notes", [])),
    )


def finalize_run(run_dir: Path, scoring: ScoringSettings, report_steps: int) -> RunFiles:
    """Write ``predictions.jsonl``, ``results.json`` and ``report.html``."""
    files = run_files(run_dir)
    results = score_run(run_dir, scoring)
    files.results_json.write_text(results.model_dump_json(indent=2), encoding="utf-8")
    store = ResultStore(files.results_jsonl)
    write_html_report(files.report_html, results, store.records(), report_steps)
    return files
