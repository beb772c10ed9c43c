"""The plan beside what was spent: ``OUT/plan.json`` against the steps in ``results.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mind2web_eval.report.terminal import table
from mind2web_eval.store import ResultStore
from webagent.agents.plan import sum_usage
from webagent.textfiles import read_text


def plan_vs_spent(out: Path) -> list[dict[str, Any]] | None:
    """Per phase and in all: planned and spent calls and tokens (None: the run has no plan)."""
    path = out / "plan.json"
    if not path.is_file():
        return None
    plan = json.loads(read_text(path))["agents"][0]
    traces = [r.trace for r in ResultStore(out / "results.jsonl").records() if r.trace]
    spent = sum_usage(t.usage for t in traces)
    rows = []
    for phase in sorted({*plan["by_phase"], *spent}):
        planned = plan["by_phase"].get(phase, {})
        got = spent[phase].model_dump() if phase in spent else {}
        rows.append({"phase": phase, **_pair(planned, got)})
    planned_total = {k: plan[k] for k in ("calls", "input_tokens", "output_tokens")}
    spent_total = {
        "calls": sum(u.calls for u in spent.values()),
        "input_tokens": sum(u.input_tokens for u in spent.values()),
        "output_tokens": sum(u.output_tokens for u in spent.values()),
    }
    rows.append({"phase": "all", **_pair(planned_total, spent_total)})
    rows[-1]["steps"] = f"{len(traces)} run / {plan['steps']} planned"
    return rows


def _pair(planned: dict[str, Any], spent: dict[str, Any]) -> dict[str, Any]:
    keys = ("calls", "input_tokens", "output_tokens")
    return {f"{k}_planned": int(planned.get(k, 0)) for k in keys} | {
        f"{k}_spent": int(spent.get(k, 0)) for k in keys
    }


def format_plan_vs_spent(rows: list[dict[str, Any]]) -> str:
    def ratio(spent: int, planned: int) -> str:
        return f"{spent / planned:.2f}" if planned else "-"

    cells = [
        [
            r["phase"],
            f"{r['calls_planned']:,}",
            f"{r['calls_spent']:,}",
            f"{r['input_tokens_planned']:,}",
            f"{r['input_tokens_spent']:,}",
            ratio(r["input_tokens_spent"], r["input_tokens_planned"]),
            f"{r['output_tokens_planned']:,}",
            f"{r['output_tokens_spent']:,}",
        ]
        for r in rows
    ]
    head = [
        "phase",
        "calls plan",
        "spent",
        "in tok plan",
        "spent",
        "spent/plan",
        "out plan",
        "spent",
    ]
    return f"plan beside spent ({rows[-1].get('steps', '')}):\n" + table(head, cells)
