"""Per-step record of model calls: what the trace and the usage figures are built from.

The model layer (``webagent.model.client.Model``) owns retries, timeouts and the model's
lifetime ledger; a ``CallLog`` remembers which calls belong to one agent step, in a ledger of
its own, so that concurrent steps sharing one model still report their own usage.
"""

from __future__ import annotations

from collections.abc import Sequence

from webagent.contracts import ModelCall, Phase, PhaseUsage
from webagent.errors import ModelError
from webagent.model.base import Completion, Request
from webagent.model.client import Model
from webagent.model.usage import UsageLedger


class CallLog:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.calls: list[ModelCall] = []
        self.ledger = UsageLedger()

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

    def count_hit(self, phase: Phase, tokens: int = 0) -> None:
        """An answer taken from a cache instead of a call (the gist cache); ``tokens``: what
        writing it had cost (served from the cache, not spent)."""
        self.ledger.add_cache_hits(phase, tokens=tokens)

    def cache_hits(self, phase: Phase) -> int:
        stats = self.ledger.snapshot().get(phase)
        return stats.cache_hits if stats else 0

    def _record(self, request: Request, result: Completion | ModelError) -> None:
        prompt = [m.model_dump() for m in request.messages]
        if isinstance(result, ModelError):
            self.ledger.add_failure(request.phase, retries=0)
            self.calls.append(
                ModelCall(phase=request.phase, prompt=prompt, response=None, error=str(result))
            )
            return
        self.ledger.add_success(request.phase, result, retries=result.attempts - 1)
        self.calls.append(
            ModelCall(
                phase=request.phase,
                prompt=prompt,
                response=result.text,
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                latency_s=result.latency_s,
                cached=result.cached,
                cached_input_tokens=result.cached_input_tokens,
            )
        )

    def usage(self) -> dict[str, PhaseUsage]:
        """Per-phase usage of this step (failed calls count as calls)."""
        return {
            phase: PhaseUsage.model_validate(stats.model_dump(include=set(PhaseUsage.model_fields)))
            for phase, stats in self.ledger.snapshot().items()
        }
