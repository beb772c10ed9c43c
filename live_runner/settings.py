"""Settings of the live runner: frozen pydantic models, built once in the CLI and recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: the Chromium flags that work on a headless Linux machine without a GPU or a sandbox
DEFAULT_CHROMIUM_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)


class _Settings(BaseModel):
    """Frozen, no unknown fields, and written into the run's manifest as JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def manifest(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class BrowserSettings(_Settings):
    """How the browser is started and how long it may take to act and settle."""

    executable_path: Path | None = Field(
        default=None, description="Chromium binary; None = Playwright's own browser"
    )
    args: tuple[str, ...] = DEFAULT_CHROMIUM_ARGS
    headless: bool = True
    viewport_width: int = Field(default=1280, ge=200)
    viewport_height: int = Field(default=800, ge=200)
    action_timeout_s: float = Field(
        default=5.0, gt=0, description="longest wait for an element to become actionable"
    )
    navigation_timeout_s: float = Field(default=30.0, gt=0)
    settle_timeout_s: float = Field(
        default=3.0, ge=0, description="longest wait for the page to settle after an action"
    )
    settle_quiet_ms: int = Field(
        default=150,
        ge=0,
        description="the page counts as settled after this long without DOM changes",
    )
    screenshots: bool = True


class SafetySettings(_Settings):
    """Where the browser may go and what needs a person's consent."""

    allowed_domains: tuple[str, ...] = Field(
        default=(), description="hosts (and their subdomains) that may be visited"
    )
    allowed_file_roots: tuple[Path, ...] = Field(
        default=(), description="folders whose files may be opened over file://"
    )
    block_offsite_resources: bool = Field(
        default=False,
        description="also block images, scripts and XHR to other domains (navigations always are)",
    )
    confirm_submit: bool = Field(
        default=False, description="ask before any action that submits a form"
    )

    @field_validator("allowed_domains")
    @classmethod
    def _normalise(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = tuple(d.strip().lower().lstrip(".") for d in value)
        bad = [d for d in cleaned if not d or "/" in d or " " in d]
        if bad:
            raise ValueError(f"allowed domains must be host names like 'example.com', got {bad}")
        return cleaned


class LimitSettings(_Settings):
    """When a run stops even without the agent's STOP."""

    max_steps: int = Field(default=15, ge=1)
    max_seconds: float | None = Field(default=600.0, gt=0)
    max_tokens: int | None = Field(default=None, ge=1, description="model tokens in + out")


class RunSettings(_Settings):
    """One live task: where to start, what to do, within which limits, where to write."""

    url: str
    task: str = Field(min_length=1)
    out_dir: Path
    limits: LimitSettings = LimitSettings()
    browser: BrowserSettings = BrowserSettings()
    safety: SafetySettings = SafetySettings()

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://", "file://")):
            raise ValueError(f"start URL must be http(s):// or file://, got {value!r}")
        return value


class SuiteSettings(_Settings):
    """Tasks × seeds of a benchmark, each episode once, and where their results go."""

    tasks: tuple[str, ...] = Field(min_length=1)
    seeds: tuple[int, ...] = Field(min_length=1)
    out_dir: Path
    max_steps: int = Field(default=5, ge=1, description="per episode")
    browser: BrowserSettings = BrowserSettings()


class MiniWobSettings(SuiteSettings):
    """MiniWoB++ in a browser: task names like ``click-button``."""

    episode_max_seconds: float = Field(
        default=60.0, gt=0, description="MiniWoB's own episode clock (core.EPISODE_MAX_TIME)"
    )
    html_root: Path | None = Field(
        default=None, description="folder of the task pages; None = the miniwob package's"
    )

    @field_validator("tasks")
    @classmethod
    def _task_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [t for t in value if not t or not all(c.isalnum() or c in "-_" for c in t)]
        if bad:
            raise ValueError(f"MiniWoB task names are like 'click-button', got {bad}")
        return value
