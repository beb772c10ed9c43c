"""Helpers for the tests that run ``webagent`` in this process (``webagent.cli.main``)."""

from __future__ import annotations

from pathlib import Path

from webagent.cli import main


def one_line(err: str) -> str:
    """The one line a command wrote to stderr (fails when it wrote more or none)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def score(data: Path, predictions: Path, *flags: str) -> int:
    """``webagent score`` on ``data`` and ``predictions``; its exit status."""
    return main(["score", "--data", str(data), "--predictions", str(predictions), *flags])


def not_utf8(column: int) -> str:
    """How the reader of input files words a Latin-1 "é" at ``column`` of its line."""
    return f"not UTF-8 text: byte 0xE9 at column {column}; save the file as UTF-8"


def latin1_in(line: bytes, text: bytes) -> tuple[bytes, int]:
    """``line`` with a Latin-1 "é" put before ``text`` (ASCII before it), and that byte's
    1-based column."""
    at = line.index(text)
    return line[:at] + b"\xe9" + line[at:], at + 1
