"""Act: task, previous actions and the page as memory → one validated action.

Structured output is asked for (the model layer maps the schema to what the backend
supports); the answer is parsed by a pure parser whose errors are written for the model,
checked against the ids the model was shown, and given ``repair_attempts`` repairs with the
error before the step is recorded as an invalid prediction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from webagent.answers import json_object
from webagent.contracts import Action, Op
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
        "op": {"type": "string", "enum": [op.value for op in Op]},
        "value": {"type": "string", "maxLength": 200},
    },
    "required": ["element_id", "op", "value"],
}
#: above this many shown ids the schema leaves element_id free (validation still checks it)
MAX_ENUM_IDS = 500
#: a repair turn shows the error and the valid ids cut to these many tokens, so the room the
#: act budget keeps for it (:func:`act_answer_room`) always holds it
REPAIR_ANSWER_TOKENS = 48
REPAIR_ERROR_TOKENS = 48
REPAIR_IDS_TOKENS = 64
REPAIR_IDS = 15
_ID_PREFIX = re.compile(r"^(?:id\s*[=:]\s*)", re.I)


class ActResult(BaseModel):
    action: Action | None
    error: str | None = None
    error_class: str | None = None
    repairs: int = 0


def act_schema(shown_ids: Sequence[str]) -> dict[str, Any]:
    """The act schema; where the backend constrains decoding, only shown ids can come out."""
    if not shown_ids or len(shown_ids) > MAX_ENUM_IDS:
        return ACT_SCHEMA
    properties = {
        **ACT_SCHEMA["properties"],
        "element_id": {"type": "string", "enum": list(shown_ids)},
    }
    return {**ACT_SCHEMA, "properties": properties}


def parse_action(text: str, shown_ids: Sequence[str]) -> Action:
    """Parse one act answer. Raises OutputParseError with a message the model can act on."""
    data = json_object(text)
    element_id = _ID_PREFIX.sub("", str(data.get("element_id", "")).strip()).strip("\"' ")
    if not element_id:
        raise OutputParseError("element_id is missing or empty")
    op_text = str(data.get("op", "")).strip().upper()
    if op_text not in Op.__members__:
        raise OutputParseError(f"op {op_text!r} is not one of CLICK, TYPE, SELECT")
    op = Op(op_text)
    value = "" if op is Op.CLICK else str(data.get("value") or "").strip()
    if op is not Op.CLICK and not value:
        raise OutputParseError(f"{op.value} needs a non-empty value")
    if element_id not in set(shown_ids):
        raise OutputParseError(f"element_id {element_id!r} is not an id shown on the page")
    return Action(element_id=element_id, op=op, value=value)


def repair_turn(
    answer: str, error: str, shown_ids: Sequence[str], count: TokenCounter
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
    return (
        Message(role="assistant", content=answer),
        *load_template("act_repair").render(error=error, valid_ids=valid),
    )


def _valid_ids(shown_ids: Sequence[str]) -> str:
    return ", ".join(list(shown_ids)[:REPAIR_IDS]) or "(none)"


def repair_counts(shown_ids: Sequence[str]) -> list[str]:
    """What a repair turn's cut of its valid-id list counts, known before any answer: the
    list and each of its prefixes (it is short: ``REPAIR_IDS`` ids). Counted with the act
    prompt, they leave a repair turn one request (the bad answer and the error)."""
    valid = _valid_ids(shown_ids)
    return [valid[:n] for n in range(len(valid), 0, -1)]


def act_answer_room(model: Model, answer_tokens: int, repair_attempts: int) -> int:
    """Tokens an act prompt must leave free: the answer, and where a repair may follow, the
    largest repair turn (:func:`repair_turn`: the bad answer echoed, the error, the ids)."""
    if repair_attempts == 0:
        return answer_tokens
    filler = "word " * 4 * max(REPAIR_ANSWER_TOKENS, REPAIR_ERROR_TOKENS, REPAIR_IDS_TOKENS)
    largest = repair_turn(filler, filler, [filler], model.count_tokens)
    return answer_tokens + model.count_message_tokens(largest)


def act_messages(task: str, previous: str, page: str) -> tuple[tuple[Message, ...], str]:
    template = load_template("act")
    return template.render(task=task, previous_actions=previous, page=page), template.version_tag


def predict_action(
    messages: tuple[Message, ...],
    prompt_version: str,
    shown_ids: Sequence[str],
    *,
    max_tokens: int,
    repair_attempts: int,
    log: CallLog,
) -> ActResult:
    """Ask, parse, validate; repair with the error up to ``repair_attempts`` times."""
    request = Request(
        messages=messages,
        max_tokens=max_tokens,
        json_schema=act_schema(shown_ids),
        schema_name="action",
        phase="act",
        prompt_version=prompt_version,
    )
    error = ""
    for attempt in range(repair_attempts + 1):
        answer = log.generate(request).text
        try:
            return ActResult(action=parse_action(answer, shown_ids), repairs=attempt)
        except OutputParseError as exc:
            error = str(exc)
        turn = repair_turn(answer, error, shown_ids, log.model.count_tokens)
        request = request.model_copy(update={"messages": (*messages, *turn), "phase": "repair"})
    error_class = "invalid_id" if "not an id shown" in error else "invalid_output"
    return ActResult(action=None, error=error, error_class=error_class, repairs=repair_attempts)
