"""The official Mind2Web step metrics as small pure functions.

These reproduce the multiple-choice scorer of the Mind2Web code
(``src/action_prediction/metric.py``): the operation F1 is computed on the *sets* of
whitespace tokens of the two action strings, case-sensitive, punctuation kept; element
accuracy accepts any positive candidate; a step succeeds when the element is right and the
operation F1 is exactly 1; a task succeeds when all its steps succeed. Averages are micro
(over steps) and macro (mean over tasks of each task's per-step mean); the paper tables use
macro.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence


def action_string(op: str | None, value: str | None = "") -> str:
    """``"OP value"`` stripped; a CLICK is just ``"CLICK"``; no op is the empty string."""
    if not op:
        return ""
    if op == "CLICK":
        return "CLICK"
    return f"{op} {(value or '').strip()}".strip()


def operation_f1(predicted: str, gold: str) -> float:
    """F1 between the sets of whitespace tokens; both empty -> 1, one empty -> 0."""
    pred_tokens = set(predicted.split())
    gold_tokens = set(gold.split())
    if not pred_tokens and not gold_tokens:
        return 1.0
    if not pred_tokens or not gold_tokens:
        return 0.0
    true_pos = len(pred_tokens & gold_tokens)
    if true_pos == 0:
        return 0.0
    precision = true_pos / len(pred_tokens)
    recall = true_pos / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def element_correct(predicted_id: str | None, positive_ids: Collection[str]) -> bool:
    """True when the predicted element is any of the step's positive candidates."""
    return predicted_id is not None and predicted_id in positive_ids


def step_success(element_ok: bool, op_f1: float) -> bool:
    """The element is right and the operation matches exactly (F1 == 1)."""
    return element_ok and op_f1 == 1.0


def task_success(step_successes: Iterable[bool]) -> bool:
    """Every step of the task succeeds (a task with no scored step does not)."""
    values = list(step_successes)
    return bool(values) and all(values)


def micro_average(values: Sequence[float]) -> float:
    """Mean over all steps; 0.0 for no steps."""
    return sum(values) / len(values) if values else 0.0


def macro_average(values_by_task: Mapping[str, Sequence[float]]) -> float:
    """Mean over tasks of each task's per-step mean (tasks without steps are left out)."""
    means = [micro_average(v) for v in values_by_task.values() if v]
    return sum(means) / len(means) if means else 0.0
