"""What the live verbs share: the browser options, the ``live`` section the command line
gives, seeds, the default run folder, and running the agent once or in request rounds
(``--backend batch``: :mod:`webagent.cli.batch`, the rounds of ``webagent eval``). The
handlers build one :class:`~webagent.config.RunConfig` (``WEBAGENT_CHROMIUM`` and
``MINIWOB_URL`` through :mod:`webagent.config`) and read the environment only for the secrets
named with ``--secret``."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from webagent.cli.batch import BatchRounds, check_batch_arguments, with_batch_dir
from webagent.cli.options import OpenAgent, open_agent
from webagent.config import LiveSection, RunConfig, Values
from webagent.errors import ConfigError

if TYPE_CHECKING:
    from live_runner.records import EpisodeResult
    from live_runner.suite import SuiteReport

#: exit status when episodes are pending and no request round waits (the model failed after
#: its retries, or a replay holds no answer): as ``webagent eval``'s "incomplete", the same
#: command runs them again
EXIT_PENDING = 4
_PENDING_SHOWN = 10

T = TypeVar("T")

LIVE_EPILOG = """\
exit status:
  0    every episode ended (success or not)
  1    an episode ended in an error (a suite's other episodes still ran)
  2    a usage or configuration error (one line names it)
  4    episodes are pending: the model never answered a step (it failed after its retries,
       or --replay holds no answer, named); the same command runs them again from their seeds
  5    waiting for answers (--backend batch): the requests still needed are in
       OUT/batch/round-NNN.requests.jsonl; go on with --batch-results FILE: pending episodes
       are replayed from their seeds with every answer known, finished ones are not rerun
  130  interrupted (Ctrl-C); the same command goes on"""

#: argparse ``dest`` -> field of the config's ``live`` section
LIVE_FLAGS = {
    "browser_path": "browser_path",
    "max_steps": "max_steps",
    "max_seconds": "max_seconds",
    "max_tokens": "max_tokens",
    "episode_seconds": "episode_seconds",
}


def add_browser_arguments(parser: argparse.ArgumentParser) -> None:
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


def browser_settings(live: LiveSection) -> Any:
    from live_runner.settings import BrowserSettings

    return BrowserSettings(
        executable_path=live.browser_path, headless=live.headless, screenshots=live.screenshots
    )


def default_out(kind: str) -> Path:
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


def progress_line(line: str) -> None:
    """A suite's progress, on standard error."""
    print(line, file=sys.stderr, flush=True)


def run_agent(
    args: argparse.Namespace, config: RunConfig, out: Path, once: Callable[[OpenAgent], T]
) -> tuple[T, int | None]:
    """Open the agent and run ``once`` with it: one run, or with ``--backend batch`` one
    request round (``--batch-submit``: round after round until nothing waits). Returns what
    ``once`` returned and :data:`~webagent.cli.batch.EXIT_WAITING` when a round waits for
    answers (the lines that say so and how to go on are printed)."""
    config = with_batch_dir(config, out)
    check_batch_arguments(args, config)
    rounds = BatchRounds(config) if config.model.backend == "batch" else None
    if rounds is not None:
        rounds.ingest(args.batch_results)
    with open_agent(config) as opened:
        if rounds is None:
            outcome = once(opened)
        else:
            submit, poll = args.batch_submit, args.batch_poll
            outcome = rounds.run(lambda: once(opened), submit, poll, opened.model)
    if rounds is None:
        return outcome, None
    return outcome, rounds.report(continue_argv(args, out))


def continue_argv(args: argparse.Namespace, out: Path) -> list[str]:
    """The command line that goes on: the one given, with the run folder it chose."""
    argv = list(getattr(args, "argv", sys.argv[1:]))
    return argv if args.out is not None else [*argv, "--out", str(out)]


def report_pending(episodes: Sequence[EpisodeResult], argv: Sequence[str]) -> int | None:
    """On stderr: the pending episodes and why; :data:`EXIT_PENDING` when there are any."""
    pending = [e for e in episodes if e.status == "pending"]
    if not pending:
        return None
    shown = [f"{e.task or 'the run'}{_seed(e)} ({e.detail})" for e in pending[:_PENDING_SHOWN]]
    more = len(pending) - len(shown)
    print(
        f"{len(pending)} episodes pending (the model never answered a step): "
        + "; ".join(shown)
        + (f" and {more} more (report.json lists them)" if more > 0 else ""),
        file=sys.stderr,
    )
    print(f"run them again with: {shlex.join(['webagent', *argv])}", file=sys.stderr)
    return EXIT_PENDING


def _seed(episode: EpisodeResult) -> str:
    return f" seed {episode.seed}" if episode.seed is not None else ""


def end_suite(args: argparse.Namespace, report: SuiteReport, waiting: int | None, out: Path) -> int:
    """Print a suite's table (or ``--json`` report) and say how it ended: the exit status."""
    from live_runner.suite import format_table, report_json

    if args.json:
        print(report_json(report))
    else:
        print(format_table(report), end="")
        print(f"results: {out}")
    return exit_status(report.episodes, waiting, continue_argv(args, out))


def exit_status(episodes: Sequence[EpisodeResult], waiting: int | None, argv: list[str]) -> int:
    """Waiting for a round (5), else pending episodes (4), else an error (1), else 0."""
    if waiting is not None:
        return waiting
    pending = report_pending(episodes, argv)
    if pending is not None:
        return pending
    return 1 if any(e.status == "error" for e in episodes) else 0
