"""The live action space without a browser: keys, typed values, the live marks of a page,
the no-effect test, the previous-action lines and the failure tally."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from live_runner import changes, live_marks
from live_runner.actions import (
    ActionOutcome,
    ElementLabel,
    FailureKind,
    LiveAction,
    LiveOp,
    failure_counts,
    no_action,
    normalize_key,
    select_values,
)
from live_runner.typed_values import InvalidValue, input_value


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("enter", "Enter"),
        ("Return", "Enter"),
        ("ctrl+a", "Control+a"),
        ("Control + Shift + Tab", "Control+Shift+Tab"),
        ("down", "ArrowDown"),
        ("PageDown", "PageDown"),
        ("esc", "Escape"),
        ("F5", "F5"),
        ("x", "x"),
        ("+", "+"),
    ],
)
def test_keys_are_named_as_playwright_names_them(typed: str, key: str) -> None:
    assert normalize_key(typed) == key
    assert LiveAction(op=LiveOp.PRESS, value=typed).value == key


@pytest.mark.parametrize(("typed", "message"), [("Hyper+a", "modifiers"), ("Launch", "not a key")])
def test_a_bad_key_says_what_keys_are(typed: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalize_key(typed)


@pytest.mark.parametrize(
    ("kind", "typed", "value"),
    [
        ("date", "02/04/2012", "2012-02-04"),  # as MiniWoB and US forms write it
        ("date", "2012-02-04", "2012-02-04"),
        ("date", "February 4, 2012", "2012-02-04"),
        ("date", "4 Feb 2012", "2012-02-04"),
        ("date", "25/12/2010", "2010-12-25"),  # a first number over 12 is the day
        ("date", "04.02.2012", "2012-02-04"),
        ("date", "12/31/99", "1999-12-31"),
        ("time", "9:37 PM", "21:37"),
        ("time", "12:05 am", "00:05"),
        ("time", "21:37:05", "21:37:05"),
        ("datetime-local", "02/04/2012 9:37 PM", "2012-02-04T21:37"),
        ("month", "February 2012", "2012-02"),
        ("number", "1,000.5", "1000.5"),
        ("range", "-99", "-99"),
        ("text", " exactly as typed ", " exactly as typed "),
        ("date", "", ""),  # clears
    ],
)
def test_typed_inputs_get_their_format(kind: str, typed: str, value: str) -> None:
    assert input_value(kind, typed) == value


@pytest.mark.parametrize(
    ("kind", "typed", "message"),
    [
        ("date", "next Tuesday", "is not a date: write it as MM/DD/YYYY"),
        ("date", "02/30/2012", "is not a valid date"),
        ("time", "25:00", "is not a valid time"),
        ("time", "13:00 PM", "the hour is 1 to 12"),
        ("number", "ten", "is not a number"),
        ("number", "1,5", "is not a number"),
    ],
)
def test_values_a_field_cannot_hold_are_refused_with_the_format(
    kind: str, typed: str, message: str
) -> None:
    with pytest.raises(InvalidValue, match=message):
        input_value(kind, typed)


def test_live_actions_check_their_values() -> None:
    assert LiveAction(op=LiveOp.CLICK, element_id="4", value="36,74").value == "36,74"
    with pytest.raises(ValidationError, match='"x,y"'):
        LiveAction(op=LiveOp.CLICK, element_id="4", value="middle")
    assert LiveAction(op=LiveOp.DRAG, element_id="4", value="9").drop_target() == "9"
    assert LiveAction(op=LiveOp.DRAG, element_id="4", value="40,0").drop_target() is None
    with pytest.raises(ValidationError, match="DRAG needs"):
        LiveAction(op=LiveOp.DRAG, element_id="4")
    with pytest.raises(ValidationError, match="HOVER needs an element_id"):
        LiveAction(op=LiveOp.HOVER)
    assert LiveAction(op=LiveOp.SCROLL, value="left").element_id is None
    assert select_values(" Ann | Bo |") == ["Ann", "Bo"]


def test_previous_action_lines_of_the_new_operations() -> None:
    button = ElementLabel(role="span", text="send reply")

    def line(action: LiveAction, **extra: object) -> str:
        return ActionOutcome(action=action, label=button, ok=True, **extra).describe()  # type: ignore[arg-type]

    assert line(LiveAction(op=LiveOp.PRESS, value="Enter")) == "PRESS: Enter"
    assert line(LiveAction(op=LiveOp.PRESS, element_id="3", value="Enter")) == (
        "[span]  send reply -> PRESS: Enter"
    )
    assert line(LiveAction(op=LiveOp.SCROLL, element_id="3", value="down")) == (
        "[span]  send reply -> SCROLL: down"
    )
    assert line(LiveAction(op=LiveOp.CLICK, element_id="3", value="5,6")) == (
        "[span]  send reply -> CLICK at 5,6"
    )
    assert line(LiveAction(op=LiveOp.DRAG, element_id="3", value="9")) == (
        "[span]  send reply -> DRAG onto id=9"
    )
    assert line(LiveAction(op=LiveOp.TYPE, element_id="3", value="")) == (
        "[span]  send reply -> TYPE: (nothing: the field is cleared)"
    )
    assert line(LiveAction(op=LiveOp.CLICK, element_id="3"), no_effect=True) == (
        "[span]  send reply -> CLICK (no visible effect: the page did not change)"
    )
    assert line(
        LiveAction(op=LiveOp.TYPE, element_id="3", value="05/20/2010"),
        note="typed as 2010-05-20, the date field's format",
    ) == ("[span]  send reply -> TYPE: 05/20/2010 (typed as 2010-05-20, the date field's format)")


def test_failures_are_counted_by_kind() -> None:
    click = LiveAction(op=LiveOp.CLICK, element_id="3")
    outcomes = [
        ActionOutcome(action=click, ok=True),
        ActionOutcome(action=click, ok=True, no_effect=True),
        ActionOutcome(action=click, ok=False, failure=FailureKind.TIMEOUT, message="slow"),
        no_action("no JSON", "http://x.test/"),
        no_action("id 9", "http://x.test/", FailureKind.ELEMENT_NOT_FOUND),
        ActionOutcome(action=click, ok=True, no_effect=True),
    ]
    assert failure_counts(outcomes) == {
        "element_not_found": 1,
        "invalid_action": 1,
        "no_effect": 2,
        "timeout": 1,
    }


def test_hints_name_controls_by_their_id_and_class_words() -> None:
    assert live_marks.hint_words({"id": "send-reply"}, "span") == "send reply"
    assert live_marks.hint_words({"class": "email-actions trash"}, "span") == "email actions trash"
    assert live_marks.hint_words({"class": "ui-slider-handle ui-corner-all"}, "span") == (
        "slider handle"
    )
    assert live_marks.hint_words({"id": "(-2,2)", "class": "plot-point"}, "circle") == (
        "(-2,2) plot point"
    )
    assert live_marks.hint_words({"src": "/icons/shareButton.png"}, "img") == "share button"
    assert live_marks.is_named({"aria-label": "Send"}, "span")
    assert not live_marks.is_named({"id": "send"}, "span")
    assert live_marks.wants_onclick("span", {}, clickable=True)
    assert not live_marks.wants_onclick("button", {}, clickable=True)
    assert not live_marks.wants_onclick("span", {}, clickable=False)


def test_colours_read_as_names_where_they_are_basic() -> None:
    assert live_marks.css_color("rgb(255, 0, 0)") == "red"
    assert live_marks.css_color("rgb(161, 33, 33)") == "rgb(161,33,33)"
    assert live_marks.css_color("rgba(0, 0, 0, 0)") is None
    assert live_marks.css_color("aqua") == "aqua"
    assert live_marks.shape_color({"fill": "none", "stroke": "black"}) == "black"
    assert live_marks.swatch_color(
        "div", {"style": "background-color: white"}, None, (0, 0, 9, 9)
    ) == ("white")
    assert live_marks.swatch_color("canvas", {}, "rgb(255, 255, 255)", (0, 0, 9, 9)) is None
    assert live_marks.geometry("circle", {}, (20.0, 50.0, 10.0, 10.0), (10.0, 10.0, 0, 0)) == {
        "at": "15,45",
        "size": "10x10",
    }


def _page(clock: str, button: str) -> str:
    return (
        '<html backend_node_id="1"><body backend_node_id="2">'
        f'<span backend_node_id="3">{clock}</span>'
        f'<button backend_node_id="4" class="{button}">Go</button><input backend_node_id="5">'
        "</body></html>"
    )


def test_a_page_changed_only_by_its_clock_shows_no_effect() -> None:
    click = LiveAction(op=LiveOp.CLICK, element_id="4")
    done = ActionOutcome(action=click, ok=True, url_before="u", url_after="u")
    seen, before = _page("0:59", "off"), _page("0:58", "off")
    assert changes.unchanged(done, seen, before, _page("0:57", "off"))
    assert not changes.unchanged(done, seen, before, _page("0:57", "on"))
    assert changes.changed(changes.element_states(before), changes.element_states(seen)) == {"3"}
    moved = done.model_copy(update={"url_after": "v"})
    assert not changes.unchanged(moved, seen, before, before)
    failed = done.model_copy(update={"ok": False})
    assert not changes.unchanged(failed, seen, before, before)


def test_only_actions_whose_effect_the_html_shows_are_judged() -> None:
    from live_runner.dom_snapshot import ElementInfo
    from live_runner.observe import PageSnapshot

    def info(tag: str, **attrs: str) -> ElementInfo:
        return ElementInfo(
            backend_node_id=1, tag=tag, frame_id="f", frame_url="u", attributes=attrs
        )

    page = PageSnapshot(
        url="u",
        title="t",
        html="",
        frames=[],
        elements={"b": info("button"), "t": info("input", type="text"), "a": info("textarea")},
    )
    assert changes.judged(LiveAction(op=LiveOp.CLICK, element_id="b"), page)
    assert changes.judged(LiveAction(op=LiveOp.PRESS, value="Enter"), page)
    assert changes.judged(LiveAction(op=LiveOp.TYPE, element_id="t", value="x"), page)
    for focus in ("t", "a"):  # a click into a text field focuses it: nothing shows
        assert not changes.judged(LiveAction(op=LiveOp.CLICK, element_id=focus), page)
    assert not changes.judged(LiveAction(op=LiveOp.PRESS, value="Tab"), page)
    assert not changes.judged(LiveAction(op=LiveOp.DRAG, element_id="b", value="5,0"), page)
    assert not changes.judged(LiveAction(op=LiveOp.SCROLL, value="down"), page)
    assert not changes.judged(LiveAction(op=LiveOp.HOVER, element_id="b"), page)
