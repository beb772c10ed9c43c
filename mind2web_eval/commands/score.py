"""``webagent score``: a predictions file against Mind2Web data, with the official metrics."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mind2web_eval.commands.common import (
    DATA_HELP,
    add_scoring_arguments,
    eval_values,
    scoring_settings,
)
from webagent.config import EvalSection


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    score = subparsers.add_parser(
        "score",
        help="score a predictions JSONL against Mind2Web data (official metrics)",
        description="Score predictions (one JSON object per line: annotation_id, action_uid, "
        "element_id, op, value) against a Mind2Web dataset with the official formulas.",
    )
    score.add_argument("--data", required=True, help=DATA_HELP)
    score.add_argument("--predictions", required=True, type=Path, help="predictions JSONL")
    score.add_argument("--json", action="store_true", help="print the full report as JSON")
    add_scoring_arguments(score)
    score.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    from mind2web_eval.aggregate import build_report
    from mind2web_eval.data import DatasetSummary, iter_tasks
    from mind2web_eval.predictions import load_predictions
    from mind2web_eval.report.terminal import format_score_report
    from mind2web_eval.scoring import gold_steps, score_all

    settings = scoring_settings(EvalSection(**eval_values(args)["eval"]))
    predictions, issues = load_predictions(args.predictions)
    summary = DatasetSummary(source=str(args.data))
    gold = (g for task in iter_tasks(args.data, summary) for g in gold_steps(task))
    scores, unknown = score_all(gold, predictions, settings)
    report = build_report(scores, settings, unknown)
    for issue in [*summary.issues, *issues]:
        print(f"warning: {issue}", file=sys.stderr)
    if args.json:
        payload = {
            **report.model_dump(mode="json"),
            "protocol": settings.describe(),
            "data": summary.model_dump(mode="json", exclude={"files"}),
            "data_notes": summary.notes(),
            "prediction_issues": [str(i) for i in issues],
        }
        print(json.dumps(payload, indent=2))
    else:
        print(f"data: {args.data} ({summary.tasks} tasks, sha256 {summary.sha256[:16]})")
        print(format_score_report(report, summary.notes()))
    return 0 if report.counts.steps_scored else 1
