"""The ``webagent`` command. Each subcommand lives in the module of its stage and registers
itself here through a ``register(subparsers)`` function; heavy imports happen only when a
subcommand runs."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError

from webagent import __version__
from webagent.errors import WebAgentError, validation_message

LOG_LEVELS = ("debug", "info", "warning", "error")

# module paths that define register(subparsers); their order is the --help order
SUBCOMMAND_MODULES = (
    "webagent.cli.segment",
    "webagent.cli.act",
    "mind2web_eval.cli",
    "mind2web_eval.sweep.cli",
    "live_runner.cli",
    "webagent.browsergym.cli",
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
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # that part of the toolkit is not built yet
            raise
        module.register(subparsers)
    return parser


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
