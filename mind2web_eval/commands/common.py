"""What the evaluation verbs share: exit codes, the scoring protocol's options, the ``eval``
section the command line gives, and the lines a stopped run prints."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from webagent.config import EvalSection, Values

if TYPE_CHECKING:
    from mind2web_eval.runner import RunOutcome
    from mind2web_eval.scoring import ScoringSettings

EXIT_ABORTED = 3
EXIT_INCOMPLETE = 4
EXIT_INTERRUPTED = 130
_PENDING_SHOWN = 10

DATA_HELP = (
    "Mind2Web data: a folder, JSON(L), parquet (a file or a folder of shards), a save_to_disk "
    "folder, or hf:OWNER/NAME:SPLIT (e.g. hf:osunlp/Multimodal-Mind2Web:test_task)"
)
_EVAL_DEFAULTS = EvalSection()
#: argparse ``dest`` -> field of the config's ``eval`` section
EVAL_FLAGS = (
    "data",
    "limit",
    "strict",
    "screenshots",
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
