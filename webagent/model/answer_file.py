"""Answers as data: a compact JSONL file of model answers keyed by request, read back to
reproduce a run offline exactly (``--replay FILE``, the batch backend's ``answers_from``).

The first line is a header (``{"kind": "header", "format": "answers", ...}``); every other
line is one answer::

    {"kind": "answer", "key": <Request.cache_key(model)>, "model": ..., "how": ...,
     "phase": ..., "text": ..., "input_tokens": ..., "output_tokens": ...}

``how`` says who or what produced the answer (a Batch API job, a person, a helper model
reading the request alone). A key met twice keeps its first answer: a request has one answer.
A truncated last line (an interrupted write) is skipped with a warning; any other bad line is
a :class:`~webagent.errors.ConfigError` naming file and line.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from webagent.errors import ConfigError
from webagent.textfiles import read_lines

log = logging.getLogger(__name__)

ANSWERS_SCHEMA_VERSION = 1
ANSWERS_FORMAT = "answers"


class Answer(BaseModel):
    """One model answer to one request."""

    model_config = ConfigDict(frozen=True)

    key: str
    model: str
    how: str
    text: str
    phase: str = "other"
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int | None = None  # as the answering API reported it, if it did


def is_answers_file(path: Path) -> bool:
    """Whether ``path`` starts with an answers header (not a recording cassette)."""
    try:
        first = next(read_lines(path), None)
        header = first.json() if first else None
    except (OSError, ValueError):
        return False
    return isinstance(header, dict) and header.get("format") == ANSWERS_FORMAT


def read_answers(path: Path) -> dict[str, Answer]:
    """Every answer in ``path`` by key (a missing file holds none)."""
    if not path.exists():
        return {}
    answers: dict[str, Answer] = {}
    for line in read_lines(path):
        number = line.number
        try:
            entry = line.json()
            if not isinstance(entry, dict):
                raise ValueError("not a JSON object")
            if entry.get("kind") == "header":
                _check_header(path, number, entry)
                continue
            if entry.get("kind") != "answer":
                raise ValueError(f"unknown kind {entry.get('kind')!r}")
            answer = Answer.model_validate({k: v for k, v in entry.items() if k != "kind"})
        except (ValueError, ValidationError) as exc:
            if not line.ended:
                log.warning("%s:%d: skipping a truncated last line", path, number)
                continue
            raise ConfigError(f"{path}:{number}: not an answer line ({exc})") from exc
        answers.setdefault(answer.key, answer)
    return answers


def _check_header(path: Path, number: int, entry: dict[str, Any]) -> None:
    if entry.get("format") != ANSWERS_FORMAT:
        raise ValueError(f"{path} is not an answers file (header format {entry.get('format')!r})")
    version = entry.get("schema_version")
    if version != ANSWERS_SCHEMA_VERSION:
        raise ValueError(f"answers schema_version {version!r} (this version reads 1)")


def append_answers(path: Path, answers: Iterable[Answer]) -> int:
    """Append ``answers`` whose keys ``path`` does not hold yet; returns how many were new.

    Each write is flushed and fsync'd, so a killed run keeps every answer it had written."""
    known = read_answers(path)
    fresh: list[Answer] = []
    for answer in answers:
        if answer.key not in known:
            known[answer.key] = answer
            fresh.append(answer)
    if not fresh:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "" if path.exists() and path.stat().st_size else _header_line()
    lines = ({"kind": "answer", **a.model_dump(exclude_none=True)} for a in fresh)
    body = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(header + body)
        handle.flush()
        os.fsync(handle.fileno())
    return len(fresh)


def _header_line() -> str:
    header = {
        "kind": "header",
        "format": ANSWERS_FORMAT,
        "schema_version": ANSWERS_SCHEMA_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return json.dumps(header) + "\n"
