"""Scoring equals a hand computation of the official formulas, micro and macro.

The fixture (tests/data/mind2web/raw) has three tasks, ten steps; the predictions file gets
some steps right and some wrong:

  task A (shop):  a1 right; a2 right; a3 right element, value 10 for 9 (F1 1/2);
                  a4 element 230 = a positive of rank 60 (the other positive 231 has rank 2)
  task B (fly):   b1 wrong element; b2 gold has no positive; b3 right but its positive has
                  rank 75; b4 no prediction
  task C (join):  c1 right; c2 right (its positive carries no rank)
  plus one prediction for a step that is not in the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from mind2web_eval.aggregate import ScoreReport, build_report, paired_difference
from mind2web_eval.data import load_tasks
from mind2web_eval.predictions import load_predictions
from mind2web_eval.scoring import ScoringSettings, StepScore, gold_steps, score_all

# (element, op F1, step success) per step, by hand
NO_TOP_K = {
    "A": [(1, 1, 1), (1, 1, 1), (1, 0.5, 0), (1, 1, 1)],
    "B": [(0, 1, 0), (0, 0, 0), (1, 1, 1), (0, 0, 0)],
    "C": [(1, 1, 1), (1, 1, 1)],
}
TOP_50 = {
    "A": [(1, 1, 1), (1, 1, 1), (1, 0.5, 0), (0, 1, 0)],
    "B": [(0, 1, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0)],
    "C": [(1, 1, 1), (1, 1, 1)],
}
SKIPPED_NO_TOP_K = {("B", 1)}  # b2: no positive
SKIPPED_TOP_50 = {("B", 1), ("B", 2)}  # b2 and b3 (rank 75)


def _hand(table: dict[str, list[tuple[float, float, float]]], skipped: set[tuple[str, int]]):
    kept = {
        t: [s for i, s in enumerate(steps) if (t, i) not in skipped] for t, steps in table.items()
    }
    all_steps = [s for steps in kept.values() for s in steps]
    micro = [sum(s[k] for s in all_steps) / len(all_steps) for k in range(3)]
    macro = [
        sum(sum(s[k] for s in v) / len(v) for v in kept.values()) / len(kept) for k in range(3)
    ]
    task_sr = sum(all(s[2] for s in v) for v in kept.values()) / len(kept)
    return micro, macro, task_sr, len(all_steps)


def _report(raw_folder: Path, predictions_file: Path, settings: ScoringSettings) -> ScoreReport:
    tasks, _ = load_tasks(raw_folder)
    predictions, issues = load_predictions(predictions_file)
    assert issues == []
    gold = [g for t in tasks for g in gold_steps(t)]
    scores, unknown = score_all(gold, predictions, settings)
    return build_report(scores, settings, unknown)


class Case(NamedTuple):
    top_k: int | None
    policy: str
    table: dict[str, list[tuple[float, float, float]]]
    skipped: set[tuple[str, int]]
    micro: tuple[float, float, float]  # written out once more as fractions, so that the
    macro: tuple[float, float, float]  # helper above cannot hide a mistake


CASES = [
    Case(None, "fail", NO_TOP_K, set(), (7 / 10, 7.5 / 10, 6 / 10), (0.75, 2.375 / 3, 2 / 3)),
    Case(
        None,
        "skip",
        NO_TOP_K,
        SKIPPED_NO_TOP_K,
        (7 / 9, 7.5 / 9, 6 / 9),
        (7 / 9, (0.875 + 2 / 3 + 1) / 3, (0.75 + 1 / 3 + 1) / 3),
    ),
    Case(50, "fail", TOP_50, set(), (5 / 10, 6.5 / 10, 4 / 10), (1.75 / 3, 2.125 / 3, 1.5 / 3)),
    Case(50, "skip", TOP_50, SKIPPED_TOP_50, (5 / 8, 6.5 / 8, 4 / 8), (1.75 / 3, 2.375 / 3, 0.5)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"top_k={c.top_k}-{c.policy}")
def test_scores_equal_hand_computation(
    raw_folder: Path, predictions_file: Path, case: Case
) -> None:
    top_k, policy, table, skipped = case.top_k, case.policy, case.table, case.skipped
    expected_micro, expected_macro = case.micro, case.macro
    settings = ScoringSettings(top_k=top_k, missing_gold=policy)  # type: ignore[arg-type]
    report = _report(raw_folder, predictions_file, settings)
    micro, macro, task_sr, steps = _hand(table, skipped)
    assert micro == pytest.approx(list(expected_micro))
    assert macro == pytest.approx(list(expected_macro))
    overall = report.overall
    assert overall.steps == steps
    assert overall.tasks == 3
    got_micro = [overall.micro.element_acc, overall.micro.op_f1, overall.micro.step_sr]
    got_macro = [overall.macro.element_acc, overall.macro.op_f1, overall.macro.step_sr]
    assert got_micro == pytest.approx(micro)
    assert got_macro == pytest.approx(macro)
    assert overall.task_sr == pytest.approx(task_sr) == pytest.approx(1 / 3)
    counts = report.counts
    assert counts.steps_in_data == 10
    assert counts.steps_skipped == len(skipped)
    assert counts.missing_predictions == 1
    assert counts.unknown_predictions == 1
    assert counts.no_positive == 1
    assert counts.outside_top_k == (1 if top_k else 0)


def test_breakdowns_and_intervals(raw_folder: Path, predictions_file: Path) -> None:
    settings = ScoringSettings(bootstrap=200, seed=7)
    report = _report(raw_folder, predictions_file, settings)
    assert set(report.by_split) == {"test_task", "test_website"}
    assert report.by_split["test_website"].macro.step_sr == 1.0
    # test_task holds A and B: macro step = mean(3/4, 1/4)
    assert report.by_split["test_task"].macro.step_sr == pytest.approx(0.5)
    assert report.by_website["flyfast"].micro.element_acc == pytest.approx(1 / 4)
    assert set(report.by_domain) == {"Shopping", "Travel", "Info"}
    assert report.by_op["TYPE"].steps == 4
    ci = report.overall.ci["macro.step_sr"]
    assert ci.low <= report.overall.macro.step_sr <= ci.high
    assert 0.0 <= ci.low < ci.high <= 1.0
    again = _report(raw_folder, predictions_file, settings)
    assert again.overall.ci == report.overall.ci  # seeded
    assert report.by_website["joinup"].ci == {}  # one task: no interval


def _steps(results: str) -> list[StepScore]:
    """Step scores from 'task:step=R' items: R is 1 (right), 0 (wrong) or - (no prediction)."""
    scores = []
    for item in results.split():
        where, result = item.split("=")
        task, step = where.split(":")
        scores.append(
            StepScore(
                annotation_id=task, action_uid=f"{task}{step}", gold_status="ok",
                prediction_status="missing" if result == "-" else "ok", counted=True,
                element_correct=result == "1", op_f1=float(result == "1"),
                step_success=result == "1",
            )
        )  # fmt: skip
    return scores


def test_a_run_against_another_step_by_step() -> None:
    base = _steps("A:1=1 A:2=0 A:3=1 B:1=1 B:2=1 C:1=0")
    # a2 and c1 gained, a3 lost, b2 not answered (left out, not counted as lost)
    new = _steps("A:1=1 A:2=1 A:3=0 B:1=1 B:2=- C:1=1")
    settings = ScoringSettings(bootstrap=500, seed=3)
    d = paired_difference(base, new, settings)
    assert (d.steps, d.left_out, d.gained, d.lost) == (5, 1, 2, 1)
    assert d.step_sr == pytest.approx((2 - 1) / 5)
    # per task A +0 of 3, B +0 of 1, C +1 of 1: every resample lies between 0 and +1
    assert d.ci is not None and 0.0 <= d.ci.low <= d.step_sr <= d.ci.high <= 1.0
    assert paired_difference(base, new, settings).ci == d.ci  # seeded
    same = paired_difference(base, base, settings)
    assert (same.step_sr, same.gained, same.lost) == (0.0, 0, 0)
    assert same.ci is not None and same.ci.low == same.ci.high == 0.0
    one_task = paired_difference(base[:3], new[:3], settings)
    assert one_task.ci is None and one_task.step_sr == 0.0  # one task: no interval
    apart = paired_difference(base, _steps("D:1=1 D:2=0"), settings)  # no step in common
    assert (apart.steps, apart.left_out, apart.ci) == (0, 2, None)


def test_prediction_errors_and_repeats(raw_folder: Path, tmp_path: Path) -> None:
    lines = [
        {
            "annotation_id": "fx-shop-0001",
            "action_uid": "fx-a1",
            "element_id": 101,
            "op": "TYPE",
            "value": "red running shoes",
        },
        {
            "annotation_id": "fx-shop-0001",
            "action_uid": "fx-a1",
            "element_id": "999",
            "op": "CLICK",
        },
        {
            "annotation_id": "fx-shop-0001",
            "action_uid": "fx-a2",
            "element_id": None,
            "op": None,
            "error_class": "invalid_output",
        },
        {"annotation_id": "fx-shop-0001", "action_uid": "fx-a3", "op": "HOVER"},
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "{cut")
    predictions, issues = load_predictions(path)
    assert set(predictions) == {"fx-a1", "fx-a2"}
    assert predictions["fx-a1"].element_id == "101"  # the first one is scored
    assert [(i.task, i.field) for i in issues] == [
        ("line 2", "action_uid"),
        ("line 4", "op"),
        ("line 5", "(line)"),
    ]
    tasks, _ = load_tasks(raw_folder)
    settings = ScoringSettings(bootstrap=0)
    scores, _ = score_all(gold_steps(tasks[0]), predictions, settings)
    assert [s.prediction_status for s in scores] == ["ok", "no_action", "missing", "missing"]
    assert [s.step_success for s in scores] == [True, False, False, False]
    assert scores[1].op_f1 == 0.0


def test_real_records_score_zero_without_gold(shared: Path) -> None:
    """On real annotations: a perfect prediction scores 1 except where the gold has no
    positive (or none in the top 50), exactly as the official top-50 scorer caps it."""
    tasks, _ = load_tasks(shared / "mind2web_samples" / "test_task_examples.jsonl")
    gold = [g for t in tasks for g in gold_steps(t)]
    from mind2web_eval.records import Prediction

    perfect = {
        g.action_uid: Prediction(
            annotation_id=g.annotation_id,
            action_uid=g.action_uid,
            element_id=next(iter(g.usable_positives(50)[0]), None),
            op=g.op,  # type: ignore[arg-type]
            value=g.value,
        )
        for g in gold
    }
    settings = ScoringSettings(top_k=50, bootstrap=0)
    scores, _ = score_all(gold, perfect, settings)
    usable = [g.usable_positives(50)[1] == "ok" for g in gold]
    assert 0 < sum(usable) < len(gold)
    assert [s.step_success for s in scores] == usable
    report = build_report(scores, settings)
    assert report.overall.micro.step_sr == pytest.approx(sum(usable) / len(gold))
    assert report.counts.no_positive == 13
