"""Extractive gists name what a task may need: form controls by their words, before links."""

from __future__ import annotations

from webagent.gist.extractive import cut_gist, extractive_gist
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
    assert 'input:email "email / Your email" id=2' in gist
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
