"""``webagent run``: drive a real browser on one task until STOP or a limit."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from live_runner.commands.common import (
    LIVE_EPILOG,
    add_browser_arguments,
    browser_settings,
    continue_argv,
    default_out,
    exit_status,
    live_values,
    run_agent,
)
from webagent.cli.batch import add_batch_arguments
from webagent.cli.options import add_repeatable, add_run_arguments, config_from_args
from webagent.errors import ConfigError, validation_message

RUN_MAX_STEPS = 15
RUN_MAX_SECONDS = 600.0
RUN_HELP = "drive a real browser: observe, let the agent act, until STOP or a limit"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser(
        "run",
        help=RUN_HELP,
        description=RUN_HELP + ". The same command goes on with a run that has not ended "
        "(pending: the model did not answer a step, e.g. --backend batch's request rounds; or "
        "an error): it is replayed from the start URL in the same --out; one that ended is "
        "not run again.",
        epilog=LIVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--url", required=True, help="start URL (http, https or file)")
    run.add_argument("--task", required=True, help="what the agent should do")
    run.add_argument("--max-steps", type=int, help=f"({RUN_MAX_STEPS})")
    run.add_argument("--max-seconds", type=float, help=f"({RUN_MAX_SECONDS:.0f})")
    run.add_argument("--max-tokens", type=int, help="model tokens in + out (no limit)")
    add_repeatable(
        run,
        "--allow",
        "DOMAIN",
        "also allow this domain and its subdomains (repeatable; the start site always is)",
    )
    add_repeatable(
        run,
        "--secret",
        "NAME",
        "make environment variable NAME typeable as {{secret:NAME}} (never traced)",
    )
    run.add_argument(
        "--confirm-submit", action="store_true", help="ask on the terminal before submitting"
    )
    run.add_argument(
        "--block-offsite-resources",
        action="store_true",
        help="also block images, scripts and XHR to other domains",
    )
    run.add_argument("--out", type=Path, help="run folder (default runs/live/<time>)")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    add_browser_arguments(run)
    add_run_arguments(run)
    add_batch_arguments(run)
    run.set_defaults(func=run_command)


def _ask(what: str) -> bool:
    if not sys.stdin.isatty():
        print(f"not confirmed (no terminal to ask): {what}", file=sys.stderr)
        return False
    answer = input(f"{what}. Allow? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def run_command(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from live_runner.safety import SecretStore
    from live_runner.settings import LimitSettings, RunSettings, SafetySettings
    from live_runner.tab import finished_run, run_task_again

    config = config_from_args(args, extra=live_values(args))
    live = config.live
    secrets = SecretStore.from_environ(args.secret, os.environ)
    try:
        settings = RunSettings(
            url=args.url,
            task=args.task,
            out_dir=args.out or default_out("live"),
            limits=LimitSettings(
                max_steps=live.max_steps or RUN_MAX_STEPS,
                max_seconds=live.max_seconds or RUN_MAX_SECONDS,
                max_tokens=live.max_tokens,
            ),
            browser=browser_settings(live),
            safety=SafetySettings(
                allowed_domains=live.allowed_domains,
                confirm_submit=live.confirm_submit,
                block_offsite_resources=live.block_offsite_resources,
            ),
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid run settings: {validation_message(exc)}") from exc
    if finished_run(settings.out_dir) is not None:
        print(f"{settings.out_dir} holds a run that ended: not run again", file=sys.stderr)
    result, waiting = run_agent(
        args,
        config,
        settings.out_dir,
        lambda opened: run_task_again(
            settings, opened.agent, secrets=secrets, confirm=_ask, agent_manifest=opened.manifest
        ),
    )
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(f"ended: {result.status} after {result.steps} steps, {result.elapsed_s:.1f} s")
        print(f"tokens: {result.input_tokens} in / {result.output_tokens} out")
        if result.final_answer is not None:
            print(f"answer: {result.final_answer}")
        print(f"trace: {settings.out_dir / 'report.html'}")
    return exit_status([result], waiting, continue_argv(args, settings.out_dir))
