"""Reuse across steps: a local change to a page changes only the fragments around it, also when
fragments must grow past max_fragment_tokens (the gist cache key is ``path + html``)."""

from __future__ import annotations

from segment_checks import check_segmentation

from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentedPage, SegmentSettings
from webagent.html.segment import segment_html, segment_page

# far too big for 10 fragments of 120 tokens: fragments must grow (the anchored regime)
SETTINGS = SegmentSettings(max_fragment_tokens=120, min_fragment_tokens=16, max_fragments=10)


def _page(typed: str = "", items: int = 12) -> str:
    sections = []
    for s in range(30):
        rows = "".join(
            f"<li><a href=/p/{s}/{i}>Product {s}-{i}, a sturdy thing of many words</a></li>"
            for i in range(items if s == 17 else 12)
        )
        field = f'<input name=q{s} value="{typed if s == 2 else ""}">'
        sections.append(f"<section><h2>Section {s}</h2>{field}<ul>{rows}</ul></section>")
    return f"<html><body><main>{''.join(sections)}</main></body></html>"


def _keys(result: SegmentedPage) -> list[str]:
    return [f.path + "\n" + f.html for f in result.fragments]


def _changed(before: str, after: str) -> int:
    known = set(_keys(segment_html(before, SETTINGS)))
    second = segment_html(after, SETTINGS)
    return sum(key not in known for key in _keys(second))


def test_the_anchored_regime_is_used_and_keeps_the_guarantees() -> None:
    page = clean_page(_page())
    result = segment_page(page, SETTINGS)
    assert len(result.fragments) <= 10 and not result.fits_budget
    check_segmentation(page, result, SETTINGS)


def test_a_typed_value_changes_only_its_own_fragment() -> None:
    assert _changed(_page(), _page(typed="jane.doe@example.com")) == 1


def test_an_added_item_changes_only_fragments_near_it() -> None:
    """Cuts within one window (about a fragment) of the change may move, on both sides."""
    assert 1 <= _changed(_page(), _page(items=13)) <= 6
    assert _changed(_page(), _page(items=12)) == 0  # same page, same fragments
