"""HTML reports from Jinja2 templates with autoescape: every value from a page or a model is
escaped by the template engine, never by hand. ``webagent/templates`` holds the base page and
the macros that the evaluator's report and the live runner's viewer share."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

SHARED = Path(__file__).resolve().parent / "templates"
#: characters of one prompt or answer shown; the rest is counted
MAX_TEXT = 20_000


def clip(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, with a note of how many were left out."""
    value = str(text)
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n… ({len(value) - limit} more characters)"


def prompt_text(messages: list[Mapping[str, Any]]) -> str:
    """A chat prompt as plain text: ``[role]`` then the content, message by message."""
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages)


@cache
def environment(folder: Path) -> Environment:
    """Templates of ``folder`` first, then the shared ones; autoescape on, and a missing
    variable is an error rather than an empty string."""
    env = Environment(
        loader=FileSystemLoader([str(folder), str(SHARED)]),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["clip"] = clip
    env.filters["prompt_text"] = prompt_text
    return env


def render(folder: Path, name: str, **context: Any) -> str:
    return environment(folder).get_template(name).render(**context)
