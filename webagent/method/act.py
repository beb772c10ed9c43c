"""Act: task, previous actions and the page as memory → one validated action.

Structured output is asked for (the model layer maps the schema to what the backend
supports); the answer is parsed by a pure parser whose errors are written for the model,
checked against the ids the model was shown, and given ``repair_attempts`` repairs with the
error before the step is recorded as an invalid prediction.

The operations offered are the observation's (``Observation.actions``): Mind2Web's CLICK,
TYPE and SELECT by default, asked with ``prompts/act.toml`` and parsed as always (every
offline request is unchanged); a live browser's wider set (:data:`LIVE_OPS`: PRESS, SCROLL,
DRAG, HOVER too) is asked with ``prompts/act_live.toml``, and its answers are parsed with
the live rules (:func:`parse_live_action`: a page-level PRESS or SCROLL names no element, a
TYPE keeps its value exactly as written and may be empty to clear a field).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from webagent.answers import json_object
from webagent.contracts import MIND2WEB_OPS, Action, Op
from webagent.errors import OutputParseError
from webagent.model.base import Message, Request
from webagent.model.calls import CallLog
from webagent.model.client import Model
from webagent.prompts import load_template
from webagent.tokens import TokenCounter, round_trips, run_counting, truncation

ACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "element_id": {"type": "string"},
        "op": {"type": "string", "enum": [op.value for op in MIND2WEB_OPS]},
        "value": {"type": "string", "maxLength": 200},
    },
    "required": ["element_id", "op", "value"],
}
#: a live TYPE may paste a longer text than an offline form value
LIVE_VALUE_CHARS = 2000
#: the live operations that may name no element (``""``): they act on the whole page
PAGE_OPS = frozenset({Op.PRESS, Op.SCROLL})
SCROLL_DIRECTIONS = ("up", "down", "left", "right")
_POINT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")
#: above this many shown ids the schema leaves element_id free (validation still checks it)
MAX_ENUM_IDS = 500
#: a repair turn shows the error and the valid ids cut to these many tokens, so the room the
#: act budget keeps for it (:func:`act_answer_room`) always holds it
REPAIR_ANSWER_TOKENS = 48
REPAIR_ERROR_TOKENS = 48
REPAIR_IDS_TOKENS = 64
REPAIR_IDS = 15
_ID_PREFIX = re.compile(r"^(?:id\s*[=:]\s*)", re.I)
_MIND2WEB_NAMES = frozenset(op.value for op in MIND2WEB_OPS)


class ActResult(BaseModel):
    action: Action | None
    error: str | None = None
    error_class: str | None = None
    repairs: int = 0


def is_live(ops: Sequence[Op]) -> bool:
    """Whether ``ops`` is more than Mind2Web's three (the live prompt and parser)."""
    return tuple(ops) != MIND2WEB_OPS


def act_schema(shown_ids: Sequence[str], ops: Sequence[Op] = MIND2WEB_OPS) -> dict[str, Any]:
    """The act schema; where the backend constrains decoding, only shown ids can come out
    (and, live, ``""`` for an operation on the whole page)."""
    schema = ACT_SCHEMA if not is_live(ops) else _live_schema(ops)
    if not shown_ids or len(shown_ids) > MAX_ENUM_IDS:
        return schema
    ids = list(shown_ids) if not is_live(ops) else [*shown_ids, ""]
    properties = {**schema["properties"], "element_id": {"type": "string", "enum": ids}}
    return {**schema, "properties": properties}


def _live_schema(ops: Sequence[Op]) -> dict[str, Any]:
    properties = {
        "element_id": {"type": "string"},
        "op": {"type": "string", "enum": [op.value for op in ops]},
        "value": {"type": "string", "maxLength": LIVE_VALUE_CHARS},
    }
    return {**ACT_SCHEMA, "properties": properties}


