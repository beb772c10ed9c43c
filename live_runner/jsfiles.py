"""Browser JavaScript lives in ``live_runner/js/*.js``; this loads it by name."""

from __future__ import annotations

from functools import cache
from importlib import resources

from live_runner.errors import LiveRunnerError


@cache
def load_js(name: str) -> str:
    """The source of ``js/<name>.js``."""
    path = resources.files("live_runner") / "js" / f"{name}.js"
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise LiveRunnerError(
            f"browser script {name}.js is missing; reinstall readagent-web"
        ) from exc
    # drop leading // comment lines: CDP's functionDeclaration must start with the function
    lines = source.splitlines()
    while lines and lines[0].lstrip().startswith("//"):
        lines.pop(0)
    return "\n".join(lines).strip()
