"""The act step's operations follow the observation: Mind2Web's three offline, byte for byte
as before (``prompts/act.toml``, the same schema, the same parser), and a live browser's
wider set (``prompts/act_live.toml``) with its own parsing rules. Pure, plus one step of a
real agent over a scripted model."""

from __future__ import annotations

import json

import pytest

from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import LIVE_OPS, MIND2WEB_OPS, Observation, Op
from webagent.errors import OutputParseError
from webagent.method.act import (
    ACT_SCHEMA,
    act_messages,
    act_schema,
    parse_action,
    repair_turn,
)
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend
from webagent.prompts import load_template
from webagent.tokens import estimate_tokens

SHOWN = ["12", "40", "77"]


def test_an_observation_offers_mind2webs_operations_unless_told_otherwise() -> None:
    assert Observation(task="t", html="<p>x</p>").actions == MIND2WEB_OPS
    assert set(MIND2WEB_OPS) < set(LIVE_OPS)


def test_the_offline_act_prompt_and_schema_are_unchanged() -> None:
    messages, version = act_messages("Book a flight", "None", "<p id=1>x</p>")
    template = load_template("act")
    assert version == template.version_tag
    assert messages == template.render(
        task="Book a flight", previous_actions="None", page="<p id=1>x</p>"
    )
    assert act_schema([]) is ACT_SCHEMA
    assert ACT_SCHEMA["properties"]["op"]["enum"] == ["CLICK", "TYPE", "SELECT"]
    assert act_schema(SHOWN)["properties"]["element_id"]["enum"] == SHOWN
    turn = repair_turn("bad", "error", SHOWN, estimate_tokens)
    assert '"op": "CLICK" | "TYPE" | "SELECT"' in turn[1].content


@pytest.mark.parametrize("op", ["PRESS", "SCROLL", "DRAG", "HOVER"])
def test_offline_a_live_operation_is_refused_as_before(op: str) -> None:
    answer = json.dumps({"element_id": "12", "op": op, "value": "Enter"})
    with pytest.raises(OutputParseError, match=r"is not one of CLICK, TYPE, SELECT$"):
        parse_action(answer, SHOWN)


def test_offline_values_are_trimmed_and_an_empty_type_refused_as_before() -> None:
    action = parse_action('{"element_id": "12", "op": "TYPE", "value": " Oslo "}', SHOWN)
    assert action.value == "Oslo"
    with pytest.raises(OutputParseError, match="TYPE needs a non-empty value"):
        parse_action('{"element_id": "12", "op": "TYPE", "value": ""}', SHOWN)


