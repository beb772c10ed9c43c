"""Run the real `webagent eval` command line against an OpenAI-compatible endpoint, with one
retry per call and no waiting between attempts (the CLI's defaults would wait seconds).
Used by the outage tests, which kill it and run it again.

    python http_eval_driver.py -- eval --backend openai --base-url ... --data ... --out ...
"""

from __future__ import annotations

import sys
from typing import Any

import webagent.model.factory
from webagent.cli import main
from webagent.model.client import Model
from webagent.model.settings import ModelSettings

_real_build_model = webagent.model.factory.build_model


def build_model(settings: ModelSettings, **_: Any) -> Model:
    quick = settings.model_copy(update={"max_retries": 1, "timeout_s": 10.0})
    return _real_build_model(quick, sleep=lambda _s: None)


def run(argv: list[str]) -> int:
    webagent.model.factory.build_model = build_model  # type: ignore[assignment]
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[2:]))
