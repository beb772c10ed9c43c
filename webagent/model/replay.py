"""Record and replay model calls, as a wrapper around any backend.

A cassette is a readable JSONL file. Its lines are ``header`` (model name, context window),
``completion`` (request, answer, keyed by ``Request.cache_key(model)``) and ``tokens`` (a token
count, keyed by a hash of the text, so that segmentation replays exactly). Keys cover what
changes the answer (model, messages, sampling, schema, prompt hash) and never timeouts or keys;
no secret is ever written. A request met twice replays its recorded answers in order. An
answers file (:mod:`webagent.model.answer_file`: request key -> answer, with who answered)
replays the same way; ``counter`` counts the tokens a file does not hold.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from webagent.errors import ConfigError, ReplayMissError
from webagent.model.base import Backend, Completion, Request
from webagent.model.windows import ContextWindow, known_window, setting_window, unknown_window
from webagent.textfiles import Line, read_lines
from webagent.tokens import TokenCounter, estimate_tokens

log = logging.getLogger(__name__)

CASSETTE_SCHEMA_VERSION = 1


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class RecordingBackend(Backend):
    """Passes every call to ``inner`` and appends it to the cassette at ``cassette_path``."""

    def __init__(self, inner: Backend, cassette_path: Path) -> None:
        self._inner = inner
        self._path = Path(cassette_path)
        self._lock = threading.Lock()
        self._counted: set[str] = set()

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._inner.name

    @property
    def context_window(self) -> int | None:  # type: ignore[override]
        return self._inner.context_window

    def window(self) -> ContextWindow:
        return self._inner.window()

    def keep_counts(self, counts: dict[str, int]) -> None:
        self._inner.keep_counts(counts)

    @property
    def max_concurrency(self) -> int:  # type: ignore[override]
        return self._inner.max_concurrency

    @property
    def inner(self) -> Backend:
        return self._inner

    def complete(self, request: Request, timeout_s: float) -> Completion:
        completion = self._inner.complete(request, timeout_s)
        self._write(
            {
                "kind": "completion",
                "key": request.cache_key(self.name),
                "model": self.name,
                "phase": request.phase,
                "request": request.model_dump(mode="json", exclude={"phase"}),
                "completion": completion.model_dump(
                    mode="json",
                    include={
                        "text",
                        "input_tokens",
                        "output_tokens",
                        "finish_reason",
                        "cached_input_tokens",
                    },
                ),
                "latency_s": round(completion.latency_s, 4),
            }
        )
        return completion

    def count_tokens(self, text: str) -> int:
        count = self._inner.count_tokens(text)
        self._record_count(text, count)
        return count

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        counts = self._inner.count_tokens_many(texts)
        for text, count in zip(texts, counts, strict=True):
            self._record_count(text, count)
        return counts

    @property
    def counts_remotely(self) -> bool:
        return self._inner.counts_remotely

    def _record_count(self, text: str, count: int) -> None:
        key = text_key(text)
        if key not in self._counted:
            self._counted.add(key)
            self._write({"kind": "tokens", "text": key, "chars": len(text), "count": count})

    def _write(self, entry: dict[str, Any]) -> None:
        """Append one line (opening the file each time: nothing is lost if the run dies)."""
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock:
            if self._path.exists() and self._path.stat().st_size > 0:
                header = ""
            else:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                header = json.dumps(self._header()) + "\n"
            with self._path.open("a", encoding="utf-8") as handle:
                handle.write(header + line)

    def _header(self) -> dict[str, Any]:
        return {
            "kind": "header",
            "schema_version": CASSETTE_SCHEMA_VERSION,
            "model": self.name,
            "context_window": self.context_window,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    def close(self) -> None:
        self._inner.close()


class ReplayBackend(Backend):
    """Answers only from a cassette; a request it does not hold raises :class:`ReplayMissError`."""

    def __init__(
        self,
        cassette_path: Path,
        *,
        name: str | None = None,
        context_window: int | None = None,
        max_concurrency: int = 4,
        counter: TokenCounter | None = None,
    ) -> None:
        self._path = Path(cassette_path)
        header, self._answers, self._counts = _load_cassette(self._path)
        self.name = name or _cassette_model(self._path, header)
        self._window = _replay_window(self._path, self.name, header, context_window)
        self.context_window = self._window.tokens
        self.max_concurrency = max_concurrency
        self._served: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self.estimated_counts = 0
        self._counter = counter

    def window(self) -> ContextWindow:
        return self._window

    def complete(self, request: Request, timeout_s: float) -> Completion:
        key = request.cache_key(self.name)
        answers = self._answers.get(key)
        if not answers:
            raise ReplayMissError(self._miss_message(request))
        with self._lock:
            index = min(self._served[key], len(answers) - 1)
            self._served[key] += 1
        recorded = answers[index]
        return Completion(model=self.name, cached=True, **recorded)

    def count_tokens(self, text: str) -> int:
        if self._counter is not None:
            return self._counter(text) if text else 0
        count = self._counts.get(text_key(text))
        if count is None:
            self.estimated_counts += 1
            return estimate_tokens(text)
        return count

    def _miss_message(self, request: Request) -> str:
        words = " ".join(request.messages[-1].content.split()[:12]) if request.messages else ""
        message = (
            f"replay: cassette {self._path} holds no answer for this {request.phase} request "
            f"to {self.name} (prompt {request.prompt_version or 'unversioned'}): {words!r}...; "
            "the prompt, settings or model changed since recording; record it again"
        )
        if self.estimated_counts:
            message += (
                f" ({self.estimated_counts} token counts were not in the cassette and were "
                "estimated, which can change how pages are split)"
            )
        return message


def _load_cassette(
    path: Path,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]], dict[str, int]]:
    if not path.is_file():
        raise ConfigError(f"replay cassette {path} does not exist")
    header: dict[str, Any] = {}
    answers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    counts: dict[str, int] = {}
    for line in read_lines(path):
        number = line.number
        entry = _parse_line(path, line)
        if entry is None:
            continue
        kind = entry.get("kind")
        if kind == "header":
            header = entry
        elif kind == "completion":
            answers[entry["key"]].append({**entry["completion"], "latency_s": 0.0})
        elif kind == "answer":  # an answers file (webagent.model.answer_file)
            answers[entry["key"]].append(
                {"text": entry["text"], "input_tokens": entry.get("input_tokens", 0),
                 "output_tokens": entry.get("output_tokens", 0), "finish_reason": "stop",
                 "cached_input_tokens": entry.get("cached_input_tokens"), "latency_s": 0.0}
            )  # fmt: skip
        elif kind == "tokens":
            counts[entry["text"]] = int(entry["count"])
        else:
            raise ConfigError(f"{path}:{number}: unknown cassette entry kind {kind!r}")
    return header, dict(answers), counts


def _parse_line(path: Path, line: Line) -> dict[str, Any] | None:
    try:
        entry = line.json()
        if not isinstance(entry, dict):
            raise ValueError("not a JSON object")
        if entry.get("kind") == "completion":
            _ = entry["key"], entry["completion"]["text"]
        if entry.get("kind") == "answer":
            _ = entry["key"], entry["text"]
        return entry
    except (ValueError, KeyError, TypeError) as exc:
        if not line.ended:
            log.warning(
                "%s:%d: ignoring a truncated last line (interrupted write)", path, line.number
            )
            return None
        raise ConfigError(f"{path}:{line.number}: not a valid cassette entry ({exc})") from exc


def _cassette_model(path: Path, header: dict[str, Any]) -> str:
    if header.get("model"):
        return str(header["model"])
    raise ConfigError(
        f"replay file {path} has no header naming its model; pass the model's name (--model)"
    )


def _replay_window(
    path: Path, name: str, header: dict[str, Any], given: int | None
) -> ContextWindow:
    """The setting, else the window the cassette's header recorded, else the table's."""
    if given:
        return setting_window(given)
    recorded = header.get("context_window")
    if isinstance(recorded, int):
        return ContextWindow(recorded, f"the header of {path.name} (the recorded model's)")
    return known_window(name) or unknown_window(name, f"{path.name} records none")
