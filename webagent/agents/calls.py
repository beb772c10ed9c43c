"""Per-step record of model calls: what the trace and the usage figures are built from.

The model layer (``webagent.model.client.Model``) owns retries, timeouts and the global
ledger; this log only remembers which calls belong to one agent step, so that concurrent
steps sharing one model still report their own usage.
"""

from __future__ import annotations

from collections.abc import Sequence

from webagent.agents.base import ModelCall, PhaseUsage
from webagent.errors import ModelError
from webagent.model.base import Completion, Request
from webagent.model.client import Model


class CallLog:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.calls: list[ModelCall] = []
        self.cache_hits: dict[str, int] = {}

    def generate(self, request: Request) -> Completion:
        """One call; a ModelError is recorded, then raised."""
        try:
            completion = self.model.generate(request)
        except ModelError as exc:
            self._record(request, exc)
            raise
        self._record(request, completion)
        return completion

    def generate_many(self, requests: Sequence[Request]) -> list[Completion | ModelError]:
        """Several independent calls, as many at once as the backend serves."""
        results = self.model.map_generate(list(requests))
        for request, result in zip(requests, results, strict=True):
            self._record(request, result)
        return results

    def count_hit(self, phase: str) -> None:
        self.cache_hits[phase] = self.cache_hits.get(phase, 0) + 1

    def _record(self, request: Request, result: Completion | ModelError) -> None:
        prompt = [m.model_dump() for m in request.messages]
        if isinstance(result, ModelError):
            self.calls.append(
                ModelCall(phase=request.phase, prompt=prompt, response=None, error=str(result))
            )
            return
        self.calls.append(
            ModelCall(
                phase=request.phase,
                prompt=prompt,
                response=result.text,
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                latency_s=result.latency_s,
                cached=result.cached,
            )
        )

    def usage(self) -> dict[str, PhaseUsage]:
        usage: dict[str, PhaseUsage] = {}
        for call in self.calls:
            u = usage.setdefault(call.phase, PhaseUsage())
            u.calls += 1
            u.input_tokens += call.input_tokens
            u.output_tokens += call.output_tokens
            u.latency_s += call.latency_s
        for phase, hits in self.cache_hits.items():
            usage.setdefault(phase, PhaseUsage()).cache_hits += hits  # type: ignore[arg-type]
        return usage
