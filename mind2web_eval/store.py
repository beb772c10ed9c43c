"""An append-only JSONL store of step results, keyed by ``action_uid``; runs resume from it.

Each record is one line, written whole and fsync'd before the step counts as done. A process
killed mid-write (SIGKILL, power loss) leaves at most a torn last line: on opening, the torn
bytes are moved to ``<name>.torn`` (kept for audit, nothing is silently dropped) and the file
is cut back to its last complete line, so the next append starts clean. A step already in
the store is never run or written again.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mind2web_eval.results import StepRecord
from webagent.errors import DatasetError, WebAgentError


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
    """``results.jsonl`` of a run folder. Thread-safe appends; one record per step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.torn_bytes = _cut_torn_tail(path) if path.exists() else 0
        self._lock = threading.Lock()
        self._done: set[str] = {uid for uid, _ in self._iter_raw()}

    def _iter_raw(self) -> Iterator[tuple[str, dict[str, Any]]]:
        if not self.path.exists():
            return
        seen: set[str] = set()
        with self.path.open(encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                try:
                    record = json.loads(line)
                    uid = str(record["action_uid"])
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise DatasetError(
                        f"{self.path}: line {number} is not a step record ({exc}); the file was "
                        "edited by hand? move the line out and run again"
                    ) from exc
                if uid not in seen:  # a repeat (never written by us) is ignored
                    seen.add(uid)
                    yield uid, record

    @property
    def done(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._done)

    def __contains__(self, action_uid: str) -> bool:
        with self._lock:
            return action_uid in self._done

    def __len__(self) -> int:
        with self._lock:
            return len(self._done)

    def append(self, record: StepRecord) -> bool:
        """Write ``record`` durably; False (and nothing written) if its step is already done."""
        line = record.model_dump_json() + "\n"
        with self._lock:
            if record.action_uid in self._done:
                return False
            size = self.path.stat().st_size if self.path.exists() else 0
            try:
                with self.path.open("a", encoding="utf-8") as stream:
                    stream.write(line)
                    stream.flush()
                    os.fsync(stream.fileno())
            except OSError as exc:
                self._undo_partial_write(size)
                raise ResultWriteError(
                    f"cannot write step {record.action_uid} to {self.path}: {exc.strerror or exc}. "
                    f"The {len(self._done)} steps already written are kept; free space (or fix "
                    "the folder) and run the same command again to resume"
                ) from exc
            self._done.add(record.action_uid)
            return True

    def _undo_partial_write(self, size: int) -> None:
        """Cut a line that was half written when the write failed (best effort)."""
        try:
            with self.path.open("rb+") as stream:
                stream.truncate(size)
        except OSError:
            pass  # the next open sets a torn tail aside anyway

    def records(self) -> Iterator[StepRecord]:
        """Every stored step, in the order written (first record of a step wins)."""
        for _, raw in self._iter_raw():
            try:
                yield StepRecord.model_validate(raw)
            except ValidationError as exc:
                raise DatasetError(
                    f"{self.path}: the record of step {raw.get('action_uid')} does not match "
                    f"this version's schema: {exc.errors()[0]['msg']}"
                ) from exc
