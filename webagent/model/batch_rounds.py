"""Request rounds of the batch backend: what waits for an answer, in the Batch API's files.

A run folder's ``batch/`` holds:

``answers.jsonl``              every answer received (:mod:`webagent.model.answer_file`)
``staged.jsonl``               requests met without an answer, not yet in a round (appended
                               as they are met, so a killed run keeps them)
``round-NNN.requests.jsonl``   one round: the Batch API's input format, one request a line
                               (``custom_id`` = the request's cache key, ``body`` = exactly what
                               the openai backend would send)
``rounds.json``                the rounds: their keys, their Batch API job (``--batch-submit``)
                               and whether their results came

A round holds only requests that are neither answered nor waiting in an earlier round; a
request whose result was an error goes into a later round again. Every file is written whole
(temporary file, rename) or appended and fsync'd, so a SIGKILL at any point loses nothing.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from webagent.atomic import write_lines_atomic, write_text_atomic
from webagent.errors import ConfigError
from webagent.model.answer_file import Answer, append_answers, read_answers
from webagent.textfiles import read_lines, read_text

#: the Batch API's endpoint for chat completions
CHAT_URL = "/v1/chat/completions"
RoundStatus = Literal["waiting", "answered"]


class Round(BaseModel):
    number: int
    file: str
    keys: list[str]
    phases: dict[str, str] = Field(default_factory=dict, description="key -> phase")
    status: RoundStatus = "waiting"
    batch_id: str | None = Field(default=None, description="the Batch API job, once submitted")
    errors: dict[str, str] = Field(default_factory=dict, description="key -> error result")


class Rounds(BaseModel):
    schema_version: int = 1
    rounds: list[Round] = Field(default_factory=list)


class Ingested(BaseModel):
    """What one results file brought."""

    answered: int = 0
    errors: dict[str, str] = Field(default_factory=dict)
    unknown: int = Field(default=0, description="results for requests no round asked")


class BatchFolder:
    """The ``batch/`` folder of one run (or one sweep)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._staged_keys: set[str] | None = None

    # --- files ---------------------------------------------------------------------------
    @property
    def answers_path(self) -> Path:
        return self.path / "answers.jsonl"

    @property
    def staged_path(self) -> Path:
        return self.path / "staged.jsonl"

    @property
    def rounds_path(self) -> Path:
        return self.path / "rounds.json"

    def round_path(self, number: int) -> Path:
        return self.path / f"round-{number:03d}.requests.jsonl"

    def results_path(self, number: int) -> Path:
        return self.path / f"round-{number:03d}.results.jsonl"

    def answers(self) -> dict[str, Answer]:
        return read_answers(self.answers_path)

    def rounds(self) -> Rounds:
        if not self.rounds_path.exists():
            return Rounds()
        try:
            return Rounds.model_validate_json(read_text(self.rounds_path))
        except ValueError as exc:
            raise ConfigError(f"{self.rounds_path} is not a rounds file ({exc})") from exc

    def _write_rounds(self, rounds: Rounds) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.rounds_path, rounds.model_dump_json(indent=1) + "\n")

    def waiting(self) -> list[Round]:
        """Rounds whose results have not come yet."""
        return [r for r in self.rounds().rounds if r.status == "waiting"]

    # --- staging what the backend met ----------------------------------------------------
    def stage(self, key: str, body: dict[str, Any], phase: str) -> None:
        """Keep a request the backend met without an answer for the next round (once)."""
        with self._lock:
            if self._staged_keys is None:
                self._staged_keys = set(_staged(self.staged_path))
            if key in self._staged_keys:
                return
            self._staged_keys.add(key)
            self.path.mkdir(parents=True, exist_ok=True)
            entry = {"phase": phase, **request_line(key, body)}
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            with self.staged_path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())

    def close_round(self) -> Round | None:
        """Turn the staged requests that neither have an answer nor wait in a round into the
        next round's file; None when there are none."""
        with self._lock:
            staged = _staged(self.staged_path)
            answered = set(self.answers())
            rounds = self.rounds()
            waiting = {key for r in rounds.rounds if r.status == "waiting" for key in r.keys}
            lines = {k: v for k, v in staged.items() if k not in answered and k not in waiting}
            round_ = None
            if lines:
                number = len(rounds.rounds) + 1
                path = self.round_path(number)
                requests = ({k: v for k, v in e.items() if k != "phase"} for e in lines.values())
                write_lines_atomic(path, (json.dumps(r, ensure_ascii=False) for r in requests))
                phases = {k: str(e.get("phase", "other")) for k, e in lines.items()}
                round_ = Round(number=number, file=path.name, keys=list(lines), phases=phases)
                rounds.rounds.append(round_)
                self._write_rounds(rounds)
            self.staged_path.unlink(missing_ok=True)
            self._staged_keys = set()
            return round_

    # --- results -------------------------------------------------------------------------
    def ingest(self, results: Path, model: str, how: str) -> Ingested:
        """Read a Batch API output file: its answers join ``answers.jsonl`` and every round
        it answers is marked answered (an error result's request goes into a later round)."""
        parsed = list(read_results(results, model, how))
        errors = dict(e for e in parsed if isinstance(e, tuple))
        with self._lock:
            phases = {k: p for r in self.rounds().rounds for k, p in r.phases.items()}
            answers = [
                a.model_copy(update={"phase": phases.get(a.key, a.phase)})
                for a in parsed
                if isinstance(a, Answer)
            ]
            append_answers(self.answers_path, answers)
            seen = {a.key for a in answers} | set(errors)
            rounds = self.rounds()
            asked: set[str] = set()
            for round_ in rounds.rounds:
                asked.update(round_.keys)
                if round_.status == "waiting" and seen & set(round_.keys):
                    round_.status = "answered"
                    round_.errors = {k: errors[k] for k in round_.keys if k in errors}
            self._write_rounds(rounds)
        return Ingested(answered=len(answers), errors=errors, unknown=len(seen - asked))

    def set_batch_id(self, number: int, batch_id: str) -> None:
        with self._lock:
            rounds = self.rounds()
            for round_ in rounds.rounds:
                if round_.number == number:
                    round_.batch_id = batch_id
            self._write_rounds(rounds)


