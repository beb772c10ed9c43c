"""Memory rendering and budget arithmetic, on hand-made fragments with a character counter."""

from __future__ import annotations

from collections.abc import Sequence

from webagent.agents.context import format_previous
from webagent.gist.extractive import MIN_LABEL_CHARS, shorten_labels
from webagent.html.fragment import Fragment
from webagent.method.memory import (
    draft_memory,
    first_cut_counts,
    fit_memory,
    full_block,
    gist_line,
    memories_opening,
    render_memory,
    shown_ids,
)
from webagent.tokens import estimate_tokens, truncate_to_tokens


def chars(text: str) -> int:
    return len(text)


def fragment(index: int, html: str) -> Fragment:
    return Fragment(
        index=index, path="body", html=html, text=html, element_ids=[], tokens=len(html)
    )


FRAGMENTS = [fragment(0, "<a id=n1>Home</a>"), fragment(1, "x" * 200), fragment(2, "<b id=7>y</b>")]
GISTS = ["nav", "long text", "bold"]


def test_reopened_fragments_replace_their_gists_in_place() -> None:
    text = render_memory(FRAGMENTS, GISTS, [2])
    lines = text.splitlines()
    assert lines[0] == "[Part 1] (gist) nav"
    assert lines[1] == "[Part 2] (gist) long text"
    assert lines[2] == "[Part 3] (full) body" and lines[3] == "<b id=7>y</b>"


def test_memories_opening_one_more_part_each_read_as_rendered_alone() -> None:
    shown = FRAGMENTS[1:]  # a levelled memory's parts: indices are not positions
    for opened in ([], [2], [1, 2]):
        more = [2, 1]
        expected = [render_memory(shown, GISTS, [*opened, i]) for i in more]
        assert list(memories_opening(shown, GISTS, opened, more)) == expected


def test_fit_memory_with_room_changes_nothing() -> None:
    fitted = fit_memory(FRAGMENTS, GISTS, [2], 1000, chars)
    assert fitted.text == render_memory(FRAGMENTS, GISTS, [2])
    assert fitted.reopened == [2] and not fitted.edits.changed()


def test_fit_memory_accepts_in_priority_order_and_records_refusals() -> None:
    fitted = fit_memory(FRAGMENTS, None, [1, 0], 230, chars)
    assert fitted.reopened == [1] and fitted.edits.reopen_refused == [0]
    assert chars(fitted.text) <= 230


def test_reopened_fragments_shorten_the_gists_then_displace_the_farthest() -> None:
    fragments = [fragment(i, f"<p id={i}>" + "w" * 40 + "</p>") for i in range(6)]
    gists = [f"gist number {i} with words; and more; and more" for i in range(6)]
    whole = chars(render_memory(fragments, gists, [0]))
    shortened = fit_memory(fragments, gists, [0], whole - 40, chars)
    assert chars(shortened.text) <= whole - 40
    assert shortened.edits.gists_shortened and not shortened.edits.gists_displaced
    assert all("(gist)" in line for line in shortened.text.splitlines()[2:])
    tight = fit_memory(fragments, gists, [0], 130, chars)
    assert chars(tight.text) <= 130
    assert tight.reopened == [0] and tight.edits.gists_displaced
    # the gists left out are the ones farthest from the reopened part, named in the text
    assert max(tight.edits.gists_displaced) == 5
    assert "(gists left out: no room)" in tight.text


def test_a_fragment_larger_than_the_budget_is_shown_in_part_and_says_so() -> None:
    fitted = fit_memory(FRAGMENTS, GISTS, [1], 60, chars)
    assert fitted.edits.reopen_cut == [1] and chars(fitted.text) <= 60


def test_fit_memory_fits_under_any_counter() -> None:
    def words(text: str) -> int:
        return len(text.split()) + text.count("\n")

    gists = ["alpha beta gamma delta; epsilon zeta; eta theta"] * 3
    for budget in range(8, 60, 3):
        fitted = fit_memory(FRAGMENTS, gists, [2, 0], budget, words)
        assert words(fitted.text) <= budget, budget


