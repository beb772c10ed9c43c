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

SCORE_EPILOG = """\
A step of the data without a prediction is scored as a miss, as the official code scores it;
a warning on stderr says how many there are. Bad lines of either file (not JSON, not UTF-8,
a field missing) are each named on stderr and left out.

exit status:
  0    scored
  1    nothing to score: every step was skipped (--missing-gold skip)
  2    a usage or data error (one line names it); among them a predictions file that is
       empty, holds no usable line, or has no prediction for any step of the data"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    score = subparsers.add_parser(
        "score",
        help="score a predictions JSONL against Mind2Web data (official metrics)",
        description="Score predictions (one JSON object per line: annotation_id, action_uid, "
        "element_id, op, value) against a Mind2Web dataset with the official formulas.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("--data", required=True, help=DATA_HELP)
    score.add_argument("--predictions", required=True, type=Path, help="predictions JSONL")
    score.add_argument("--json", action="store_true", help="print the full report as JSON")
    add_scoring_arguments(score)
    score.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    from mind2web_eval.aggregate import build_report
    from mind2web_eval.data import DatasetSummary, iter_tasks
    from mind2web_eval.predictions import check_some, load_predictions, unmatched
    from mind2web_eval.report.terminal import format_score_report
    from mind2web_eval.scoring import gold_steps, score_all

    settings = scoring_settings(EvalSection(**eval_values(args)["eval"]))
    predictions, issues = load_predictions(args.predictions)
    check_some(args.predictions, predictions, issues)
    summary = DatasetSummary(source=str(args.data))
    gold = (g for task in iter_tasks(args.data, summary) for g in gold_steps(task))
    scores, unknown = score_all(gold, predictions, settings)
    report = build_report(scores, settings, unknown)
    for issue in [*summary.issues, *issues]:
        print(f"warning: {issue}", file=sys.stderr)
    counts = report.counts
    missing = unmatched(
        args.predictions, args.data, counts.steps_in_data, counts.missing_predictions,
        len(predictions),
    )  # fmt: skip
    if missing:
        print(f"warning: {missing}", file=sys.stderr)
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
