"""What a run cost in dollars: its stored calls priced at a price sheet's entry.

Input and output tokens are the calls' own (as the backend counted or the endpoint reported
them). The provider's prompt cache is the answers' own figure where they reported one
(``ModelCall.cached_input_tokens``) and otherwise estimated task by task, the calls in the
order they were sent (steps in task order), by :func:`webagent.model.prompt_cache.estimate_cache`
under the entry's rule, its shared prefixes counted with the run's own counter where it can
be rebuilt offline (:func:`webagent.model.counters.offline_counter`). ``webagent eval
--price-sheet`` writes it to ``OUT/cost.json``; the sweep table and the method table read it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mind2web_eval.manifest import read_manifest
from mind2web_eval.results import StepRecord
from mind2web_eval.store import ResultStore
from webagent.atomic import write_text_atomic
from webagent.contracts import ModelCall
from webagent.model.counters import offline_counter
from webagent.model.prices import Price, TokenBill, cost
from webagent.model.prompt_cache import estimate_cache
from webagent.tokens import TokenCounter

COST_FILE = "cost.json"


class RunCost(BaseModel):
    """A run's tokens and their price; per 1,000 steps over every stored step."""

    price: Price
    steps: int
    calls: int
    calls_measured: int = Field(description="calls whose answer reported its cached tokens")
    counter: str = Field(description="what counted the shared prefixes of the estimate")
    bill: TokenBill
    usd: float
    usd_per_1k_steps: float
    batch_usd_per_1k_steps: float = Field(description="the same through the batch API")

    @property
    def cached_share(self) -> float:
        """The share of input tokens the provider's prompt cache served."""
        bill = self.bill
        return bill.cached_input_tokens / bill.input_tokens if bill.input_tokens else 0.0

    def figures(self) -> dict[str, float]:
        """USD per 1,000 steps, standard and through the batch API, and the cached share,
        rounded for a summary."""
        return {
            "usd_per_1k_steps": round(self.usd_per_1k_steps, 4),
            "batch_usd_per_1k_steps": round(self.batch_usd_per_1k_steps, 4),
            "cached_input_share": round(self.cached_share, 4),
        }

    def describe(self) -> str:
        measured = f"{self.calls_measured} of {self.calls} calls measured"
        return (
            f"cost at {self.price.describe()}:\n  USD {self.usd_per_1k_steps:,.2f} per 1,000 "
            f"steps (batch API: {self.batch_usd_per_1k_steps:,.2f}); "
            f"{100 * self.cached_share:.1f} % of input tokens from the provider's prompt "
            f"cache ({measured}, the rest estimated, counted with {self.counter})"
        )


def task_calls(records: Iterable[StepRecord]) -> list[list[ModelCall]]:
    """Each task's answered calls, in the order sent: steps in task order, calls in step
    order (a failed call is neither billed nor cached)."""
    steps: dict[str, list[StepRecord]] = defaultdict(list)
    for record in records:
        steps[record.annotation_id].append(record)
    return [
        [
            call
            for record in sorted(task, key=lambda r: r.step_index)
            if record.trace is not None
            for call in record.trace.calls
            if call.response is not None
        ]
        for task in steps.values()
    ]


def task_bill(calls: list[ModelCall], price: Price, count: TokenCounter) -> TokenBill:
    """One task's tokens: each call's cached input as it was measured, else as estimated."""
    estimates = estimate_cache([c.prompt for c in calls], price, count)
    bill = TokenBill()
    for call, estimate in zip(calls, estimates, strict=True):
        measured = call.cached_input_tokens
        read = min(call.input_tokens, estimate.read if measured is None else measured)
        write = min(call.input_tokens - read, estimate.write if measured is None else 0)
        bill = bill.plus(
            TokenBill(
                input_tokens=call.input_tokens,
                cached_input_tokens=read,
                cache_write_tokens=write,
                output_tokens=call.output_tokens,
            )
        )
    return bill


def run_counter(run_dir: Path) -> tuple[str, TokenCounter]:
    """The run's token counter, rebuilt from its manifest where that can be done offline."""
    manifest = read_manifest(run_dir / "manifest.json")
    model: dict[str, Any] = manifest.model if manifest else {}
    path = model.get("model_path")
    return offline_counter(
        str(model.get("backend", "")),
        model.get("model"),
        str(model.get("token_counter", "auto")),
        Path(path) if path else None,
    )


def run_cost(run_dir: Path, price: Price) -> RunCost:
    """What the run in ``run_dir`` cost at ``price`` (see the module's doc)."""
    records = list(ResultStore(run_dir / "results.jsonl").records())
    name, count = run_counter(run_dir)
    bill, calls = TokenBill(), task_calls(records)
    for task in calls:
        bill = bill.plus(task_bill(task, price, count))
    steps = len(records)
    usd, batch = cost(bill, price), cost(bill, price, batch=True)
    return RunCost(
        price=price,
        steps=steps,
        calls=sum(len(task) for task in calls),
        calls_measured=sum(c.cached_input_tokens is not None for task in calls for c in task),
        counter=name,
        bill=bill,
        usd=usd,
        usd_per_1k_steps=1000 * usd / steps if steps else 0.0,
        batch_usd_per_1k_steps=1000 * batch / steps if steps else 0.0,
    )


def write_cost(run_dir: Path, price: Price) -> RunCost:
    """:func:`run_cost`, written to ``OUT/cost.json``."""
    found = run_cost(run_dir, price)
    write_text_atomic(run_dir / COST_FILE, found.model_dump_json(indent=2) + "\n")
    return found
