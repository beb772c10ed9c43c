"""The ``webagent`` command: the parser and the verbs the ``webagent.commands`` entry points
declare (:mod:`webagent.plugins`). Each verb is one module with a ``register(subparsers)``
function: ``segment`` and ``act`` here, ``score``, ``eval``, ``compare``, ``demo`` and
``sweep`` in :mod:`mind2web_eval.commands`, ``run``, ``miniwob``, ``browsergym`` and
``live-export`` in :mod:`live_runner.commands`; a plug-in package adds its own the same way.
The options they share are :mod:`webagent.cli.options`. Heavy imports happen only when a
verb runs."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError

from webagent import __version__
from webagent.errors import WebAgentError, validation_message
from webagent.plugins import COMMANDS, load_all

LOG_LEVELS = ("debug", "info", "warning", "error")

#: the --help order of the toolkit's own verbs; a plug-in's verbs follow, by name
HELP_ORDER = (
    "segment",
    "act",
    "score",
    "eval",
    "compare",
    "demo",
    "sweep",
    "run",
    "miniwob",
    "browsergym",
    "live-export",
)


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line (``webagent act: error: ...; see --help``); subcommand
    parsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="webagent",
        description=(
            "ReadAgent for web pages: segment a page into fragments, gist them, look up the "
            "ones a task needs and act; evaluate on Mind2Web; drive a real browser."
        ),
    )
    parser.add_argument("--version", action="version", version=f"webagent {__version__}")
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="warning",
        help="what is logged to standard error (%(default)s)",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for _name, register in sorted(load_all(COMMANDS), key=_help_rank):
        register(subparsers)
    return parser


def _help_rank(command: tuple[str, object]) -> tuple[int, str]:
    name = command[0]
    return (HELP_ORDER.index(name), "") if name in HELP_ORDER else (len(HELP_ORDER), name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()), format="%(levelname)s %(name)s: %(message)s"
    )
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what resumes a run
    try:
        result: int = args.func(args)
    except WebAgentError as exc:
        print(f"webagent {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ValidationError as exc:
        print(f"webagent {args.command}: error: {validation_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"webagent {args.command}: interrupted", file=sys.stderr)
        return 130
    return result
