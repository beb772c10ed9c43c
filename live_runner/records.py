"""The records of a live run (one per step, one summary), apart from the modules that write
(:mod:`live_runner.trace`) and show (:mod:`live_runner.viewer`) them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from live_runner.actions import ActionOutcome, LiveAction
from webagent.contracts import StepTrace
from webagent.provenance import now

#: 2: one EpisodeResult for every environment (was RunSummary and two EpisodeResults)
TRACE_SCHEMA_VERSION = 2


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


class EpisodeResult(BaseModel):
    """How one episode ended: ``summary.json`` of its run folder, a line of a suite's
    ``episodes.jsonl``, and what ``webagent run --json`` prints. Every live environment
    (a browser tab, MiniWoB++, BrowserGym) ends its episodes in this one record."""

    schema_version: int = TRACE_SCHEMA_VERSION
    status: str = Field(
        description="stopped (the agent's STOP), done or truncated (the environment ended it), "
        "max_steps, max_seconds, max_tokens, error, interrupted, or pending (a model answer "
        "is still to come: the episode runs again from its seed)"
    )
    detail: str = Field(default="", description="what went wrong, for error and pending")
    steps: int = 0
    final_answer: str | None = None
    elapsed_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = Field(default=0, description="model calls, repairs included")
    reward: float = Field(default=0.0, description="the environment's reward (0 without one)")
    success: bool | None = Field(
        default=None, description="the environment's verdict; None where it gives none"
    )
    episode: dict[str, Any] = Field(
        default_factory=dict, description="the environment's own figures (raw reward, ...)"
    )
    task: str = Field(default="", description="the environment's task id, in a suite")
    seed: int | None = None
    goal: str = Field(default="", description="the instruction the agent was given")
    run_dir: str = Field(default="", description="the episode's run folder, in a suite")
    observed: list[str] = Field(
        default_factory=list,
        description="a digest of what the agent was given at each step, a suspended one "
        "included (live_runner.rounds): what a replay from the seed must show again",
    )
    attempts: int = Field(default=1, description="runs of this episode from its seed")
    divergences: int = Field(
        default=0, description="replays that did not show the agent what the attempt before did"
    )
    diverged_at: int | None = Field(default=None, description="the step of the latest divergence")
    finished_at: str = Field(default_factory=now)
