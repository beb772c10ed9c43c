from __future__ import annotations

from pathlib import Path

import pytest

PAGES = Path(__file__).parent / "pages"


@pytest.fixture(scope="session")
def flights_html() -> str:
    return (PAGES / "flights.html").read_text(encoding="utf-8")
