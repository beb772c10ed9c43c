"""What the live verbs share: the browser options, the ``live`` section the command line
gives, seeds, and the default run folder. The handlers build one
:class:`~webagent.config.RunConfig` (``WEBAGENT_CHROMIUM`` and ``MINIWOB_URL`` through
:mod:`webagent.config`) and read the environment only for the secrets named with
``--secret``."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
from pathlib import Path
from typing import Any

from webagent.config import LiveSection, Values
from webagent.errors import ConfigError

#: argparse ``dest`` -> field of the config's ``live`` section
LIVE_FLAGS = {
    "browser_path": "browser_path",
    "max_steps": "max_steps",
    "max_seconds": "max_seconds",
    "max_tokens": "max_tokens",
    "episode_seconds": "episode_seconds",
}


def add_browser_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("browser")
    group.add_argument(
        "--browser-path",
        type=Path,
        help="Chromium binary (env WEBAGENT_CHROMIUM; default: Playwright's own browser, "
        "else the system's chromium on PATH, e.g. Debian's /usr/bin/chromium)",
    )
    group.add_argument("--headed", action="store_true", help="show the browser window")
    group.add_argument("--no-screenshots", action="store_true", help="trace without screenshots")
    group.add_argument("--verbose", action="store_true", help="log every action")


def live_values(args: argparse.Namespace) -> Values:
    """The ``live`` section the command line gives (switches only when switched on)."""
    section: dict[str, Any] = {
        field: getattr(args, dest)
        for dest, field in LIVE_FLAGS.items()
        if getattr(args, dest, None) is not None
    }
    switches = {
        "headed": ("headless", False),
        "no_screenshots": ("screenshots", False),
        "confirm_submit": ("confirm_submit", True),
        "block_offsite_resources": ("block_offsite_resources", True),
    }
    for dest, (field, value) in switches.items():
        if getattr(args, dest, False):
            section[field] = value
    if getattr(args, "allow", None):
        section["allowed_domains"] = tuple(args.allow)
    if getattr(args, "verbose", False):
        logging.getLogger().setLevel(logging.INFO)
    return {"live": section}


def browser_settings(live: LiveSection) -> Any:
    from live_runner.settings import BrowserSettings

    return BrowserSettings(
        executable_path=live.browser_path, headless=live.headless, screenshots=live.screenshots
    )


def default_out(kind: str) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / kind / stamp


def parse_seeds(text: str) -> tuple[int, ...]:
    """``3`` → 0, 1, 2; ``1,5,9``; ``10-14`` → 10..14."""
    try:
        if "," in text:
            return tuple(int(s) for s in text.split(",") if s.strip())
        if "-" in text.strip("-"):
            low, high = text.split("-", 1)
            return tuple(range(int(low), int(high) + 1))
        return tuple(range(int(text)))
    except ValueError as exc:
        raise ConfigError(
            f"--seeds {text!r}: give N, a list like 1,5,9 or a range like 10-14"
        ) from exc
