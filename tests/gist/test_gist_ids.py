"""The controls a gist names come back in the one form the act prompt reads: ``(id=PAGE_ID)``.

The model may name a control as the prompts ask (``id=N``) or copy the reading view's own mark
(``[N]``, ``[N button]``); a name that is no mark of its prompt, and any range of ids, never
passes for a page id."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from webagent.gist.batch import restore_ids, view_marks
from webagent.gist.gister import ModelGister
from webagent.html.fragment import Fragment
from webagent.method.memory import shown_ids
from webagent.model.calls import CallLog
from webagent.model.client import Model
from webagent.prompts import load_template

NUMBERED = view_marks(["n5", "n9", "2761"], "reading")  # the prompt showed [1] [2] [3]
BY_PAGE_ID = view_marks(["n5", "2761"], "reading-ids")  # the prompt showed [n5] [2761]


def test_what_each_view_marks() -> None:
    assert NUMBERED == {"1": "n5", "2": "n9", "3": "2761"}
    assert BY_PAGE_ID == {"n5": "n5", "2761": "2761"}
    assert view_marks(["n5"], "html") is None  # HTML marks nothing: ids are shown as id=


def test_numbers_named_as_id_come_back_as_page_ids() -> None:
    gist = '"Email" box (id=1), "Go" button (id="3"), id=2 and a menu (id=9) of 24 links'
    assert restore_ids(gist, NUMBERED) == (
        '"Email" box (id=n5), "Go" button (id=2761), id=n9 and a menu of 24 links'
    )  # a number that stands for no control is dropped, never passed off as a page id
    assert restore_ids("grid=3 and hid=2, price 3", NUMBERED) == "grid=3 and hid=2, price 3"
    assert restore_ids("button (id=3)", None) == "button (id=3)"  # the prompt showed page ids
    assert restore_ids("button (id=3)", {}) == "button"  # a view with no control names none


def test_the_views_own_marks_come_back_as_page_ids() -> None:
    gist = '[1] Sign in, [3 button] Go, [2 input placeholder="Email"] box'
    assert restore_ids(gist, NUMBERED) == (
        '(id=n5) Sign in, (id=2761 button) Go, (id=n9 input placeholder="Email") box'
    )
    assert restore_ids("[2761] Go, [n5 button], id=n5", BY_PAGE_ID) == (
        "(id=2761) Go, (id=n5 button), id=n5"
    )
    # a name the prompt showed no mark for is dropped in the page-id view too
    assert restore_ids("Go (id=n7), [n7] Help", BY_PAGE_ID) == "Go, [n7] Help"


def test_a_bracket_that_is_no_mark_stays_as_the_pages_text() -> None:
    gist = "[Part 2] Cart [7], [sale] banner"
    assert restore_ids(gist, NUMBERED) == gist


def test_every_id_restored_is_one_the_act_prompt_shows() -> None:
    gist = restore_ids('[1] Sign in, "Go" button (id=3), [2 input]', NUMBERED)
    assert shown_ids(gist, ["n5", "n9", "2761", "n1"]) == ["n5", "2761", "n9"]


@pytest.mark.parametrize(
    ("gist", "restored"),
    [
        ('menu "Women" with links (ids 20-27)', 'menu "Women" with links'),
        ("footer links ids 1\u20133, Help (id=2)", "footer links, Help (id=n9)"),
        ("links id=1..3 and (id=1).", "links and (id=n5)."),
        ("tabs (id=1 to id=3)", "tabs"),
        ("tabs [1-3] here", "tabs here"),
        ('pages (ids "1" through "3")', "pages"),
    ],
)
def test_a_range_of_ids_is_dropped_not_read_as_ids(gist: str, restored: str) -> None:
    """A range names no control by its words and the ids inside it were never named: it is
    dropped whole, its ends included, so no id of it reaches the act prompt."""
    assert restore_ids(gist, NUMBERED) == restored


def test_a_range_is_dropped_in_every_view() -> None:
    assert restore_ids("links (ids 2761-2790), Go (id=2761)", BY_PAGE_ID) == "links, Go (id=2761)"
    assert restore_ids("links (id=n20-n27) and more", None) == "links and more"
    assert shown_ids(restore_ids("links id=20-27", None), ["20", "27"]) == []


def test_the_gist_prompts_ask_for_one_id_per_control() -> None:
    for name in ("gist", "gist_batch"):
        text = load_template(name).parts["user"]
        assert "(id=ID)" in text and "one id per control" in text
        assert "never a range or a list of ids" in text


def shop_fragment() -> Fragment:
    html = "<div id=f0><a id=a0>Sign in</a> <button id=b1>Search</button></div>"
    return Fragment(
        index=0,
        path="body",
        html=html,
        text="Sign in Search",
        element_ids=["f0", "a0", "b1"],
        interactive_ids=["a0", "b1"],
        tokens=len(html) // 4,
    )


@pytest.mark.parametrize("view", ["reading", "reading-ids"])
def test_a_gist_written_with_the_views_marks_names_page_ids(
    view: str, scripted_model: Callable[..., Model]
) -> None:
    """The embedded model's habit, seen on a shop page: it wrote "[1] Sign in" where the
    prompt asked for (id=1); the act prompt must still show that control's page id."""
    fragment = shop_fragment()
    mark = {"reading": ("1", "2"), "reading-ids": ("a0", "b1")}[view]
    model = scripted_model(lambda _r: f"[{mark[0]}] Sign in, [{mark[1]} button] Search")
    gister = ModelGister(30, 64, view=view)  # type: ignore[arg-type]
    (gist,) = gister.gist_all([fragment], CallLog(model), None)
    assert gist == "(id=a0) Sign in, (id=b1 button) Search"
    assert shown_ids(gist, fragment.element_ids) == ["a0", "b1"]
