"""Extractive gists name what a task may need: form controls by their words, before links."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from webagent.gist.extractive import (
    MIN_LABEL_CHARS,
    cut_gist,
    cut_gists,
    extractive_gist,
    label_chars,
    lead_and_controls,
    shorten_labels,
)
from webagent.html.fragment import Fragment


def words(text: str) -> int:
    return len(text.split())


def fragment(html: str, interactive: list[str]) -> Fragment:
    return Fragment(
        index=0, path="body", html=html, text="", element_ids=interactive,
        interactive_ids=interactive, tokens=len(html),
    )  # fmt: skip


FORM = (
    "<h2 id=1>Sign in</h2>"
    '<div><input id=2 name="email" type="email"><label id=3>Your email</label></div>'
    '<div><label id=41>Password</label><input id=4 type="password"></div>'
    '<select id=5 aria-label="Country"><option id=6>Norway</option><option id=7>Italy</option>'
    "</select><button id=8>Continue</button>"
    "<ul id=9>" + "".join(f"<li><a id=1{i}>Link {i}</a></li>" for i in range(6)) + "</ul>"
)
IDS = ["2", "4", "5", "8", *(f"1{i}" for i in range(6))]


def test_form_controls_come_first_with_the_words_a_person_uses() -> None:
    gist = extractive_gist(fragment(FORM, IDS), 30)
    assert gist.startswith("Sign in")
    # the words written for people (label, placeholder) before the field's name
    assert 'input:email "Your email / email" id=2' in gist
    assert 'input:password "Password" id=4' in gist
    assert 'select "Country [Norway, Italy]" id=5' in gist
    assert 'button "Continue" id=8' in gist
    # the run of six links is summarised before the links are listed one by one
    assert gist.index("6 links") < gist.index("id=10") and gist.index("id=8") < gist.index("id=10")


def test_a_cut_gist_keeps_the_controls_and_drops_the_links() -> None:
    gist = extractive_gist(fragment(FORM, IDS), 30, max_tokens=30, count_tokens=words)
    assert words(gist) <= 30 and gist.endswith("…")
    assert "id=2" in gist and "id=15" not in gist


def test_cut_gist_cuts_between_items() -> None:
    gist = "alpha one; beta two; gamma three"
    assert cut_gist(gist, 100, words) == gist
    assert cut_gist(gist, 5, words) == "alpha one; beta two …"
    assert cut_gist(gist, 4, words) == "alpha one …"
    assert cut_gist(gist, 0, words) == ""


def test_an_unclosed_iframe_does_not_hide_the_controls_after_it() -> None:
    html = '<a id=1><iframe id=2 title="x"></a><input id=3 placeholder="Email">'
    assert 'input "Email" id=3' in extractive_gist(fragment(html, ["1", "3"]), 30)


def test_broken_markup_falls_back_to_text() -> None:
    empty = Fragment(
        index=0, path="", html="", text="", element_ids=[], interactive_ids=[], tokens=0
    )
    assert extractive_gist(empty, 30) == "(empty)"


LONG = (
    'Search results for hiking boots; input "Search the whole store by keyword" id=1; '
    'button "Search now and see results" id=2; "Waterproof leather hiking boots" id=3; '
    '"Lightweight trail running shoes" id=4'
)


def chars(text: str) -> int:
    return len(text)


def test_a_cut_gist_shortens_its_words_before_it_drops_an_id() -> None:
    cut = cut_gist(LONG, len(LONG) - 30, chars)
    assert chars(cut) <= len(LONG) - 30
    assert all(f"id={i}" in cut for i in range(1, 5))  # every id kept
    assert "…" in cut and cut.startswith("Search results")
    assert 'button "Search now' in cut  # kinds and the first words stay


def test_a_gist_too_long_even_with_short_labels_loses_items_from_the_end() -> None:
    shortest = shorten_labels(LONG, MIN_LABEL_CHARS)
    cut = cut_gist(LONG, len(shortest) - 10, chars)
    assert chars(cut) <= len(shortest) - 10 and cut.endswith("…")
    assert "id=1" in cut and "id=4" not in cut


def test_a_gist_that_names_no_control_is_cut_at_its_end_only() -> None:
    prose = "the quick brown fox jumps over the lazy dog; and runs away"
    assert shorten_labels(prose, 3) == prose and label_chars(prose) == 0
    assert cut_gist(prose, 4, words) == "the quick brown …"


def test_labels_are_cut_by_characters_in_scripts_without_spaces() -> None:
    gist = 'おすすめのパートナーサイト情報; "並んでも食べたい人気ラーメン店の味" id=720'
    short = shorten_labels(gist, 6)
    assert short == 'おすすめのパ …; "並んでも食べ …" id=720'
    assert label_chars(gist) == len("並んでも食べたい人気ラーメン店の味")


def test_a_checkbox_takes_the_label_after_it_a_text_field_the_one_before() -> None:
    html = (
        "<label id=1>Your email</label><input id=2 type=text>"
        "<input id=3 type=checkbox><label id=4>Woman</label>"
        "<input id=5 type=checkbox><label id=6>Man</label><button id=7>Subscribe</button>"
    )
    gist = extractive_gist(fragment(html, ["2", "3", "5", "7"]), 30)
    assert 'input "Your email" id=2' in gist
    assert 'checkbox "Woman" id=3' in gist and 'checkbox "Man" id=5' in gist


def test_the_lead_is_the_text_around_the_controls_and_wordless_controls_come_last() -> None:
    html = (
        "<div><a id=1></a>, <p>Shipping is free</p> <a id=2>Track my order</a>,"
        " <a id=3>Returns</a></div>"
    )
    gist = extractive_gist(fragment(html, ["1", "2", "3"]), 30)
    assert gist == 'Shipping is free; "Track my order" id=2; "Returns" id=3; id=1'


def test_a_control_without_words_keeps_its_id_when_labels_are_cut() -> None:
    gist = (
        'Newsletter sign-up for our weekly offers; button id=61; "Privacy policy of the shop" id=62'
    )
    assert shorten_labels(gist, 5) == 'Newsl …; button id=61; "Priva …" id=62'


def test_a_cut_that_ends_on_an_item_keeps_the_item() -> None:
    gist = "alpha one; beta two; gamma three"
    assert cut_gist(gist, len("alpha one; beta two …"), chars) == "alpha one; beta two …"


def test_lead_and_controls_is_the_gist_up_to_its_last_form_control() -> None:
    assert lead_and_controls(LONG) == (
        'Search results for hiking boots; input "Search the whole store by keyword" id=1; '
        'button "Search now and see results" id=2'
    )
    assert lead_and_controls('Links; "Home" id=1; "About" id=2') == ""


class Remote:
    """A counter that makes round trips (``many`` is one request), counting words and
    characters so that counts wobble between neighbouring cuts."""

    round_trips = True

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, text: str) -> int:
        self.requests += 1
        return count_wobbly(text)

    def many(self, texts: Sequence[str]) -> list[int]:
        self.requests += 1
        return [count_wobbly(t) for t in texts]


def count_wobbly(text: str) -> int:
    return len(text) // 4 + len(text.split()) % 3


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 12), st.integers(1, 60), st.integers(0, 400)), max_size=60)
)
def test_gists_cut_side_by_side_are_the_gists_cut_one_by_one(
    wanted: list[tuple[int, int, int]],
) -> None:
    """``cut_gists`` against a remote counter: the cuts ``cut_gist`` makes with a local one,
    every gist's searches in the same few requests."""
    gists = [
        "Lead text of the part; "
        + "; ".join(f'link "label {n} of a control here" id=n{i}{n}' for n in range(items))
        + f'; {links} links under "Site navigation menu"'
        for i, (items, links, _) in enumerate(wanted)
    ]
    budgets = [budget for _, _, budget in wanted]
    remote = Remote()
    cut = cut_gists(list(zip(gists, budgets, strict=True)), remote)
    assert cut == [cut_gist(g, b, count_wobbly) for g, b in zip(gists, budgets, strict=True)]
    assert remote.requests <= 8


def test_without_ids_controls_are_named_by_their_words_alone() -> None:
    html = FORM + "<input id=99 type=text>"  # a control without words: nothing to name it by
    with_ids = extractive_gist(fragment(html, [*IDS, "99"]), 30)
    gist = extractive_gist(fragment(html, [*IDS, "99"]), 30, ids=False)
    assert with_ids.endswith("; input id=99") and "id=" not in gist
    # the same items in the same order, each without its id; the control without words left out
    assert gist == re.sub(r" id=\d+", "", with_ids.removesuffix("; input id=99"))
    assert lead_and_controls(gist).endswith('select "Country [Norway, Italy]"')


def test_a_gist_without_ids_is_cut_as_one_with_ids_is() -> None:
    """The room ids took goes to words: every label is shortened before an item is dropped,
    where prose (no control named) would lose its end."""
    bare = re.sub(r" id=\d+", "", LONG)
    cut = cut_gist(bare, len(bare) - 30, chars)
    assert chars(cut) <= len(bare) - 30
    assert cut == shorten_labels(bare, label_chars(cut)) and cut.count('"') == 8  # all four
    prose = bare.replace(";", "")
    assert cut_gist(prose, len(bare) - 30, chars).endswith('"Waterproof leather hiking boots" …')
