"""Why a step went right or wrong: look-up recall, an error class, tokens, cost, latency.

Look-up recall asks whether a gold element was inside what the agent chose to read in full:
the reopened fragments (ReadAgent), the retrieved fragments (retrieval) or the ranker's
candidates (MindAct); an agent that chooses nothing (raw HTML keeps the page's beginning,
gist-only reopens nothing: ``Agent.chooses_fragments``) has none. ``gold_shown`` asks whether
a gold id was in the act prompt at all. Tokens served from the gist cache (what its hits had
cost to write) are counted apart from the tokens spent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from mind2web_eval.scoring import StepScore
from webagent.contracts import PhaseUsage, StepTrace

ErrorClass = Literal[
    "ok",
    "no_gold",
    "lookup_miss",
    "wrong_element",
    "wrong_op_or_value",
    "invalid_output",
    "model_error",
    "awaiting_answer",
    "page_error",
    "no_html",
    "agent_error",
]
#: error classes that mean the run itself is going wrong (they count toward --max-errors)
RUN_ERRORS = frozenset({"model_error", "page_error", "agent_error"})
#: a step whose last attempt ended so has no answer yet: it is *pending*, and the same command
#: runs it again (an outage, an unreadable page or a recorded agent bug is not an answer; a
#: wrong or unparseable answer is one)
PENDING_CLASSES = RUN_ERRORS | {"awaiting_answer"}
#: why a pending step is pending, in words
PENDING_REASONS = {
    "model_error": "the model failed after its retries",
    "page_error": "the page could not be read",
    "agent_error": "the agent raised an error (recorded by --record-agent-errors)",
    "awaiting_answer": "waiting for answers to a batch round",
    "not_run": "not run yet",
}


class StepDiagnostics(BaseModel):
    error_class: ErrorClass
    gold_ids: list[str] = Field(default_factory=list, description="usable positive ids")
    gold_fragments: list[int] = Field(default_factory=list, description="0-based, holding gold")
    lookup_hit: bool | None = Field(
        default=None, description="a gold element inside the reopened/kept/retrieved fragments"
    )
    gold_shown: bool | None = Field(default=None, description="a gold id in the act prompt")
    reopened: int = 0
    fragments: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_by_phase: dict[str, PhaseUsage] = Field(default_factory=dict)
    page_tokens: int = 0
    prompt_tokens: int = 0
    compression: float | None = Field(
        default=None, description="page tokens / act prompt tokens (how much the page shrank)"
    )
    gist_cache_hits: int = 0
    cached_tokens: int = Field(
        default=0, description="tokens served from the gist cache (not in the tokens spent)"
    )
    gist_phase: bool = Field(default=False, description="the step wrote or read gists")
    latency_s: float = 0.0


def _error_class(
    trace: StepTrace | None, score: StepScore, gold_shown: bool | None, run_error: str | None
) -> ErrorClass:
    if run_error is not None:
        return run_error  # type: ignore[return-value]
    if trace is None:
        return "agent_error"
    if trace.error_class in ("model_error", "awaiting_answer", "page_error"):
        return trace.error_class  # type: ignore[return-value]
    if trace.error_class == "no_ids_shown":  # the look-up left the act prompt without ids
        return "no_gold" if score.gold_status != "ok" else "lookup_miss"
    if trace.action is None:
        return "invalid_output"
    if score.gold_status != "ok":
        return "no_gold"
    if score.step_success:
        return "ok"
    if score.element_correct:
        return "wrong_op_or_value"
    return "wrong_element" if gold_shown else "lookup_miss"


def diagnose(
    trace: StepTrace | None,
    score: StepScore,
    gold_ids: Sequence[str],
    run_error: str | None = None,
    *,
    chooses_fragments: bool = True,
) -> StepDiagnostics:
    """Diagnostics of one step; ``run_error`` is set when no trace could be made
    (``no_html``, ``agent_error``); ``chooses_fragments``: the agent's, see module doc."""
    if trace is None:
        return StepDiagnostics(
            error_class=_error_class(None, score, None, run_error), gold_ids=list(gold_ids)
        )
    gold = set(gold_ids)
    gold_fragments = [i for i, ids in enumerate(trace.fragment_element_ids) if gold & set(ids)]
    chosen = bool(gold) and chooses_fragments
    lookup_hit = bool(set(gold_fragments) & set(trace.reopened)) if chosen else None
    gold_shown = bool(gold & set(trace.shown_element_ids)) if gold else None
    usage = trace.usage.values()
    return StepDiagnostics(
        error_class=_error_class(trace, score, gold_shown, run_error),
        gold_ids=list(gold_ids),
        gold_fragments=gold_fragments,
        lookup_hit=lookup_hit,
        gold_shown=gold_shown,
        reopened=len(trace.reopened),
        fragments=trace.n_fragments,
        calls=sum(u.calls for u in usage),
        input_tokens=sum(u.input_tokens for u in usage),
        output_tokens=sum(u.output_tokens for u in usage),
        tokens_by_phase=dict(trace.usage),
        page_tokens=trace.page_tokens,
        prompt_tokens=trace.prompt_tokens,
        compression=trace.page_tokens / trace.prompt_tokens if trace.prompt_tokens else None,
        gist_cache_hits=trace.gist_cache_hits,
        cached_tokens=sum(u.cached_tokens for u in usage),
        gist_phase="gist" in trace.usage,
        latency_s=trace.timings.get("total_s", 0.0),
    )


