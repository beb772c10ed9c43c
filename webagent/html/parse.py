"""Bytes or text of any HTML page -> an lxml tree.

Decoding is done here, not by libxml2, so that a wrong or missing declaration never truncates
a page: a byte-order mark wins, then an explicit ``encoding``, then a ``<meta charset>`` or
``<meta http-equiv="Content-Type" content="...; charset=...">`` in the first 4 KB, then strict
UTF-8, and finally windows-1252 (which maps every byte). A declared charset that does not
decode the bytes cleanly is decoded with replacement characters rather than rejected.

libxml2 stops nesting at 2,048 levels even with ``huge_tree``; a page deeper than that is
rebuilt by :mod:`webagent.html.deep`, a slower tokenizer-driven builder with no depth limit.
"""

from __future__ import annotations

import codecs
import re
import threading

from lxml import etree

from webagent.errors import PageError
from webagent.html.deep import build_deep_tree

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
_DEPTH_ERROR = "Excessive depth"
#: how much of a page :func:`binary_reason` reads, and the share of its characters that may
#: be control characters or bytes its encoding cannot decode before it is not text
_SNIFF_BYTES = 8192
_ODD_SHARE = 0.05
# C0 controls but tab, line feed, form feed and carriage return; DEL; a byte the encoding
# cannot decode (kept as a lone surrogate by surrogateescape)
_ODD = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\udc80-\udcff]")


def detect_encoding(data: bytes, declared: str | None = None) -> tuple[str, int]:
    """The encoding to decode ``data`` with, and how many BOM bytes to skip."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    for candidate in (declared, _meta_charset(data[:4096])):
        if candidate and _known_codec(candidate):
            return candidate, 0
    return "utf-8", 0


def decode_html(data: bytes, declared: str | None = None) -> str:
    """Decode page bytes to text; never raises on invalid bytes."""
    encoding, skip = detect_encoding(data, declared)
    body = data[skip:]
    try:
        return body.decode(encoding)
    except UnicodeDecodeError:
        if encoding.replace("_", "-").lower() in ("utf-8", "utf8") and not skip:
            return body.decode("windows-1252", errors="replace")
        return body.decode(encoding, errors="replace")


def binary_reason(data: bytes | str, declared: str | None = None) -> str | None:
    """Why ``data`` is binary rather than a page of text, in words; None for text.

    Its first 8 KB are decoded as :func:`decode_html` would decode the page (so a page in
    the charset it declares, or in windows-1252, is text); they are binary when they hold a
    NUL (as git and ``file`` judge) or when more than 1 character in 20 is a control
    character or a byte the encoding cannot decode. Real pages hold none of either."""
    head = data[:_SNIFF_BYTES] if isinstance(data, str) else _decoded_head(data, declared)
    if "\x00" in head:
        return "it holds NUL bytes"
    odd = sum(1 for _ in _ODD.finditer(head))
    if odd > _ODD_SHARE * len(head):
        return (
            f"{odd} of its first {len(head)} characters are control characters or bytes "
            "its encoding cannot decode"
        )
    return None


def _decoded_head(data: bytes, declared: str | None) -> str:
    """The first 8 KB of ``data`` decoded as :func:`decode_html` decodes the page, with the
    bytes that do not decode kept as lone surrogates; a character cut at the end is left out."""
    head = data[:_SNIFF_BYTES]
    encoding, skip = detect_encoding(head, declared)
    body = head[skip:]
    try:
        return codecs.getincrementaldecoder(encoding)("strict").decode(body)
    except UnicodeDecodeError:
        if codecs.lookup(encoding).name == "utf-8" and not skip:
            encoding = "windows-1252"  # decode_html's fallback
    return codecs.getincrementaldecoder(encoding)("surrogateescape").decode(body)


def to_utf8(data: bytes | str, encoding: str | None = None) -> bytes:
    """The page as UTF-8 bytes, without a BOM; the bytes themselves when already UTF-8."""
    if isinstance(data, str):
        return data.encode("utf-8", errors="replace")
    detected, skip = detect_encoding(data, encoding)
    if codecs.lookup(detected).name == "utf-8":
        body = data[skip:] if skip else data
        if _is_utf8(body):
            return body  # what decoding and encoding again would give, without a round trip
    # not UTF-8 after all (decode_html falls back to windows-1252, or replaces after a BOM),
    # or another encoding
    return decode_html(data, encoding).encode("utf-8", errors="replace")


_CHECK_CHUNK = 1 << 15


def _is_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as strict UTF-8. Checked in chunks: decoding a whole page at
    once allocates (and frees) a string as large as the page, which costs twice as much."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _CHECK_CHUNK):
            decoder.decode(view[start : start + _CHECK_CHUNK])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def parse_html(data: bytes | str, encoding: str | None = None) -> etree._Element:
    """Parse a page (raw HTML or Mind2Web ``cleaned_html``) into its ``<html>`` root element.

    ``encoding`` is the charset from an HTTP header, if known. Raises PageError for an empty or
    blank page. libxml2 replaces control characters and invalid sequences with U+FFFD.
    """
    if not data.strip():
        raise PageError(f"empty page: {len(data)} bytes, no markup or text to parse")
    raw = to_utf8(data, encoding)
    parser = _parser()
    try:
        root = etree.fromstring(raw, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise PageError(f"page has no parsable content ({exc}); {len(data)} bytes given") from exc
    if root is None:
        raise PageError(f"page has no parsable content; {len(data)} bytes given")
    if any(_DEPTH_ERROR in entry.message for entry in parser.error_log):
        root = build_deep_tree(raw.decode("utf-8", errors="replace"))
    return root


_PARSERS = threading.local()


def _parser() -> etree.HTMLParser:
    """This thread's parser, made on first use: making one costs a tenth of a parse, and a
    parser is not shared between threads since its ``error_log`` is read after each parse
    (libxml2 clears it when the next parse starts)."""
    parser: etree.HTMLParser | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        # a plain etree parser: lxml.html's would run a Python class lookup for every element
        # no id table (collect_ids): nothing looks elements up by id, and it costs 7 % of a
        # parse
        parser = etree.HTMLParser(
            encoding="utf-8",
            huge_tree=True,
            remove_comments=True,
            remove_pis=True,
            collect_ids=False,
        )
        _PARSERS.parser = parser
    return parser


def _meta_charset(head: bytes) -> str | None:
    match = _META_CHARSET.search(head)
    return match.group(1).decode("ascii", errors="replace") if match else None


def _known_codec(name: str) -> bool:
    try:
        info = codecs.lookup(name)
    except LookupError:
        return False
    # a page cannot really be UTF-16/32 without a BOM once its meta tag was read as ASCII
    return not info.name.startswith(("utf-16", "utf-32"))