def parse_action(text: str, shown_ids: Sequence[str], ops: Sequence[Op] = MIND2WEB_OPS) -> Action:
    """Parse one act answer. Raises OutputParseError with a message the model can act on."""
    if is_live(ops):
        return parse_live_action(text, shown_ids, ops)
    data = json_object(text)
    element_id = _ID_PREFIX.sub("", str(data.get("element_id", "")).strip()).strip("\"' ")
    if not element_id:
        raise OutputParseError("element_id is missing or empty")
    op_text = str(data.get("op", "")).strip().upper()
    if op_text not in _MIND2WEB_NAMES:
        raise OutputParseError(f"op {op_text!r} is not one of CLICK, TYPE, SELECT")
    op = Op(op_text)
    value = "" if op is Op.CLICK else str(data.get("value") or "").strip()
    if op is not Op.CLICK and not value:
        raise OutputParseError(f"{op.value} needs a non-empty value")
    if element_id not in set(shown_ids):
        raise OutputParseError(f"element_id {element_id!r} is not an id shown on the page")
    return Action(element_id=element_id, op=op, value=value)


def parse_live_action(text: str, shown_ids: Sequence[str], ops: Sequence[Op]) -> Action:
    """Parse an answer to the live act prompt: any offered operation, with its value's rules
    (:func:`live_value`). A TYPE's value is kept exactly as written (spaces included)."""
    data = json_object(text)
    op_text = str(data.get("op", "")).strip().upper()
    offered = {op.value for op in ops}
    if op_text not in offered:
        names = ", ".join(op.value for op in ops)
        raise OutputParseError(f"op {op_text!r} is not one of {names}")
    op = Op(op_text)
    raw_id = data.get("element_id")
    element_id = _ID_PREFIX.sub("", str(raw_id if raw_id is not None else "").strip())
    element_id = element_id.strip("\"' ")
    shown = set(shown_ids)
    if not element_id and op not in PAGE_OPS:
        raise OutputParseError(f"{op.value} needs an element_id")
    if element_id and element_id not in shown:
        raise OutputParseError(f"element_id {element_id!r} is not an id shown on the page")
    raw = data.get("value")
    value = live_value(op, "" if raw is None else str(raw), shown)
    return Action(element_id=element_id, op=op, value=value)


def live_value(op: Op, value: str, shown: set[str]) -> str:
    """A live operation's value, checked: TYPE's as written; the others' trimmed."""
    if op is Op.TYPE:
        return value
    value = value.strip()
    if op is Op.CLICK and value and not _POINT.match(value):
        raise OutputParseError(
            f'CLICK\'s value is "" or "x,y" (a point inside the element), got {value!r}'
        )
    if op in (Op.SELECT, Op.PRESS) and not value:
        raise OutputParseError(f"{op.value} needs a non-empty value")
    if op is Op.SCROLL and value.lower() not in SCROLL_DIRECTIONS:
        raise OutputParseError(f"SCROLL's value is up, down, left or right, got {value!r}")
    if op is Op.DRAG:
        return _drag_value(value, shown)
    return value.lower() if op is Op.SCROLL else "" if op is Op.HOVER else value


def _drag_value(value: str, shown: set[str]) -> str:
    """DRAG's value: the id to drop on (as shown) or ``dx,dy``."""
    if _POINT.match(value):
        return value
    target = _ID_PREFIX.sub("", value).strip("\"' ")
    if target not in shown:
        raise OutputParseError(
            f'DRAG\'s value is the id of the element to drop on, or "dx,dy", got {value!r}'
        )
    return target


def point(value: str) -> tuple[float, float] | None:
    """``"x,y"`` as numbers (a CLICK's point, a DRAG's offset), else None."""
    match = _POINT.match(value)
    return (float(match.group(1)), float(match.group(2))) if match else None


