"""Micro and macro averages, task success, breakdowns and bootstrap confidence intervals.

Steps of one task are correlated, so intervals resample *tasks* (a cluster bootstrap) and
recompute every average on each resample; the seed is a setting.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel, Field

from mind2web_eval import metrics
from mind2web_eval.records import SCHEMA_VERSION
from mind2web_eval.scoring import ScoreCounts, ScoringSettings, StepScore, count_scores

METRIC_NAMES = ("element_acc", "op_f1", "step_sr")


class MetricValues(BaseModel):
    element_acc: float = 0.0
    op_f1: float = 0.0
    step_sr: float = 0.0


class Interval(BaseModel):
    low: float
    high: float


class Aggregate(BaseModel):
    tasks: int = 0
    steps: int = 0
    micro: MetricValues = Field(default_factory=MetricValues)
    macro: MetricValues = Field(default_factory=MetricValues)
    task_sr: float = 0.0
    ci: dict[str, Interval] = Field(
        default_factory=dict, description="keys like 'macro.step_sr', 'task_sr'"
    )


class ScoreReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    settings: ScoringSettings
    counts: ScoreCounts
    overall: Aggregate
    by_split: dict[str, Aggregate] = Field(default_factory=dict)
    by_website: dict[str, Aggregate] = Field(default_factory=dict)
    by_domain: dict[str, Aggregate] = Field(default_factory=dict)
    by_op: dict[str, Aggregate] = Field(default_factory=dict)


def _per_step(score: StepScore) -> tuple[float, float, float]:
    return float(score.element_correct), score.op_f1, float(score.step_success)


def _task_table(scores: Sequence[StepScore]) -> tuple[np.ndarray, np.ndarray]:
    """Per task: step count, and sums of element / op F1 / step success (tasks x 3)."""
    by_task: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for score in scores:
        if score.counted:
            by_task[score.annotation_id].append(_per_step(score))
    counts = np.array([len(v) for v in by_task.values()], dtype=float)
    sums = np.array([np.sum(v, axis=0) for v in by_task.values()]).reshape(-1, 3)
    return counts, sums


def aggregate(scores: Sequence[StepScore], settings: ScoringSettings) -> Aggregate:
    """Averages of the counted steps, with task-level bootstrap intervals."""
    counted = [s for s in scores if s.counted]
    by_task: dict[str, list[StepScore]] = defaultdict(list)
    for score in counted:
        by_task[score.annotation_id].append(score)
    micro, macro = MetricValues(), MetricValues()
    for position, name in enumerate(METRIC_NAMES):
        values = {tid: [_per_step(s)[position] for s in steps] for tid, steps in by_task.items()}
        setattr(micro, name, metrics.micro_average([v for vs in values.values() for v in vs]))
        setattr(macro, name, metrics.macro_average(values))
    successes = [metrics.task_success(s.step_success for s in steps) for steps in by_task.values()]
    result = Aggregate(
        tasks=len(by_task),
        steps=len(counted),
        micro=micro,
        macro=macro,
        task_sr=metrics.micro_average([float(s) for s in successes]),
    )
    if settings.bootstrap and len(by_task) > 1:
        result.ci = _bootstrap(counted, settings)
    return result


def _bootstrap(scores: Sequence[StepScore], settings: ScoringSettings) -> dict[str, Interval]:
    counts, sums = _task_table(scores)
    picks = _resamples(len(counts), settings)
    means = sums / counts[:, None]
    samples: dict[str, np.ndarray] = {}
    for position, name in enumerate(METRIC_NAMES):
        samples[f"micro.{name}"] = sums[picks, position].sum(1) / counts[picks].sum(1)
        samples[f"macro.{name}"] = means[picks, position].mean(1)
    samples["task_sr"] = (sums[:, 2] == counts)[picks].mean(1)
    return {key: _interval(v, settings) for key, v in samples.items()}


def _resamples(tasks: int, settings: ScoringSettings) -> np.ndarray:
    """Which tasks each bootstrap resample draws (resamples x tasks), from the seed."""
    return np.random.default_rng(settings.seed).integers(0, tasks, size=(settings.bootstrap, tasks))


def _interval(samples: np.ndarray, settings: ScoringSettings) -> Interval:
    tail = (1.0 - settings.confidence) / 2 * 100
    low, high = np.percentile(samples, tail), np.percentile(samples, 100 - tail)
    return Interval(low=float(low), high=float(high))


class PairedDifference(BaseModel):
    """A run against another on the steps both answered (a step that either run left pending
    is left out): the difference in micro step SR, its task-level paired bootstrap interval,
    and the steps only one of the two got right."""

    steps: int
    left_out: int = Field(description="counted steps of this run not answered by both")
    step_sr: float = Field(description="this run's micro step SR minus the other's")
    ci: Interval | None = None
    gained: int = Field(description="steps right here and wrong in the other run")
    lost: int = Field(description="steps wrong here and right in the other run")


def paired_difference(
    other: Sequence[StepScore], scores: Sequence[StepScore], settings: ScoringSettings
) -> PairedDifference:
    """``scores`` against ``other`` step by step (same ``action_uid``): both runs' steps are
    resampled together, task by task, so what the steps share does not widen the interval."""
    theirs = {s.action_uid: s for s in other if s.counted and s.prediction_status != "missing"}
    counted = [s for s in scores if s.counted]
    pairs = [
        (theirs[s.action_uid], s)
        for s in counted
        if s.prediction_status != "missing" and s.action_uid in theirs
    ]
    by_task: dict[str, list[int]] = defaultdict(list)
    for old, new in pairs:
        by_task[new.annotation_id].append(int(new.step_success) - int(old.step_success))
    changes = [d for ds in by_task.values() for d in ds]
    result = PairedDifference(
        steps=len(pairs),
        left_out=len(counted) - len(pairs),
        step_sr=metrics.micro_average([float(d) for d in changes]),
        gained=changes.count(1),
        lost=changes.count(-1),
    )
    if settings.bootstrap and len(by_task) > 1:
        counts = np.array([len(ds) for ds in by_task.values()], dtype=float)
        sums = np.array([sum(ds) for ds in by_task.values()], dtype=float)
        picks = _resamples(len(counts), settings)
        result.ci = _interval(sums[picks].sum(1) / counts[picks].sum(1), settings)
    return result


def _breakdown(
    scores: Sequence[StepScore], key: Callable[[StepScore], str], settings: ScoringSettings
) -> dict[str, Aggregate]:
    groups: dict[str, list[StepScore]] = defaultdict(list)
    for score in scores:
        groups[key(score) or "(unknown)"].append(score)
    return {name: aggregate(group, settings) for name, group in sorted(groups.items())}


def build_report(
    scores: Sequence[StepScore], settings: ScoringSettings, unknown_predictions: int = 0
) -> ScoreReport:
    return ScoreReport(
        settings=settings,
        counts=count_scores(scores, unknown_predictions),
        overall=aggregate(scores, settings),
        by_split=_breakdown(scores, lambda s: s.split, settings),
        by_website=_breakdown(scores, lambda s: s.website, settings),
        by_domain=_breakdown(scores, lambda s: s.domain, settings),
        by_op=_breakdown(scores, lambda s: s.op, settings),
    )
