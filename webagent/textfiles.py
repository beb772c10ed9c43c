"""Input files read as UTF-8 text: the one place that reads them.

Every text file the toolkit reads (data, predictions, cassettes and answers files, Batch API
results, ``--config`` files and manifests, and the files of its own run folders) comes
through here, so that each follows the same rules:

* a UTF-8 byte-order mark is accepted and dropped;
* bytes that are not UTF-8 are named: the file, the line, the column and the byte
  (:class:`~webagent.errors.TextFileError` for a file read whole);
* read line by line (:func:`read_lines`), a line that is not UTF-8 is that line's problem
  alone: the lines before and after it read, and the caller names and skips it, or stops,
  as its format promises; a file too big to hold (:func:`open_text`) keeps such bytes apart
  and names them (:meth:`TextStream.flaw`);
* lines end at ``\\n`` only (``str.splitlines`` would also split at U+2028, which a JSON
  string may hold as it is).

Pages are not read here: a page is bytes in whatever encoding the page declares
(:mod:`webagent.html.parse`).
"""

from __future__ import annotations

import bisect
import codecs
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from webagent.errors import TextFileError

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)

BOM = "\ufeff"
UTF8_BOM = codecs.BOM_UTF8
_ESCAPED = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, kept by surrogateescape
_FIX = "save the file as UTF-8"


def _bad_byte(byte: int, column: int) -> str:
    return f"not UTF-8 text: byte 0x{byte:02X} at column {column}; {_FIX}"


def _problem(data: bytes, line_start: int, at: int) -> str:
    """What is wrong with the line of ``data`` that starts at ``line_start``: its byte ``at``
    (the bytes before it are UTF-8)."""
    column = len(data[line_start:at].decode("utf-8")) + 1
    return _bad_byte(data[at], column)


def read_text(path: Path) -> str:
    """The whole of ``path`` as text, without a byte-order mark.

    Bytes that are not UTF-8 raise :class:`TextFileError` naming the file, the line, the
    column and the byte; ``OSError`` (a missing file) is the caller's to word."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        if line_start == 0 and raw.startswith(UTF8_BOM):
            line_start = len(UTF8_BOM)
        line = raw.count(b"\n", 0, exc.start) + 1
        problem = _problem(raw, line_start, exc.start)
        raise TextFileError(f"{path}: line {line}: {problem}") from None
    return text.removeprefix(BOM)


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a text file: its text without the line break, or why it has none."""

    number: int  # 1-based
    text: str  # "" when ``problem`` is set
    problem: str | None  # the line is not UTF-8: which byte, where
    ended: bool  # False for a last line without a line break (an interrupted write?)

    def json(self) -> Any:
        """The line's JSON value; a ValueError saying why it has none (not UTF-8, not JSON)."""
        if self.problem:
            raise ValueError(self.problem)
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON: {exc}") from exc


def read_lines(path: Path, *, blank: bool = False) -> Iterator[Line]:
    """The lines of ``path``, lazily, but blank ones (unless ``blank``); a byte-order mark
    is dropped. A line that is not UTF-8 comes with its ``problem``; the next lines read."""
    with path.open("rb") as stream:
        for number, raw in enumerate(stream, start=1):
            start = len(UTF8_BOM) if number == 1 and raw.startswith(UTF8_BOM) else 0
            if not blank and raw[start:].isspace():
                continue
            ended = raw.endswith(b"\n")
            end = len(raw) - (2 if raw.endswith(b"\r\n") else 1 if ended else 0)
            try:  # a long line is decoded once, without copying its bytes first
                text = str(memoryview(raw)[start:end], "utf-8")
            except UnicodeDecodeError as exc:
                yield Line(number, "", _problem(raw, start, start + exc.start), ended)
                continue
            yield Line(number, text, None, ended)


def read_models(path: Path, model: type[M]) -> list[M]:
    """Each line of ``path`` as a ``model``, in order (none when there is no file). A line
    that is not one (the torn last line of a killed run) is skipped with a warning naming
    it: the files of a run folder, read back to resume or to report."""
    if not path.exists():
        return []
    found = []
    for line in read_lines(path):
        try:
            if line.problem:
                raise ValueError(line.problem)
            found.append(model.model_validate_json(line.text))
        except (ValueError, ValidationError) as exc:
            why = str(exc).splitlines()[0]
            log.warning("%s: line %d skipped, not a %s: %s", path, line.number, model.__name__, why)
    return found


@dataclass(frozen=True, slots=True)
class _Flaw:
    offset: int  # in the text read
    line: int
    column: int
    byte: int


class TextStream:
    """A UTF-8 file read as text a chunk at a time, for files too big to hold whole.

    ``read(size)`` works as a text file's. A byte that is not UTF-8 comes out as a lone
    surrogate (``surrogateescape``), so that what surrounds it still reads; the reader asks
    :meth:`flaw` whether a span of the text holds one, and leaves that span out. A
    byte-order mark is dropped."""

    def __init__(self, binary: BinaryIO) -> None:
        self._binary = binary
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._chars = 0  # characters returned so far
        self._lines = 0  # line breaks among them
        self._column = 0  # characters since the last line break
        self._flaws: list[_Flaw] = []
        self._at_start = True  # no character read yet: a byte-order mark is dropped

    def read(self, size: int = -1) -> str:
        """Up to about ``size`` characters; "" only at the end of the file."""
        while True:
            raw = self._binary.read(size)
            text, escaped = self._decode(raw, final=not raw)
            if self._at_start and text:
                text, self._at_start = text.removeprefix(BOM), False
            if text or not raw:  # a chunk may end inside a character, or hold just the BOM
                break
        self._advance(text, escaped)
        return text

    def _decode(self, raw: bytes, final: bool) -> tuple[str, bool]:
        """The text of ``raw``, and whether it holds bytes that are not UTF-8."""
        try:
            return self._decoder.decode(raw, final), False
        except UnicodeDecodeError:
            pass  # the decoder keeps its state when it raises: decode the chunk again
        self._decoder.errors = "surrogateescape"
        try:
            return self._decoder.decode(raw, final), True
        finally:
            self._decoder.errors = "strict"

    def _advance(self, text: str, escaped: bool) -> None:
        if escaped:
            for match in _ESCAPED.finditer(text):
                self._note_flaw(text, match.start())
        last_break = text.rfind("\n")
        self._column = len(text) - last_break - 1 if last_break >= 0 else self._column + len(text)
        self._lines += text.count("\n")
        self._chars += len(text)

    def _note_flaw(self, text: str, index: int) -> None:
        last_break = text.rfind("\n", 0, index)
        column = index - last_break if last_break >= 0 else self._column + index + 1
        line = self._lines + text.count("\n", 0, index) + 1
        self._flaws.append(_Flaw(self._chars + index, line, column, ord(text[index]) - 0xDC00))

    def flaw(self, start: int, end: int) -> str | None:
        """Why the text at ``start:end`` (offsets in all the text read) cannot be used: its
        first byte that is not UTF-8, with its line and column; None when it has none."""
        at = bisect.bisect_left(self._flaws, start, key=lambda flaw: flaw.offset)
        if at == len(self._flaws) or self._flaws[at].offset >= end:
            return None
        flaw = self._flaws[at]
        return f"line {flaw.line}: {_bad_byte(flaw.byte, flaw.column)}"


@contextmanager
def open_text(path: Path) -> Iterator[TextStream]:
    """``path`` as a :class:`TextStream`, closed after the ``with``."""
    with path.open("rb") as binary:
        yield TextStream(binary)
