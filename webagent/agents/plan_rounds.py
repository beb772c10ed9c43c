"""How many batch rounds a run takes, and how many requests each holds, with no model call.

A step's calls depend on each other (gists before the look-up, the look-up before the act),
so the batch backend answers a step over several rounds. This runs the real agent on every
step as the batch backend would, with :class:`~webagent.agents.plan.PlanBackend`'s stated
answers: a round's requests are answered only in the next round, and a step met again starts
anew, as it does in a real run. The same assumptions as the cost plan hold (no repair; the
look-up of ReadAgent-S never stops early), so its rounds are an upper bound for ReadAgent-S.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from webagent.agents.plan import PlanBackend
from webagent.agents.registry import build_agent
from webagent.agents.settings import AgentSettings
from webagent.contracts import Observation
from webagent.errors import AwaitingAnswerError
from webagent.gist.cache import DryRunCache, GistCache
from webagent.model.base import Completion, Request
from webagent.model.client import Model


class RoundsPlan(BaseModel):
    agent: str
    steps: int
    requests: list[int] = Field(default_factory=list, description="new requests per round")

    def describe(self) -> str:
        counts = ", ".join(f"{n:,}" for n in self.requests)
        return (
            f"batch rounds for {self.agent} over {self.steps} steps: {len(self.requests)} "
            f"rounds, {sum(self.requests):,} requests ({counts}); assumed as in the plan, so "
            "a repair adds a round where an answer is invalid"
        )


class _RoundBackend(PlanBackend):
    """Answers only the requests released in an earlier round."""

    def __init__(self, real: Model, settings: AgentSettings) -> None:
        super().__init__(real, settings)
        self.released: set[str] = set()
        self.met: dict[str, None] = {}

    def complete(self, request: Request, timeout_s: float) -> Completion:
        key = request.cache_key(self.name)
        if key not in self.released:
            self.met[key] = None
            raise AwaitingAnswerError(f"request {key[:12]} waits for the next round")
        return super().complete(request, timeout_s)


def plan_rounds(
    settings: AgentSettings,
    model: Model,
    observations: Iterable[Observation],
    gist_cache: GistCache | None = None,
) -> RoundsPlan:
    """The rounds ``settings``' agent takes over ``observations`` under the batch backend."""
    backend = _RoundBackend(model, settings)
    agent = build_agent(settings, Model(backend), DryRunCache(gist_cache) if gist_cache else None)
    pending = list(observations)
    plan = RoundsPlan(agent=settings.agent, steps=len(pending))
    while pending:
        backend.met = {}
        pending = [o for o in pending if agent.step(o).error_class == "awaiting_answer"]
        new = [key for key in backend.met if key not in backend.released]
        if not new:
            break
        plan.requests.append(len(new))
        backend.released.update(new)
    return plan
