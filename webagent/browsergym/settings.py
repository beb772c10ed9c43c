"""What a ``webagent browsergym`` run does: which tasks and seeds, how long, which browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: BrowserGym's environment ids start with this
PREFIX = "browsergym/"


class BrowserGymSettings(BaseModel):
    """Frozen; written into every episode's manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tasks: tuple[str, ...] = Field(
        min_length=1, description="BrowserGym ids, e.g. browsergym/miniwob.click-button"
    )
    seeds: tuple[int, ...] = Field(min_length=1)
    out_dir: Path
    max_steps: int = Field(default=5, ge=1, description="per episode")
    headless: bool = True
    screenshots: bool = True
    browser_path: Path | None = Field(
        default=None, description="Chromium binary; None = Playwright's own, else the system's"
    )
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

    def manifest(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def benchmark(task: str) -> str:
    """``browsergym/miniwob.click-button`` → ``miniwob``."""
    return task.removeprefix(PREFIX).split(".", 1)[0]
