"""Read the items of a huge top-level JSON list one at a time.

The raw Mind2Web release stores each split as JSON lists of several hundred MB; a task with
its pages can be tens of MB. This reader keeps one item (plus a read-ahead chunk) in memory
and lets the C JSON decoder do the parsing: it decodes an item from a buffer and, when the
item is cut off by the buffer's end, reads more (doubling, so the cost stays linear).

Read from a :class:`~webagent.textfiles.TextStream`, an item holding bytes that are not UTF-8
is yielded as an :class:`UnreadableItem` naming them, and the items after it still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from webagent.errors import DatasetError
from webagent.textfiles import TextStream

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"
_END_MARGIN = 16  # a decode error this close to the buffer's end may be a cut-off item


class Readable(Protocol):
    def read(self, size: int, /) -> str: ...


@dataclass(frozen=True)
class UnreadableItem:
    """An item whose text holds bytes that are not UTF-8 (``problem`` names the first)."""

    problem: str


class _Buffer:
    def __init__(self, stream: Readable, chunk_size: int) -> None:
        self.stream = stream
        self.chunk_size = chunk_size
        self.text = ""
        self.pos = 0
        self.eof = False
        self.consumed = 0  # characters dropped from the front, for error offsets

    def more(self) -> bool:
        """Read another chunk (at least as large as what is pending); False at end of file."""
        if self.eof:
            return False
        if self.pos > len(self.text) // 2:
            self.consumed += self.pos
            self.text, self.pos = self.text[self.pos :], 0
        chunk = self.stream.read(max(self.chunk_size, len(self.text) - self.pos))
        if not chunk:
            self.eof = True
            return False
        self.text += chunk
        return True

    def skip_whitespace(self) -> str:
        """The next significant character ('' at end of file), left unconsumed."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""

    def offset(self) -> int:
        return self.consumed + self.pos

    def flaw(self, start: int, end: int) -> str | None:
        """The first byte that is not UTF-8 in ``start:end`` (file offsets), if any."""
        return self.stream.flaw(start, end) if isinstance(self.stream, TextStream) else None


def _may_be_cut_off(buffer: _Buffer, exc: json.JSONDecodeError) -> bool:
    if buffer.eof:
        return False
    return exc.msg.startswith("Unterminated") or exc.pos >= len(buffer.text) - _END_MARGIN


def _decode_one(buffer: _Buffer, name: str, index: int) -> Any:
    start = buffer.offset()
    while True:
        try:
            value, end = _DECODER.raw_decode(buffer.text, buffer.pos)
        except json.JSONDecodeError as exc:
            if _may_be_cut_off(buffer, exc) and buffer.more():
                continue
            flaw = buffer.flaw(start, buffer.consumed + exc.pos + 1)
            why = f": {flaw}" if flaw else (
                f" is not valid JSON near character {buffer.consumed + exc.pos}: {exc.msg}"
            )  # fmt: skip
            raise DatasetError(
                f"{name}: item #{index}{why}; the rest of this file cannot be read"
            ) from exc
        if end >= len(buffer.text) and buffer.more():
            continue  # a bare number may continue in the next chunk
        buffer.pos = end
        problem = buffer.flaw(start, buffer.offset())
        return UnreadableItem(problem) if problem else value


def iter_json_items(stream: Readable, name: str, chunk_size: int = 1 << 20) -> Iterator[Any]:
    """Yield each item of a top-level JSON list, or the single top-level value if not a list;
    an item holding bytes that are not UTF-8 as an :class:`UnreadableItem`.

    Raises :class:`DatasetError` naming the file, the item and the offset on broken JSON.
    """
    buffer = _Buffer(stream, chunk_size)
    first = buffer.skip_whitespace()
    if first == "":
        raise DatasetError(f"{name}: the file is empty")
    if first != "[":
        yield _decode_one(buffer, name, 0)
        if buffer.skip_whitespace() != "":
            raise DatasetError(f"{name}: unexpected data after the top-level JSON value")
        return
    buffer.pos += 1
    index = 0
    while True:
        char = buffer.skip_whitespace()
        if char == "]":
            return
        if index > 0:
            if char != ",":
                at = buffer.offset()
                found = buffer.flaw(at, at + 1) or f"found {char!r}"
                raise DatasetError(
                    f"{name}: expected ',' or ']' after item #{index - 1} at character "
                    f"{at}, {found}"
                )
            buffer.pos += 1
            char = buffer.skip_whitespace()
        if char == "":
            raise DatasetError(f"{name}: the JSON list is cut off after item #{index - 1}")
        yield _decode_one(buffer, name, index)
        index += 1
