"""Batch rounds for ``webagent eval`` and ``webagent sweep`` (``--backend batch``).

A run goes as far as it can without calling a model: every step whose requests are answered
is scored, and every request still needed goes into ``OUT/batch/round-NNN.requests.jsonl``
(:mod:`webagent.model.batch_rounds`). The command then ends with :data:`EXIT_WAITING`, saying
how many requests wait and the command that goes on: the same one with ``--batch-results
FILE`` (the Batch API's output file). ``--batch-submit`` does the rounds itself: it submits
each round, waits for it, reads its results and runs again until no request waits.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from webagent.config import RunConfig
from webagent.errors import ConfigError
from webagent.model.batch import BatchBackend
from webagent.model.batch_rounds import BatchFolder, Round
from webagent.model.client import Model

#: exit status of a run that waits for the answers of a request round
EXIT_WAITING = 5
#: what batch_dir is under a run's OUT
BATCH_DIR = "batch"

T = TypeVar("T")


def add_batch_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "batch rounds (--backend batch)",
        "requests still needed go to OUT/batch/round-NNN.requests.jsonl (the OpenAI Batch "
        "API's input format); the run then exits 5 until their answers come",
    )
    group.add_argument(
        "--batch-results",
        action="append",
        type=Path,
        default=[],
        metavar="FILE",
        help="a Batch API output file answering a round (repeatable); an error result stays "
        "pending and goes into the next round",
    )
    group.add_argument(
        "--batch-submit",
        action="store_true",
        help="submit each round to the Batch API (OPENAI_API_KEY, --base-url), wait for it, "
        "read its results and go on until nothing waits",
    )
    group.add_argument(
        "--batch-poll", type=float, default=30.0, metavar="S", help="seconds between polls (30)"
    )


def with_batch_dir(config: RunConfig, out: Path) -> RunConfig:
    """The batch backend keeps its rounds in ``OUT/batch`` unless ``batch_dir`` says where."""
    if config.model.backend != "batch" or config.model.batch_dir is not None:
        return config
    model = config.model.model_copy(update={"batch_dir": (out / BATCH_DIR).resolve()})
    return config.model_copy(update={"model": model})


def check_batch_arguments(args: argparse.Namespace, config: RunConfig) -> None:
    if (args.batch_results or args.batch_submit) and config.model.backend != "batch":
        raise ConfigError("--batch-results and --batch-submit need --backend batch")


class BatchRounds:
    """The rounds of one command: results in, rounds out, submission."""

    def __init__(self, config: RunConfig) -> None:
        if config.model.batch_dir is None or config.model.model is None:
            raise ConfigError("the batch backend needs --model and a batch folder")
        self.settings = config.model
        self.model = config.model.model
        self.folder = BatchFolder(config.model.batch_dir)

    def ingest(self, files: Sequence[Path], how: str | None = None) -> None:
        for path in files:
            got = self.folder.ingest(path, self.model, how or f"batch results file {path.name}")
            errors = f", {len(got.errors)} error results stay pending" if got.errors else ""
            unknown = f", {got.unknown} for requests no round asked" if got.unknown else ""
            print(f"batch results {path}: {got.answered} answers{errors}{unknown}", file=sys.stderr)

    def run(
        self,
        once: Callable[[], T],
        submit: bool,
        poll_s: float,
        model: Model | None = None,
    ) -> T:
        """``once()`` (a run), then close its round; with ``submit``, submit every waiting
        round, read its results and run again until no request waits (``model``: the batch
        model ``once`` reuses, which then reads the new answers)."""
        client = None
        while True:
            outcome = once()
            self.folder.close_round()
            waiting = self.folder.waiting()
            if not submit or not waiting:
                return outcome
            if client is None:
                from webagent.model.batch_submit import batch_client

                client = batch_client(self.settings)
            for round_ in waiting:
                from webagent.model.batch_submit import submit_round

                results, batch_id = submit_round(self.folder, round_, client, poll_s=poll_s)
                self.ingest([results], how=f"OpenAI Batch API, batch {batch_id}")
            if model is not None and isinstance(model.backend, BatchBackend):
                model.backend.reload()

    def report(self, argv: Sequence[str]) -> int | None:
        """On stderr: what waits and the command that goes on; :data:`EXIT_WAITING` when a
        round waits, else None."""
        waiting = self.folder.waiting()
        if not waiting:
            return None
        count = sum(len(r.keys) for r in waiting)
        files = ", ".join(str(self.folder.path / r.file) for r in waiting)
        print(f"waiting for answers: {count} requests in {files}", file=sys.stderr)
        print(
            "submit each round to the Batch API (or answer it), then go on with: "
            + shlex.join([*continue_command(argv), *_results_flags(self.folder, waiting)]),
            file=sys.stderr,
        )
        print(
            f"or let the run do it: {shlex.join([*continue_command(argv), '--batch-submit'])}",
            file=sys.stderr,
        )
        return EXIT_WAITING


def continue_command(argv: Sequence[str]) -> list[str]:
    """``webagent`` + ``argv`` without its ``--batch-results FILE`` pairs."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--batch-results":
            skip = True
        elif not arg.startswith("--batch-results="):
            kept.append(arg)
    return ["webagent", *kept]


def _results_flags(folder: BatchFolder, waiting: list[Round]) -> list[str]:
    flags: list[str] = []
    for round_ in waiting:
        flags += ["--batch-results", str(folder.results_path(round_.number))]
    return flags
