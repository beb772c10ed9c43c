"""Run the real `webagent eval` command line in this process, pausing (to be killed) at one
point of a batch round: ``PAUSE_AT=close_round`` (steps run, requests staged, the round not
written) or ``ingest`` (answers appended, rounds.json not updated). ``PAUSE_MARK`` is the file
it creates when it pauses. Used by the SIGKILL test of batch rounds.

    PAUSE_AT=close_round PAUSE_MARK=/tmp/x python batch_driver.py eval --data ... --out ...
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from webagent.cli import main
from webagent.model import batch_rounds


def pause() -> None:
    Path(os.environ["PAUSE_MARK"]).write_text("paused")
    time.sleep(120)


def run(argv: list[str]) -> int:
    point = os.environ["PAUSE_AT"]
    folder = batch_rounds.BatchFolder
    if point == "close_round":
        original_close = folder.close_round

        def close_round(self: Any) -> Any:
            pause()
            return original_close(self)

        folder.close_round = close_round  # type: ignore[method-assign]
    else:
        original_write = folder._write_rounds

        def write_rounds(self: Any, rounds: Any) -> None:
            pause()
            original_write(self, rounds)

        folder._write_rounds = write_rounds  # type: ignore[method-assign]
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
