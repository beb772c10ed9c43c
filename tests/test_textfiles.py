"""The one reader of input files (``webagent.textfiles``) and the binary-page check: exact
places for bytes that are not UTF-8, whatever the chunking; lines that end at ``\\n`` only."""

from __future__ import annotations

import codecs
import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mind2web_eval._jsonstream import UnreadableItem, iter_json_items
from webagent.errors import TextFileError
from webagent.html.parse import binary_reason
from webagent.textfiles import TextStream, read_lines, read_text

SHARED_PAGES = Path(__file__).resolve().parents[2] / "shared" / "pages"


def _place(data: bytes, at: int) -> tuple[int, int]:
    """The 1-based line and character column of byte ``at`` (the text before it is UTF-8)."""
    before = data[:at]
    line_start = before.rfind(b"\n") + 1
    return before.count(b"\n") + 1, len(before[line_start:].decode("utf-8")) + 1


def test_read_text_names_line_column_and_byte(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    data = "[agent]\n# naïve\nname = 'caf".encode() + b"\xe9'\n"
    path.write_bytes(codecs.BOM_UTF8 + data)
    with pytest.raises(TextFileError) as caught:
        read_text(path)
    assert str(caught.value) == (
        f"{path}: line 3: not UTF-8 text: byte 0xE9 at column 12; save the file as UTF-8"
    )
    path.write_bytes(codecs.BOM_UTF8 + "[agent]\n# naïve\n".encode())
    assert read_text(path) == "[agent]\n# naïve\n"


def test_lines_end_at_newline_only_and_a_bad_line_costs_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    first = json.dumps({"text": "a\u2028b\x85c"}, ensure_ascii=False).encode()
    path.write_bytes(codecs.BOM_UTF8 + first + b"\r\n\n  \n" + b'{"x": "\xff"}\n' + b'{"y": 1')
    lines = list(read_lines(path))
    assert [(line.number, line.ended) for line in lines] == [(1, True), (4, True), (5, False)]
    assert lines[0].json() == {"text": "a\u2028b\x85c"} and lines[0].problem is None
    assert lines[1].problem == "not UTF-8 text: byte 0xFF at column 8; save the file as UTF-8"
    with pytest.raises(ValueError, match="byte 0xFF at column 8"):
        lines[1].json()
    with pytest.raises(ValueError, match="not JSON: Expecting"):
        lines[2].json()
    assert [line.number for line in read_lines(path, blank=True)] == [1, 2, 3, 4, 5]


_TEXT = st.text(alphabet=st.sampled_from('ab é€😀\n\t"\\'), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(st.dictionaries(st.sampled_from("kqz"), _TEXT, max_size=3), max_size=8),
    bad=st.sets(st.integers(0, 7)),
    chunk=st.integers(1, 40),
    bom=st.booleans(),
    indent=st.sampled_from([None, 1]),
)
def test_a_json_list_read_in_any_chunks_leaves_out_exactly_the_items_with_bad_bytes(
    items: list[dict[str, str]], bad: set[int], chunk: int, bom: bool, indent: int | None
) -> None:
    data = b"[" + (b"\n" if indent else b"")
    expected: list[object] = []
    for index, item in enumerate(items):
        encoded = json.dumps(item, ensure_ascii=False, indent=indent).encode()
        if index in bad and item:
            key = encoded.index(b'": "') + 4  # the first byte of the first value
            at = len(data) + key
            line, column = _place(data + encoded, at)
            encoded = encoded[:key] + b"\xe9" + encoded[key:]
            problem = (
                f"line {line}: not UTF-8 text: byte 0xE9 at column {column}; save the file as UTF-8"
            )
            expected.append(UnreadableItem(problem))
        else:
            expected.append(item)
        data += encoded + (b",\n" if index < len(items) - 1 else b"")
    data += b"]"
    stream = TextStream(io.BytesIO((codecs.BOM_UTF8 if bom else b"") + data))
    assert list(iter_json_items(stream, "mem", chunk_size=chunk)) == expected


def test_a_character_cut_by_the_chunks_is_not_a_bad_byte() -> None:
    text = "😀é€" * 50
    data = json.dumps([text, text], ensure_ascii=False).encode()
    for chunk in range(1, 9):
        stream = TextStream(io.BytesIO(data))
        assert list(iter_json_items(stream, "mem", chunk_size=chunk)) == [text, text]


def test_a_bad_byte_between_items_is_named_for_what_it_is() -> None:
    stream = TextStream(io.BytesIO(b'[{"a": 1},\n\xe9{"b": 2}]'))
    items = iter_json_items(stream, "mem")
    assert next(items) == {"a": 1}
    with pytest.raises(
        Exception, match="mem: item #1: line 2: not UTF-8 text: byte 0xE9 at column 1"
    ):
        next(items)


def test_random_bytes_and_control_characters_are_binary() -> None:
    rng = random.Random(7)
    assert binary_reason(rng.randbytes(3000)) == "it holds NUL bytes"
    assert binary_reason(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") == "it holds NUL bytes"
    assert binary_reason("<p>" + "\x01\x02\x1b" * 10 + "</p>") == (
        "30 of its first 37 characters are control characters or bytes its encoding cannot decode"
    )


@pytest.mark.parametrize(
    "page",
    [
        '<meta charset="iso-8859-1"><p>Grüße '.encode("latin-1") * 200,
        "<p>Grüße, señor</p>".encode("utf-16"),  # with its byte-order mark
        "<p>Привет, мир</p>".encode("cp1251") * 500,  # undeclared: read as windows-1252
        "<p>中文字符</p>".encode() * 1000,  # 8 KB cut inside a character
        b"<p>a form feed \x0c, a vertical tab \x0b, an escape \x1b among many words</p>" * 40,
    ],
)
def test_text_in_any_encoding_is_not_binary(page: bytes) -> None:
    assert binary_reason(page) is None


def test_every_saved_page_is_text() -> None:
    if not SHARED_PAGES.is_dir():
        pytest.skip("/work/shared/pages (saved pages) is not present")
    pages = sorted(SHARED_PAGES.glob("*.html"))
    assert pages and all(binary_reason(page.read_bytes()) is None for page in pages)
