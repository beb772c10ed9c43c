"""A run that goes on until it is killed: ``python -m live.kill_target URL OUT_DIR``.

Used by the test that kills a run mid-way and reads what it left."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from live.agents import ScriptedAgent, click
from live.conftest import browser_settings
from live_runner.settings import LimitSettings, RunSettings
from live_runner.tab import run_task
from webagent.contracts import Action, Observation


def main() -> None:
    url, out = sys.argv[1], Path(sys.argv[2])
    press = click("Dismiss tip", "button")

    def slowly(observation: Observation) -> Action | None:
        time.sleep(0.2)
        return press(observation) if "Dismiss tip" in observation.html else None

    settings = RunSettings(
        url=url,
        task="dismiss the tip, then wait",
        out_dir=out,
        limits=LimitSettings(max_steps=1000, max_seconds=120.0),
        browser=browser_settings(),
    )
    run_task(settings, ScriptedAgent([slowly] * 1000))


if __name__ == "__main__":
    main()
