"""The reading view the gister reads: words, controls marked by id, no markup."""

from __future__ import annotations

from webagent.html.fragment import Fragment, SegmentSettings
from webagent.html.reading import MARK, numbered_view, reading_view
from webagent.html.segment import segment_html

PAGE = """<html><body><nav><a href=/>Home</a><a href=/sale>Sale &amp; offers</a></nav>
<form><label for=q>Find</label><input id=q name=q placeholder='Search "all"'>
<select name=c><option value=a>All</option><option selected>Books &lt;new&gt;</option></select>
<button type=submit aria-label=Go><svg></svg></button></form>
<p>Free delivery <b>over 20 EUR</b>.</p><img src=x.png alt="A red cat"><div>tail</div>
</body></html>"""


def fragment_of(html: str) -> Fragment:
    """The page as one fragment, as the segmenter makes it."""
    (fragment,) = segment_html(html, SegmentSettings(max_fragment_tokens=4000)).fragments
    return fragment


def test_reading_view_of_a_real_cleaned_page() -> None:
    fragment = fragment_of(PAGE)
    view = reading_view(fragment)
    lines = view.splitlines()
    # links: their id then their words; no tag, no wrapper's id
    home, sale = fragment.interactive_ids[:2]
    assert view.startswith(f"[{home}] Home [{sale}] Sale & offers [")
    assert "<" not in view and "id=" not in view
    # form controls: kind and the attributes the compact HTML shows
    assert 'input name="q" placeholder="Search &quot;all&quot;"]' in view
    assert 'button type="submit" aria-label="Go"]' in view
    assert "option selected] Books &lt;new>" in view  # text as the compact HTML has it
    # a non-interactive element's label stays as words; blocks end lines
    assert "(A red cat)" in view
    assert "Free delivery over 20 EUR." in lines
    assert lines[-1] == "tail"


def test_every_interactive_id_is_marked_and_no_other() -> None:
    fragment = fragment_of(PAGE)
    view = reading_view(fragment)
    for element_id in fragment.element_ids:
        marked = f"[{element_id}]" in view or f"[{element_id} " in view
        assert marked == (element_id in fragment.interactive_ids), element_id


def test_the_numbered_view_is_the_reading_view_with_numbers_for_ids() -> None:
    fragment = fragment_of(PAGE)
    view, ids = numbered_view(fragment, first=7)
    assert ids == fragment.interactive_ids  # every control, in page order
    assert [m.group(1) for m in MARK.finditer(view)] == [str(7 + k) for k in range(len(ids))]
    by_id = reading_view(fragment)
    for number, element_id in enumerate(ids, start=7):
        by_id = by_id.replace(f"[{element_id}]", f"[{number}]").replace(
            f"[{element_id} ", f"[{number} "
        )
    assert view == by_id  # the same words and marks, only the ids differ
