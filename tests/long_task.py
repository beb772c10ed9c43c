"""A Mind2Web task (raw-release JSON) on a page longer than the budgets it is run at: a shop's
search results with many product cards, every element with a ``backend_node_id``, as in
Mind2Web's ``cleaned_html``. Written for these tests; not Mind2Web data."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path

#: product cards on the page: more than a 32K budget holds, its html and its compact view
CARDS = 700


def long_page(cards: int = CARDS) -> str:
    ids = count(5000)
    lines = [
        f'<html backend_node_id="{next(ids)}">',
        f'<body backend_node_id="{next(ids)}">',
        f'<form backend_node_id="{next(ids)}" role="search">',
        '<input backend_node_id="4000" type="search" name="q" aria_label="Search products" />',
        '<button backend_node_id="4001" type="submit"><text>Search</text></button>',
        "</form>",
        f'<ul backend_node_id="{next(ids)}">',
    ]
    for n in range(cards):
        lines.append(
            f'<li backend_node_id="{next(ids)}"><div backend_node_id="{next(ids)}">'
            f'<a backend_node_id="{next(ids)}" href="/p/{n}"><text>Trail shoe model {n}, '
            f"waterproof, size 36 to 47</text></a>"
            f'<span backend_node_id="{next(ids)}"><text>EUR {40 + n % 90}.95</text></span>'
            f'<button backend_node_id="{next(ids)}"><text>Add to cart</text></button>'
            "</div></li>"
        )
    lines += ["</ul>", "</body>", "</html>"]
    return "\n".join(lines)


def _candidate(node: str, tag: str, attributes: dict[str, str]) -> dict[str, object]:
    return {
        "tag": tag,
        "attributes": json.dumps({"backend_node_id": node, **attributes}),
        "backend_node_id": node,
    }


def write_long_task(folder: Path, cards: int = CARDS) -> Path:
    """``folder/long_task.json``: one task of two steps on :func:`long_page`."""
    page = long_page(cards)
    search = _candidate("4000", "input", {"type": "search", "aria_label": "Search products"})
    button = _candidate("4001", "button", {"type": "submit"})
    reprs = ["[searchbox]  Search products -> TYPE: trail shoes", "[button]  Search -> CLICK"]
    steps = [
        ("long-1-s1", {"op": "TYPE", "original_op": "TYPE", "value": "trail shoes"}, search),
        ("long-1-s2", {"op": "CLICK", "original_op": "CLICK", "value": ""}, button),
    ]
    task = {
        "annotation_id": "long-1",
        "website": "trailshop",
        "domain": "Shopping",
        "subdomain": "Outdoor",
        "confirmed_task": "Search for trail shoes.",
        "action_reprs": reprs,
        "actions": [
            {
                "action_uid": uid,
                "cleaned_html": page,
                "operation": operation,
                "pos_candidates": [gold],
                "neg_candidates": [],
            }
            for uid, operation, gold in steps
        ],
    }
    path = folder / "long_task.json"
    path.write_text(json.dumps([task]), encoding="utf-8")
    return path
