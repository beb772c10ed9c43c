"""``webagent score``, ``eval``, ``compare`` and ``demo``. Handlers build settings objects
from the parsed arguments (the environment is read here and nowhere deeper) and return an
exit code: 0 done, 1 nothing valid to score, 3 a run stopped by --max-errors, 4 incomplete,
5 waiting for the answers of a batch round, 130 interrupted."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mind2web_eval.batching import (
    BatchRounds,
    add_batch_arguments,
    check_batch_arguments,
    with_batch_dir,
)
from webagent.cli.options import add_run_arguments, config_from_args
from webagent.cli.plan import add_plan_arguments
from webagent.cli.render import add_render_argument
from webagent.config import EvalSection, Values
from webagent.errors import ConfigError

if TYPE_CHECKING:
    from mind2web_eval.runner import RunOutcome
    from mind2web_eval.scoring import ScoringSettings

EXIT_ABORTED = 3
EXIT_INCOMPLETE = 4
EXIT_INTERRUPTED = 130
_PENDING_SHOWN = 10

EVAL_EPILOG = """\
A step whose model call failed after its retries (refused, 5xx, 429, timeout) or whose page
could not be read is pending, not scored as wrong: the same command runs it again, and the
score uses each step's final attempt (results.json keeps every attempt's count).

exit status:
  0    complete: every step has an answer the model produced (right, wrong or unparseable)
  2    a usage, data or configuration error (one line names it): data with no usable
       record, or with any bad record under --strict, is one (the line names the first
       bad records); other bad records are named with the results and left out
  3    stopped by --max-errors
  4    incomplete: steps are pending (model or page failures, or the circuit breaker);
       the same command resumes
  5    waiting for answers (--backend batch): the requests still needed are in
       OUT/batch/round-NNN.requests.jsonl; go on with --batch-results FILE
  130  interrupted (Ctrl-C); the same command resumes
An exception inside the agent stops the run with its traceback (status 1) unless
--record-agent-errors is given."""

SCORE_EPILOG = """\
A step of the data without a prediction is scored as a miss, as the official code scores it;
a warning on stderr says how many there are. Bad lines of either file (not JSON, not UTF-8,
a field missing) are each named on stderr and left out.

