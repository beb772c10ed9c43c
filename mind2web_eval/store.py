"""An append-only JSONL store of step attempts, keyed by ``action_uid``; runs resume from it.

Each attempt is one line, written whole and fsync'd before it counts. Every attempt is kept
(for audit), and a step's *final* attempt is the one that counts:

* a step whose final attempt is an answer (right, wrong or unparseable) is **done**: it is
  never run or written again, and any later line for it (never written by us) is ignored;
* a step whose final attempt failed for a reason outside the agent's answer (error classes
  in :data:`~mind2web_eval.diagnostics.PENDING_CLASSES`: the model failed after its retries,
  the page could not be read) is **pending**: the same command runs it again, and the new
  attempt is appended with the next ``attempt`` number.

A process killed mid-write (SIGKILL, power loss) leaves at most a torn last line: on opening,
the torn bytes are moved to ``<name>.torn`` (kept for audit, nothing is silently dropped) and
the file is cut back to its last complete line, so the next append starts clean.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mind2web_eval.diagnostics import PENDING_CLASSES
from mind2web_eval.results import StepRecord
from webagent.errors import DatasetError, WebAgentError
from webagent.textfiles import read_lines


class ResultWriteError(WebAgentError):
    """A step result could not be written (disk full, folder gone); the run can resume."""


def _cut_torn_tail(path: Path) -> int:
    """Move bytes after the last newline to ``path.torn``; returns how many were moved."""
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as stream:
        back = min(size, 1 << 16)
        while True:
            stream.seek(size - back)
            tail = stream.read(back)
            cut = tail.rfind(b"\n")
            if cut >= 0 or back == size:
                break
            back = min(size, back * 4)
        keep = size - back + cut + 1 if cut >= 0 else 0
        if keep == size:
            return 0
        stream.seek(keep)
        torn = stream.read()
        with path.with_name(path.name + ".torn").open("ab") as aside:
            aside.write(torn + b"\n")
        stream.truncate(keep)
        stream.flush()
        os.fsync(stream.fileno())
    return size - keep


class ResultStore:
    """``results.jsonl`` of a run folder. Thread-safe appends; every attempt of every step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.torn_bytes = _cut_torn_tail(path) if path.exists() else 0
        self._lock = threading.Lock()
        self._attempts: dict[str, int] = {}
        self._pending: dict[str, str] = {}  # uid -> error class of its failed final attempt
        self._final_line: dict[str, int] = {}  # uid -> line number of its final attempt
        self._lines = 0
        for number, uid, raw in self._iter_raw():
            self._lines = number
            self._note(uid, raw, number)

    def _iter_raw(self) -> Iterator[tuple[int, str, dict[str, Any]]]:
        if not self.path.exists():
            return
        for line in read_lines(self.path, blank=True):  # line numbers index the records
            try:
                record = line.json()
                uid = str(record["action_uid"])
            except (ValueError, KeyError, TypeError) as exc:
                raise DatasetError(
                    f"{self.path}: line {line.number} is not a step record ({exc}); the file "
                    "was edited by hand? move the line out and run again"
                ) from exc
            yield line.number, uid, record

    def _note(self, uid: str, raw: dict[str, Any], number: int) -> bool:
        """Take line ``number`` as the latest attempt of ``uid``; False if ``uid`` is done."""
        if uid in self._final_line and uid not in self._pending:
            return False  # a line after the answer (never written by us) is ignored
        self._attempts[uid] = self._attempts.get(uid, 0) + 1
        self._final_line[uid] = number
        error_class = _error_class(raw)
        if error_class in PENDING_CLASSES:
            self._pending[uid] = error_class
        else:
            self._pending.pop(uid, None)
        return True

    @property
    def done(self) -> frozenset[str]:
        """Steps whose final attempt is an answer."""
        with self._lock:
            return frozenset(uid for uid in self._final_line if uid not in self._pending)

    @property
    def pending(self) -> dict[str, str]:
        """Steps tried whose final attempt failed, with that attempt's error class."""
        with self._lock:
            return dict(self._pending)

    def attempts(self) -> dict[str, int]:
        """How many attempts each stored step took (counting up to its answer)."""
        with self._lock:
            return dict(self._attempts)

    def __contains__(self, action_uid: str) -> bool:
        """Whether ``action_uid`` is done (answered); a pending step is not."""
        with self._lock:
            return action_uid in self._final_line and action_uid not in self._pending

    def __len__(self) -> int:
        """Steps done (answered)."""
        with self._lock:
            return len(self._final_line) - len(self._pending)

    def append(self, record: StepRecord) -> StepRecord | None:
        """Write ``record`` durably as the step's next attempt and return it as stored (with
        its ``attempt`` number); None (and nothing written) if the step is already done."""
        with self._lock:
            uid = record.action_uid
            if uid in self._final_line and uid not in self._pending:
                return None
            record = record.model_copy(update={"attempt": self._attempts.get(uid, 0) + 1})
            line = record.model_dump_json() + "\n"
            size = self.path.stat().st_size if self.path.exists() else 0
            try:
                with self.path.open("a", encoding="utf-8") as stream:
                    stream.write(line)
                    stream.flush()
                    os.fsync(stream.fileno())
            except OSError as exc:
                self._undo_partial_write(size)
                done = len(self._final_line) - len(self._pending)
                raise ResultWriteError(
                    f"cannot write step {uid} to {self.path}: {exc.strerror or exc}. "
                    f"The {done} steps already written are kept; free space (or fix "
                    "the folder) and run the same command again to resume"
                ) from exc
            self._lines += 1
            self._note(uid, {"diagnostics": {"error_class": record.diagnostics.error_class}},
                       self._lines)  # fmt: skip
            return record

    def _undo_partial_write(self, size: int) -> None:
        """Cut a line that was half written when the write failed (best effort)."""
        try:
            with self.path.open("rb+") as stream:
                stream.truncate(size)
        except OSError:
            pass  # the next open sets a torn tail aside anyway

    def records(self) -> Iterator[StepRecord]:
        """The final attempt of every stored step (answered or pending), in file order."""
        with self._lock:
            final = set(self._final_line.values())
        for number, _, raw in self._iter_raw():
            if number not in final:
                continue
            try:
                yield StepRecord.model_validate(raw)
            except ValidationError as exc:
                raise DatasetError(
                    f"{self.path}: the record of step {raw.get('action_uid')} does not match "
                    f"this version's schema: {exc.errors()[0]['msg']}"
                ) from exc


def _error_class(raw: dict[str, Any]) -> str:
    diagnostics = raw.get("diagnostics")
    return str(diagnostics.get("error_class", "")) if isinstance(diagnostics, dict) else ""
