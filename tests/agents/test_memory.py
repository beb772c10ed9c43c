"""Memory rendering and budget arithmetic, on hand-made fragments with a character counter."""

from __future__ import annotations

from webagent.agents.context import format_previous
from webagent.html.fragment import Fragment
from webagent.memory import fit_reopened, render_memory, shown_ids
from webagent.tokens import truncate_to_tokens


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


def test_fit_reopened_accepts_in_priority_order_within_budget() -> None:
    gist_total = sum(len(f"[Part {i + 1}] (gist) {g}") + 1 for i, g in enumerate(GISTS))
    block = len("[Part 3] (full) body\n<b id=7>y</b>") + 1 - (len("[Part 3] (gist) bold") + 1)
    accepted, refused = fit_reopened(FRAGMENTS, GISTS, [2, 1], gist_total + block, chars)
    assert accepted == [2] and refused == [1]
    accepted, refused = fit_reopened(FRAGMENTS, None, [1, 0], 260, chars)
    assert accepted == [1] and refused == [0]


def test_shown_ids_are_the_page_ids_the_text_shows() -> None:
    assert shown_ids("<a id=n1>x</a> <b id=7> id=zz", ["n1", "7", "n9"]) == ["n1", "7"]


def test_format_previous_keeps_the_latest_actions_and_counts_the_rest() -> None:
    assert format_previous([], 100, chars) == "None"
    lines = ["a" * 10, "b" * 10, "c" * 10]
    assert (
        format_previous(lines, 23, chars)
        == "(1 earlier actions omitted)\n" + "b" * 10 + "\n" + "c" * 10
    )


def test_truncate_to_tokens_keeps_the_longest_prefix() -> None:
    assert truncate_to_tokens("abcdef", 4, chars) == "abcd"
    assert truncate_to_tokens("abc", 10, chars) == "abc"
    assert truncate_to_tokens("abc", 0, chars) == ""