class DiagnosticsSummary(BaseModel):
    steps: int = 0
    error_classes: dict[str, int] = Field(default_factory=dict)
    lookup_recall: float | None = Field(
        default=None, description="over steps with gold; none for agents that choose nothing"
    )
    gold_shown_rate: float | None = None
    calls_per_step: float = 0.0
    input_tokens_per_step: float = 0.0
    output_tokens_per_step: float = 0.0
    tokens_per_step: float = 0.0
    cached_tokens_per_step: float | None = Field(
        default=None,
        description="tokens served from the gist cache per step, apart from tokens_per_step; "
        "none where no step wrote gists",
    )
    tokens_by_phase: dict[str, PhaseUsage] = Field(default_factory=dict)
    mean_compression: float | None = None
    compression_rate: float | None = Field(
        default=None,
        description="the ReadAgent paper's compression rate, 1 - act prompt tokens / the whole "
        "page's tokens, averaged over the steps that have both",
    )
    gist_cache_hits: int = 0
    mean_latency_s: float = 0.0


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(diagnostics: Iterable[StepDiagnostics]) -> DiagnosticsSummary:
    items = list(diagnostics)
    if not items:
        return DiagnosticsSummary()
    n = len(items)
    phases: dict[str, PhaseUsage] = {}
    for item in items:
        for phase, usage in item.tokens_by_phase.items():
            phases.setdefault(phase, PhaseUsage()).add(usage)
    hits = [float(i.lookup_hit) for i in items if i.lookup_hit is not None]
    shown = [float(i.gold_shown) for i in items if i.gold_shown is not None]
    compression = [i.compression for i in items if i.compression is not None]
    rates = [
        1 - i.prompt_tokens / i.page_tokens for i in items if i.page_tokens and i.prompt_tokens
    ]
    return DiagnosticsSummary(
        steps=n,
        error_classes=dict(Counter(i.error_class for i in items).most_common()),
        lookup_recall=_mean(hits),
        gold_shown_rate=_mean(shown),
        calls_per_step=sum(i.calls for i in items) / n,
        input_tokens_per_step=sum(i.input_tokens for i in items) / n,
        output_tokens_per_step=sum(i.output_tokens for i in items) / n,
        tokens_per_step=sum(i.input_tokens + i.output_tokens for i in items) / n,
        cached_tokens_per_step=(
            sum(i.cached_tokens for i in items) / n if any(i.gist_phase for i in items) else None
        ),
        tokens_by_phase=phases,
        mean_compression=_mean(compression),
        compression_rate=_mean(rates),
        gist_cache_hits=sum(i.gist_cache_hits for i in items),
        mean_latency_s=sum(i.latency_s for i in items) / n,
    )
