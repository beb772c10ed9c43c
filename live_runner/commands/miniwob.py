"""``webagent miniwob``: MiniWoB++ tasks × seeds in a real browser, offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from live_runner.commands.common import (
    LIVE_EPILOG,
    add_browser_arguments,
    browser_settings,
    default_out,
    end_suite,
    live_values,
    parse_seeds,
    progress_line,
    run_agent,
)
from webagent.cli.batch import add_batch_arguments
from webagent.cli.options import add_run_arguments, config_from_args
from webagent.config import LiveSection, RunConfig
from webagent.errors import ConfigError, validation_message

MINIWOB_MAX_STEPS = 5
MINIWOB_HELP = "run an agent on MiniWoB++ tasks and seeds; report success rate and reward"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mini = subparsers.add_parser(
        "miniwob",
        help=MINIWOB_HELP,
        description=MINIWOB_HELP + ".",
        epilog=LIVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mini.add_argument(
        "--tasks", required=True, help="comma-separated, e.g. click-button,enter-text"
    )
    mini.add_argument(
        "--seeds", default="3", help="N (seeds 0..N-1), a list 1,5,9 or a range 10-14 (3)"
    )
    mini.add_argument("--max-steps", type=int, help=f"per episode ({MINIWOB_MAX_STEPS})")
    mini.add_argument(
        "--episode-seconds",
        type=float,
        help=f"MiniWoB's episode clock ({LiveSection().episode_seconds:.0f})",
    )
    mini.add_argument("--out", type=Path, help="results folder (default runs/miniwob/<time>)")
    mini.add_argument("--json", action="store_true", help="print the report as JSON")
    add_browser_arguments(mini)
    add_run_arguments(mini)
    add_batch_arguments(mini)
    mini.set_defaults(func=miniwob_command)


def miniwob_command(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from live_runner.miniwob import run_miniwob
    from live_runner.settings import MiniWobSettings

    config: RunConfig = config_from_args(args, extra=live_values(args))
    live = config.live
    try:
        settings = MiniWobSettings(
            tasks=tuple(t.strip() for t in args.tasks.split(",") if t.strip()),
            seeds=parse_seeds(args.seeds),
            out_dir=args.out or default_out("miniwob"),
            max_steps=live.max_steps or MINIWOB_MAX_STEPS,
            episode_max_seconds=live.episode_seconds,
            browser=browser_settings(live),
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid MiniWoB settings: {validation_message(exc)}") from exc
    report, waiting = run_agent(
        args,
        config,
        settings.out_dir,
        lambda opened: run_miniwob(
            settings, opened.agent, agent_manifest=opened.manifest, progress=progress_line
        ),
    )
    return end_suite(args, report, waiting, settings.out_dir)
