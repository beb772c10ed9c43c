"""The pure parsers of look-up and act answers: every malformed answer is recorded, not raised."""

from __future__ import annotations

import pytest

from webagent.contracts import Op
from webagent.errors import OutputParseError
from webagent.method.act import parse_action
from webagent.method.lookup import parse_lookup_answer


@pytest.mark.parametrize(
    ("answer", "accepted", "rejected_count"),
    [
        ('{"pages": [3, 1], "reason": "search form"}', [2, 0], 0),
        ('```json\n{"pages": [2]}\n```', [1], 0),
        ("[4, 4, 2]", [3, 1], 1),  # duplicate
        ('{"pages": [0, 9, 2]}', [1], 2),  # out of range both sides
        ('{"pages": ["two", 3]}', [2], 1),  # not a number
        ("I would look at page 2 and part 5.", [1, 4], 0),
        ('{"pages": [1, 2, 3, 4]}', [0, 1, 2], 1),  # over max_pages=3
        ("nothing useful here", [], 1),
        ('{"pages": [1, 2', [0, 1], 0),  # truncated JSON falls back to the text
    ],
)
def test_parse_lookup_answer(answer: str, accepted: list[int], rejected_count: int) -> None:
    round_ = parse_lookup_answer(answer, n_fragments=5, max_pages=3)
    assert round_.accepted == accepted
    assert len(round_.rejected) == rejected_count
    assert round_.raw == answer


def test_parse_lookup_stop_and_already_open() -> None:
    assert parse_lookup_answer('{"page": "STOP", "reason": "enough"}', 5, 1).stop
    assert parse_lookup_answer("STOP", 5, 1).stop
    round_ = parse_lookup_answer('{"page": "2"}', 5, 1, already_open=[1])
    assert round_.accepted == [] and round_.rejected == ["2: duplicate"]


SHOWN = ["n12", "n40", "77"]


@pytest.mark.parametrize(
    ("answer", "element_id", "op", "value"),
    [
        ('{"element_id": "n12", "op": "CLICK", "value": "ignored"}', "n12", Op.CLICK, ""),
        ('Sure: {"element_id": "id=n40", "op": "type", "value": " Oslo "}', "n40", Op.TYPE, "Oslo"),
        ('{"element_id": 77, "op": "SELECT", "value": "2 adults"}', "77", Op.SELECT, "2 adults"),
    ],
)
def test_parse_action_accepts(answer: str, element_id: str, op: Op, value: str) -> None:
    action = parse_action(answer, SHOWN)
    assert (action.element_id, action.op, action.value) == (element_id, op, value)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("click the search button", "no JSON object"),
        ('{"element_id": "n12", "op": "CLICK"', "no JSON object"),
        ('{"element_id": "n12" "op": "CLICK"}', "malformed"),
        ('{"element_id": "", "op": "CLICK"}', "missing or empty"),
        ('{"element_id": "n12", "op": "HOVER"}', "not one of"),
        ('{"element_id": "n12", "op": "TYPE", "value": ""}', "non-empty value"),
        ('{"element_id": "n99", "op": "CLICK", "value": ""}', "not an id shown"),
    ],
)
def test_parse_action_errors_name_the_problem(answer: str, message: str) -> None:
    with pytest.raises(OutputParseError, match=message):
        parse_action(answer, SHOWN)
