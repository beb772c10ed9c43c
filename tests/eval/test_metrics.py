"""The official metric formulas, checked on cases computed by hand."""

from __future__ import annotations

import pytest

from mind2web_eval import metrics


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("CLICK", "", "CLICK"),
        ("CLICK", "ignored", "CLICK"),
        ("TYPE", "  Boston ", "TYPE Boston"),
        ("SELECT", "Economy class", "SELECT Economy class"),
        ("TYPE", "", "TYPE"),
        (None, "x", ""),
    ],
)
def test_action_string(op: str | None, value: str, expected: str) -> None:
    assert metrics.action_string(op, value) == expected


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("CLICK", "CLICK", 1.0),
        ("", "", 1.0),
        ("", "CLICK", 0.0),
        ("CLICK", "", 0.0),
        ("TYPE Boston", "CLICK", 0.0),
        # {TYPE, New, York} vs {TYPE, Boston}: tp 1, p 1/3, r 1/2 -> 2*(1/6)/(5/6) = 0.4
        ("TYPE New York", "TYPE Boston", 0.4),
        # sets: repeated tokens count once -> identical sets
        ("TYPE New New York", "TYPE New York", 1.0),
        # case-sensitive: {TYPE, boston} vs {TYPE, Boston}: tp 1, p 1/2, r 1/2 -> 0.5
        ("TYPE boston", "TYPE Boston", 0.5),
        # punctuation is kept: "Boston," != "Boston"
        ("TYPE Boston,", "TYPE Boston", 0.5),
        # {SELECT, 10} vs {SELECT, 9}: 0.5
        ("SELECT 10", "SELECT 9", 0.5),
        # order does not matter
        ("TYPE York New", "TYPE New York", 1.0),
    ],
)
def test_operation_f1(predicted: str, gold: str, expected: float) -> None:
    assert metrics.operation_f1(predicted, gold) == pytest.approx(expected)


def test_element_correct_accepts_any_positive() -> None:
    assert metrics.element_correct("7", ["3", "7"])
    assert not metrics.element_correct("8", ["3", "7"])
    assert not metrics.element_correct(None, ["3"])
    assert not metrics.element_correct("3", [])


def test_step_success_needs_element_and_exact_operation() -> None:
    assert metrics.step_success(True, 1.0)
    assert not metrics.step_success(True, 0.99)
    assert not metrics.step_success(False, 1.0)


def test_task_success() -> None:
    assert metrics.task_success([True, True])
    assert not metrics.task_success([True, False])
    assert not metrics.task_success([])


def test_micro_and_macro_averages() -> None:
    by_task = {"a": [1.0, 1.0, 0.0, 1.0], "b": [0.0, 1.0], "empty": []}
    # micro: 4 of 6 steps; macro: mean(3/4, 1/2) = 5/8 (a task with no steps is left out)
    assert metrics.micro_average([v for vs in by_task.values() for v in vs]) == pytest.approx(4 / 6)
    assert metrics.macro_average(by_task) == pytest.approx(5 / 8)
    assert metrics.micro_average([]) == 0.0
    assert metrics.macro_average({}) == 0.0
