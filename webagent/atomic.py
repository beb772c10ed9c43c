"""Files written whole or not at all: a temporary file beside the target, then a rename."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def write_lines_atomic(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` (each followed by a newline) to ``path`` atomically: a reader sees the
    old file or the new one, never a part; a crash leaves at most ``path.tmp`` behind."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as stream:
        for line in lines:
            stream.write(line + "\n")
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`write_lines_atomic`)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`write_lines_atomic`)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
