"""The records of a live run (one per step, one summary), apart from the modules that write
(:mod:`live_runner.trace`) and show (:mod:`live_runner.viewer`) them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from live_runner.actions import ActionOutcome, LiveAction
from webagent.contracts import StepTrace
from webagent.provenance import now

TRACE_SCHEMA_VERSION = 1


class StepRecord(BaseModel):
    """One observe → agent → act step."""

    schema_version: int = TRACE_SCHEMA_VERSION
    step: int = Field(description="1-based")
    started_at: str
    url: str
    title: str
    previous_actions: list[str]
    files: dict[str, str] = Field(default_factory=dict, description="kind -> path in the run")
    n_elements: int = 0
    agent: StepTrace | None = None
    action: LiveAction | None = None
    outcome: ActionOutcome
    tokens: dict[str, int] = Field(default_factory=dict, description="input/output this step")
    timings: dict[str, float] = Field(default_factory=dict)
    episode: dict[str, Any] = Field(default_factory=dict, description="e.g. MiniWoB reward")


class RunSummary(BaseModel):
    schema_version: int = TRACE_SCHEMA_VERSION
    status: str = Field(description="stopped, max_steps, max_seconds, max_tokens, done, ...")
    detail: str = ""
    steps: int
    final_answer: str | None = None
    elapsed_s: float
    input_tokens: int = 0
    output_tokens: int = 0
    finished_at: str = Field(default_factory=now)
    episode: dict[str, Any] = Field(default_factory=dict)
