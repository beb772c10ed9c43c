"""A page named on the command line: a file, ``-`` for standard input, or a bundled sample."""

from __future__ import annotations

import sys
from pathlib import Path

from webagent.errors import PageError
from webagent.html.parse import binary_reason

PAGE_HELP = (
    "an HTML file (in the charset it declares, else UTF-8 or windows-1252; binary data is "
    "refused), '-' for standard input, or a bundled sample name"
)


def read_page(page: str, encoding: str | None = None) -> bytes:
    """The page's bytes; a PageError when there is none, or when it is binary, not text in
    its declared charset or ``encoding`` (checked before any model is built or called)."""
    data = _page_bytes(page)
    reason = binary_reason(data, encoding)
    if reason:
        raise PageError(f"{page}: binary data, not a web page: {reason}")
    return data


def _page_bytes(page: str) -> bytes:
    if page == "-":
        return sys.stdin.buffer.read()
    path = Path(page)
    if path.is_file():
        return path.read_bytes()
    from webagent.samples import SAMPLE_PAGES, sample_page_path

    if page in SAMPLE_PAGES:
        return sample_page_path(page).read_bytes()
    raise PageError(f"{page}: no such file, nor a sample page ({', '.join(SAMPLE_PAGES)})")
