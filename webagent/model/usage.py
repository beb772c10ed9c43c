"""Usage accounting, the one ledger: per-phase calls, tokens, latency, cache hits, retries
and errors.

A :class:`UsageLedger` counts every call a :class:`~webagent.model.client.Model` makes over its
lifetime; each agent step keeps its own ledger in its :class:`~webagent.model.calls.CallLog`, so
steps that share one model still report their own usage.
"""

from __future__ import annotations

import threading

from webagent.contracts import Phase, PhaseUsage
from webagent.model.base import Completion


class PhaseStats(PhaseUsage):
    """:class:`PhaseUsage` plus what went wrong: attempts retried and calls that failed in
    the end (``calls`` counts those too)."""

    retries: int = 0
    errors: int = 0

    def minus(self, before: PhaseUsage) -> PhaseStats:
        """What was added since ``before`` (a snapshot of the same phase)."""
        return PhaseStats(
            calls=self.calls - before.calls,
            input_tokens=self.input_tokens - before.input_tokens,
            output_tokens=self.output_tokens - before.output_tokens,
            latency_s=round(self.latency_s - before.latency_s, 6),
            cache_hits=self.cache_hits - before.cache_hits,
            cached_tokens=self.cached_tokens - before.cached_tokens,
            cached_input_tokens=self.cached_input_tokens - before.cached_input_tokens,
            retries=self.retries - getattr(before, "retries", 0),
            errors=self.errors - getattr(before, "errors", 0),
        )


class UsageLedger:
    """Thread-safe per-phase totals."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phases: dict[str, PhaseStats] = {}

    def add_success(self, phase: Phase, completion: Completion, retries: int) -> None:
        with self._lock:
            stats = self._phases.setdefault(phase, PhaseStats())
            stats.calls += 1
            stats.input_tokens += completion.input_tokens
            stats.output_tokens += completion.output_tokens
            stats.latency_s += completion.latency_s
            stats.cached_input_tokens += completion.cached_input_tokens or 0
            stats.cache_hits += int(completion.cached)
            stats.retries += retries

    def add_cache_hits(self, phase: Phase, hits: int = 1, tokens: int = 0) -> None:
        """Answers found in a cache before any call (the gist cache), which had cost
        ``tokens`` when they were written."""
        with self._lock:
            stats = self._phases.setdefault(phase, PhaseStats())
            stats.cache_hits += hits
            stats.cached_tokens += tokens

    def add_failure(self, phase: Phase, retries: int) -> None:
        with self._lock:
            stats = self._phases.setdefault(phase, PhaseStats())
            stats.calls += 1
            stats.errors += 1
            stats.retries += retries

    def snapshot(self) -> dict[str, PhaseStats]:
        """A copy of the totals, phase by phase."""
        with self._lock:
            return {phase: stats.model_copy() for phase, stats in self._phases.items()}

    def reset(self) -> None:
        with self._lock:
            self._phases.clear()


def usage_diff(
    after: dict[str, PhaseStats], before: dict[str, PhaseStats]
) -> dict[str, PhaseStats]:
    """Per-phase usage added between two snapshots; phases with no calls are left out."""
    diff = {phase: stats.minus(before.get(phase, PhaseStats())) for phase, stats in after.items()}
    return {phase: stats for phase, stats in diff.items() if stats.calls}
