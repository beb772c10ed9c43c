"""What a ``webagent browsergym`` run does: which tasks and seeds, how long, which browser."""

from __future__ import annotations

from pydantic import Field, field_validator

from live_runner.settings import SuiteSettings

#: BrowserGym's environment ids start with this
PREFIX = "browsergym/"


class BrowserGymSettings(SuiteSettings):
    """BrowserGym tasks (``browsergym/miniwob.click-button``); the browser's
    ``executable_path``, ``headless`` and ``screenshots`` are BrowserGym's launch too."""

    miniwob_url: str | None = Field(
        default=None,
        description="base URL of MiniWoB++'s task pages (MINIWOB_URL); None = the miniwob "
        "package's pages over file://",
    )

    @field_validator("tasks")
    @classmethod
    def _ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        named = tuple(t if t.startswith(PREFIX) else PREFIX + t for t in value)
        bad = [t for t in named if "." not in t.removeprefix(PREFIX)]
        if bad:
            raise ValueError(
                f"BrowserGym task ids are like 'browsergym/miniwob.click-button', got {bad}"
            )
        return named


def benchmark(task: str) -> str:
    """``browsergym/miniwob.click-button`` → ``miniwob``."""
    return task.removeprefix(PREFIX).split(".", 1)[0]
