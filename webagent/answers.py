"""Reading JSON out of a model's answer: the one place every parser of answers starts from.

Models wrap JSON in prose or code fences; the first ``{...}`` (or ``[...]``) span is taken.
:func:`find_json` is lenient (``None`` when there is nothing to read); :func:`json_object`
raises :class:`~webagent.errors.OutputParseError` with a message the model can act on.
"""

from __future__ import annotations

import json
import re
from typing import Any

from webagent.errors import OutputParseError

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_OBJECT_OR_LIST = re.compile(r"\{.*\}|\[.*\]", re.DOTALL)


def find_json(text: str, *, lists: bool = False) -> Any | None:
    """The first JSON object (or, with ``lists``, array) in ``text``; None if none parses."""
    match = (_OBJECT_OR_LIST if lists else _OBJECT).search(text)
    if match is None:
        return None
    try:
        return json.loads(match.group(0), strict=False)
    except json.JSONDecodeError:
        return None


def json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text``; raises OutputParseError naming what is wrong."""
    match = _OBJECT.search(text)
    if match is None:
        raise OutputParseError("the answer holds no JSON object")
    try:
        data = json.loads(match.group(0), strict=False)
    except json.JSONDecodeError as exc:
        raise OutputParseError(f"the JSON is malformed ({exc.msg} at char {exc.pos})") from exc
    if not isinstance(data, dict):
        raise OutputParseError("the answer must be a JSON object")
    return data
