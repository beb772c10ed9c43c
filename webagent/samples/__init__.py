"""Sample pages bundled with the package: realistic, self-authored, no ``backend_node_id``s
(the cleaner numbers their elements ``n1``, ``n2``, ...). They drive the README's examples."""

from __future__ import annotations

from pathlib import Path

from webagent.errors import PageError

#: name -> what the page is
SAMPLE_PAGES: dict[str, str] = {
    "shop": "outdoor-gear category page: search with a category select, filter sidebar, "
    "48 products with add-to-cart buttons, pagination, footer",
    "travel": "flight booking form: trip-type radios, from/to, dates, passenger and cabin "
    "selects, options, submit; destinations grid",
    "signup": "account sign-up form: names, date-of-birth selects, email, password, country, "
    "phone, consent checkboxes",
}


def sample_page_path(name: str) -> Path:
    """Path of the bundled sample page ``name`` (one of :data:`SAMPLE_PAGES`)."""
    if name not in SAMPLE_PAGES:
        raise PageError(f"no sample page {name!r}; choose one of {', '.join(SAMPLE_PAGES)}")
    return Path(__file__).resolve().parent / f"{name}.html"
