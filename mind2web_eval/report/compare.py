"""``webagent compare``: several runs side by side (the paper's raw-HTML / gist-only /
ReadAgent table, with cost). Tokens spent and gist tokens served from the cache are apart:
agents that share a gist cache (the demo) spend their gists once, in the first run, and the
runs after it read them from the cache; "—" marks a figure that does not apply.

Every run after the first is also set against the first, step by step on the steps both
answered (:func:`~mind2web_eval.aggregate.paired_difference`): two runs on the same steps
differ less by chance than their own intervals suggest; where the paired interval holds 0,
the steps cannot tell the two runs apart."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from mind2web_eval.aggregate import PairedDifference, paired_difference
from mind2web_eval.report.terminal import NOT_APPLICABLE, pct, per_step, table
from mind2web_eval.run_results import RunResults, step_scores
from webagent.errors import DatasetError
from webagent.textfiles import read_text


class CompareRow(BaseModel):
    run: str
    agent: str
    model: str
    status: str
    tasks: int
    steps: int
    step_sr: float
    element_acc: float
    op_f1: float
    task_sr: float
    micro_step_sr: float
    lookup_recall: float | None
    tokens_per_step: float
    cached_tokens_per_step: float | None = None
    calls_per_step: float
    protocol: str
    #: against the first run (None for the first run itself)
    against_first: PairedDifference | None = None


def load_results(run_dir: Path) -> RunResults:
    path = run_dir / "results.json" if run_dir.is_dir() else run_dir
    if not path.is_file():
        raise DatasetError(f"{run_dir}: no results.json (is it a `webagent eval` run folder?)")
    try:
        return RunResults.model_validate(json.loads(read_text(path)))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise DatasetError(f"{path}: not a readable results.json: {exc}") from exc


def compare_rows(run_dirs: Sequence[Path]) -> list[CompareRow]:
    rows = []
    results = [load_results(run_dir) for run_dir in run_dirs]
    # every later run is scored as the first is, and set against it step by step
    first = results[0].score.settings if results else None
    base = step_scores(run_dirs[0], first) if first is not None and len(run_dirs) > 1 else []
    for position, (run_dir, r) in enumerate(zip(run_dirs, results, strict=True)):
        o = r.score.overall
        paired = None
        if position and first is not None:
            paired = paired_difference(base, step_scores(run_dir, first), first)
        rows.append(
            CompareRow(
                run=str(run_dir), agent=r.agent, model=r.model, status=r.status,
                tasks=o.tasks, steps=o.steps, step_sr=o.macro.step_sr,
                element_acc=o.macro.element_acc, op_f1=o.macro.op_f1, task_sr=o.task_sr,
                micro_step_sr=o.micro.step_sr, lookup_recall=r.diagnostics.lookup_recall,
                tokens_per_step=r.diagnostics.tokens_per_step,
                cached_tokens_per_step=r.diagnostics.cached_tokens_per_step,
                calls_per_step=r.diagnostics.calls_per_step, protocol=r.protocol,
                against_first=paired,
            )
        )  # fmt: skip
    return rows


def format_compare(rows: Sequence[CompareRow]) -> str:
    body = [
        [Path(r.run).name, r.agent, r.model, str(r.steps), pct(r.step_sr), pct(r.element_acc),
         pct(r.op_f1), pct(r.task_sr), pct(r.lookup_recall), f"{r.tokens_per_step:.0f}",
         per_step(r.cached_tokens_per_step), f"{r.calls_per_step:.2f}"]
        for r in rows
    ]  # fmt: skip
    out = table(
        ["run", "agent", "model", "steps", "step SR", "elem acc", "op F1", "task SR",
         "look-up recall", "tokens/step", "cached/step", "calls/step"],
        body,
    )  # fmt: skip
    protocols = sorted({r.protocol for r in rows})
    note = (
        "percent, macro averages (mean over tasks), as in the paper tables; tokens/step: "
        "spent; cached/step: gist tokens served from the cache (what they had cost to write)"
    )
    lines = [out, note]
    if len(protocols) > 1:
        lines.append("WARNING: the runs were scored under different protocols:")
    lines += [f"protocol: {p}" for p in protocols]
    if len({r.steps for r in rows}) > 1 or any(r.status != "complete" for r in rows):
        lines.append("WARNING: the runs cover different steps or are incomplete; compare with care")
    if len(rows) > 1:
        lines += ["", _against_first(rows)]
    return "\n".join(lines)


def _against_first(rows: Sequence[CompareRow]) -> str:
    """Each later run against the first, on the steps both answered."""
    body = []
    for r in rows[1:]:
        d = r.against_first
        if d is None:  # only the first run has none
            continue
        ci = f" [{100 * d.ci.low:+.1f}, {100 * d.ci.high:+.1f}]" if d.ci else ""
        difference = f"{100 * d.step_sr:+.1f}{ci}" if d.steps else NOT_APPLICABLE  # no step shared
        body.append(
            [
                Path(r.run).name,
                str(d.steps),
                difference,
                str(d.gained),
                str(d.lost),
                str(d.left_out),
            ]
        )
    out = table(
        ["run", "paired steps", "step SR - first's (pp) [CI]", "gained", "lost", "left out"], body
    )
    return (
        f"against {Path(rows[0].run).name}, step by step (micro step SR, a task-level paired "
        f"bootstrap; left out: steps not answered by both):\n{out}"
    )
