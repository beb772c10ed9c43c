"""parse_html: any bytes, any encoding, any depth; empty pages are a clear error."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from lxml import etree

from webagent.errors import PageError
from webagent.html.parse import decode_html, detect_encoding, parse_html


def body_text(root: etree._Element) -> str:
    return "".join(root.itertext())


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (codecs.BOM_UTF8 + "<p>Grüße</p>".encode(), "Grüße"),
        ("<p>Grüße</p>".encode("utf-16"), "Grüße"),  # BOM included by the codec
        ("<p>Grüße</p>".encode("utf-32"), "Grüße"),
        ('<meta charset="iso-8859-1"><p>Grüße</p>'.encode("latin-1"), "Grüße"),
        (
            '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
            "<p>Привет</p>".encode("cp1251"),
            "Привет",
        ),
        ('<meta charset="shift_jis"><p>日本語</p>'.encode("shift_jis"), "日本語"),
        ("<p>Grüße</p>".encode(), "Grüße"),  # no declaration: UTF-8
        ("<p>Grüße</p>".encode("cp1252"), "Grüße"),  # not UTF-8, undeclared: windows-1252
    ],
)
def test_encodings_are_detected(data: bytes, expected: str) -> None:
    assert expected in body_text(parse_html(data))


def test_declared_charset_that_lies_does_not_crash() -> None:
    data = '<meta charset="utf-8"><p>caf\xe9 ok</p>'.encode("latin-1")
    text = body_text(parse_html(data))
    assert "caf" in text and "ok" in text


def test_unknown_charset_falls_back() -> None:
    assert detect_encoding(b'<meta charset="x-made-up"><p>a</p>') == ("utf-8", 0)
    assert "a" in body_text(parse_html(b'<meta charset="x-made-up"><p>a</p>'))


def test_http_encoding_argument_wins_over_guessing() -> None:
    data = "<p>Grüße</p>".encode("latin-1")
    assert decode_html(data, "latin-1") == "<p>Grüße</p>"
    assert "Grüße" in body_text(parse_html(data, encoding="latin-1"))


@pytest.mark.parametrize(
    "data",
    [
        b"<p>nul\x00byte</p><p>after</p>",
        b"<p>\xff\xfe\xfa invalid \xc3</p><p>after</p>",
        b"<p>controls \x01\x02\x1b</p><p>after</p>",
        "<p>lone \ud800 surrogate</p><p>after</p>",
    ],
)
def test_invalid_bytes_do_not_crash_or_truncate(data: bytes | str) -> None:
    assert "after" in body_text(parse_html(data))


@pytest.mark.parametrize("data", [b"", "", b"   \n\t ", "\n"])
def test_empty_page_is_a_page_error(data: bytes | str) -> None:
    with pytest.raises(PageError, match="empty page"):
        parse_html(data)


def test_broken_markup_parses(pages_dir: Path) -> None:
    root = parse_html((pages_dir / "broken.html").read_bytes())
    text = body_text(root)
    assert "three" in text and "cell" in text and "stray" in text
    assert root.xpath("//button") and root.xpath("//select/option")


def test_self_closing_tags_of_cleaned_html_close() -> None:
    root = parse_html('<div><a backend_node_id="1" aria_label="Home"/><b>after</b></div>')
    (anchor,) = root.xpath("//a")
    assert len(anchor) == 0  # <b> is a sibling, not swallowed by the <a>


def test_ten_thousand_deep_page_parses_whole() -> None:
    depth = 10_000
    html = "<html><body>" + "<div>" * depth + "<a href='/x'>deepest</a>" + "</div>" * depth
    root = parse_html(html + "<p>after</p></body></html>")
    assert root.xpath("//a")[0].text == "deepest"
    assert root.xpath("//p")[0].text == "after"
    deepest = max(sum(1 for _ in el.iterancestors()) for el in root.iter("a"))
    assert deepest >= depth


def test_five_megabyte_page_parses(big_page: bytes) -> None:
    root = parse_html(big_page)
    assert len(root.xpath("//button")) > 10_000