def _staged(path: Path) -> dict[str, dict[str, Any]]:
    """Staged request lines by key (a truncated last line, from a kill, is dropped)."""
    if not path.exists():
        return {}
    lines: dict[str, dict[str, Any]] = {}
    for line in read_lines(path):
        try:
            entry = line.json()
        except ValueError:
            continue  # only the last line can be cut short; its request is met again
        lines.setdefault(entry["custom_id"], entry)
    return lines


def request_line(key: str, body: dict[str, Any]) -> dict[str, Any]:
    """One line of the Batch API's input file."""
    return {"custom_id": key, "method": "POST", "url": CHAT_URL, "body": body}


def read_results(path: Path, model: str, how: str) -> Iterable[Answer | tuple[str, str]]:
    """The lines of a Batch API output file: an :class:`Answer` for each success, a
    ``(custom_id, error)`` pair for each error; a malformed line is a ConfigError."""
    if not path.is_file():
        raise ConfigError(f"batch results file {path} does not exist")
    for line in read_lines(path):
        try:
            yield _result(line.json(), model, how)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise ConfigError(
                f"{path}:{line.number}: not a Batch API result line ({exc}); expected "
                "custom_id and response.status_code/response.body or error"
            ) from exc


def _result(entry: dict[str, Any], model: str, how: str) -> Answer | tuple[str, str]:
    key = str(entry["custom_id"])
    error = entry.get("error")
    response = entry.get("response") or {}
    if error:
        message = error.get("message", error) if isinstance(error, dict) else error
        return key, str(message)
    status = int(response.get("status_code", 0))
    body = response.get("body") or {}
    if status != 200:
        detail = body.get("error", {}) if isinstance(body, dict) else body
        message = detail.get("message", detail) if isinstance(detail, dict) else detail
        return key, f"HTTP {status}: {message}"
    choice = body["choices"][0]
    usage = body.get("usage") or {}
    return Answer(
        key=key,
        model=str(body.get("model") or model),
        how=how,
        text=choice["message"].get("content") or "",
        input_tokens=int(usage.get("prompt_tokens", 0)),
        output_tokens=int(usage.get("completion_tokens", 0)),
        cached_input_tokens=(usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
    )
