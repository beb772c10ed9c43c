"""``webagent browsergym``: run an agent on BrowserGym tasks and print one row per episode.

The handler builds one :class:`~webagent.config.RunConfig` (its ``live`` section from the
flags here; ``WEBAGENT_CHROMIUM`` and ``MINIWOB_URL`` through :mod:`webagent.config`).
BrowserGym itself is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from live_runner.cli import live_values, parse_seeds
from webagent.cli.options import add_run_arguments, config_from_args, open_agent
from webagent.errors import ConfigError, validation_message

MAX_STEPS = 5
HELP = "run an agent on BrowserGym tasks (MiniWoB++, WebArena, WorkArena...); report rewards"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("browsergym", help=HELP, description=HELP + ".")
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
    group = parser.add_argument_group("browser")
    group.add_argument(
        "--browser-path",
        type=Path,
        help="Chromium binary (env WEBAGENT_CHROMIUM; default: Playwright's own browser, "
        "else the system's chromium on PATH)",
    )
    group.add_argument("--headed", action="store_true", help="show the browser window")
    group.add_argument("--no-screenshots", action="store_true", help="trace without screenshots")
    add_run_arguments(parser)
    parser.set_defaults(func=browsergym_command)


def browsergym_command(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from webagent.browsergym.runner import format_table, report_json, run_episodes
    from webagent.browsergym.settings import BrowserGymSettings

    values = live_values(args)
    if args.miniwob_url:
        values["live"]["miniwob_url"] = args.miniwob_url
    config = config_from_args(args, extra=values)
    live = config.live
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        settings = BrowserGymSettings(
            tasks=tuple(t.strip() for t in args.tasks.split(",") if t.strip()),
            seeds=parse_seeds(args.seeds),
            out_dir=args.out or Path("runs") / "browsergym" / stamp,
            max_steps=live.max_steps or MAX_STEPS,
            headless=live.headless,
            screenshots=live.screenshots,
            browser_path=live.browser_path,
            miniwob_url=live.miniwob_url,
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid BrowserGym settings: {validation_message(exc)}") from exc
    with open_agent(config) as opened:
        report = run_episodes(settings, opened.agent, agent_manifest=opened.manifest)
    if args.json:
        print(report_json(report))
    else:
        print(format_table(report), end="")
        print(f"results: {settings.out_dir}")
    return 1 if any(e.status == "error" for e in report.episodes) else 0
