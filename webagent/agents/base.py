"""The agent contract shared by ReadAgent, the baselines, the evaluator and the live runner."""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import BaseModel, Field

from webagent.actions import Action
from webagent.model.base import Phase, PhaseUsage

__all__ = [
    "Agent",
    "LookupRound",
    "ModelCall",
    "Observation",
    "PhaseUsage",
    "StepTrace",
]


class Observation(BaseModel):
    """What an agent sees at one step. ``html`` carries element ids as ``backend_node_id``."""

    task: str
    previous_actions: list[str] = Field(default_factory=list)
    html: str
    url: str | None = None


class ModelCall(BaseModel):
    """One call to the model, as the trace and the HTML report show it."""

    phase: Phase
    prompt: list[dict[str, str]]
    response: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None


class LookupRound(BaseModel):
    """One look-up answer: what the model asked for and what was made of it."""

    raw: str
    requested: list[int] = Field(default_factory=list, description="1-based page numbers asked")
    accepted: list[int] = Field(default_factory=list, description="0-based fragments reopened")
    rejected: list[str] = Field(default_factory=list, description="what was refused, and why")
    stop: bool = False
    reason: str | None = None


class StepTrace(BaseModel):
    """Everything one step did: enough to audit, report and replay it."""

    schema_version: int = 1
    agent: str
    action: Action | None = None
    error: str | None = Field(default=None, description="why no valid action was produced")
    error_class: str | None = None
    n_fragments: int = 0
    fragment_tokens: list[int] = Field(default_factory=list)
    fragment_element_ids: list[list[str]] = Field(default_factory=list)
    gists: list[str] = Field(default_factory=list)
    reopened: list[int] = Field(default_factory=list, description="0-based fragments reopened")
    lookup: list[LookupRound] = Field(default_factory=list)
    shown_element_ids: list[str] = Field(default_factory=list)
    memory: str = Field(default="", description="the page as the act prompt showed it")
    calls: list[ModelCall] = Field(default_factory=list)
    usage: dict[str, PhaseUsage] = Field(default_factory=dict)
    page_tokens: int = 0
    prompt_tokens: int = Field(default=0, description="tokens of the act prompt")
    timings: dict[str, float] = Field(default_factory=dict)
    gist_cache_hits: int = 0


class Agent(ABC):
    """Observation in, action (with its trace) out."""

    name: str

    @abstractmethod
    def step(self, observation: Observation) -> StepTrace:
        """Predict one action. Never raises for model or parse failures: they go in the trace."""