exit status:
  0    scored
  1    nothing to score: every step was skipped (--missing-gold skip)
  2    a usage or data error (one line names it); among them a predictions file that is
       empty, holds no usable line, or has no prediction for any step of the data"""

_EVAL_DEFAULTS = EvalSection()
#: argparse ``dest`` -> field of the config's ``eval`` section
EVAL_FLAGS = (
    "data",
    "limit",
    "strict",
    "max_errors",
    "max_consecutive_failures",
    "record_agent_errors",
    "report_steps",
    "render",
    "missing_gold",
    "score_top_k",
    "bootstrap",
    "seed",
)


def add_scoring_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scoring protocol (printed with every result)")
    group.add_argument(
        "--missing-gold",
        choices=["fail", "skip"],
        help="steps without a usable positive: score 0 (fail, the official code) or leave "
        f"them out (skip) ({_EVAL_DEFAULTS.missing_gold})",
    )
    group.add_argument(
        "--score-top-k",
        type=int,
        metavar="K",
        help="candidate filter: only positives with ranker rank < K count (MindAct: 50)",
    )
    group.add_argument(
        "--bootstrap", type=int, help=f"resamples for CIs ({_EVAL_DEFAULTS.bootstrap})"
    )
    group.add_argument("--seed", type=int, help=f"bootstrap seed ({_EVAL_DEFAULTS.seed})")


def eval_values(args: argparse.Namespace) -> Values:
    """The ``eval`` section the command line gives."""
    section = {f: getattr(args, f) for f in EVAL_FLAGS if getattr(args, f, None) is not None}
    if getattr(args, "no_progress", False):
        section["progress"] = False
    return {"eval": section}


def scoring_settings(section: EvalSection) -> ScoringSettings:
    from mind2web_eval.scoring import ScoringSettings

    return ScoringSettings(
        missing_gold=section.missing_gold,
        top_k=section.score_top_k,
        bootstrap=section.bootstrap,
        seed=section.seed,
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    score = subparsers.add_parser(
        "score",
        help="score a predictions JSONL against Mind2Web data (official metrics)",
        description="Score predictions (one JSON object per line: annotation_id, action_uid, "
        "element_id, op, value) against a Mind2Web dataset with the official formulas.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("--data", required=True, help="Mind2Web data: folder, JSON(L), parquet")
    score.add_argument("--predictions", required=True, type=Path, help="predictions JSONL")
    score.add_argument("--json", action="store_true", help="print the full report as JSON")
    add_scoring_arguments(score)
    score.set_defaults(func=run_score)

    ev = subparsers.add_parser(
        "eval",
        help="run an agent over Mind2Web data (resumable), score it and write a report",
        description="Run an agent over every step of a Mind2Web dataset with the gold history "
        "(previous actions = action_reprs[:i]) and the step's cleaned_html. Results are "
        "appended to OUT/results.jsonl; run the same command again to resume.",
        epilog=EVAL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument(
        "--data", help="Mind2Web data: folder, JSON(L), parquet (or the --config's data)"
    )
    ev.add_argument("--out", required=True, type=Path, help="run folder (created; resumable)")
    ev.add_argument("--limit", type=int, help="first N tasks only")
    ev.add_argument(
        "--strict",
        action="store_true",
        default=None,
        help="any record of the data that cannot be loaded is an error (exit 2) instead of "
        "being named with the results and left out",
    )
    ev.add_argument("--max-errors", type=int, help="stop after N model/page/agent errors")
    ev.add_argument("--report-steps", type=int, help="steps in the HTML (300)")
    ev.add_argument(
        "--max-consecutive-failures",
        type=int,
        metavar="N",
        help="circuit breaker: end the run (incomplete) after N model failures in a row; "
        "0 turns it off (5)",
    )
    ev.add_argument(
        "--record-agent-errors",
        action="store_true",
        default=None,
        help="record an exception inside the agent as agent_error (pending) and go on, "
        "instead of stopping with its traceback",
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_render_argument(ev)
    add_scoring_arguments(ev)
    add_run_arguments(ev)
    add_plan_arguments(ev)
    add_batch_arguments(ev)
    ev.set_defaults(func=run_eval_command)

    compare = subparsers.add_parser(
        "compare", help="put several eval runs side by side (step SR, element acc, cost)"
    )
    compare.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    compare.add_argument("--json", action="store_true", help="print the table as JSON")
    compare.set_defaults(func=run_compare)

    from mind2web_eval.demo import register_demo

    register_demo(subparsers)


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


def run_eval_command(args: argparse.Namespace) -> int:
    from mind2web_eval.plan import RunToPlan, plan_beside_run, print_plan_before_run
    from mind2web_eval.runner import EvalSettings, run_eval
    from mind2web_eval.subject import describe_subject
    from webagent.build import open_agent
    from webagent.cli.plan import check_prices
    from webagent.cli.render import page_renderer

    check_prices(args)
    argv: list[str] = getattr(args, "argv", sys.argv[1:])
    config = with_batch_dir(config_from_args(args, extra=eval_values(args)), args.out)
    check_batch_arguments(args, config)
    section = config.eval
    if section.data is None:
        raise ConfigError("eval needs --data (or a --config that names the data)")
    data = section.data if section.data.startswith("hf:") else str(Path(section.data).resolve())
    settings = EvalSettings(
        data=data,
        out=args.out,
        limit=section.limit,
        strict=section.strict,
        workers=config.model.concurrency,
        max_errors=section.max_errors,
        max_consecutive_failures=section.max_consecutive_failures or None,
        record_agent_errors=section.record_agent_errors,
        scoring=scoring_settings(section),
        report_steps=section.report_steps,
        progress=section.progress,
        config=config.manifest(),
    )
    batch = BatchRounds(config) if config.model.backend == "batch" else None
    if batch is not None and not args.plan:
        batch.ingest(args.batch_results)
    with open_agent(config) as opened, contextlib.ExitStack() as stack:
        to_plan = RunToPlan(
            config.agent,
            opened.model,
            data,
            section.limit,
            opened.gist_cache,
            (args.price_in, args.price_out),
            strict=section.strict,
        )
        if args.plan:
            print_plan_before_run(to_plan, rounds=batch is not None)
            return 0
        plan_beside_run(to_plan, args.out)
        subject = describe_subject(opened)
        if section.render:
            subject.render = stack.enter_context(page_renderer(config))
        if batch is None:
            outcome = run_eval(settings, subject, argv=argv)
        else:
            once = lambda: run_eval(settings, subject, argv=argv)  # noqa: E731
            outcome = batch.run(once, args.batch_submit, args.batch_poll, opened.model)
    print_outcome(outcome.files.results_json)
    print_plan_vs_spent(args.out)
    print(
        f"{outcome.status}: {outcome.steps_run} steps run, {outcome.steps_resumed} resumed, "
        f"{outcome.run_errors} model/page errors\nreport: {outcome.files.report_html}"
    )
    if outcome.status == "complete":
        return 0
    waiting = batch.report(argv) if batch is not None else None
    if waiting is not None:
        return waiting
    print_pending(outcome, ["webagent", *argv])
    if outcome.status == "aborted":
        print(
            f"stopped: --max-errors {section.max_errors} reached; see the report", file=sys.stderr
        )
        return EXIT_ABORTED
    return EXIT_INTERRUPTED if outcome.status == "interrupted" else EXIT_INCOMPLETE


def print_pending(outcome: RunOutcome, command: list[str]) -> None:
    """On stderr: what stopped the run, which steps are pending and why, how to resume."""
    from mind2web_eval.diagnostics import PENDING_REASONS

    if outcome.stopped_by:
        print(f"stopped early: {outcome.stopped_by}", file=sys.stderr)
    if outcome.pending:
        why = "; ".join(
            f"{count} {PENDING_REASONS.get(reason, reason)}"
            for reason, count in outcome.pending_reasons().items()
        )
        print(f"{outcome.status}: {len(outcome.pending)} steps pending ({why})", file=sys.stderr)
        shown = list(outcome.pending.items())[:_PENDING_SHOWN]
        more = len(outcome.pending) - len(shown)
        print(
            "pending: "
            + ", ".join(f"{uid} ({reason})" for uid, reason in shown)
            + (f" and {more} more (results.json lists them)" if more > 0 else ""),
            file=sys.stderr,
        )
    print(f"resume with: {shlex.join(command)}", file=sys.stderr)


def print_plan_vs_spent(out: Path) -> None:
    from mind2web_eval.report.plan import format_plan_vs_spent, plan_vs_spent

    rows = plan_vs_spent(out)
    if rows is not None:
        print(format_plan_vs_spent(rows))


def print_outcome(results_json: Path) -> None:
    from mind2web_eval.report.compare import load_results
    from mind2web_eval.report.terminal import format_diagnostics, format_score_report

    results = load_results(results_json)
    print(f"agent: {results.agent}  model: {results.model}  status: {results.status}")
    print(results.attempts.describe())
    print(format_score_report(results.score, [*results.data_notes]))
    print(format_diagnostics(results.diagnostics))


def run_compare(args: argparse.Namespace) -> int:
    from mind2web_eval.report.compare import compare_rows, format_compare

    rows = compare_rows(args.runs)
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in rows], indent=2))
    else:
        print(format_compare(rows))
    return 0
