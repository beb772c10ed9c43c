"""``webagent browsergym``: run an agent on BrowserGym tasks and print one row per episode.

The handler builds one :class:`~webagent.config.RunConfig` (its ``live`` section from the
flags here; ``WEBAGENT_CHROMIUM`` and ``MINIWOB_URL`` through :mod:`webagent.config`).
BrowserGym itself is imported only when the command runs.
"""

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
from webagent.errors import ConfigError, validation_message

MAX_STEPS = 5
HELP = "run an agent on BrowserGym tasks (MiniWoB++, WebArena, WorkArena...); report rewards"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "browsergym",
        help=HELP,
        description=HELP + ".",
        epilog=LIVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--task",
        "--tasks",
        dest="tasks",
        required=True,
        help="BrowserGym ids, comma-separated: browsergym/miniwob.click-button,... "
        "(the browsergym/ prefix may be left out)",
    )
    parser.add_argument(
        "--seeds", default="3", help="N (seeds 0..N-1), a list 1,5,9 or a range 10-14 (3)"
    )
    parser.add_argument("--max-steps", type=int, help=f"per episode ({MAX_STEPS})")
    parser.add_argument(
        "--miniwob-url",
        help="base URL of MiniWoB++'s task pages (env MINIWOB_URL; default: the miniwob "
        "package's pages over file://)",
    )
    parser.add_argument("--out", type=Path, help="results folder (default runs/browsergym/<time>)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_browser_arguments(parser)
    add_run_arguments(parser)
    add_batch_arguments(parser)
    parser.set_defaults(func=browsergym_command)


def browsergym_command(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from live_runner.browsergym.environment import run_browsergym
    from live_runner.browsergym.settings import BrowserGymSettings

    values = live_values(args)
    if args.miniwob_url:
        values["live"]["miniwob_url"] = args.miniwob_url
    config = config_from_args(args, extra=values)
    live = config.live
    try:
        settings = BrowserGymSettings(
            tasks=tuple(t.strip() for t in args.tasks.split(",") if t.strip()),
            seeds=parse_seeds(args.seeds),
            out_dir=args.out or default_out("browsergym"),
            max_steps=live.max_steps or MAX_STEPS,
            browser=browser_settings(live),
            miniwob_url=live.miniwob_url,
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid BrowserGym settings: {validation_message(exc)}") from exc
    report, waiting = run_agent(
        args,
        config,
        settings.out_dir,
        lambda opened: run_browsergym(
            settings, opened.agent, agent_manifest=opened.manifest, progress=progress_line
        ),
    )
    return end_suite(args, report, waiting, settings.out_dir)
