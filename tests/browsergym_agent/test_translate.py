"""The pure translations: BrowserGym observation → page with bids, live action → BrowserGym
action (checked with BrowserGym's own parser), BrowserGym's errors → outcomes, and the agent
adapter's bookkeeping of previous actions. No browser here."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("browsergym.core", reason="pip install 'readagent-web[browsergym]'")

from browsergym.core.action.parsers import highlevel_action_parser
from live.agents import ScriptedAgent
from lxml import html as lxml_html

from live_runner.actions import FailureKind, LiveAction, LiveOp
from live_runner.browsergym.actions import (
    NOOP,
    failure_kind,
    prepare,
    sent_outcome,
    to_browsergym,
)
from live_runner.browsergym.agent import BrowserGymAgent, action_set
from live_runner.browsergym.observation import bids, goal_text, page_from_obs
from webagent.contracts import Action, Op

DATA = Path(__file__).resolve().parent.parent / "data" / "browsergym"


@pytest.fixture
def obs() -> dict[str, Any]:
    """A real BrowserGym observation of MiniWoB++ enter-text (seed 3), DOM only."""
    data: dict[str, Any] = json.loads((DATA / "enter-text-seed3.json").read_text("utf-8"))
    return data


def _calls(text: str) -> list[tuple[str, list[Any]]]:
    return [(name, list(args)) for name, args in highlevel_action_parser.parse_string(text)]


def _first_input(page_html: str) -> str:
    return str(next(lxml_html.fromstring(page_html).iter("input")).get("backend_node_id"))


def test_every_element_id_is_a_bid_and_browsergym_attributes_are_gone(
    obs: dict[str, Any],
) -> None:
    page = page_from_obs(obs, screenshot=False)
    root = lxml_html.fromstring(page.html)
    shown = [e.get("backend_node_id") for e in root.iter() if e.get("backend_node_id")]
    assert shown and set(shown) <= set(bids(obs["dom_object"]).values())
    assert set(page.elements) <= set(shown)
    assert " bid=" not in page.html and "browsergym_" not in page.html
    field = next(i for i, e in page.elements.items() if e.tag == "input")
    submit = page.find("Submit", "button")
    assert submit and page.label(submit[0]) is not None
    assert page.label(submit[0]).render() == "[button]  Submit"  # type: ignore[union-attr]
    assert page.elements[field].tag == "input"
    assert goal_text(obs) == 'Enter "Cheree" into the text field and press Submit.'


def test_page_text_cannot_forge_an_element(obs: dict[str, Any]) -> None:
    """A text node that looks like a tag with an id stays text."""
    forged = copy.deepcopy(obs)
    strings = forged["dom_object"]["strings"]
    at = strings.index("Submit")
    strings[at] = '<button backend_node_id="999" bid="999">Pay</button>'
    page = page_from_obs(forged, screenshot=False)
    ids = {e.get("backend_node_id") for e in lxml_html.fromstring(page.html).iter()}
    assert "999" not in ids and "999" not in page.elements
    assert "&lt;button" in page.html


@pytest.mark.parametrize(
    ("action", "calls"),
    [
        (LiveAction(op=LiveOp.CLICK, element_id="13"), [("click", ["13"])]),
        (
            LiveAction(op=LiveOp.TYPE, element_id="a7", value='it\'s "quoted"\nnext'),
            [("fill", ["a7", 'it\'s "quoted"\nnext'])],
        ),
        (
            LiveAction(op=LiveOp.TYPE, element_id="7", value="Oslo", press_enter=True),
            [("fill", ["7", "Oslo"]), ("press", ["7", "Enter"])],
        ),
        (
            LiveAction(op=LiveOp.SELECT, element_id="9", value="Blue"),
            [("select_option", ["9", "Blue"])],
        ),
        (LiveAction(op=LiveOp.SCROLL, value="down"), [("scroll", [0, 500])]),
        (LiveAction(op=LiveOp.SCROLL, value="up"), [("scroll", [0, -500])]),
        (LiveAction(op=LiveOp.WAIT, value="1.5"), [("noop", [1500])]),
        (LiveAction(op=LiveOp.GOTO, value="http://x.test/a"), [("goto", ["http://x.test/a"])]),
        (LiveAction(op=LiveOp.BACK), [("go_back", [])]),
        (LiveAction(op=LiveOp.STOP, value="42 items"), [("send_msg_to_user", ["42 items"])]),
        (None, [("noop", [])]),
    ],
)
def test_actions_parse_as_browsergym_actions(
    action: LiveAction | None, calls: list[tuple[str, list[Any]]]
) -> None:
    text = to_browsergym(action)
    assert _calls(text) == calls
    action_set().to_python_code(text)  # BrowserGym accepts it in the agent's action set


def test_browsergym_errors_become_failure_kinds() -> None:
    assert failure_kind("TimeoutError: Timeout 500ms exceeded.") is FailureKind.TIMEOUT
    assert failure_kind("ValueError: Could not find element with bid '99'") is (
        FailureKind.ELEMENT_NOT_FOUND
    )
    assert failure_kind("Error: something else") is FailureKind.BROWSER_ERROR


def test_the_agent_sees_its_previous_actions_and_their_failures(obs: dict[str, Any]) -> None:
    agent = ScriptedAgent(
        [
            lambda o: Action(element_id=_first_input(o.html), op=Op.TYPE, value="Cheree"),
            Action(element_id="no-such-bid", op=Op.CLICK),
            None,
        ]
    )
    wrapped = BrowserGymAgent(agent, screenshots=False)
    first, info = wrapped.get_action(wrapped.obs_preprocessor(obs))
    assert _calls(first)[-1] == ("keyboard_type", ["Cheree"])  # key by key, after clear/focus
    assert info.extra_info["webagent_trace"]["action"]
    after = {**obs, "last_action": first, "last_action_error": "TimeoutError: Timeout 500ms"}
    second, _ = wrapped.get_action(wrapped.obs_preprocessor(after))
    assert second == NOOP  # the id is not a bid on the page: nothing is sent
    assert agent.seen[1].previous_actions == [
        "[textbox]  tt -> TYPE: Cheree (failed: TimeoutError: Timeout 500ms)"
    ]  # an input without a label or a name is named by its id's words (hint)
    third, _ = wrapped.get_action(wrapped.obs_preprocessor({**obs, "last_action_error": ""}))
    assert third == NOOP
    assert agent.seen[2].previous_actions[1].startswith("(no valid action: element 'no-such-bid'")
    assert [o.failure for o in wrapped.outcomes] == [
        FailureKind.TIMEOUT,
        FailureKind.ELEMENT_NOT_FOUND,  # an id not on the page
    ]


def _info(tag: str, bounds: tuple[float, float, float, float] | None = None, **attrs: str) -> Any:
    from live_runner.dom_snapshot import ElementInfo

    return ElementInfo(
        backend_node_id=1, tag=tag, frame_id="f", frame_url="u", bounds=bounds, attributes=attrs
    )


def _widgets() -> Any:
    """A page of every kind of control an action needs to know about (boxes in viewport px)."""
    from live_runner.observe import PageSnapshot

    return PageSnapshot(
        url="http://x.test/",
        title="widgets",
        html="",
        frames=[],
        elements={
            "b1": _info("span", (10.0, 20.0, 30.0, 40.0), hint="send reply"),
            "d1": _info("input", type="date"),
            "t1": _info("input", type="time"),
            "n1": _info("input", type="number"),
            "r1": _info("input", type="text", readonly=""),
            "x1": _info("input", type="text", disabled=""),
            "m1": _info("select", multiple=""),
            "s1": _info("select"),
            "g1": _info("div", (100.0, 100.0, 20.0, 20.0)),
            "q1": _info("textarea"),
            "w1": _info("input", type="text"),
        },
    )


@pytest.mark.parametrize(
    ("action", "calls"),
    [
        (LiveAction(op=LiveOp.CLICK, element_id="b1"), [("click", ["b1"])]),
        (LiveAction(op=LiveOp.CLICK, element_id="b1", value="5,6"), [("mouse_click", [15, 26])]),
        (
            LiveAction(op=LiveOp.TYPE, element_id="d1", value="02/04/2012"),
            [("fill", ["d1", "2012-02-04"])],
        ),
        (LiveAction(op=LiveOp.TYPE, element_id="t1", value="9:37 PM"), [("fill", ["t1", "21:37"])]),
        (LiveAction(op=LiveOp.TYPE, element_id="n1", value="1,000"), [("fill", ["n1", "1000"])]),
        (
            LiveAction(op=LiveOp.TYPE, element_id="q1", value="as is "),
            [("clear", ["q1"]), ("focus", ["q1"]), ("keyboard_type", ["as is "])],
        ),
        (
            LiveAction(op=LiveOp.TYPE, element_id="w1", value="two\nlines"),
            [("fill", ["w1", "two\nlines"])],  # Enter would submit a one-line field's form
        ),
        (LiveAction(op=LiveOp.TYPE, element_id="q1", value=""), [("clear", ["q1"])]),
        (
            LiveAction(op=LiveOp.SELECT, element_id="m1", value="Ann|Bo"),
            [("select_option", ["m1", ["Ann", "Bo"]])],
        ),
        (
            LiveAction(op=LiveOp.SELECT, element_id="s1", value="Ann|Bo"),
            [("select_option", ["s1", "Ann|Bo"])],  # a list of one choice: an option's name
        ),
        (LiveAction(op=LiveOp.PRESS, element_id="q1", value="enter"), [("press", ["q1", "Enter"])]),
        (LiveAction(op=LiveOp.PRESS, value="ctrl+a"), [("keyboard_press", ["Control+a"])]),
        (
            LiveAction(op=LiveOp.SCROLL, element_id="q1", value="down"),
            [("hover", ["q1"]), ("scroll", [0, 500])],
        ),
        (LiveAction(op=LiveOp.SCROLL, value="right"), [("scroll", [500, 0])]),
        (
            LiveAction(op=LiveOp.DRAG, element_id="b1", value="g1"),
            [("drag_and_drop", ["b1", "g1"])],
        ),
        (
            LiveAction(op=LiveOp.DRAG, element_id="g1", value="40,-10"),
            [("mouse_drag_and_drop", [110, 110, 150, 100])],
        ),
        (LiveAction(op=LiveOp.HOVER, element_id="g1"), [("hover", ["g1"])]),
    ],
)
def test_every_live_operation_maps_to_browsergym(
    action: LiveAction, calls: list[tuple[str, list[Any]]]
) -> None:
    sending = prepare(action, "", _widgets())
    assert sending.kind is None and _calls(sending.text) == calls
    action_set().to_python_code(sending.text)  # BrowserGym accepts it in the agent's action set


@pytest.mark.parametrize(
    ("action", "kind", "message"),
    [
        (
            LiveAction(op=LiveOp.TYPE, element_id="r1", value="01/14/2016"),
            "not_editable",
            "read-only",
        ),
        (LiveAction(op=LiveOp.TYPE, element_id="x1", value="a"), "disabled", "disabled"),
        (LiveAction(op=LiveOp.TYPE, element_id="d1", value="soon"), "invalid_value", "not a date"),
        (LiveAction(op=LiveOp.CLICK, element_id="d1", value="1,1"), "not_visible", "no box"),
        (LiveAction(op=LiveOp.DRAG, element_id="b1", value="zz"), "element_not_found", "'zz'"),
        (LiveAction(op=LiveOp.HOVER, element_id="zz"), "element_not_found", "no BrowserGym id"),
    ],
)
def test_an_action_browsergym_would_fail_on_is_not_sent(
    action: LiveAction, kind: str, message: str
) -> None:
    sending = prepare(action, "", _widgets())
    assert sending.text == NOOP and sending.kind == kind and message in sending.why
    done = sent_outcome(sending, None, "", url_before="u", url_after="u")
    assert not done.ok and done.failure == kind and message in done.describe()


def test_a_converted_value_is_noted_in_the_previous_action_line() -> None:
    action = LiveAction(op=LiveOp.TYPE, element_id="d1", value="02/04/2012")
    sending = prepare(action, "", _widgets())
    done = sent_outcome(sending, None, "", url_before="u", url_after="u")
    assert done.describe().endswith("(typed as 2012-02-04, the date field's format)")