CONTROL_GISTS = [
    f'Part {i} of the page; input "Search the store by keyword" id={i}1; '
    f'button "Search now and see results" id={i}2; "Waterproof leather hiking boots" id={i}3'
    for i in range(3)
]


def test_fit_memory_cuts_the_words_of_every_gist_before_any_id() -> None:
    fragments = FRAGMENTS
    whole = chars(render_memory(fragments, CONTROL_GISTS, []))
    need = chars(
        render_memory(fragments, [shorten_labels(g, MIN_LABEL_CHARS) for g in CONTROL_GISTS], [])
    )
    for budget in (need + 2, (need + whole) // 2, whole - 1):
        fitted = fit_memory(fragments, CONTROL_GISTS, [], budget, chars)
        assert chars(fitted.text) <= budget
        assert all(f"id={i}{j}" in fitted.text for i in range(3) for j in (1, 2, 3)), budget
        assert fitted.edits.gists_shortened and not fitted.edits.gists_displaced
    # below that, items go (from the end of the longest gists), and the trace says which
    tight = fit_memory(fragments, CONTROL_GISTS, [], need - 20, chars)
    assert chars(tight.text) <= need - 20 and "id=01" in tight.text
    assert not all(f"id={i}3" in tight.text for i in range(3))
    assert tight.edits.gists_shortened == [0, 1, 2]


def test_links_go_before_form_controls_across_gists() -> None:
    links = "; ".join(f'"Link number {n}" id=9{n}' for n in range(8))
    gists = [f"Menu; {links}", 'Sign in; input "Email" id=11; button "Go" id=12; ' + links, "Map"]
    form_part = 'Sign in; input "Email" id=11; button "Go" id=12 …'
    forms = chars(render_memory(FRAGMENTS, ["…", form_part, "Map"], []))
    fitted = fit_memory(FRAGMENTS, gists, [], forms + 10, chars)
    assert chars(fitted.text) <= forms + 10
    assert "id=11" in fitted.text and "id=12" in fitted.text  # the form part stays whole
    assert "id=97" not in fitted.text and fitted.edits.gists_shortened == [0, 1]


def test_fit_memory_with_control_gists_fits_under_every_counter() -> None:
    def words(text: str) -> int:
        return len(text.split()) + text.count("\n")

    for count in (chars, words, estimate_tokens):
        whole = count(render_memory(FRAGMENTS, CONTROL_GISTS, [2]))
        for budget in range(whole // 4, whole + 2, max(1, whole // 40)):
            fitted = fit_memory(FRAGMENTS, CONTROL_GISTS, [2], budget, count)
            assert count(fitted.text) <= budget, (count, budget)
            changed = fitted.edits.gists_shortened or fitted.edits.gists_displaced
            assert changed or fitted.text == render_memory(FRAGMENTS, CONTROL_GISTS, [2])


def test_a_memory_fits_its_gists_only_where_its_draft_does() -> None:
    """What ReadAgent-P reads off the draft to skip a flat memory that cannot keep its gists
    (webagent.agents.readagent ``_flat_memory``): where the fitted memory leaves no gist out,
    neither does the draft, and it shows every gist with as many words at least."""

    def joined(text: str) -> int:  # joining lines costs more than their sum
        return len(text.split()) + 2 * text.count("\n")

    gists = [*CONTROL_GISTS, "alpha beta gamma delta; epsilon zeta; eta theta"]
    fragments = [*FRAGMENTS, fragment(3, "<i id=8>z</i>")]
    checked = 0
    for count in (chars, joined, estimate_tokens):
        whole = count(render_memory(fragments, gists, []))
        for budget in range(4, whole + 2, max(1, whole // 60)):
            draft = draft_memory(fragments, gists, [], budget, count)
            fitted = fit_memory(fragments, gists, [], budget, count)
            assert set(draft.edits.gists_displaced) <= set(fitted.edits.gists_displaced)
            if fitted.edits.gists_displaced:
                continue
            assert draft.gists is not None and fitted.gists is not None
            assert not draft.edits.gists_displaced
            for before, after in zip(draft.gists, fitted.gists, strict=True):
                assert len(after.split()) <= len(before.split()), (count, budget)
            checked += fitted.text != draft.text  # the fit had to take more off
    assert checked  # the draft was over at some budgets: the claim was put to the test


def test_gist_line_numbers_parts_from_one() -> None:
    assert gist_line(0, "x") == "[Part 1] (gist) x"


def test_shown_ids_are_the_page_ids_the_text_shows() -> None:
    assert shown_ids("<a id=n1>x</a> <b id=7> id=zz", ["n1", "7", "n9"]) == ["n1", "7"]


def test_format_previous_keeps_the_latest_actions_and_counts_the_rest() -> None:
    assert format_previous([], 100, chars) == ("None", 0)
    lines = ["a" * 10, "b" * 10, "c" * 10]
    assert format_previous(lines, 23, chars) == (
        "(1 earlier actions omitted)\n" + "b" * 10 + "\n" + "c" * 10,
        1,
    )


def test_truncate_to_tokens_keeps_the_longest_prefix() -> None:
    assert truncate_to_tokens("abcdef", 4, chars) == "abcd"
    assert truncate_to_tokens("abc", 10, chars) == "abc"
    assert truncate_to_tokens("abc", 0, chars) == ""


def test_cuts_counted_ahead_spare_the_next_fit_its_first_request() -> None:
    """What ReadAgent-S's rounds do: with one round's memory, the cut probes of the fits that
    open one part more (``first_cut_counts``) are counted, and the next round's fit, which
    cuts the gists further, then sends one request (the whole text's count), not two; every
    memory as without them."""
    from webagent.model.counting import TokenCounts
    from webagent.model.scripted import ScriptedBackend

    class Remote(ScriptedBackend):
        counts_remotely = True

        def __init__(self) -> None:
            super().__init__([])
            self.sent: list[list[str]] = []  # the texts of each request

        def count_tokens(self, text: str) -> int:
            return self.count_tokens_many([text])[0]

        def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
            self.sent.append(list(texts))
            return [len(t) // 3 + 1 for t in texts]

    links = "; ".join(f'link "A rather long label {j} in part {{i}}" id={{i}}{j}' for j in range(5))
    gists = [links.format(i=i) for i in range(8)]
    # parts of different sizes: each part opened leaves the gists a different room
    fragments = [
        fragment(
            i, f"<div id=p{i}>" + "".join(f"<a id={i}{j}>{'w' * 20 * i}</a>" for j in range(6))
        )
        for i in range(8)
    ]
    budget = 400

    plain = Remote()
    counts = TokenCounts(plain)
    counts.many([full_block(f) for f in fragments])  # any part may be opened (as a look-up)
    first = fit_memory(fragments, gists, [0], budget, counts)
    before = len(plain.sent)
    second = fit_memory(fragments, gists, [0, 3], budget, counts)
    assert second.edits.gists_shortened and len(plain.sent) - before == 2  # probes, then text

    ahead = Remote()
    counts = TokenCounts(ahead)
    counts.many([full_block(f) for f in fragments])
    fits = [([0, j], budget) for j in range(1, 8)]
    texts: list[str] = []

    def then() -> list[str]:
        texts.extend(first_cut_counts(fragments, gists, fits, counts))
        return texts

    assert fit_memory(fragments, gists, [0], budget, counts, then=then).text == first.text
    # what the next fit asked first without them, they hold (its cut probes)
    assert set(plain.sent[-2]) <= set(texts)
    before = len(ahead.sent)
    assert fit_memory(fragments, gists, [0, 3], budget, counts).text == second.text
    assert len(ahead.sent) - before == 1
    # with a counter that does not tell what it knows, nothing is asked ahead
    assert first_cut_counts(fragments, gists, fits, chars) == []
