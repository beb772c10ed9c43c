"""``webagent run``, ``webagent miniwob`` and ``webagent live-export``.

The handlers build one :class:`~webagent.config.RunConfig` (its ``live`` section from the
flags here, ``WEBAGENT_CHROMIUM`` through :mod:`webagent.config`) and read the environment
only for the secrets named with ``--secret``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import sys
from pathlib import Path
from typing import Any

from webagent.cli.options import add_repeatable, add_run_arguments, config_from_args, open_agent
from webagent.config import LiveSection, RunConfig, Values
from webagent.errors import ConfigError, validation_message

RUN_MAX_STEPS = 15
RUN_MAX_SECONDS = 600.0
MINIWOB_MAX_STEPS = 5
#: argparse ``dest`` -> field of the config's ``live`` section
LIVE_FLAGS = {
    "browser_path": "browser_path",
    "max_steps": "max_steps",
    "max_seconds": "max_seconds",
    "max_tokens": "max_tokens",
    "episode_seconds": "episode_seconds",
}
RUN_HELP = "drive a real browser: observe, let the agent act, until STOP or a limit"
MINIWOB_HELP = "run an agent on MiniWoB++ tasks and seeds; report success rate and reward"
EXPORT_HELP = "export recorded live runs as Mind2Web task records (JSONL)"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser("run", help=RUN_HELP, description=RUN_HELP + ".")
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
    _add_browser_arguments(run)
    add_run_arguments(run)
    run.set_defaults(func=run_command)

    mini = subparsers.add_parser("miniwob", help=MINIWOB_HELP, description=MINIWOB_HELP + ".")
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
    _add_browser_arguments(mini)
    add_run_arguments(mini)
    mini.set_defaults(func=miniwob_command)

    export = subparsers.add_parser("live-export", help=EXPORT_HELP, description=EXPORT_HELP)
    export.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    export.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    export.add_argument(
        "--include-failed", action="store_true", help="also export steps whose action failed"
    )
    export.set_defaults(func=export_command)


def _add_browser_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("browser")
    group.add_argument(
        "--browser-path",
        type=Path,
        help="Chromium binary (env WEBAGENT_CHROMIUM; default: Playwright's own browser, "
        "else the system's chromium on PATH, e.g. Debian's /usr/bin/chromium)",
    )
    group.add_argument("--headed", action="store_true", help="show the browser window")
    group.add_argument("--no-screenshots", action="store_true", help="trace without screenshots")
    group.add_argument("--verbose", action="store_true", help="log every action")


def live_values(args: argparse.Namespace) -> Values:
    """The ``live`` section the command line gives (switches only when switched on)."""
    section: dict[str, Any] = {
        field: getattr(args, dest)
        for dest, field in LIVE_FLAGS.items()
        if getattr(args, dest, None) is not None
    }
    switches = {
        "headed": ("headless", False),
        "no_screenshots": ("screenshots", False),
        "confirm_submit": ("confirm_submit", True),
        "block_offsite_resources": ("block_offsite_resources", True),
    }
    for dest, (field, value) in switches.items():
        if getattr(args, dest, False):
            section[field] = value
    if getattr(args, "allow", None):
        section["allowed_domains"] = tuple(args.allow)
    if getattr(args, "verbose", False):
        logging.getLogger().setLevel(logging.INFO)
    return {"live": section}


def _browser_settings(live: LiveSection) -> Any:
    from live_runner.settings import BrowserSettings

    return BrowserSettings(
        executable_path=live.browser_path, headless=live.headless, screenshots=live.screenshots
    )


def _default_out(kind: str) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / kind / stamp


def parse_seeds(text: str) -> tuple[int, ...]:
    """``3`` → 0, 1, 2; ``1,5,9``; ``10-14`` → 10..14."""
    try:
        if "," in text:
            return tuple(int(s) for s in text.split(",") if s.strip())
        if "-" in text.strip("-"):
            low, high = text.split("-", 1)
            return tuple(range(int(low), int(high) + 1))
        return tuple(range(int(text)))
    except ValueError as exc:
        raise ConfigError(
            f"--seeds {text!r}: give N, a list like 1,5,9 or a range like 10-14"
        ) from exc


def _ask(what: str) -> bool:
    if not sys.stdin.isatty():
        print(f"not confirmed (no terminal to ask): {what}", file=sys.stderr)
        return False
    answer = input(f"{what}. Allow? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def run_command(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from live_runner.loop import EndReason, run_task
    from live_runner.safety import SecretStore
    from live_runner.settings import LimitSettings, RunSettings, SafetySettings

    config = config_from_args(args, extra=live_values(args))
    live = config.live
    secrets = SecretStore.from_environ(args.secret, os.environ)
    try:
        settings = RunSettings(
            url=args.url,
            task=args.task,
            out_dir=args.out or _default_out("live"),
            limits=LimitSettings(
                max_steps=live.max_steps or RUN_MAX_STEPS,
                max_seconds=live.max_seconds or RUN_MAX_SECONDS,
                max_tokens=live.max_tokens,
            ),
            browser=_browser_settings(live),
            safety=SafetySettings(
                allowed_domains=live.allowed_domains,
                confirm_submit=live.confirm_submit,
                block_offsite_resources=live.block_offsite_resources,
            ),
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid run settings: {validation_message(exc)}") from exc
    with open_agent(config) as opened:
        result = run_task(
            settings, opened.agent, secrets=secrets, confirm=_ask, agent_manifest=opened.manifest
        )
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(f"ended: {result.status.value} after {result.steps} steps, {result.elapsed_s:.1f} s")
        print(f"tokens: {result.input_tokens} in / {result.output_tokens} out")
        if result.final_answer is not None:
            print(f"answer: {result.final_answer}")
        print(f"trace: {settings.out_dir / 'report.html'}")
    return 0 if result.status is not EndReason.ERROR else 1


def miniwob_command(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from live_runner.miniwob import format_table, report_json, run_suite
    from live_runner.settings import MiniWobSettings

    config: RunConfig = config_from_args(args, extra=live_values(args))
    live = config.live
    try:
        settings = MiniWobSettings(
            tasks=tuple(t.strip() for t in args.tasks.split(",") if t.strip()),
            seeds=parse_seeds(args.seeds),
            out_dir=args.out or _default_out("miniwob"),
            max_steps=live.max_steps or MINIWOB_MAX_STEPS,
            episode_max_seconds=live.episode_seconds,
            browser=_browser_settings(live),
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid MiniWoB settings: {validation_message(exc)}") from exc
    with open_agent(config) as opened:
        report = run_suite(settings, opened.agent, agent_manifest=opened.manifest)
    if args.json:
        print(report_json(report))
    else:
        print(format_table(report), end="")
        print(f"results: {settings.out_dir}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    from live_runner.export import write_export

    count = write_export(args.runs, args.out, include_failed=args.include_failed)
    print(f"wrote {count} actions from {len(args.runs)} runs to {args.out}")
    return 0
