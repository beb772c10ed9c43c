"""One row per cell, read from the cell's ``results.json``: scores with CIs, cost, gold shown.

Everything here is read from stored results, so ``webagent sweep --rescore`` rebuilds it with
no model call, and the same results give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from mind2web_eval.cost import run_cost
from mind2web_eval.diagnostics import RUN_ERRORS
from mind2web_eval.finalize import RunResults
from mind2web_eval.manifest import read_manifest
from mind2web_eval.report.compare import load_results
from mind2web_eval.sweep.spec import Cell, SweepSpec, cell_dir
from webagent.model.settings import DEFAULT_LOCAL_MODEL

#: models whose answers are near chance: their accuracy is not a measure of the method
UNJUDGEABLE_MODELS = frozenset({DEFAULT_LOCAL_MODEL})

QUALITY_LABELS = {
    "step_sr": "step success rate (macro)",
    "gold_shown": "share of steps whose act prompt shows a gold element "
    "(the ceiling a perfect act model reaches)",
}


class Metric(BaseModel):
    value: float
    low: float | None = None
    high: float | None = None


class SweepRow(BaseModel):
    agent: str
    budget: int
    status: str
    model: str = ""
    tasks: int = 0
    steps: int = 0
    step_sr: Metric | None = None
    element_acc: Metric | None = None
    op_f1: Metric | None = None
    input_tokens_per_step: float = 0.0
    output_tokens_per_step: float = 0.0
    calls_per_step: float = 0.0
    usd_per_1k_steps: float | None = None
    cached_input_share: float | None = None
    compression_rate: float | None = None
    gold_shown: float | None = None
    lookup_recall: float | None = None
    errors: int = 0


def _metric(results: RunResults, name: str) -> Metric:
    overall = results.score.overall
    interval = overall.ci.get(f"macro.{name}")
    value = getattr(overall.macro, name)
    if interval is None:
        return Metric(value=value)
    return Metric(value=value, low=interval.low, high=interval.high)


def cell_row(out: Path, cell: Cell, spec: SweepSpec) -> SweepRow:
    """The row of one cell; a cell not run yet (or without results) says so in ``status``."""
    folder = cell_dir(out, cell)
    manifest = read_manifest(folder / "manifest.json")
    if manifest is None or not (folder / "results.json").is_file():
        return SweepRow(agent=cell.agent, budget=cell.budget, status="not run")
    results = load_results(folder)
    d = results.diagnostics
    price = spec.pricing()
    cost = run_cost(folder, price) if price is not None else None
    return SweepRow(
        agent=cell.agent,
        budget=cell.budget,
        status=manifest.status or "unknown",
        model=results.model,
        tasks=results.score.overall.tasks,
        steps=d.steps,
        step_sr=_metric(results, "step_sr"),
        element_acc=_metric(results, "element_acc"),
        op_f1=_metric(results, "op_f1"),
        input_tokens_per_step=d.input_tokens_per_step,
        output_tokens_per_step=d.output_tokens_per_step,
        calls_per_step=d.calls_per_step,
        usd_per_1k_steps=cost.usd_per_1k_steps if cost else None,
        cached_input_share=cost.cached_share if cost else None,
        compression_rate=d.compression_rate,
        gold_shown=d.gold_shown_rate,
        lookup_recall=d.lookup_recall,
        errors=sum(n for kind, n in d.error_classes.items() if kind in RUN_ERRORS),
    )


def sweep_rows(out: Path, spec: SweepSpec) -> list[SweepRow]:
    return [cell_row(out, cell, spec) for cell in spec.cells()]


def quality_axis(spec: SweepSpec, rows: Sequence[SweepRow]) -> str:
    """``step_sr`` or ``gold_shown``: auto picks gold shown when any cell's model cannot be
    judged (the embedded SmolLM2 answers near chance)."""
    if spec.quality != "auto":
        return spec.quality
    return "gold_shown" if any(r.model in UNJUDGEABLE_MODELS for r in rows) else "step_sr"


def quality_value(row: SweepRow, axis: str) -> float | None:
    if axis == "gold_shown":
        return row.gold_shown
    return row.step_sr.value if row.step_sr is not None else None


def _pct(metric: Metric | None) -> str:
    if metric is None:
        return "–"
    text = f"{metric.value * 100:.1f}"
    if metric.low is not None and metric.high is not None:
        text += f" [{metric.low * 100:.1f}, {metric.high * 100:.1f}]"
    return text


def _usd(row: SweepRow) -> str:
    if row.usd_per_1k_steps is None:
        return "–"
    return f"{row.usd_per_1k_steps:,.2f} ({_share(row.cached_input_share)})"


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f} %"


COLUMNS = (
    "agent",
    "budget",
    "steps",
    "step SR % [95% CI]",
    "element acc % [95% CI]",
    "op F1 % [95% CI]",
    "input tok/step",
    "output tok/step",
    "calls/step",
    "USD/1k steps (cached input)",
    "compression",
    "gold shown",
    "status",
)


def row_cells(row: SweepRow) -> list[str]:
    return [
        row.agent,
        str(row.budget),
        str(row.steps),
        _pct(row.step_sr),
        _pct(row.element_acc),
        _pct(row.op_f1),
        f"{row.input_tokens_per_step:,.0f}",
        f"{row.output_tokens_per_step:,.1f}",
        f"{row.calls_per_step:.2f}",
        _usd(row),
        _share(row.compression_rate),
        _share(row.gold_shown),
        row.status,
    ]


def markdown_table(rows: Sequence[SweepRow]) -> str:
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"
