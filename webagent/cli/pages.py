"""A page named on the command line: a file, ``-`` for standard input, or a bundled sample."""

from __future__ import annotations

import sys
from pathlib import Path

from webagent.errors import PageError


def read_page(page: str) -> bytes:
    if page == "-":
        return sys.stdin.buffer.read()
    path = Path(page)
    if path.is_file():
        return path.read_bytes()
    from webagent.samples import SAMPLE_PAGES, sample_page_path

    if page in SAMPLE_PAGES:
        return sample_page_path(page).read_bytes()
    raise PageError(f"{page}: no such file, nor a sample page ({', '.join(SAMPLE_PAGES)})")
