"""One line of a run's ``results.jsonl``: a step, what the agent did, its score and why."""

from __future__ import annotations

from pydantic import BaseModel, Field

from mind2web_eval.diagnostics import StepDiagnostics
from mind2web_eval.records import SCHEMA_VERSION, Prediction
from mind2web_eval.scoring import GoldStep, StepScore
from webagent.contracts import StepTrace


class StepRecord(BaseModel):
    schema_version: int = SCHEMA_VERSION
    annotation_id: str
    action_uid: str
    step_index: int
    task: str = Field(description="the task instruction (confirmed_task)")
    previous_actions: list[str] = Field(default_factory=list)
    gold: GoldStep
    gold_repr: str = Field(default="", description="the step's action_repr, when known")
    prediction: Prediction
    score: StepScore = Field(description="as scored when run (results.json rescores)")
    diagnostics: StepDiagnostics
    error: str | None = None
    trace: StepTrace | None = None
    finished_at: str = ""
    attempt: int = Field(default=1, ge=1, description="1 for a step's first attempt, then 2...")
