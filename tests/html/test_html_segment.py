"""Segmentation invariants on authored pages and generated extremes."""

from __future__ import annotations

from pathlib import Path

import pytest
from segment_checks import check_segmentation

from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html, segment_page, segment_tree
from webagent.html.units import Sizer
from webagent.tokens import estimate_tokens

AUTHORED = ["shop_long.html", "form.html", "broken.html", "no_interactive.html"]
SETTINGS = [
    SegmentSettings(),
    SegmentSettings(depth=5, max_fragment_tokens=200, min_fragment_tokens=20),
    SegmentSettings(depth=7, max_fragment_tokens=60, min_fragment_tokens=0),
    SegmentSettings(depth=3, max_fragment_tokens=400, min_fragment_tokens=50, max_fragments=8),
]


@pytest.mark.parametrize("name", AUTHORED)
@pytest.mark.parametrize(
    "settings", SETTINGS, ids=lambda s: f"d{s.depth}-max{s.max_fragment_tokens}"
)
def test_invariants_on_authored_pages(
    pages_dir: Path, name: str, settings: SegmentSettings
) -> None:
    data = (pages_dir / name).read_bytes()
    page = clean_page(data)
    result = segment_page(page, settings)
    check_segmentation(page, result, settings, root=parse_html(data))


def test_shop_page_is_cut_along_products(pages_dir: Path) -> None:
    settings = SegmentSettings(depth=6, max_fragment_tokens=400, min_fragment_tokens=40)
    result = segment_html((pages_dir / "shop_long.html").read_bytes(), settings)
    assert result.fits_budget
    carts = [f for f in result.fragments if "Add to basket" in f.text]
    assert len(carts) >= 5, "the product grid is spread over several fragments"
    for fragment in carts:
        assert fragment.tokens <= 400
        assert "section#grid" in fragment.path
    form = next(f for f in result.fragments if '<form id=n21 name="search"' in f.html)
    search = next(f for f in result.fragments if 'placeholder="Search products"' in f.html)
    assert search.index - form.index <= 1, "the search form stays together or adjacent"
    assert "Search" in search.text


def test_same_input_same_fragments(pages_dir: Path) -> None:
    data = (pages_dir / "shop_long.html").read_bytes()
    settings = SegmentSettings(max_fragment_tokens=300)
    first = segment_html(data, settings).model_dump()
    assert segment_html(data, settings).model_dump() == first
    assert segment_html(data.decode(), settings).model_dump()["fragments"] == first["fragments"]


def test_shallow_content_is_not_lost() -> None:
    html = (
        "<html><body>Intro text at the top <div><div><div><div><div><div><div><p>deep</p>"
        "</div></div></div></div></div></div></div>middle<nav aria-label=Main><a>link</a></nav>"
        "<div><div><div><div><div><div><p>deep two</p></div></div></div></div></div></div>"
        "closing words</body></html>"
    )
    settings = SegmentSettings(depth=6, max_fragment_tokens=20, min_fragment_tokens=0)
    page = clean_page(html)
    result = segment_page(page, settings)
    check_segmentation(page, result, settings, root=parse_html(html))
    text = " ".join(f.text for f in result.fragments)
    for words in ("Intro text at the top", "middle", "closing words", "deep two", "link"):
        assert words in text


def test_tiny_siblings_are_merged_big_ones_split() -> None:
    links = "".join(f"<li><a href=/{i}>L{i}</a></li>" for i in range(100))
    html = f"<html><body><div><ul>{links}</ul></div></body></html>"
    tiny = segment_html(html, SegmentSettings(depth=3, max_fragment_tokens=200))
    assert 1 < len(tiny.fragments) < 20, "100 one-link items merged into a few fragments"
    assert all(f.tokens <= 200 for f in tiny.fragments)
    unmerged = segment_html(
        html, SegmentSettings(depth=3, max_fragment_tokens=200, min_fragment_tokens=0)
    )
    assert len(unmerged.fragments) > len(tiny.fragments)


def test_indivisible_element_is_flagged() -> None:
    words = " ".join(f"word{i}" for i in range(2000))
    html = f"<html><body><div><p>short</p><p>{words}</p><p>after</p></div></body></html>"
    settings = SegmentSettings(max_fragment_tokens=100, min_fragment_tokens=0)
    page = clean_page(html)
    result = segment_page(page, settings)
    check_segmentation(page, result, settings)
    (big,) = [f for f in result.fragments if f.oversized]
    assert "word1999" in big.text and "short" not in big.text
    assert not result.fits_budget and "max_fragment_tokens=100" in (result.overflow or "")


