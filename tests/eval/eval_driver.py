"""Run the real `webagent eval` command line in this process, with the scripted oracle model
(slowed down by DELAY seconds per call) in place of a real one. Used by the kill/resume test.

    python eval_driver.py DELAY -- eval --data ... --out ...
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_oracle import Oracle, oracle_model

import webagent.model.factory
from mind2web_eval.data import load_tasks
from webagent.cli import main


def run(delay: float, argv: list[str]) -> int:
    data = argv[argv.index("--data") + 1]
    tasks, _ = load_tasks(data)

    def build_model(settings: Any, **_: Any) -> Any:
        return oracle_model(Oracle(tasks, delay_s=delay))

    webagent.model.factory.build_model = build_model  # type: ignore[assignment]
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run(float(sys.argv[1]), sys.argv[3:]))
