"""Score predictions against Mind2Web gold steps, with the protocol as explicit settings.

One implementation serves ``webagent score`` and ``webagent eval``. Per step it applies the
official formulas (:mod:`mind2web_eval.metrics`); the candidate filter (``top_k``: only
positives with ranker ``rank < top_k`` count) and the missing-gold policy (``fail``: a step
without a usable positive scores 0 on every metric, as the official code does; ``skip``: it
is left out) are settings that every result prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mind2web_eval import metrics
from mind2web_eval.records import Prediction, Task

GoldStatus = Literal["ok", "no_positive", "outside_top_k"]
PredictionStatus = Literal["ok", "missing", "no_action"]


class ScoringSettings(BaseModel):
    """The protocol choices; printed with every result."""

    model_config = ConfigDict(frozen=True)

    missing_gold: Literal["fail", "skip"] = Field(
        default="fail", description="steps without a usable positive: score 0 (official) or skip"
    )
    top_k: int | None = Field(
        default=None, ge=1, description="only positives with ranker rank < top_k count"
    )
    bootstrap: int = Field(default=1000, ge=0, description="bootstrap resamples (0: no CIs)")
    seed: int = 0
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)

    def describe(self) -> str:
        pool = f"positives with rank < {self.top_k}" if self.top_k else "all positives"
        policy = "score 0 (official)" if self.missing_gold == "fail" else "skipped"
        return (
            f"candidate pool: {pool}; steps without a usable positive: {policy}; "
            f"element = any positive; op F1 on token sets, case-sensitive; "
            f"CIs: {self.confidence:.0%} task-level bootstrap, {self.bootstrap} resamples, "
            f"seed {self.seed}"
        )


class GoldStep(BaseModel):
    """What scoring needs of a step (no pages): kept in memory for a whole dataset."""

    model_config = ConfigDict(frozen=True)

    annotation_id: str
    action_uid: str
    index: int
    split: str = ""
    website: str = ""
    domain: str = ""
    op: str
    value: str = ""
    positives: tuple[tuple[str, int | None], ...] = Field(description="(backend_node_id, rank)")

    @property
    def action_string(self) -> str:
        return metrics.action_string(self.op, self.value)

    def usable_positives(self, top_k: int | None) -> tuple[list[str], GoldStatus]:
        """Positive ids inside the candidate pool, and why there are none when empty."""
        if not self.positives:
            return [], "no_positive"
        ids = [pid for pid, rank in self.positives if top_k is None or rank is None or rank < top_k]
        return ids, ("ok" if ids else "outside_top_k")


def gold_steps(task: Task) -> list[GoldStep]:
    return [
        GoldStep(
            annotation_id=task.annotation_id,
            action_uid=step.action_uid,
            index=index,
            split=task.split,
            website=task.website,
            domain=task.domain,
            op=step.operation.op.value,
            value=step.operation.value,
            positives=tuple((c.backend_node_id, c.rank) for c in step.pos_candidates),
        )
        for index, step in enumerate(task.actions)
    ]


class StepScore(BaseModel):
    annotation_id: str
    action_uid: str
    split: str = ""
    website: str = ""
    domain: str = ""
    op: str = ""
    gold_status: GoldStatus
    prediction_status: PredictionStatus
    counted: bool = Field(description="False when skipped by the missing-gold policy")
    element_correct: bool
    op_f1: float
    step_success: bool


def score_step(
    gold: GoldStep, prediction: Prediction | None, settings: ScoringSettings
) -> StepScore:
    """The official per-step scores (all 0 when the gold has no usable positive)."""
    positives, gold_status = gold.usable_positives(settings.top_k)
    if prediction is None:
        status: PredictionStatus = "missing"
    elif prediction.op is None or prediction.element_id is None:
        status = "no_action"
    else:
        status = "ok"
    element_ok, op_f1 = False, 0.0
    if gold_status == "ok" and prediction is not None:
        predicted = metrics.action_string(
            prediction.op.value if prediction.op else None, prediction.value
        )
        element_ok = metrics.element_correct(prediction.element_id, positives)
        op_f1 = metrics.operation_f1(predicted, gold.action_string)
    return StepScore(
        annotation_id=gold.annotation_id,
        action_uid=gold.action_uid,
        split=gold.split,
        website=gold.website,
        domain=gold.domain,
        op=gold.op,
        gold_status=gold_status,
        prediction_status=status,
        counted=gold_status == "ok" or settings.missing_gold == "fail",
        element_correct=element_ok,
        op_f1=op_f1,
        step_success=metrics.step_success(element_ok, op_f1),
    )


class ScoreCounts(BaseModel):
    steps_in_data: int = 0
    steps_scored: int = 0
    steps_skipped: int = 0
    no_positive: int = 0
    outside_top_k: int = 0
    missing_predictions: int = 0
    no_action_predictions: int = 0
    unknown_predictions: int = Field(default=0, description="predictions for no step of the data")


def count_scores(scores: Iterable[StepScore], unknown: int = 0) -> ScoreCounts:
    counts = ScoreCounts(unknown_predictions=unknown)
    for score in scores:
        counts.steps_in_data += 1
        counts.steps_scored += score.counted
        counts.steps_skipped += not score.counted
        counts.no_positive += score.gold_status == "no_positive"
        counts.outside_top_k += score.gold_status == "outside_top_k"
        counts.missing_predictions += score.prediction_status == "missing"
        counts.no_action_predictions += score.prediction_status == "no_action"
    return counts


def score_all(
    gold: Iterable[GoldStep], predictions: Mapping[str, Prediction], settings: ScoringSettings
) -> tuple[list[StepScore], int]:
    """Score every gold step once (missing predictions count as wrong; a step listed twice in
    the data is scored once); also count predictions that match no gold step."""
    scores = []
    seen: set[str] = set()
    for step in gold:
        if step.action_uid in seen:
            continue
        seen.add(step.action_uid)
        scores.append(score_step(step, predictions.get(step.action_uid), settings))
    unknown = sum(uid not in seen for uid in predictions)
    return scores, unknown
