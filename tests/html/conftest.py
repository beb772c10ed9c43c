"""Pages for the segmentation tests: authored fixtures, generated extremes, shared real pages."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PAGES = HERE.parent / "data" / "pages"
SHARED = HERE.parents[2] / "shared"


@pytest.fixture(scope="session")
def pages_dir() -> Path:
    return PAGES


@pytest.fixture(scope="session")
def big_page() -> bytes:
    """About 5 MB: the same product block repeated, each with its own text."""
    block = (
        '<div class="card"><div class="inner"><h3><a href="/p/{i}">Product {i}</a></h3>'
        '<p class="price">{i}.99</p><span class="rating" aria-label="4 stars"></span>'
        '<button type="button" onclick="add({i})">Add to cart</button></div></div>\n'
    )
    parts = ["<html><body><main><section>"]
    size = 0
    i = 0
    while size < 5_000_000:
        chunk = block.format(i=i)
        parts.append(chunk)
        size += len(chunk)
        i += 1
    parts.append("</section></main></body></html>")
    return "".join(parts).encode()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not on this machine")
    return SHARED
