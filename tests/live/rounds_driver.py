"""Run the real ``webagent`` command line in this process, pausing (to be killed) at one point
of a request round of a live suite: ``PAUSE_AT=episode`` (the round's first episode run and
recorded, the next one about to start) or ``ingest`` (a results file's answers appended,
rounds.json not updated). ``PAUSE_MARK`` is the file it creates when it pauses. Used by the
SIGKILL tests of live rounds.

    PAUSE_AT=episode PAUSE_MARK=/tmp/x python rounds_driver.py miniwob --tasks ... --out ...
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from live_runner import suite
from webagent.cli import main
from webagent.model import batch_rounds


def pause() -> None:
    Path(os.environ["PAUSE_MARK"]).write_text("paused")
    time.sleep(120)


def run(argv: list[str]) -> int:
    if os.environ["PAUSE_AT"] == "episode":
        original_run = suite._run_episode
        calls = []

        def run_episode(*args: Any) -> Any:
            calls.append(args)
            if len(calls) == 2:
                pause()
            return original_run(*args)

        suite._run_episode = run_episode  # type: ignore[assignment]
    else:
        original_write = batch_rounds.BatchFolder._write_rounds

        def write_rounds(self: Any, rounds: Any) -> None:
            pause()
            original_write(self, rounds)

        batch_rounds.BatchFolder._write_rounds = write_rounds  # type: ignore[method-assign]
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