def test_max_fragments_merges_adjacent_fragments(pages_dir: Path) -> None:
    data = (pages_dir / "shop_long.html").read_bytes()
    free = segment_html(data, SegmentSettings(max_fragment_tokens=300))
    capped_settings = SegmentSettings(max_fragment_tokens=3000, max_fragments=5)
    page = clean_page(data)
    capped = segment_page(page, capped_settings)
    assert len(free.fragments) > 5 >= len(capped.fragments)
    assert capped.fits_budget
    check_segmentation(page, capped, capped_settings)


def test_max_fragments_that_cannot_be_reached_is_reported(pages_dir: Path) -> None:
    data = (pages_dir / "shop_long.html").read_bytes()
    page = clean_page(data)
    strict = SegmentSettings(
        max_fragment_tokens=300, max_fragments=3, overflow="keep_fragment_tokens"
    )
    result = segment_page(page, strict)
    assert len(result.fragments) > 3
    assert not result.fits_budget and "max_fragments=3" in (result.overflow or "")
    assert all(not f.oversized for f in result.fragments)
    by_count = strict.model_copy(update={"overflow": "keep_fragment_count"})
    merged = segment_page(page, by_count)
    assert len(merged.fragments) == 3
    assert any(f.oversized for f in merged.fragments) and not merged.fits_budget
    check_segmentation(page, merged, by_count)


def test_a_real_tokenizer_can_be_passed(pages_dir: Path) -> None:
    def words(text: str) -> int:
        return len(text.split())

    settings = SegmentSettings(max_fragment_tokens=80, min_fragment_tokens=10)
    result = segment_html((pages_dir / "form.html").read_bytes(), settings, count_tokens=words)
    assert all(f.tokens == words(f.html) for f in result.fragments)
    assert result.page_tokens == words(clean_page((pages_dir / "form.html").read_bytes()).html())


def test_the_sizers_estimate_is_estimate_tokens_of_the_joined_pieces(pages_dir: Path) -> None:
    # the look-ahead and the estimate counter size piece ranges from byte prefix sums
    html = (pages_dir / "form.html").read_text() + "<p>naïve — 東京 ☃</p>"
    page = clean_page(html)
    sizer = Sizer(page, len)
    n = len(page.pieces)
    ranges = [(a, b) for a in range(0, n, 7) for b in range(a, n + 1, 5)]
    assert ranges and any(not "".join(page.pieces[a:b]).isascii() for a, b in ranges)
    for a, b in ranges:
        assert sizer.estimate(a, b) == estimate_tokens("".join(page.pieces[a:b]))


def test_segment_tree_equals_segment_html(pages_dir: Path) -> None:
    data = (pages_dir / "form.html").read_bytes()
    settings = SegmentSettings(max_fragment_tokens=120)
    from_tree = segment_tree(parse_html(data), settings)
    assert from_tree.fragments == segment_html(data, settings).fragments


def test_deep_page_segments(pages_dir: Path) -> None:
    depth = 10_000
    html = (
        "<html><body><header><a href=/>Home</a></header>"
        + "<div>" * depth + "<button>deepest</button>" + "</div>" * depth
        + "<footer><a href=/about>About</a></footer></body></html>"
    )  # fmt: skip
    settings = SegmentSettings(max_fragment_tokens=50, min_fragment_tokens=0)
    page = clean_page(html)
    result = segment_page(page, settings)
    check_segmentation(page, result, settings)
    assert [i for f in result.fragments for i in f.interactive_ids] == page.interactive_ids
    assert len(page.interactive_ids) == 3
    assert any("deepest" in f.text for f in result.fragments)


@pytest.mark.slow
def test_five_megabyte_page_segments(big_page: bytes) -> None:
    settings = SegmentSettings(max_fragment_tokens=2000, max_fragments=200)
    page = clean_page(big_page)
    result = segment_page(page, settings)
    check_segmentation(page, result, settings)
    assert len(page.interactive_ids) > 25_000
    assert result.raw_bytes == 0 and segment_html(b"<p>x</p>", settings).raw_bytes == 8


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="min_fragment_tokens"):
        SegmentSettings(max_fragment_tokens=100, min_fragment_tokens=200)
    with pytest.raises(ValueError):
        SegmentSettings(depth=0)