def test_the_live_prompt_lists_every_offered_operation() -> None:
    messages, version = act_messages("Run ls", "None", "<p id=1>x</p>", LIVE_OPS)
    assert version == load_template("act_live").version_tag
    user = messages[-1].content
    for op in LIVE_OPS:
        assert f"\n- {op.value}: " in user
    assert '"op": "CLICK" | "TYPE" | "SELECT" | "PRESS" | "SCROLL" | "DRAG" | "HOVER"' in user
    assert user.endswith("<p id=1>x</p>") and "Task: Run ls" in user
    # an environment offering fewer gets only those
    fewer, _ = act_messages("t", "None", "", (*MIND2WEB_OPS, Op.PRESS))
    assert "- PRESS: " in fewer[-1].content and "- DRAG: " not in fewer[-1].content
    schema = act_schema(SHOWN, LIVE_OPS)
    assert schema["properties"]["op"]["enum"] == [op.value for op in LIVE_OPS]
    assert schema["properties"]["element_id"]["enum"] == [*SHOWN, ""]
    turn = repair_turn("bad", "error", SHOWN, estimate_tokens, LIVE_OPS)
    assert '"PRESS"' in turn[1].content


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"element_id": "", "op": "press", "value": "Enter"}, ("", Op.PRESS, "Enter")),
        ({"element_id": "12", "op": "PRESS", "value": "Control+A"}, ("12", Op.PRESS, "Control+A")),
        ({"element_id": "id=40", "op": "SCROLL", "value": "Down"}, ("40", Op.SCROLL, "down")),
        ({"element_id": "", "op": "SCROLL", "value": "up"}, ("", Op.SCROLL, "up")),
        ({"element_id": "12", "op": "TYPE", "value": "copy me "}, ("12", Op.TYPE, "copy me ")),
        ({"element_id": "12", "op": "TYPE", "value": ""}, ("12", Op.TYPE, "")),
        ({"element_id": "12", "op": "CLICK", "value": "36, 74"}, ("12", Op.CLICK, "36, 74")),
        ({"element_id": "12", "op": "DRAG", "value": "id=77"}, ("12", Op.DRAG, "77")),
        ({"element_id": "12", "op": "DRAG", "value": "40,-10"}, ("12", Op.DRAG, "40,-10")),
        ({"element_id": "77", "op": "HOVER", "value": "x"}, ("77", Op.HOVER, "")),
        ({"element_id": "40", "op": "SELECT", "value": "Ann|Bo"}, ("40", Op.SELECT, "Ann|Bo")),
    ],
)
def test_live_answers_parse(answer: dict[str, str], expected: tuple[str, Op, str]) -> None:
    action = parse_action(json.dumps(answer), SHOWN, LIVE_OPS)
    assert (action.element_id, action.op, action.value) == expected


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"element_id": "", "op": "CLICK", "value": ""}, "CLICK needs an element_id"),
        ({"element_id": "12", "op": "PRESS", "value": " "}, "PRESS needs a non-empty value"),
        ({"element_id": "12", "op": "SCROLL", "value": "away"}, "up, down, left or right"),
        ({"element_id": "12", "op": "DRAG", "value": "99"}, "id of the element to drop on"),
        ({"element_id": "12", "op": "CLICK", "value": "centre"}, '"x,y"'),
        ({"element_id": "99", "op": "HOVER", "value": ""}, "not an id shown"),
        ({"element_id": "12", "op": "JUMP", "value": ""}, "is not one of CLICK, TYPE"),
    ],
)
def test_bad_live_answers_say_what_is_wrong(answer: dict[str, str], message: str) -> None:
    with pytest.raises(OutputParseError, match=message):
        parse_action(json.dumps(answer), SHOWN, LIVE_OPS)


def test_an_operation_not_offered_is_refused() -> None:
    offered = (*MIND2WEB_OPS, Op.PRESS)
    with pytest.raises(OutputParseError, match="'DRAG' is not one of CLICK, TYPE, SELECT, PRESS"):
        parse_action('{"element_id": "12", "op": "DRAG", "value": "77"}', SHOWN, offered)


def _press_enter(request: Request) -> str:
    """Scripted policy ``press-enter``: press Enter in the first field the prompt shows."""
    prompt = "\n".join(m.content for m in request.messages)
    field = prompt.split("<input id=", 1)[1].split(">", 1)[0]
    return json.dumps({"element_id": field.split()[0], "op": "PRESS", "value": "Enter"})


def test_an_agent_asks_with_the_live_prompt_only_when_the_observation_offers_it() -> None:
    model = Model(ScriptedBackend(_press_enter, name="press-enter", context_window=4096))
    agent = build_agent(AgentSettings(agent="raw-html", context_budget=2048), model)
    html = "<html><body><input id=q name=q><p>Type a command</p></body></html>"
    live = agent.step(Observation(task="Run it", html=html, actions=LIVE_OPS))
    assert live.action is not None and live.action.op is Op.PRESS
    assert live.calls[0].prompt[-1]["content"].count("- PRESS: ") == 1
    offline = agent.step(Observation(task="Run it", html=html))
    assert offline.action is None and offline.error_class == "invalid_output"
    assert "- PRESS: " not in offline.calls[0].prompt[-1]["content"]
