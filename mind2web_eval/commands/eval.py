"""``webagent eval``: an agent over every step of Mind2Web data, resumable, scored and
reported. Exit codes: :data:`EVAL_EPILOG`."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from mind2web_eval.commands.common import (
    DATA_HELP,
    EXIT_ABORTED,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    add_scoring_arguments,
    eval_values,
    print_outcome,
    print_pending,
    print_plan_vs_spent,
    scoring_settings,
)
from webagent.cli.batch import (
    BatchRounds,
    add_batch_arguments,
    check_batch_arguments,
    with_batch_dir,
)
from webagent.cli.options import add_run_arguments, config_from_args
from webagent.cli.plan import add_plan_arguments
from webagent.cli.render import add_render_argument
from webagent.errors import ConfigError

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


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ev = subparsers.add_parser(
        "eval",
        help="run an agent over Mind2Web data (resumable), score it and write a report",
        description="Run an agent over every step of a Mind2Web dataset with the gold history "
        "(previous actions = action_reprs[:i]) and the step's cleaned_html. Results are "
        "appended to OUT/results.jsonl; run the same command again to resume.",
        epilog=EVAL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument("--data", help=DATA_HELP + " (or the --config's data)")
    ev.add_argument("--out", required=True, type=Path, help="run folder (created; resumable)")
    ev.add_argument("--limit", type=int, help="first N tasks only")
    ev.add_argument(
        "--strict",
        action="store_true",
        default=None,
        help="any record of the data that cannot be loaded is an error (exit 2) instead of "
        "being named with the results and left out",
    )
    ev.add_argument(
        "--screenshots",
        type=Path,
        metavar="DIR",
        help="Multimodal-Mind2Web's screenshots: written, never decoded, to "
        "DIR/<annotation_id>/<action_uid>.<png|jpg...>, each step keeping its path (default: "
        "left out)",
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


def run_eval_command(args: argparse.Namespace) -> int:
    from mind2web_eval.cost import write_cost
    from mind2web_eval.plan import RunToPlan, plan_beside_run, print_plan_before_run
    from mind2web_eval.runner import EvalSettings, run_eval
    from mind2web_eval.subject import describe_subject
    from webagent.build import open_agent, open_model
    from webagent.cli.plan import price_from_args
    from webagent.cli.render import check_page_source, page_renderer

    price = price_from_args(args)
    argv: list[str] = getattr(args, "argv", sys.argv[1:])
    config = with_batch_dir(config_from_args(args, extra=eval_values(args)), args.out)
    check_batch_arguments(args, config)
    section = config.eval
    check_page_source(config, section.render)
    if section.data is None:
        raise ConfigError("eval needs --data (or a --config that names the data)")
    data = section.data if section.data.startswith("hf:") else str(Path(section.data).resolve())
    settings = EvalSettings(
        data=data,
        out=args.out,
        limit=section.limit,
        strict=section.strict,
        screenshots=section.screenshots.resolve() if section.screenshots else None,
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
    if args.plan:  # every agent planned (the run's own too where it cannot run); no model call
        with open_model(config, planning=True) as (model, cache), contextlib.ExitStack() as stack:
            render = None
            if section.render:  # every agent is planned, the one that reads the tree too
                render = stack.enter_context(page_renderer(config, axtree=True))
            run = RunToPlan(
                config.agent, model, data, section.limit, cache, price, section.strict, render
            )
            print_plan_before_run(run, rounds=batch is not None)
        return 0
    if batch is not None:
        batch.ingest(args.batch_results)
    with open_agent(config) as opened, contextlib.ExitStack() as stack:
        render = stack.enter_context(page_renderer(config)) if section.render else None
        to_plan = RunToPlan(
            config.agent,
            opened.model,
            data,
            section.limit,
            opened.gist_cache,
            price,
            strict=section.strict,
            render=render,
        )
        plan_beside_run(to_plan, args.out)
        subject = describe_subject(opened)
        subject.render = render
        if batch is None:
            outcome = run_eval(settings, subject, argv=argv)
        else:
            once = lambda: run_eval(settings, subject, argv=argv)  # noqa: E731
            outcome = batch.run(once, args.batch_submit, args.batch_poll, opened.model)
    print_outcome(outcome.files.results_json)
    print_plan_vs_spent(args.out)
    if price is not None:
        print(write_cost(args.out, price).describe())
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