def repair_turn(
    answer: str,
    error: str,
    shown_ids: Sequence[str],
    count: TokenCounter,
    ops: Sequence[Op] = MIND2WEB_OPS,
) -> tuple[Message, ...]:
    """The bad answer and the repair request that follow the act prompt, each part cut to
    the size :func:`act_answer_room` keeps room for (an act answer is ~25 tokens of JSON)."""
    valid = _valid_ids(shown_ids)
    speculate = round_trips(count)
    cuts = [
        (answer, REPAIR_ANSWER_TOKENS),
        (error, REPAIR_ERROR_TOKENS),
        (valid, REPAIR_IDS_TOKENS),
    ]
    answer, error, valid = run_counting(
        count, [truncation(text, budget, speculate=speculate) for text, budget in cuts]
    )
    if not is_live(ops):
        turn = load_template("act_repair").render(error=error, valid_ids=valid)
    else:
        turn = load_template("act_live_repair").render(
            error=error, valid_ids=valid, op_names=_op_names(ops)
        )
    return (Message(role="assistant", content=answer), *turn)


def _valid_ids(shown_ids: Sequence[str]) -> str:
    return ", ".join(list(shown_ids)[:REPAIR_IDS]) or "(none)"


def repair_counts(shown_ids: Sequence[str]) -> list[str]:
    """What a repair turn's cut of its valid-id list counts, known before any answer: the
    list and each of its prefixes (it is short: ``REPAIR_IDS`` ids). Counted with the act
    prompt, they leave a repair turn one request (the bad answer and the error)."""
    valid = _valid_ids(shown_ids)
    return [valid[:n] for n in range(len(valid), 0, -1)]


def act_answer_room(
    model: Model, answer_tokens: int, repair_attempts: int, ops: Sequence[Op] = MIND2WEB_OPS
) -> int:
    """Tokens an act prompt must leave free: the answer, and where a repair may follow, the
    largest repair turn (:func:`repair_turn`: the bad answer echoed, the error, the ids)."""
    if repair_attempts == 0:
        return answer_tokens
    filler = "word " * 4 * max(REPAIR_ANSWER_TOKENS, REPAIR_ERROR_TOKENS, REPAIR_IDS_TOKENS)
    largest = repair_turn(filler, filler, [filler], model.count_tokens, ops)
    return answer_tokens + model.count_message_tokens(largest)


def act_messages(
    task: str, previous: str, page: str, ops: Sequence[Op] = MIND2WEB_OPS
) -> tuple[tuple[Message, ...], str]:
    """The act prompt and its template's version tag: ``act`` for Mind2Web's operations,
    ``act_live`` (each offered operation's line from its ``[choices.operations]``) else."""
    if not is_live(ops):
        template = load_template("act")
        messages = template.render(task=task, previous_actions=previous, page=page)
        return messages, template.version_tag
    template = load_template("act_live")
    lines = "\n".join(template.choice("operations", op.value) for op in ops)
    messages = template.render(
        operations=lines, op_names=_op_names(ops), task=task, previous_actions=previous, page=page
    )
    return messages, template.version_tag


def _op_names(ops: Sequence[Op]) -> str:
    return " | ".join(f'"{op.value}"' for op in ops)


def predict_action(
    messages: tuple[Message, ...],
    prompt_version: str,
    shown_ids: Sequence[str],
    *,
    max_tokens: int,
    repair_attempts: int,
    log: CallLog,
    ops: Sequence[Op] = MIND2WEB_OPS,
) -> ActResult:
    """Ask, parse, validate; repair with the error up to ``repair_attempts`` times."""
    request = Request(
        messages=messages,
        max_tokens=max_tokens,
        json_schema=act_schema(shown_ids, ops),
        schema_name="action",
        phase="act",
        prompt_version=prompt_version,
    )
    error = ""
    for attempt in range(repair_attempts + 1):
        answer = log.generate(request).text
        try:
            return ActResult(action=parse_action(answer, shown_ids, ops), repairs=attempt)
        except OutputParseError as exc:
            error = str(exc)
        turn = repair_turn(answer, error, shown_ids, log.model.count_tokens, ops)
        request = request.model_copy(update={"messages": (*messages, *turn), "phase": "repair"})
    error_class = "invalid_id" if "not an id shown" in error else "invalid_output"
    return ActResult(action=None, error=error, error_class=error_class, repairs=repair_attempts)
